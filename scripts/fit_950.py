"""Fit the sizes of the calibrated mechanisms for arch 3510 to measured_msprof_950pr_8192.csv.

The nine kernels of the 910B1 profiler file, run on a 950PR (32 cores at 1.65 GHz,
``Ascend950PR_9589``). The mechanisms are those of docs/calibration.md (written once in
``simcore/pipeline``); only their sizes are fitted here, each from the cases that isolate it,
most in closed form from the profiler's busy times and the kernels' own counts:

* ND->NZ copy latency and cycles per ND row: cases 0 and 1 (one core, Norm, two copies per K
  step, row-bound): MTE2 per step = 2 x latency + rows x row cycles, two equations.
* MTE1 latency: cases 0 and 1, MTE1 busy per load above the bytes at the spec's 256 B per cycle.
* same-address factor ``1 + c (min(s, S) - 1)^2``: cases 2 (A read by 16 cores at once, B by
  2) and 3 (8 and 4) against the one-core law; the cap S is the one at which both cases give the
  same c (on 910B1 S was assumed, 12; on 950 case 3 measures more MTE2 than case 2, which a cap
  above 8 cannot give).
* MMAD restart: Norm cases 0-3, MAC busy per MMAD above the MMADs' cycles
  (``scripts.fit_board.fit_mmad_restart``, as on 910B1).
* FixPipe rate: MDL cases 4-7 (no UnitFlag), FixPipe busy per 256 x 256 fp16 block.
* device start-up: task duration - average core time, mean of the nine.
* L2 miss slowdown: case 5 against case 6 (the same kernel without and with L2 rounds), through
  the whole model (the working set and the miss mix are not closed-form).

Prints the fitted values (copy them into the ``"3510"`` family of
``simcore/hardware/data/model_constants.json`` with this script as their source, then
regenerate the presets with ``TILER_REFERENCE_DIR=../shared/reference uv run --frozen python
-m scripts.gen_presets``) and every case's residual (task time, MTE2, MAC, MTE1, SCALAR,
FixPipe) under the fitted values in both fidelities.

    uv run --frozen python -m scripts.fit_950
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable
from typing import Any

from benchmarks.fidelity import predict
from scripts.fit_board import fit_mmad_restart
from simcore.hardware.presets import HardwarePreset, custom_preset
from simcore.pipeline.arith import ceil_div
from tests.support.board import BoardCase, msprof_cases

FILE = "measured_msprof_950pr_8192.csv"
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
#: The largest cap of the same-address factor tried (cases 2-3 measure up to 16 sharers).
_MAX_CAP = 16


def golden_section(f: Callable[[float], float], lo: float, hi: float, iters: int = 24) -> float:
    """The minimum of ``f`` on [lo, hi]: a 9-point scan brackets it, golden sections refine it."""
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


def _steps(case: BoardCase) -> int:
    """K steps (one MMAD each) of one core; the file's splits divide the shape evenly."""
    t, p = case.tiling, case.problem
    return (
        ceil_div(t.singleCoreM, t.baseM) * ceil_div(t.singleCoreN, t.baseN) * ceil_div(p.k, t.baseK)
    )


def _cycles(case: BoardCase, pipe: str) -> float:
    return case.pipes_us[pipe] * case.preset.clock_mhz


def fit_nd_copy(cases: dict[str, BoardCase]) -> tuple[float, float]:
    """(latency, cycles per ND row) of the ND->NZ copy from cases 0 and 1 (two equations)."""
    per_step = {name: _cycles(cases[name], "MTE2") / _steps(cases[name]) for name in cases}
    # Two copies per K step, each of baseM (A) or baseN (B transposed) ND rows of baseK.
    rows = {
        name: cases[name].tiling.baseM + cases[name].tiling.baseN for name in ("case0", "case1")
    }
    row_cycles = (per_step["case1"] - per_step["case0"]) / (rows["case1"] - rows["case0"])
    latency = (per_step["case0"] - rows["case0"] * row_cycles) / 2.0
    return latency, row_cycles


def fit_mte1_latency(cases: dict[str, BoardCase]) -> float:
    """MTE1 cycles per load above the bytes at the spec's L1->L0 rates, cases 0 and 1 (mean)."""
    out = []
    for name in ("case0", "case1"):
        c = cases[name]
        t, hw = c.tiling, c.preset
        k_bytes = t.baseK * 2  # fp16
        copy = t.baseM * k_bytes / hw.l1_to_l0a_bytes_per_cycle
        copy += t.baseN * k_bytes / hw.l1_to_l0b_bytes_per_cycle
        out.append((_cycles(c, "MTE1") / _steps(c) - copy) / 2.0)
    return statistics.mean(out)


