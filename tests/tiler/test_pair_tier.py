"""The pair tier (:mod:`tiler.pair_tier`): a group bound from A's and B's least copies.

It must stay at or below every point of a group (checked against the brute-force enumeration
of each group's points), be at least the pair floor of the group's least pair where it rules
out, rule out groups the group bound leaves, and leave the screening's answer unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimate.bounds import ub_operand_copies, ub_operand_floor_arrays, ub_pair_floor_us
from simcore.estimate.estimator import estimate_arrays
from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import vector_path_array
from simcore.tiling.problem import Problem
from tiler.bounds import group_lower_bounds
from tiler.pair_tier import PairTier
from tiler.screen import screen
from tiler.space import build_space

SMALL_UB_PROBLEMS = [
    Problem(m=96, n=200, k=320, dtype="int8", soc="Ascend910A"),
    Problem(m=77, n=333, k=1000, soc="Ascend910A"),
    Problem(m=130, n=90, k=700, dtype="int8", soc="Ascend310P3", bias=True),
    Problem(m=64, n=300, k=512, soc="Ascend310P3", trans_b=True),
]


@pytest.mark.parametrize("problem", SMALL_UB_PROBLEMS)
def test_pair_tier_is_below_every_point_of_the_group(problem: Problem) -> None:
    space = build_space(problem, load_preset(problem.soc), {})
    rng = np.random.default_rng(3)
    groups = rng.choice(space.size, size=min(40, space.size), replace=False).astype(np.int64)
    tier = PairTier()
    bounds = tier.bounds(space, groups)
    assert tier.rows > 0
    checked = 0
    for gi, bound in zip(groups.tolist(), bounds.tolist(), strict=True):
        points = space.inner_points(gi)
        if points["baseM"].shape[0] == 0:
            assert bound == np.inf  # no option of an operand: no point
            continue
        least = float(np.min(estimate_arrays(problem, space.preset, points)["time_us"]))
        assert bound <= least
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("problem", SMALL_UB_PROBLEMS[:2])
def test_pair_tier_is_below_the_least_pair_floor(problem: Problem) -> None:
    # The least copies stand for every option: the tier is at most the pair floor of each pair
    # of the group's options that fit L1 together (ub_pair_floor_us over both data paths).
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.random.default_rng(4).choice(space.size, size=15, replace=False).astype(np.int64)
    bounds = PairTier().bounds(space, groups)
    for gi, bound in zip(groups.tolist(), bounds.tolist(), strict=True):
        choices = space.l1_choices(gi)
        if choices["baseM"].shape[0] == 0:
            continue
        rows = {**choices, "iterateOrder": choices["iterateOrder"]}
        res = ub_operand_floor_arrays(problem, space.preset, rows, parts=True)
        assert res is not None
        idx = np.arange(rows["baseM"].shape[0])
        pair = ub_pair_floor_us(space.preset, (res["parts_a"], res["parts_b"]), idx, idx)
        assert bound <= float(np.min(pair)) * (1 + 1e-12)


def test_pair_tier_rules_out_groups_the_group_bound_leaves() -> None:
    # 910A int8 333 x 12345 x 777 (issue 16): the group bound is about 0.93 of the runner-up
    # in the groups the enumeration scores; the pair tier rules many of them out.
    problem = Problem(m=333, n=12345, k=777, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    # us: about the runner-up the screening finds (31.79 us optimum with the serial start-up,
    # 25.25 us with it overlapped)
    threshold = 31.8
    groups = np.random.default_rng(7).choice(space.size, size=20000, replace=False)
    coarse = group_lower_bounds(space, groups, splits=1)
    left = groups[coarse < threshold].astype(np.int64)
    assert left.shape[0] >= 50
    pair = PairTier().bounds(space, left)
    assert np.mean(pair >= threshold) >= 0.3


def test_pair_tier_leaves_no_bound_off_the_ub_path_chips() -> None:
    problem = Problem(m=256, n=256, k=256, soc="Ascend910B2")
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.arange(min(20, space.size), dtype=np.int64)
    assert np.all(PairTier().bounds(space, groups) == 0.0)


def test_screening_with_the_pair_tier_finds_the_brute_force_optimum() -> None:
    problem = Problem(m=32, n=80, k=160, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    result = screen(space)
    assert result.exact
    best = np.inf
    for gi in range(space.size):
        points = space.inner_points(gi)
        if points["baseM"].shape[0]:
            times = estimate_arrays(problem, space.preset, points)["time_us"]
            best = min(best, float(np.min(times)))
    assert result.top[0].time_us == pytest.approx(best, rel=1e-12)


def test_windows_price_a_sample_first_and_the_rest_only_where_it_pays() -> None:
    # A window where the tier rules out nothing costs its every 8th group only; one where it
    # rules out everything is priced in full (and every group's bound is raised to the tier).
    problem = Problem(m=333, n=1234, k=777, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    idx = np.random.default_rng(9).choice(space.size, size=400, replace=False).astype(np.int64)
    tier = PairTier()
    lb = np.zeros(space.size)
    rows = tier.refine(space, lb, idx, np.inf)
    assert tier.priced == 50 and rows == tier.rows > 0
    tier = PairTier()
    lb = np.zeros(space.size)
    tier.refine(space, lb, idx, 0.0)
    assert tier.priced == 400
    assert np.array_equal(lb[idx], tier.bounds(space, idx))


@pytest.mark.parametrize("problem", SMALL_UB_PROBLEMS)
def test_a_point_is_on_the_vector_path_exactly_where_the_tier_says(problem: Problem) -> None:
    # The tier's coupling of the data path: vector path <=> the group fits with every step at 1
    # and both operands' own UB tiles fit (simcore.ub.path's transLength is their maximum).
    space = build_space(problem, load_preset(problem.soc), {})
    rng = np.random.default_rng(12)
    parts = [space.l1_choices(int(g)) for g in rng.choice(space.size, size=30, replace=False)]
    rows = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
    one = np.ones_like(rows["baseM"])
    at_one = {**rows, "stepM": one, "stepN": one, "stepKa": one, "stepKb": one}
    group_fits = vector_path_array(problem, at_one, space.preset)
    copies_a = ub_operand_copies(problem, space.preset, rows, True)
    copies_b = ub_operand_copies(problem, space.preset, rows, False)
    assert group_fits is not None and copies_a is not None and copies_b is not None
    on_vector = vector_path_array(problem, rows, space.preset)
    assert np.array_equal(on_vector, group_fits & copies_a[True][3] & copies_b[True][3])
    assert on_vector.sum() > 0 or not group_fits.any()
