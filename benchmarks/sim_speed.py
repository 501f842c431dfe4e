"""Speed of the event simulator on big kernels, as ratios against a numpy baseline of the same run.

Process CPU time, best of five (the host is shared): one ``simulate`` of each case, beside the
time numpy takes to sort an array of as many floats as the slowest core's schedule has
instructions (as :mod:`benchmarks.model_speed` does for its one case). The cases:

* ``910B2 Norm`` and ``910B2 MDL``: 8192^3 fp16, CANN's one-tile-per-core tiling (the
  model_speed case; the MDL template on the same fields);
* ``910B4 MatMulV3``: 8192^3 bf16, aclnn MatMulV3's dealt base blocks
  (:func:`tiler.baselines.matmul_v3_fields`), two core programs;
* ``910B4 dealt 176``: 8192^3 bf16, a 176 x 176 x 160 tile per round on all 20 cores (a kernel
  ``tiler tune`` re-ranks there): 20 core programs of some 29,000 instructions each;
* ``910B4 tune answer``: 8192^3 bf16, ``tiler tune``'s answer there (176 x 176 x 176 dealt,
  20 programs);
* ``910B2 tune 28672``: 8192 x 8192 x 28672 bf16, ``tiler tune``'s answer (144 x 224 x 144
  dealt, 24 programs).

Where a kernel has several core programs, the line after it gives the CPU of playing each
program alone (``simulate_core`` on each, what ``simulate`` did before it played the blocks
that programs begin with alike once), and the blocks ``simulate`` plays against those of the
programs one by one.

    OMP_NUM_THREADS=1 uv run python -m benchmarks.sim_speed

``--tunes``: instead, runs ``tiler tune`` on big 910B2 / 910B4 shapes (:data:`TUNES`) and
prints, over every kernel each tune simulates, the blocks ``simulate`` plays against those of
the core programs one by one, and the same for the answer's kernel.

    OMP_NUM_THREADS=1 uv run python -m benchmarks.sim_speed --tunes
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.pipeline.costs import Costs, takes_vector_path
from simcore.pipeline.simulator import _common_length, _program_blocks, simulate, simulate_core
from simcore.pipeline.traffic import chip_traffic, core_programs
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
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
#: ``tiler tune``'s answer for 910B4 bf16 8192^3 (2026-11-29).
TUNE_B4: dict[str, int] = {**DEALT_176, "baseK": 176, "depthA1": 6, "stepKa": 3}
#: ``tiler tune --soc Ascend910B2 --m 8192 --n 8192 --k 28672 --dtype bf16``'s answer (2026-11-29).
TUNE_B2_28672: dict[str, int] = {
    "usedCoreNum": 24, "singleCoreM": 144, "singleCoreN": 224, "baseM": 144, "baseN": 224,
    "baseK": 144, "depthA1": 8, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 4, "stepKb": 1,
    "dbL0A": 1, "dbL0B": 1, "dbL0C": 1,
}  # fmt: skip


#: (m, n, k, dtype) of ``--tunes``, each tuned on 910B2 and 910B4.
TUNE_SHAPES: tuple[tuple[int, int, int, str], ...] = (
    (8192, 8192, 8192, "bf16"), (8192, 8192, 8192, "fp16"), (4096, 4096, 4096, "bf16"),
    (4096, 4096, 4096, "fp16"), (512, 5120, 13824, "bf16"), (8192, 8192, 28672, "bf16"),
)  # fmt: skip
TUNES = [(soc, *shape) for soc in ("Ascend910B2", "Ascend910B4") for shape in TUNE_SHAPES]


def cpu_best_of(fn: Callable[[], Any], repeat: int = 5) -> float:
    """Best process CPU time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def programs_alone(problem: Problem, tiling: TCubeTiling, preset: HardwarePreset) -> None:
    """Each core program played alone, from the core's start (``simulate`` before the sharing)."""
    view = problem.model_view()
    traffic = chip_traffic(view, tiling, preset)
    costs = Costs(view, preset, takes_vector_path(view, tiling, preset))
    for shape in core_programs(view, tiling):
        simulate_core(
            view, tiling, preset, shape, traffic.cap_bytes_per_cycle, costs,
            traffic.write_cap_bytes_per_cycle,
        )  # fmt: skip


