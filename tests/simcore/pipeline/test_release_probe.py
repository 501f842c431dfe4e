"""The release-at-MMAD experiment of scripts/probe_open_items.py (docs/calibration.md, open items).

The probe wraps the simulator's module globals for one experiment; these tests pin the figure it
reports for case 4 and that the model is the same before and after it ran.
"""

from __future__ import annotations

import simcore.pipeline.simulator as sim_mod
from scripts.probe_open_items import _release_at_mmad, _ReleaseAtMmad
from simcore.pipeline.simulator import simulate
from tests.support.board import msprof_cases


def test_release_at_mmad_start_takes_case4_from_minus_12_to_minus_4_percent() -> None:
    case = next(c for c in msprof_cases() if c.name == "case4")
    before = simulate(case.problem, case.tiling, case.preset).device_time_us
    with _release_at_mmad():
        late = simulate(case.problem, case.tiling, case.preset).device_time_us
    after = simulate(case.problem, case.tiling, case.preset).device_time_us
    assert round((before / case.time_us - 1) * 100, 1) == -12.4
    assert round((late / case.time_us - 1) * 100, 1) == -3.5
    # The experiment leaves the model as it was.
    assert after == before
    assert sim_mod.l1_slot_free.__module__ == "simcore.pipeline.precedence"
    assert sim_mod.k_step.__module__ == "simcore.pipeline.precedence"
    assert sim_mod._Chunks.__module__ == "simcore.pipeline.simulator"
    assert _ReleaseAtMmad.pending == 0


def test_release_at_mmad_start_leaves_case5_unchanged() -> None:
    # Case 5's slots are released long before its copies would start (slack >= 693 cycles).
    case = next(c for c in msprof_cases() if c.name == "case5")
    before = simulate(case.problem, case.tiling, case.preset).device_time_us
    with _release_at_mmad():
        late = simulate(case.problem, case.tiling, case.preset).device_time_us
    assert late == before
