"""The simulator plays the blocks several core programs begin with once (issue: a dealt kernel's
~20 programs), and every core's schedule is still bit for bit the one it gets when its program
is played alone, from the core's start."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import Costs, takes_vector_path
from simcore.pipeline.simulator import _program_blocks, simulate, simulate_core
from simcore.pipeline.traffic import chip_traffic, core_programs
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem

#: (problem, tiling fields): dealt kernels with tail tiles whose programs begin alike, on the
#: 910B family (Norm and MDL, FixPipe with and without UnitFlag, a bias, the L2 rounds' walk,
#: both iterate orders), and kernels of UB-path chips, where the UB staging's state carries over
#: (a full tile and its tail begin with the same blocks).
CASES: list[tuple[dict[str, Any], dict[str, int]]] = [
    # tiler tune's kind of answer on 910B4 bf16, smaller: 12 x 18 tiles of 176 x 176 on 20 cores.
    ({"soc": "Ascend910B4", "m": 2000, "n": 3000, "k": 1024, "dtype": "bf16"},
     {"usedCoreNum": 20, "singleCoreM": 176, "singleCoreN": 176, "baseM": 176, "baseN": 176,
      "baseK": 176, "depthA1": 6, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 3,
      "stepKb": 1, "dbL0A": 1, "dbL0B": 1, "dbL0C": 1}),
    # MatMulV3's base blocks (910B2 fp16 MDL), tiles of several blocks, L2 rounds.
    ({"soc": "Ascend910B2", "m": 2100, "n": 3100, "k": 1000, "template": "mdl", "l2_rounds": 2},
     {"usedCoreNum": 24, "singleCoreM": 256, "singleCoreN": 512, "baseM": 128, "baseN": 256,
      "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8,
      "stepKb": 4, "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2, "dbL0C": 1}),
    # A bias and UnitFlag, M inner.
    ({"soc": "Ascend910B2", "m": 1500, "n": 2500, "k": 700, "bias": True, "unit_flag": True},
     {"usedCoreNum": 24, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128, "baseN": 128,
      "baseK": 64, "depthA1": 4, "depthB1": 4, "stepM": 1, "stepN": 1, "stepKa": 2,
      "stepKb": 2, "iterateOrder": 1, "dbL0A": 2, "dbL0B": 2, "dbL0C": 2}),
    # 310P3 (GM->UB->L1 copies, L0C->UB->GM drains): a full tile and its tail.
    ({"soc": "Ascend310P3", "m": 1000, "n": 3000, "k": 1000},
     {"usedCoreNum": 8, "singleCoreM": 512, "singleCoreN": 768, "baseM": 128, "baseN": 128,
      "baseK": 64, "depthA1": 4, "depthB1": 4, "stepM": 1, "stepN": 1, "stepKa": 2,
      "stepKb": 2, "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2, "dbL0C": 2}),
    # 310P3, A in NZ (copied straight to L1), two tiles a core: where the programs part, only a
    # B chunk is copied, so the next drain may wait for the last one's UB->GM.
    ({"soc": "Ascend310P3", "m": 1024, "n": 1800, "k": 256, "format_a": "NZ"},
     {"usedCoreNum": 8, "singleCoreM": 128, "singleCoreN": 1024, "baseM": 128, "baseN": 256,
      "baseK": 64, "depthA1": 4, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 4,
      "stepKb": 4, "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2, "dbL0C": 2}),
    # 910A: a full tile and its tail with a bias.
    ({"soc": "Ascend910A", "m": 3000, "n": 2000, "k": 600, "bias": True},
     {"usedCoreNum": 32, "singleCoreM": 384, "singleCoreN": 512, "baseM": 128, "baseN": 128,
      "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1,
      "stepKb": 1, "iterateOrder": 1, "dbL0A": 2, "dbL0B": 2, "dbL0C": 1}),
]  # fmt: skip
IDS = ["910B4-dealt", "910B2-mdl-l2", "910B2-bias-unitflag", "310P3-tail", "310P3-nz-dealt",
       "910A-bias-tail"]  # fmt: skip


def _shared_blocks(programs: list[Any], tiling: Any) -> int:
    """The most blocks any two programs begin with alike (the case must share some)."""
    blocks = [_program_blocks(p, tiling) for p in programs]
    most = 0
    for i, a in enumerate(blocks):
        for b in blocks[i + 1 :]:
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            most = max(most, n)
    return most


@pytest.mark.parametrize(("spec", "fields"), CASES, ids=IDS)
def test_every_core_is_the_one_its_program_gives_alone(
    spec: dict[str, Any], fields: dict[str, int]
) -> None:
    problem = Problem(**spec)
    preset = load_preset(problem.soc)
    tiling = complete_tiling(fields, problem, preset)
    assert check_tiling(problem, tiling, preset).valid
    programs = core_programs(problem, tiling)
    assert len(programs) >= 2 and _shared_blocks(programs, tiling) >= 1

    result = simulate(problem, tiling, preset)

    traffic = chip_traffic(problem, tiling, preset)
    costs = Costs(problem, preset, takes_vector_path(problem, tiling, preset))
    assert [r.shape for r in result.cores] == programs
    for shared, shape in zip(result.cores, programs, strict=True):
        alone = simulate_core(
            problem, tiling, preset, shape, traffic.cap_bytes_per_cycle, costs,
            traffic.write_cap_bytes_per_cycle,
        )  # fmt: skip
        assert shared.makespan_cycles == alone.makespan_cycles
        assert shared.busy_cycles == alone.busy_cycles
        assert shared.sequential_cycles == alone.sequential_cycles
        assert shared.instructions == alone.instructions
        for name in ("pipe", "kind", "start", "end", "block"):
            mine, own = getattr(shared, name), getattr(alone, name)
            assert mine.dtype == own.dtype and np.array_equal(mine, own), name
