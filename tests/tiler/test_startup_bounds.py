"""The search's bounds take the serial scalar start-up (arch 2002, model 2026.11.28.3).

With ``scalar_startup_serial`` the estimate is ``min(max(start-up + makespan, busiest), sum of
work)``: a small kernel's time rises by up to the start-up. A bound that leaves it out stays
valid but rules out nothing there (on 910A fp16 77 x 333 x 1000 the certified search then spent
its budget and was not exact). Each bound now takes it through
:func:`simcore.pipeline.scalar.after_startup`; these tests check that the cheap tier and the UB
floors carry it, and stay below the estimate of the points they cover.
"""

from __future__ import annotations

import numpy as np

from simcore.estimate.bounds import ub_operand_floor_arrays, ub_pair_floor_us
from simcore.estimate.estimator import estimate_arrays
from simcore.hardware.presets import load_preset
from simcore.pipeline.scalar import startup_cycles
from simcore.tiling.problem import Problem
from tiler.bounds import cube_lower_bounds
from tiler.space import build_space

SMALL = Problem(m=77, n=333, k=1000, soc="Ascend910A")


def test_the_shipped_2002_presets_run_the_startup_serial() -> None:
    for soc in ("Ascend910A", "Ascend310P3", "Ascend310B1"):
        preset = load_preset(soc)
        assert preset.scalar_startup_serial
        assert startup_cycles(preset, SMALL.model_copy(update={"soc": soc})) > 0.0


def test_cheap_tier_adds_the_startup_and_stays_below_every_point() -> None:
    preset = load_preset(SMALL.soc)
    overlapped = preset.model_copy(update={"scalar_startup_serial": False})
    space = build_space(SMALL, preset, {})
    groups = np.random.default_rng(5).choice(space.size, size=40, replace=False)
    serial_bound = cube_lower_bounds(space, groups)
    overlapped_bound = cube_lower_bounds(build_space(SMALL, overlapped, {}), groups)
    # The start-up, at the chip's clock, on top of the M pipe's time of each group.
    startup_us = startup_cycles(preset, SMALL) / preset.clock_mhz
    np.testing.assert_allclose(serial_bound - overlapped_bound, startup_us, rtol=1e-6)
    checked = 0
    for gi, bound in zip(groups.tolist(), serial_bound.tolist(), strict=True):
        points = space.inner_points(gi)
        if points["baseM"].shape[0] == 0:
            continue
        times = estimate_arrays(SMALL, preset, points)["time_us"]
        assert bound <= float(np.min(times))
        checked += 1
    assert checked >= 20


def test_ub_floors_hold_the_startup_and_stay_below_the_estimate() -> None:
    preset = load_preset(SMALL.soc)
    space = build_space(SMALL, preset, {})
    rng = np.random.default_rng(8)
    parts = [space.l1_choices(int(g)) for g in rng.choice(space.size, size=30, replace=False)]
    rows = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
    assert rows["baseM"].shape[0] > 100
    floors = ub_operand_floor_arrays(SMALL, preset, rows, parts=True)
    assert floors is not None
    idx = np.arange(rows["baseM"].shape[0])
    pair = ub_pair_floor_us(preset, (floors["parts_a"], floors["parts_b"]), idx, idx)
    # Every floor holds the start-up and the launch (the scalar pipe's total holds the start-up).
    least_us = (startup_cycles(preset, SMALL) / preset.clock_mhz + preset.launch_overhead_us) * (
        1.0 - 1e-9
    )
    for floor in (floors["time_a_us"], floors["time_b_us"], pair):
        assert np.all(np.asarray(floor) >= least_us)
    # And stays below the estimate of each L1 choice with any L0 flags.
    points = space.with_l0_flags(rows)
    times = estimate_arrays(SMALL, preset, points)["time_us"]
    choice = points["choice"]
    for floor in (floors["time_a_us"], floors["time_b_us"], pair):
        assert np.all(np.asarray(floor)[choice] <= times * (1.0 + 1e-12))
