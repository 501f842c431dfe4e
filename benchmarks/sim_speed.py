"""Speed of the event simulator on big kernels, as ratios against a numpy baseline of the same run.

Process CPU time, best of five (the host is shared): one ``simulate`` of each case, beside the
time numpy takes to sort an array of as many floats as the slowest core's schedule has
instructions (as :mod:`benchmarks.model_speed` does for its one case). The cases:

* ``910B2 Norm`` and ``910B2 MDL``: 8192^3 fp16, CANN's one-tile-per-core tiling (the
  model_speed case; the MDL template on the same fields);
* ``910B4 MatMulV3``: 8192^3 bf16, aclnn MatMulV3's dealt base blocks
  (:func:`tiler.baselines.matmul_v3_fields`), two core programs;
* ``910B4 dealt 176``: 8192^3 bf16, a 176 x 176 x 160 tile per round on all 20 cores (a kernel
  ``tiler tune`` re-ranks there): 20 core programs of some 29,000 instructions each.

    OMP_NUM_THREADS=1 uv run python -m benchmarks.sim_speed
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tiler.baselines import matmul_v3_fields

#: CANN's 910B2 tiling of 8192^3 (benchmarks.model_speed).
CANN_8192: dict[str, int] = {
    "usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 2816, "baseM": 128, "baseN": 256,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
}  # fmt: skip
#: A dealt 910B4 kernel of ``tiler tune --soc Ascend910B4 --m 8192 --n 8192 --k 8192 --dtype bf16``.
DEALT_176: dict[str, int] = {
    "usedCoreNum": 20, "singleCoreM": 176, "singleCoreN": 176, "baseM": 176, "baseN": 176,
    "baseK": 160, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1, "stepKb": 1,
    "dbL0A": 1, "dbL0B": 1, "dbL0C": 1,
}  # fmt: skip


def cpu_best_of(fn: Callable[[], Any], repeat: int = 5) -> float:
    """Best process CPU time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def main() -> int:
    b2, b4 = load_preset("Ascend910B2"), load_preset("Ascend910B4")
    norm = Problem(m=8192, n=8192, k=8192)
    mdl = Problem(m=8192, n=8192, k=8192, template="mdl")
    bf16 = Problem(soc="Ascend910B4", m=8192, n=8192, k=8192, dtype="bf16")
    v3 = matmul_v3_fields(bf16, b4)
    assert v3 is not None  # (8192^3 bf16 on 910B4 is in MatMulV3's scope)
    cases = [
        ("910B2 Norm", norm, complete_tiling(CANN_8192, norm, b2), b2),
        ("910B2 MDL", mdl, complete_tiling(CANN_8192, mdl, b2), b2),
        ("910B4 MatMulV3", bf16, complete_tiling(v3, bf16, b4), b4),
        ("910B4 dealt 176", bf16, complete_tiling(DEALT_176, bf16, b4), b4),
    ]
    rng = np.random.default_rng(0)
    for name, problem, tiling, preset in cases:
        result = simulate(problem, tiling, preset)
        sim_s = cpu_best_of(lambda p=problem, t=tiling, h=preset: simulate(p, t, h))
        count = result.slowest.instructions
        arr = rng.random(count)
        sort_s = cpu_best_of(lambda a=arr: np.sort(a), 20)
        print(
            f"{name:16s} {sim_s * 1e3:8.1f} ms CPU, {len(result.cores):2d} core programs, "
            f"{sum(r.instructions for r in result.cores):,} instructions; numpy sort of "
            f"{count:,} floats {sort_s * 1e3:.3f} ms; ratio {sim_s / sort_s:.0f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
