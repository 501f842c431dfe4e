"""Fit Ascend 950 model constants to measured_msprof_950pr_8192.csv (benchmarks/fidelity_950.py).

The arch-3510 spec gives the data paths; where it gives a mechanism but not its size, this
script fits the size to the nine measured 950PR kernels: coordinate descent (per constant a
9-point scan, then golden sections; a few sweeps) on the sum of squared log errors of the task time and of the
MTE2, MAC, MTE1 and FixPipe busy times, with the estimator (it agrees with the simulator within
1.5 % at p95 on 950). It prints the fitted values; copy them into the ``"3510"`` family of
``simcore/hardware/data/model_constants.json`` with this script as their source, then rerun
``scripts/gen_presets.py`` and ``benchmarks/fidelity_950.py``.

    uv run --frozen python -m scripts.fit_950 nd2nz_latency_cycles:50:1000 nd2nz_peak_bytes_per_cycle:60:250

Each argument is ``constant:low:high``; ``--cases 2,3,5,6,7`` limits the cases, ``--weights
time=1,mte2=1,mac=1,mte1=0.5,fixpipe=0.25`` sets the terms.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from benchmarks.fidelity_950 import load_rows, run_case
from simcore.hardware.presets import custom_preset

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def objective(
    values: dict[str, float],
    rows: list[dict[str, str]],
    weights: dict[str, float],
) -> float:
    """Sum over the cases of the weighted squared log errors (model over measured)."""
    total = 0.0
    presets: dict[str, Any] = {}
    for row in rows:
        soc = row["soc"]
        if soc not in presets:
            presets[soc] = custom_preset({"base": soc, **values})
        case = run_case(row, presets[soc], simulate=False)
        pairs = {"time": (case.model_us, case.measured_us)}
        for pipe in ("mte2", "mac", "mte1", "fixpipe"):
            pairs[pipe] = (case.model_busy_us[pipe], case.measured_busy_us[pipe])
        for term, (model, measured) in pairs.items():
            w = weights.get(term, 0.0)
            if w and model > 0 and measured > 0:
                total += w * math.log(model / measured) ** 2
    return total


def golden_section(f: Callable[[float], float], lo: float, hi: float, iters: int = 18) -> float:
    """The minimum of ``f`` on [lo, hi]: a 9-point scan brackets it, golden sections refine it.

    The scan keeps a flat stretch (a floor that stops a rate from mattering) from steering the
    sections to the wrong end.
    """
    grid = [lo + (hi - lo) * i / 8.0 for i in range(9)]
    values = [f(x) for x in grid]
    best = min(range(9), key=lambda i: values[i])
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, 8)]
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    return (a + b) / 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("constants", nargs="+", help="constant:low:high")
    parser.add_argument("--cases", default="", help="comma-separated case numbers (default all)")
    parser.add_argument("--weights", default="time=1,mte2=1,mac=1,mte1=0.5,fixpipe=0.25")
    parser.add_argument("--sweeps", type=int, default=3)
    args = parser.parse_args()
    rows = load_rows()
    if args.cases:
        keep = {f"case{c.strip()}" for c in args.cases.split(",")}
        rows = [r for r in rows if r["case"] in keep]
    weights = {k: float(v) for k, v in (kv.split("=") for kv in args.weights.split(","))}
    bounds = {}
    for spec in args.constants:
        name, lo, hi = spec.split(":")
        bounds[name] = (float(lo), float(hi))
    values = {name: (lo + hi) / 2.0 for name, (lo, hi) in bounds.items()}
    print(f"start {objective(values, rows, weights):.5f}")
    for sweep in range(args.sweeps):
        for name, (lo, hi) in bounds.items():

            def f(x: float, name: str = name) -> float:
                return objective({**values, name: x}, rows, weights)

            values[name] = golden_section(f, lo, hi)
        fitted = ", ".join(f"{k} = {v:.4g}" for k, v in values.items())
        print(f"sweep {sweep + 1}: {objective(values, rows, weights):.5f}  {fitted}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
