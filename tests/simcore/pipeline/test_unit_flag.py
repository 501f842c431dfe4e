"""UnitFlag's fine-grained MMAD / FixPipe overlap: one rule, in both fidelities."""

from __future__ import annotations

import pytest

from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import Costs
from simcore.pipeline.drain import (
    unit_flag_drain_end,
    unit_flag_drain_start,
    unit_flag_drain_tail,
    unit_flag_grain_bytes,
)
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tests.support.board import msprof_cases

B1 = load_preset("Ascend910B1")


def test_the_rule_on_a_hand_computed_block() -> None:
    # Last MMAD 5000 -> 5256 (256 cycles), a 1000-cycle drain, an 8-cycle grain: the drain starts
    # with the MMAD and ends 744 cycles after it (1000 - 256), not 1000.
    start = unit_flag_drain_start(5000.0)
    assert start == 5000.0
    assert unit_flag_drain_end(start, 1000.0, 5256.0, 8.0) == 6000.0
    assert unit_flag_drain_tail(256.0, 1000.0, 8.0) == 744.0
    # A drain shorter than the MMAD ends one grain after it.
    assert unit_flag_drain_end(start, 100.0, 5256.0, 8.0) == 5264.0
    assert unit_flag_drain_tail(256.0, 100.0, 8.0) == 8.0
    assert unit_flag_grain_bytes() == 512


def test_grain_is_512_bytes_at_the_fixpipe_rate() -> None:
    c = Costs(Problem(soc="Ascend910B1", m=64, n=64, k=64, unit_flag=True), B1)
    rate = min(1e9, B1.fixpipe_bytes_per_cycle)
    assert c.fix_grain_cycles(1e9) == pytest.approx(512 / rate)
    # The last drain after a long MMAD is one grain, never more than the whole drain.
    assert c.fix_last_drain_cycles(128, 256, 1e9, 1e6) == pytest.approx(512 / rate)
    assert c.fix_last_drain_cycles(128, 256, 1e9, 0.0) == c.fix_cycles(128, 256, 1e9)


def _board(name: str):  # type: ignore[no-untyped-def]
    return next(c for c in msprof_cases() if c.name == name)


def test_case_8_runs_faster_than_case_7_in_both_fidelities_and_they_agree() -> None:
    times = {}
    for name in ("case7", "case8"):
        case = _board(name)
        sim = simulate(case.problem, case.tiling, case.preset).device_time_us
        est = estimate_one(case.problem, case.tiling, case.preset)["device_time_us"]
        assert est == pytest.approx(sim, rel=0.02)
        times[name] = (sim, est)
    assert times["case8"][0] < times["case7"][0]
    assert times["case8"][1] < times["case7"][1]


def test_chips_without_fixpipe_see_no_overlap() -> None:
    # Arch 2002 has no unitFlag (ascend-notes section 5): with two L0C buffers already, the flag
    # changes nothing there.
    a = load_preset("Ascend910A")
    p = Problem(soc="Ascend910A", m=1024, n=1024, k=512)
    spec = {
        "usedCoreNum": 16, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128, "baseN": 128,
        "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1,
        "stepKb": 1, "dbL0C": 2,
    }  # fmt: skip
    t = complete_tiling(spec, p, a)
    flagged = p.model_copy(update={"unit_flag": True})
    assert simulate(flagged, t, a).device_time_us == simulate(p, t, a).device_time_us
    assert estimate_one(flagged, t, a)["device_time_us"] == estimate_one(p, t, a)["device_time_us"]