def played_blocks(problem: Problem, tiling: TCubeTiling) -> tuple[int, int]:
    """(blocks ``simulate`` plays, blocks of the core programs one by one)."""
    shapes = sorted(core_programs(problem.model_view(), tiling), key=lambda s: s.program)
    programs = [_program_blocks(s, tiling) for s in shapes]
    alone = sum(len(p) for p in programs)
    shared = sum(_common_length(a, b) for a, b in pairwise(programs))
    return alone - shared, alone


def tune_sharing() -> None:
    """Per :data:`TUNES` shape: the blocks played over the kernels ``tiler tune`` simulates."""
    import simcore.evaluate
    import tiler.study
    from tiler.tune import parse_tune_request, tune

    kernels: list[tuple[Problem, TCubeTiling]] = []

    def counted(problem: Problem, tiling: TCubeTiling, preset: HardwarePreset) -> Any:
        kernels.append((problem, tiling))
        return simulate(problem, tiling, preset)

    for soc, m, n, k, dtype in TUNES:
        kernels.clear()
        saved = tiler.study.simulate, simcore.evaluate.simulate
        tiler.study.simulate = simcore.evaluate.simulate = counted
        try:
            problem = {"soc": soc, "m": m, "n": n, "k": k, "dtype": dtype}
            answer = tune(parse_tune_request({"problem": problem}))["tiling"]
        finally:
            tiler.study.simulate, simcore.evaluate.simulate = saved
        blocks = [played_blocks(p, t) for p, t in kernels]
        played, alone = sum(b[0] for b in blocks), sum(b[1] for b in blocks)
        mine = next(
            b
            for (_, t), b in zip(kernels, blocks, strict=True)
            if all(getattr(t, f) == v for f, v in answer.items())
        )
        print(
            f"{soc} {m} x {n} x {k} {dtype}: {len(kernels)} kernels simulated, blocks played "
            f"{played:,} of {alone:,} ({alone / played:.2f}x fewer); the answer "
            f"({answer['singleCoreM']} x {answer['singleCoreN']}, base {answer['baseM']} x "
            f"{answer['baseN']} x {answer['baseK']}) {mine[0]:,} of {mine[1]:,}",
            flush=True,
        )


def main() -> int:
    if "--tunes" in sys.argv[1:]:
        tune_sharing()
        return 0
    b2, b4 = load_preset("Ascend910B2"), load_preset("Ascend910B4")
    norm = Problem(m=8192, n=8192, k=8192)
    mdl = Problem(m=8192, n=8192, k=8192, template="mdl")
    bf16 = Problem(soc="Ascend910B4", m=8192, n=8192, k=8192, dtype="bf16")
    long_k = Problem(soc="Ascend910B2", m=8192, n=8192, k=28672, dtype="bf16")
    v3 = matmul_v3_fields(bf16, b4)
    assert v3 is not None  # (8192^3 bf16 on 910B4 is in MatMulV3's scope)
    cases = [
        ("910B2 Norm", norm, complete_tiling(CANN_8192, norm, b2), b2),
        ("910B2 MDL", mdl, complete_tiling(CANN_8192, mdl, b2), b2),
        ("910B4 MatMulV3", bf16, complete_tiling(v3, bf16, b4), b4),
        ("910B4 dealt 176", bf16, complete_tiling(DEALT_176, bf16, b4), b4),
        ("910B4 tune answer", bf16, complete_tiling(TUNE_B4, bf16, b4), b4),
        ("910B2 tune 28672", long_k, complete_tiling(TUNE_B2_28672, long_k, b2), b2),
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
        if len(result.cores) > 1:
            alone_s = cpu_best_of(lambda p=problem, t=tiling, h=preset: programs_alone(p, t, h))
            played, alone = played_blocks(problem, tiling)
            print(
                f"{'':16s} {alone_s * 1e3:8.1f} ms CPU with each program alone "
                f"({alone_s / sim_s:.2f}x); blocks played {played:,} of {alone:,} "
                f"({alone / played:.2f}x fewer)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
