"""Screening A/B: the certified search of two source trees on the same shapes, alternately.

On a host shared with other jobs the machine's speed moves by several times within minutes, so
two suites run one after the other do not compare. This keeps one worker process per tree (each
imports its own ``tiler`` and ``simcore``) and hands them each shape in turn, A then B, so both see
the same load; it prints per shape and per chip family the screening seconds of each (wall, and
the process's CPU time, steadier where other jobs share the cores), whether
each answer is certified exact (and the proven gap otherwise), and the ratio B / A.

    git archive <base commit> | tar -x -C /tmp/base
    uv run python -m benchmarks.screen_ab --base /tmp/base --families 910B,910A,310P,310B --every 3

The shapes are ``benchmarks.tune_suite.suite`` with ``--families`` (every ``--every``-th, and
always the held-out 910A shapes of issue 16).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.tune_suite import HELD_OUT_910A, family, pct, suite

#: The worker: reads one problem per line, screens it, writes one JSON line.
_WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from simcore.alloc import tune_allocator
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from tiler.screen import screen
from tiler.space import build_space
tune_allocator()
for line in sys.stdin:
    problem = Problem.model_validate(json.loads(line))
    t0, c0 = time.perf_counter(), time.process_time()
    space = build_space(problem, load_preset(problem.soc), {})
    result = screen(space)
    cert = result.certificate()
    print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                      "exact": cert["exact"],
                      "gap": cert["gap_bound"], "best_us": result.top[0].time_us}), flush=True)
"""


def _worker(tree: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(tree)],
        cwd=tree,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _ask(proc: subprocess.Popen[str], problem: dict[str, Any]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(problem) + "\n")
    proc.stdin.flush()
    return dict(json.loads(proc.stdout.readline()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="Source tree A (e.g. a git archive).")
    ap.add_argument("--new", default=".", help="Source tree B (default: this checkout).")
    ap.add_argument("--families", default="910B,910A,310P,310B")
    ap.add_argument("--every", type=int, default=1, help="Every N-th shape of the suite.")
    args = ap.parse_args()
    shapes = suite(args.families.split(","))
    held = {("Ascend910A", dtype, m, n, k) for dtype, m, n, k in HELD_OUT_910A}
    picked = [
        s
        for i, s in enumerate(shapes)
        if i % args.every == 0 or (s["soc"], s["dtype"], s["m"], s["n"], s["k"]) in held
    ]
    a, b = _worker(Path(args.base).resolve()), _worker(Path(args.new).resolve())
    rows: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    print(f"{len(picked)} shapes; A = {args.base}, B = {args.new}", flush=True)
    for prob in picked:
        ra, rb = _ask(a, prob), _ask(b, prob)
        rows.setdefault(family(str(prob["soc"])), []).append((ra, rb))
        same = abs(ra["best_us"] - rb["best_us"]) <= 1e-9 * ra["best_us"]
        print(
            f"{prob['soc']:12s} {prob['dtype']:5s} {prob['m']:>6}x{prob['n']:>6}x{prob['k']:>6} "
            f"A {ra['seconds']:6.2f} s (cpu {ra['cpu']:5.2f}) exact={ra['exact']!s:5s} "
            f"gap {ra['gap'] or 0:.3f} | "
            f"B {rb['seconds']:6.2f} s (cpu {rb['cpu']:5.2f}) exact={rb['exact']!s:5s} "
            f"gap {rb['gap'] or 0:.3f} | "
            f"B/A {rb['seconds'] / ra['seconds']:.2f}{'' if same else '  (best differs)'}",
            flush=True,
        )
    for key, what in (("seconds", "wall"), ("cpu", "CPU (process time)")):
        print(f"\nper family, screening {what} seconds (median / p95 / max), certified exact:")
        for fam, pairs in rows.items():
            cells = []
            for label, i in (("A", 0), ("B", 1)):
                secs = [p[i][key] for p in pairs]
                exact = sum(bool(p[i]["exact"]) for p in pairs)
                cells.append(
                    f"{label} {statistics.median(secs):.2f} / {pct(secs, 0.95):.2f} / "
                    f"{max(secs):.2f} s, exact {exact}/{len(pairs)}"
                )
            print(f"  {fam} ({len(pairs)} shapes): " + "; ".join(cells))
    for proc in (a, b):
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


if __name__ == "__main__":
    main()
