"""Speed of the model, as ratios against numpy baselines measured in the same run.

Wall and process CPU time are both printed: on a host shared with other jobs the CPU time is the
figure for "one core".

* Estimator throughput: candidate tilings scored per second on one core (target >= 1,000,000),
  beside numpy's own rate for a dot product over arrays of the same length (a floor for any
  vectorized computation on this machine).
* Simulator: one 8192^3 fp16 tiling on 910B2 (CANN's own) in milliseconds (target <= 50 ms),
  beside the time numpy takes to sort an array of as many floats as the schedule has instructions.

    uv run python -m benchmarks.model_speed
    uv run python -m benchmarks.model_speed --soc Ascend310P3   # the estimator on another chip
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from simcore.alloc import tune_allocator
from simcore.estimate.estimator import ESTIMATOR_FIELDS, estimate_arrays
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tests.support.random_tilings import random_tiling


def best_of(fn, repeat: int = 5, clock=time.perf_counter) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def cpu_best_of(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    """Best process CPU time: what one core spends, unaffected by other jobs sharing the host."""
    return best_of(fn, repeat, time.process_time)


def main() -> int:
    tune_allocator()  # as the tiler command does: the estimator's block temporaries stay mapped
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--soc", default="Ascend910B2", help="chip of the estimator's 4096^3 candidates"
    )
    soc = parser.parse_args().soc
    preset = load_preset(soc)
    problem = Problem(soc=soc, m=4096, n=4096, k=4096)
    rng = np.random.default_rng(0)
    pool = [random_tiling(problem, preset, rng) for _ in range(2000)]
    n = 1_000_000
    idx = rng.integers(0, len(pool), n)
    fields = {
        f: np.array([getattr(t, f) for t in pool], dtype=np.int64)[idx] for f in ESTIMATOR_FIELDS
    }
    est_s = best_of(lambda: estimate_arrays(problem, preset, fields), 3)
    a = rng.random(n)
    b = rng.random(n)
    dot_s = best_of(lambda: np.dot(a, b), 20)
    est_cpu = cpu_best_of(lambda: estimate_arrays(problem, preset, fields), 3)
    print(
        f"estimator ({soc}): {n / est_s:,.0f} candidates/s wall ({est_s * 1e3:.1f} ms for {n:,}), "
        f"{n / est_cpu:,.0f} candidates/s of CPU time; numpy dot over {n:,} floats: "
        f"{dot_s * 1e3:.3f} ms; ratio {est_s / dot_s:.0f}x"
    )

    preset = load_preset("Ascend910B2")
    big = Problem(m=8192, n=8192, k=8192)
    spec = {"usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 2816, "baseM": 128,
            "baseN": 256, "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1,
            "stepKa": 8, "stepKb": 4}  # fmt: skip
    tiling = complete_tiling(spec, big, preset)
    sim_s = best_of(lambda: simulate(big, tiling, preset), 5)
    sim_cpu = cpu_best_of(lambda: simulate(big, tiling, preset), 5)
    count = simulate(big, tiling, preset).slowest.instructions
    arr = rng.random(count)
    sort_s = best_of(lambda: np.sort(arr), 20)
    print(f"simulator 8192^3 fp16 910B2: {sim_s * 1e3:.1f} ms wall, {sim_cpu * 1e3:.1f} ms CPU "
          f"({count:,} instructions on the "
          f"slowest core; {count / sim_s:,.0f} instructions/s); numpy sort of {count:,} floats: "
          f"{sort_s * 1e3:.3f} ms; ratio {sim_s / sort_s:.0f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
