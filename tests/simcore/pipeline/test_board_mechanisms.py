"""The mechanisms calibrated on the board (issue 17), each by hand on round numbers."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import custom_preset, load_preset
from simcore.pipeline.costs import Costs
from simcore.pipeline.restart import restart_at_step, restart_on_last_step, restarts_per_block
from simcore.pipeline.scalar import scalar_cycles
from simcore.pipeline.simulator import simulate
from simcore.pipeline.traffic import core_share, kernel_times, l2_share_of
from simcore.pipeline.transfer import copy_pieces, same_address_factor
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem

B1 = load_preset("Ascend910B1")


def test_nd_copy_is_bound_by_its_rows_or_by_its_bytes() -> None:
    c = Costs(Problem(soc="Ascend910B1", m=8192, n=8192, k=8192, trans_b=True), B1)
    lat, row = B1.nd2nz_latency_cycles, B1.nd2nz_row_cycles
    # 128 rows of 64 fp16 (128 B each): 128 row requests outlast 16 KiB at 190.8 B/cycle.
    assert c.direct_load_cycles(True, 128, 64, 1e9) == pytest.approx(lat + 128 * row)
    # 128 rows of 512 (1 KiB each) at an 80 B/cycle share: the bytes bind.
    assert c.direct_load_cycles(True, 128, 512, 80.0) == pytest.approx(lat + 128 * 512 * 2 / 80)
    # Norm: a 128 x 256 chunk in four base-block copies of baseK 64, each row once per copy.
    pieces = copy_pieces(True, 128, 128, 256, 64)
    assert pieces == (1, 4)
    assert c.direct_load_cycles(True, 128, 256, 1e9, pieces) == pytest.approx(
        4 * lat + 4 * 128 * row
    )
    # Cores reading the same rows stretch the row requests, not the bandwidth-bound stream.
    f = 1.5
    assert c.direct_load_cycles(True, 128, 64, 1e9, (1, 1), f) == pytest.approx(lat + 128 * row * f)
    assert c.direct_load_cycles(True, 128, 512, 80.0, (1, 1), f) == pytest.approx(
        lat + 128 * 512 * 2 / 80
    )


def test_same_address_factor_is_quadratic_and_held_at_the_measured_range() -> None:
    a = B1.same_address_coeff
    assert same_address_factor(B1, 1) == 1.0
    assert same_address_factor(B1, 4) == pytest.approx(1 + 9 * a)
    assert same_address_factor(B1, 12) == pytest.approx(1 + 121 * a)
    assert same_address_factor(B1, 24) == same_address_factor(B1, 12)


def test_scalar_work_per_step_and_per_copy_by_template() -> None:
    norm = Problem(soc="Ascend910B1", m=64, n=64, k=64)
    mdl = Problem(soc="Ascend910B1", m=64, n=64, k=64, template="mdl", constant_tiling=True)
    assert scalar_cycles(B1, norm, 10, 20) == pytest.approx(6542 + 10 * 144.2 + 20 * 152.3)
    assert scalar_cycles(B1, mdl, 10, 20) == pytest.approx((6542 + 10 * 144.2 + 20 * 275.3) * 0.68)


def test_kernel_times_device_average_and_end_to_end() -> None:
    times = kernel_times(B1, 1850.0, 0.5)  # one microsecond of core time at 1850 MHz
    assert times.device_time_us == pytest.approx(1.0 + B1.device_startup_us)
    assert times.core_time_avg_us == pytest.approx(0.5)
    assert times.time_us == pytest.approx(1.0 + B1.launch_overhead_us)
    assert times.end_to_end_us == B1.host_dispatch_floor_us


def test_core_share_of_the_four_by_six_split() -> None:
    # 8192 x 8192 over 2048 x 1536 cores: the last column of cores gets 512 columns (2 of 6
    # blocks of 256), so the cores' mean share is (5 x 6 + 2) / 36 of the largest.
    assert core_share(8192, 8192, 2048, 1536, 128, 256) == pytest.approx(32 / 36)


def test_on_the_fly_nd_copies_draw_less_of_the_l2_share() -> None:
    s = B1.nd2nz_l2_share
    assert l2_share_of(True, True, 1.0, 1.0, B1) == pytest.approx(s)
    assert l2_share_of(True, False, 1.0, 1.0, B1) == pytest.approx(1 - (1 - s) / 2)
    assert l2_share_of(False, False, 1.0, 1.0, B1) == 1.0
    assert l2_share_of(True, True, 1.0, 1.0, load_preset("Ascend310P3")) == 1.0


def _one_slot(template: str, stepK: int = 1, **opts: object) -> tuple[Problem, object]:
    p = Problem(soc="Ascend910B1", m=2048, n=2048, k=2048, template=template, **opts)  # type: ignore[arg-type]
    spec = {
        "usedCoreNum": 16, "singleCoreM": 512, "singleCoreN": 512, "baseM": 128, "baseN": 256,
        "baseK": 64, "depthA1": stepK, "depthB1": stepK, "stepM": 1, "stepN": 1, "stepKa": stepK,
        "stepKb": stepK,
    }  # fmt: skip
    return p, complete_tiling(spec, p, B1)


def test_norm_hand_off_puts_mte2_and_mte1_in_series() -> None:
    p, t = _one_slot("norm")
    sim = simulate(p, t, B1)
    busy = sim.slowest.busy_cycles
    assert sim.slowest.makespan_cycles >= busy["MTE2"] + busy["MTE1"]
    assert estimate_one(p, t, B1)["binding_term"] == "norm_step_handoff"
    # MDL keeps one flag per operand: the copies overlap the reads.
    p_mdl, t_mdl = _one_slot("mdl")
    mdl = simulate(p_mdl, t_mdl, B1).slowest
    assert mdl.makespan_cycles < mdl.busy_cycles["MTE2"] + mdl.busy_cycles["MTE1"]


def test_mmad_restart_on_every_chunk_start_under_the_hand_off() -> None:
    # 512 x 512 per core in 128 x 256 blocks: 8 blocks of 32 K steps, one MMAD each of
    # 2.13 + 8 x 16 x 4 fractal cycles; under the hand-off every chunk's first MMAD restarts.
    mmad, restart = B1.mmad_overhead_cycles + 8 * 16 * 4, B1.mmad_restart_cycles
    assert restart == pytest.approx(60.3)
    assert restart_at_step(True, 4, 2) and not restart_at_step(True, 5, 2)
    assert not restart_at_step(False, 0, 1)
    assert restarts_per_block(True, 32, 2) == 16 and restarts_per_block(False, 32, 2) == 0
    assert restart_on_last_step(True, 33, 2) == 1 and restart_on_last_step(True, 32, 2) == 0
    for step_k, restarts in ((1, 8 * 32), (2, 8 * 16)):
        p, t = _one_slot("norm", stepK=step_k)
        sim = simulate(p, t, B1).slowest.busy_cycles["M"]
        assert sim == pytest.approx(8 * 32 * mmad + restarts * restart)
        assert estimate_one(p, t, B1)["busy_M"] == pytest.approx(sim, rel=1e-12)
    # MDL's cube is fed ahead of its MMADs: no restart priced.
    p_mdl, t_mdl = _one_slot("mdl")
    assert simulate(p_mdl, t_mdl, B1).slowest.busy_cycles["M"] == pytest.approx(8 * 32 * mmad)


@pytest.mark.parametrize("db_l0c", [1, 2])
def test_unit_flag_hides_the_drain_of_a_drain_bound_kernel(db_l0c: int) -> None:
    # With one L0C buffer UnitFlag also hands L0C off as two do; with two what it saves is the
    # drains' overlap with the last MMADs (simcore.pipeline.drain.unit_flag_drain_end).
    p = Problem(soc="Ascend910B1", m=2048, n=2048, k=256, template="mdl")
    spec = {
        "usedCoreNum": 16, "singleCoreM": 512, "singleCoreN": 512, "baseM": 128, "baseN": 256,
        "baseK": 64, "depthA1": 8, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 4, "stepKb": 4,
        "dbL0C": db_l0c,
    }  # fmt: skip
    t = complete_tiling(spec, p, B1)
    flagged = p.model_copy(update={"unit_flag": True})
    plain, with_flag = simulate(p, t, B1), simulate(flagged, t, B1)
    assert with_flag.device_time_us < plain.device_time_us
    est = estimate_one(flagged, t, B1)
    assert est["device_time_us"] == pytest.approx(with_flag.device_time_us, rel=0.01)


def test_neutral_custom_preset_has_none_of_the_mechanisms() -> None:
    spec = B1.model_dump()
    for key in ("nd2nz_row_cycles", "same_address_coeff", "scalar_step_cycles",
                "scalar_startup_cycles", "scalar_norm_copy_cycles", "scalar_mdl_copy_cycles",
                "device_startup_us", "host_dispatch_floor_us", "mmad_restart_cycles"):  # fmt: skip
        spec.pop(key)
    bare = custom_preset(spec)
    assert bare.nd2nz_row_cycles == 0.0 and bare.same_address_coeff == 0.0
    assert bare.mmad_restart_cycles == 0.0
    assert float(np.asarray(scalar_cycles(bare, Problem(m=64, n=64, k=64), 10, 10))) == 0.0
