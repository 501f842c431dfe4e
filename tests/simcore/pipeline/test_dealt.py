"""A dealt split (aclnn MatMulV3's base blocks): more tiles than cores, dealt in rounds."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimate.estimator import ESTIMATOR_FIELDS, estimate_arrays, estimate_one
from simcore.evaluate import evaluate, instruction_count, simulated_instruction_count
from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import Costs, takes_vector_path
from simcore.pipeline.simulator import simulate, simulate_core
from simcore.pipeline.traffic import CoreShape, chip_traffic, core_programs, dealt_rounds
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem

#: MatMulV3's SetBaseBlockTiling for 910B2 fp16: 128 x 256 x 64 base blocks as the tiles.
V3_FIELDS = {
    "usedCoreNum": 24, "singleCoreM": 128, "singleCoreN": 256, "baseM": 128, "baseN": 256,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
    "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2, "dbL0C": 1,
}  # fmt: skip


def test_tiles_are_dealt_row_major_to_cores_in_rounds() -> None:
    """Core i takes tiles i, i + usedCoreNum, ...; the tiles numbered row-major (N inner)."""
    problem = Problem(m=300, n=500, k=256)
    fields = {**V3_FIELDS, "usedCoreNum": 4}
    tiling = complete_tiling(fields, problem, load_preset("Ascend910B2"))
    # 3 x 2 tiles (rows 128, 128, 44; columns 256, 244) on 4 cores: cores 0 and 1 take two.
    programs = {p.program: p.cores for p in core_programs(problem, tiling)}
    assert programs == {
        ((128, 256), (44, 256)): 1,
        ((128, 244), (44, 244)): 1,
        ((128, 256),): 1,
        ((128, 244),): 1,
    }
    assert dealt_rounds(problem, tiling) == 2


def test_one_tile_per_core_keeps_its_core_shapes() -> None:
    problem = Problem(m=4096, n=4096, k=4096)
    fields = {**V3_FIELDS, "singleCoreM": 1024, "singleCoreN": 768}
    tiling = complete_tiling(fields, problem, load_preset("Ascend910B2"))
    assert dealt_rounds(problem, tiling) == 1
    assert all(p.program == ((p.rows, p.cols),) for p in core_programs(problem, tiling))


def test_r_tiles_take_r_times_one_tiles_work_and_overlap_at_the_seams() -> None:
    """A core of 5 tiles: each pipe works 5 x one tile's; the makespan 5 x one tile's less overlap.

    The next tile's copies start while the previous tile's last MMADs and drain run (the L1
    slots free at the MMAD start of their chunks' last step), so the core takes less than five
    single tiles one after the other, and no less than five tiles of its busiest pipe.
    """
    preset = load_preset("Ascend910B2")
    problem = Problem(m=2048, n=2048, k=2048, template="mdl")
    tiling = complete_tiling(V3_FIELDS, problem, preset)
    traffic = chip_traffic(problem, tiling, preset)
    costs = Costs(problem, preset, takes_vector_path(problem, tiling, preset))
    cap, write_cap = traffic.cap_bytes_per_cycle, traffic.write_cap_bytes_per_cycle

    def play(tiles: int) -> tuple[float, dict[str, float]]:
        shape = CoreShape(128, 256, 1, tiles=((128, 256),) * tiles)
        core = simulate_core(problem, tiling, preset, shape, cap, costs, write_cap)
        return core.makespan_cycles, core.busy_cycles

    one, one_busy = play(1)
    five, five_busy = play(5)
    for pipe in ("MTE2", "MTE1", "M", "FIX"):
        assert five_busy[pipe] == pytest.approx(5 * one_busy[pipe], rel=1e-12)
    busiest = max(one_busy[p] for p in ("MTE2", "MTE1", "M", "FIX"))
    assert 5 * busiest <= five < 5 * one
    # The seams cost little: the rounds run near the busiest pipe's steady state.
    assert five - one <= 4 * busiest * 1.05


def test_dealt_kernel_is_priced_on_its_slowest_core() -> None:
    """2048^3: 16 x 8 = 128 tiles on 24 cores: 8 cores take 6 tiles, 16 take 5."""
    preset = load_preset("Ascend910B2")
    problem = Problem(m=2048, n=2048, k=2048, template="mdl")
    tiling = complete_tiling(V3_FIELDS, problem, preset)
    sim = simulate(problem, tiling, preset)
    assert sorted((len(c.shape.program), c.shape.cores) for c in sim.cores) == [(5, 16), (6, 8)]
    assert len(sim.slowest.shape.program) == 6
    # Every tile's reads count in the chip's traffic: each of the 128 tiles reads its
    # 128 + 256 rows of K once.
    assert sim.read_bytes == 128 * (128 + 256) * 2048 * 2


def test_estimator_prices_the_dealt_kernel_as_the_simulator() -> None:
    """MatMulV3's kernel at 2048 / 4096: the dealt_rounds term within 2 % of the simulator."""
    preset = load_preset("Ascend910B2")
    for n in (2048, 4096):
        problem = Problem(m=n, n=n, k=n, template="mdl")
        tiling = complete_tiling(V3_FIELDS, problem, preset)
        sim = simulate(problem, tiling, preset)
        est = estimate_one(problem, tiling, preset)
        assert est["binding_term"] in ("dealt_rounds", "pipe:MTE2")
        assert est["time_us"] == pytest.approx(sim.time_us, rel=0.02)
        assert est["busy_MTE2"] == pytest.approx(sim.busy_cycles["MTE2"], rel=0.02)
        assert est["read_bytes"] == sim.read_bytes


def test_estimator_without_usedcorenum_keeps_one_tile_per_core() -> None:
    """Arrays without usedCoreNum are priced one tile per core, as before dealt splits."""
    preset = load_preset("Ascend910B2")
    problem = Problem(m=4096, n=4096, k=4096, template="mdl")
    tiling = complete_tiling(V3_FIELDS, problem, preset)
    fields = {name: np.asarray([getattr(tiling, name)]) for name in ESTIMATOR_FIELDS}
    without = estimate_arrays(problem, preset, fields)["time_us"][0]
    # (As if each of the 512 tiles had its own core: no dealt_rounds term.)
    spread = estimate_one(problem, tiling.model_copy(update={"usedCoreNum": 512}), preset)
    assert without == spread["time_us"] and spread["binding_term"] != "dealt_rounds"
    assert estimate_one(problem, tiling, preset)["binding_term"] == "dealt_rounds"


def test_evaluate_prices_a_dealt_tiling_and_bounds_its_simulation_by_its_rounds() -> None:
    """The service's evaluate: legal with the DEALT_SPLIT warning, the instruction bound x R."""
    preset = load_preset("Ascend910B2")
    problem = Problem(m=4096, n=4096, k=4096, template="mdl")
    tiling = complete_tiling(V3_FIELDS, problem, preset)
    one_tile = tiling.model_copy(update={"usedCoreNum": 512})
    assert instruction_count(problem, tiling) == 22 * instruction_count(problem, one_tile)
    out = evaluate(problem, tiling, preset)
    assert out["valid"] and [w["id"] for w in out["warnings"]] == ["DEALT_SPLIT"]
    assert out["estimate"]["binding_term"] == "dealt_rounds"


@pytest.mark.parametrize("m_n", [(4096, 4096), (4000, 4000)])
def test_the_simulation_budget_counts_every_core_program(m_n: tuple[int, int]) -> None:
    """The search's simulation budget measures the simulator's work, every core program.

    A dealt split's tail tiles fall on different cores in different rounds, so the simulator
    plays several programs (six at 4000^2); one core's count misses most of that work. The
    count follows the instructions the simulator actually plays, dealt or not.
    """
    preset = load_preset("Ascend910B2")
    problem = Problem(m=m_n[0], n=m_n[1], k=1024, template="mdl")
    dealt = complete_tiling(V3_FIELDS, problem, preset)
    split = complete_tiling({**V3_FIELDS, "singleCoreM": 1024, "singleCoreN": 768}, problem, preset)
    for tiling in (dealt, split):
        played = sum(c.instructions for c in simulate(problem, tiling, preset).cores)
        assert 0.75 * played <= simulated_instruction_count(problem, tiling) <= 1.25 * played
    if len(core_programs(problem, dealt)) > 2:
        played = sum(c.instructions for c in simulate(problem, dealt, preset).cores)
        assert instruction_count(problem, dealt) < 0.25 * played
