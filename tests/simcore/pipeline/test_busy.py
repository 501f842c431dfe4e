"""The pipes' busy totals fixed by the base block (simcore.pipeline.busy), written once.

The search's group bounds and the estimator's per-operand floors both start from them, so they
must be what the simulator's core spends on those pipes.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.hardware.presets import load_preset
from simcore.pipeline.busy import block_types, compute_busy, drain_busy
from simcore.pipeline.costs import Costs, takes_vector_path
from simcore.pipeline.simulator import simulate
from simcore.tiling.problem import Problem
from tests.support.random_tilings import random_tiling


def test_block_types_of_a_core_with_tail_rows_and_columns() -> None:
    # 100 x 70 in 32 x 32 blocks: 3 full rows and a 4-row tail, 2 full columns and a 6-column
    # tail; by hand 6 full blocks, 3 with the tail column, 2 with the tail row, one corner.
    types = block_types(100, 70, 32, 32)
    assert [(int(r), int(c), int(n)) for r, c, n in types] == [
        (32, 32, 6),
        (32, 6, 3),
        (4, 32, 2),
        (4, 6, 1),
    ]


def test_compute_busy_by_hand() -> None:
    # One 32 x 32 block over K = 100 in baseK = 64 steps (a full step and a 36 tail): two
    # MMADs and two pairs of L0 loads, each from the cost facade.
    problem = Problem(m=32, n=32, k=100)
    c = Costs(problem, load_preset(problem.soc))
    cube, mte1 = compute_busy(c, 100, 32, 32, 32, 32, 64)
    assert cube == c.mmad_cycles(32, 32, 64) + c.mmad_cycles(32, 32, 36)
    assert mte1 == pytest.approx(
        c.la_cycles(32, 64) + c.lb_cycles(32, 64) + c.la_cycles(32, 36) + c.lb_cycles(32, 36)
    )


@pytest.mark.parametrize(
    "problem",
    [
        Problem(m=1000, n=2000, k=3000),
        Problem(m=333, n=777, k=1999, dtype="bf16", soc="Ascend910B4", bias=True),
        Problem(m=512, n=1024, k=3000, soc="Ascend310P3", format_a="NZ", format_b="NZ"),
        Problem(m=300, n=500, k=700, dtype="int8", soc="Ascend910A", format_a="NZ", format_b="NZ"),
    ],
)
def test_totals_are_the_simulated_cores_busy_cycles(problem: Problem) -> None:
    # The slowest core of the simulator spends exactly these cycles on M and MTE1, and on the
    # drain's pipes (FIX; or, with NZ inputs and no FixPipe, V and MTE3, which then carry only
    # the drain's legs).
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(3)
    for _ in range(8):
        t = random_tiling(problem, preset, rng)
        sim = simulate(problem, t, preset)
        core = max(sim.cores, key=lambda r: r.shape.rows * r.shape.cols)
        c = Costs(problem, preset, takes_vector_path(problem, t, preset))
        rows, cols = core.shape.rows, core.shape.cols
        cube, mte1 = compute_busy(c, problem.k, rows, cols, t.baseM, t.baseN, t.baseK)
        fix, vec, mte3, _ = drain_busy(c, rows, cols, t.baseM, t.baseN, sim.cap_bytes_per_cycle)
        busy = core.busy_cycles
        assert cube == pytest.approx(busy["M"], rel=1e-12)
        assert mte1 == pytest.approx(busy["MTE1"], rel=1e-12)
        if preset.has_fixpipe:
            assert fix == pytest.approx(busy["FIX"], rel=1e-12)
            assert vec == 0.0 and mte3 == 0.0
        else:
            assert fix == 0.0
            assert vec == pytest.approx(busy["V"], rel=1e-12)
            assert mte3 == pytest.approx(busy["MTE3"], rel=1e-12)