def fit_same_address(
    cases: dict[str, BoardCase], latency: float, row_cycles: float
) -> tuple[float, int]:
    """(coefficient c, cap S) of the same-address factor from cases 2 and 3.

    Each case's MTE2 per K step above the one-core law, over its row term's sharer weights,
    gives c for a cap S; S is the cap at which the two cases agree best.
    """
    best: tuple[float, float, int] = (math.inf, 0.0, 0)
    for cap in range(2, _MAX_CAP + 1):
        coeffs = []
        for name in ("case2", "case3"):
            c = cases[name]
            t, p = c.tiling, c.problem
            s_a = min(ceil_div(p.n, t.singleCoreN), cap)  # cores along N read A's rows
            s_b = min(ceil_div(p.m, t.singleCoreM), cap)
            plain = 2.0 * latency + (t.baseM + t.baseN) * row_cycles
            extra = _cycles(c, "MTE2") / _steps(c) - plain
            weight = row_cycles * (t.baseM * (s_a - 1) ** 2 + t.baseN * (s_b - 1) ** 2)
            coeffs.append(extra / weight)
        spread = abs(math.log(coeffs[0] / coeffs[1]))
        if spread < best[0]:
            best = (spread, statistics.mean(coeffs), cap)
    return best[1], best[2]


def fit_fixpipe_rate(cases: dict[str, BoardCase]) -> float:
    """FixPipe bytes per cycle of MDL cases 4-7 (no UnitFlag): block bytes over busy per block."""
    rates = []
    for name in ("case4", "case5", "case6", "case7"):
        c = cases[name]
        t = c.tiling
        blocks = ceil_div(t.singleCoreM, t.baseM) * ceil_div(t.singleCoreN, t.baseN)
        block_bytes = t.baseM * t.baseN * 2  # fp16 out
        rates.append(block_bytes * blocks / _cycles(c, "FIX"))
    return statistics.mean(rates)


def fit_miss_slowdown(cases: dict[str, BoardCase], preset: HardwarePreset) -> float:
    """L2 miss slowdown from case 5's MTE2 over case 6's (through the estimator)."""
    five, six = cases["case5"], cases["case6"]
    target = math.log(five.pipes_us["MTE2"] / six.pipes_us["MTE2"])

    def f(x: float) -> float:
        hw = custom_preset({**preset.model_dump(), "l2_miss_slowdown": x})
        m5 = predict(dataclasses.replace(five, preset=hw), "est")["pipes"]["MTE2"]
        m6 = predict(dataclasses.replace(six, preset=hw), "est")["pipes"]["MTE2"]
        return (math.log(m5 / m6) - target) ** 2

    return golden_section(f, 1.0, 4.5)


def fit(cases: dict[str, BoardCase]) -> dict[str, Any]:
    """Every fitted constant, in the order the stages need them."""
    latency, row_cycles = fit_nd_copy(cases)
    coeff, cap = fit_same_address(cases, latency, row_cycles)
    startup = statistics.mean(
        c.time_us - c.core_avg_us for c in cases.values() if c.core_avg_us is not None
    )
    values: dict[str, Any] = {
        "nd2nz_latency_cycles": round(latency, 1),
        "nd2nz_row_cycles": round(row_cycles, 3),
        "mte1_latency_cycles": round(fit_mte1_latency(cases), 1),
        "same_address_coeff": round(coeff, 5),
        "same_address_max_sharers": cap,
        "fixpipe_bytes_per_cycle": round(fit_fixpipe_rate(cases), 1),
        "device_startup_us": round(startup, 2),
        "launch_overhead_us": round(startup, 2),
        "mmad_restart_cycles": round(fit_mmad_restart(cases)[0], 1),
    }
    base = next(iter(cases.values())).preset
    trial = custom_preset({**base.model_dump(), **values})
    values["l2_miss_slowdown"] = round(fit_miss_slowdown(cases, trial), 3)
    return values


def print_residuals(cases: list[BoardCase], preset: HardwarePreset) -> None:
    """Model over measured - 1 for the task time and each pipe, both fidelities."""
    pipes = ("MTE2", "M", "MTE1", "SCALAR", "FIX")
    for fidelity in ("sim", "est"):
        print(f"{fidelity}: case   task " + " ".join(f"{p:>7}" for p in pipes))
        for case in cases:
            out = predict(dataclasses.replace(case, preset=preset), fidelity)
            line = f"{fidelity}: {case.name} {out['device_us'] / case.time_us - 1:+7.1%}"
            for p in pipes:
                line += f" {out['pipes'][p] / case.pipes_us[p] - 1:+7.1%}"
            print(line)


def main() -> int:
    cases = msprof_cases(FILE)
    by_name = {c.name: c for c in cases}
    values = fit(by_name)
    for key, value in values.items():
        print(f"{key} = {value}")
    preset = custom_preset({**cases[0].preset.model_dump(), **values})
    print_residuals(cases, preset)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
