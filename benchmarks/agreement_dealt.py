"""Agreement of the estimator with the simulator on the search's dealt points.

Draws, per chip of the 910B family (910B2, 910B3, 910B4), random small problems (M and N from
64 to 1,600, one of five K, agreement's dtypes, formats, transposes and bias) whose space holds
dealt splits (:func:`tiler.space.dealt_in_space`), one random point of a random dealt group of
the space each (a tile of 1 or 2 base blocks along M and N, dealt to every core:
:mod:`tiler.bounds.dealt`), and compares the estimator's kernel time (the ``dealt_rounds`` term)
with the simulator's (each core's own tiles, :func:`simcore.pipeline.traffic.core_programs`).
Prints per chip the median, p95 and max of ``|est / sim - 1|``, the share of draws over 10 %
high and the worst cases.

    uv run python -m benchmarks.agreement_dealt [--cases 96] [--seed 2026] [--worst 5]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from benchmarks.agreement import draw_problem
from simcore.alloc import tune_allocator
from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.pipeline.traffic import dealt_rounds
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from tiler.bounds.dealt import dealt_rows
from tiler.space import build_space, dealt_in_space

#: The chips whose space holds dealt splits (the 910B family).
SOCS: tuple[str, ...] = ("Ascend910B2", "Ascend910B3", "Ascend910B4")
#: K of the drawn problems (M and N are drawn from 64 to 1,600).
KS: tuple[int, ...] = (256, 512, 1024, 2048, 4096)


def draw(rng: np.random.Generator, soc: str) -> tuple[Problem, TCubeTiling]:
    """A random small problem on ``soc`` with dealt splits and a random dealt point of it."""
    preset = load_preset(soc)
    while True:
        base = draw_problem(rng, soc)
        m, n = (int(x) for x in rng.integers(64, 1601, size=2))
        problem = base.model_copy(update={"m": m, "n": n, "k": int(rng.choice(KS))})
        if not dealt_in_space(problem, preset):
            continue
        try:
            space = build_space(problem, preset, {})
        except ValueError:
            continue
        with np.errstate(divide="ignore"):
            dealt = np.flatnonzero(dealt_rows(space, space.groups))
        if not dealt.size:
            continue
        pts = space.inner_points(int(rng.choice(dealt)))
        j = int(rng.integers(pts["baseM"].shape[0]))
        tiling = complete_tiling({f: int(v[j]) for f, v in pts.items()}, problem, preset)
        if check_tiling(problem, tiling, preset).valid:
            return problem, tiling


def main() -> int:
    tune_allocator()
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=96, help="Draws per chip.")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--worst", type=int, default=5)
    args = ap.parse_args()
    for i, soc in enumerate(SOCS):
        rng = np.random.default_rng(args.seed + i)
        preset = load_preset(soc)
        rows = []
        for _ in range(args.cases):
            problem, tiling = draw(rng, soc)
            est = estimate_one(problem, tiling, preset)["time_us"]
            sim = simulate(problem, tiling, preset).time_us
            rows.append((est / sim - 1.0, problem, tiling))
        errs = np.array([r[0] for r in rows])
        a = np.abs(errs)
        print(
            f"{soc}: n={a.size} |est/sim-1| median {100 * np.median(a):.1f} % "
            f"p95 {100 * np.percentile(a, 95):.1f} % max {100 * a.max():.1f} %; "
            f"> 10 % high {100 * np.mean(errs > 0.1):.0f} %, > 10 % low "
            f"{100 * np.mean(errs < -0.1):.0f} %"
        )
        for err, p, t in sorted(rows, key=lambda r: -abs(r[0]))[: args.worst]:
            print(
                f"   {100 * err:+6.1f} %  {p.dtype} {p.m}x{p.n}x{p.k} "
                f"tile {t.singleCoreM}x{t.singleCoreN} base {t.baseM}x{t.baseN}x{t.baseK} "
                f"R={dealt_rounds(p, t)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
