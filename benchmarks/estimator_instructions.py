"""Instructions per candidate of the estimator, counted by callgrind, against a baseline tree.

CPU time on a shared host does not resolve a 5 % change in the estimator; the instruction count
does (the same total for the same binary, inputs and environment, whatever else the host runs).
Each tree runs the same workload twice under ``valgrind --tool=callgrind``: 64 candidates (the
imports, the first call's set-up), then the same plus the first 65,536 of ``model_speed``'s draws
(4096^3, its pool of 2,000 random tilings, seed 0). The difference over 65,536 is the count per
candidate; the ratio baseline / this tree is printed per chip.

    uv run python -m benchmarks.estimator_instructions --base <git archive of main>
    uv run python -m benchmarks.estimator_instructions --socs Ascend910B2   # this tree only

Needs ``valgrind`` on the PATH (about two minutes per chip and tree).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: Candidates of the measured call (the first of model_speed's 1,000,000 draws).
MEASURED = 65_536
#: Candidates of the warm-up call both runs make.
WARM_UP = 64
SOCS = ("Ascend910B2", "Ascend910A", "Ascend310P3", "Ascend310B1")


def workload(soc: str, measured: int) -> None:
    """Estimates :data:`WARM_UP` candidates, then ``measured`` more (model_speed's draws)."""
    import numpy as np

    from simcore.alloc import tune_allocator
    from simcore.estimate.estimator import ESTIMATOR_FIELDS, estimate_arrays
    from simcore.hardware.presets import load_preset
    from simcore.tiling.problem import Problem
    from tests.support.random_tilings import random_tiling

    tune_allocator()  # as model_speed and the tiler command do
    preset = load_preset(soc)
    problem = Problem(soc=soc, m=4096, n=4096, k=4096)
    rng = np.random.default_rng(0)
    pool = [random_tiling(problem, preset, rng) for _ in range(2000)]
    idx = rng.integers(0, len(pool), 1_000_000)
    table = {f: np.array([getattr(t, f) for t in pool], dtype=np.int64) for f in ESTIMATOR_FIELDS}
    estimate_arrays(problem, preset, {f: v[idx[:WARM_UP]] for f, v in table.items()})
    if measured:
        estimate_arrays(problem, preset, {f: v[idx[:measured]] for f, v in table.items()})


def _instructions(tree: Path, soc: str, measured: int) -> int:
    """Callgrind's total instruction count of the workload run from ``tree``.

    This file runs the workload; ``tree`` (first on ``PYTHONPATH``) gives every module it
    imports, so a baseline tree need not have this benchmark.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(tree)}
        cmd = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            sys.executable, str(Path(__file__).resolve()), "--workload", soc, str(measured),
        ]  # fmt: skip
        subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True)
        summary = re.search(r"^summary:\s+(\d+)", out.read_text(), re.MULTILINE)
        if summary is None:
            raise RuntimeError(f"no summary line in callgrind's output for {soc} in {tree}")
        return int(summary.group(1))


def per_candidate(tree: Path, soc: str) -> float:
    """Instructions per candidate of the estimator in ``tree`` on ``soc``."""
    return (_instructions(tree, soc, MEASURED) - _instructions(tree, soc, 0)) / MEASURED


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="baseline source tree (e.g. a git archive)")
    parser.add_argument("--socs", default=",".join(SOCS), help="comma-separated chips")
    parser.add_argument("--workload", nargs=2, metavar=("SOC", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.workload:
        workload(args.workload[0], int(args.workload[1]))
        return 0
    here = Path(__file__).resolve().parent.parent
    for soc in args.socs.split(","):
        new = per_candidate(here, soc)
        if args.base is None:
            print(f"{soc}: {new:,.0f} instructions per candidate")
            continue
        base = per_candidate(args.base.resolve(), soc)
        print(f"{soc}: base {base:,.0f} -> this tree {new:,.0f} per candidate, {base / new:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
