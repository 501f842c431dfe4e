"""What the screening's group tiers cost, without changing what they prove.

* The fixed and relaxed tiers in one pass (:func:`tiler.bounds.fixed_then_relaxed_bounds`): the
  relaxed tier of the groups the fixed tier leaves is priced from the fixed tier's own terms;
  the figures must be those of the two tiers computed apart, group by group (so no bound moves
  and the search prunes the same groups), and so never above a point of the group.
* The full tier left out of the enumeration's windows where it rules nothing out
  (``tiler.screen._FullTier``): the same answer, certificate and groups scored.
* One operand's UB floors computed alone (``operands``): the figures of both computed together.
* The coarse and full tiers priced, per data path and iterate order, only where its fixed price is
  below the runner-up: the same figures below it, the same groups ruled out.
* A reuse case priced only at the groups it holds (``tiler.bounds.cases.CASE_TAKE``): the figures
  of every group priced.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simcore.estimate.bounds import ub_operand_floor_arrays
from simcore.estimate.estimator import estimate_arrays
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from tiler.bounds import fixed_lower_bounds, fixed_then_relaxed_bounds, group_lower_bounds
from tiler.space import build_space

PROBLEMS = [
    Problem(m=333, n=12345, k=777, dtype="int8", soc="Ascend910A"),
    Problem(m=300, n=77, k=5000, dtype="int8", soc="Ascend310P3", bias=True),
    Problem(m=2048, n=5120, k=5120, soc="Ascend910B2"),
    Problem(m=512, n=4096, k=4096, dtype="int8", soc="Ascend310B1"),
]


@pytest.mark.parametrize("problem", PROBLEMS)
def test_one_pass_gives_the_two_tiers_figures(problem: Problem) -> None:
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.sort(np.random.default_rng(3).choice(space.size, size=3000, replace=False))
    fixed = fixed_lower_bounds(space, groups)
    relaxed = group_lower_bounds(space, groups, splits=1, relaxed=True)
    # A threshold that the fixed tier leaves some of the groups below (half of its distinct
    # figures: many groups can share one, e.g. the HBM floor; with the serial start-up on 310P3
    # 300 x 77 x 5000 the relaxed tier rules out every group below a third of them).
    distinct = np.unique(fixed)
    threshold = float(distinct[distinct.shape[0] // 2])
    both = fixed_then_relaxed_bounds(space, groups, threshold)
    below = fixed < threshold
    assert 0 < below.sum() < groups.shape[0]
    # Ruled out either way: the least compute span (a first filter) or the fixed tier.
    assert np.all(both[~below] >= threshold)
    assert np.all(both[~below] <= fixed[~below])
    # Where the fixed tier leaves a group, the two tiers' figure wherever it is below the
    # threshold; a group the two tiers rule out is ruled out by the pass too, by a figure no
    # higher than theirs (the relaxed tier of a data path and iterate order is priced only where
    # that path and order's fixed price is below the threshold).
    two_tiers = np.maximum(fixed, relaxed)
    left = below & (two_tiers < threshold)
    assert 0 < left.sum() < below.sum()
    np.testing.assert_array_equal(both[left], two_tiers[left])
    out = below & ~left
    assert np.all(both[out] >= threshold)
    assert np.all(both[out] <= two_tiers[out])
    # The relaxed tier raises some of them: the pass does more than the fixed tier alone.
    assert np.any(both[below] > fixed[below])


@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("splits", [1, 8])
def test_coarse_and_full_tiers_below_a_threshold_give_their_figures(
    problem: Problem, splits: int
) -> None:
    # The enumeration's windows price a data path and iterate order only where its fixed price
    # is below the runner-up: every group's bound below it is the same figure, every group ruled
    # out is ruled out still (by a figure no higher).
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.sort(np.random.default_rng(8).choice(space.size, size=2000, replace=False))
    every = group_lower_bounds(space, groups, splits=splits)
    distinct = np.unique(every)
    threshold = float(distinct[distinct.shape[0] // 3])
    below = group_lower_bounds(space, groups, splits=splits, threshold=threshold)
    left = every < threshold
    assert 0 < left.sum() < groups.shape[0]
    np.testing.assert_array_equal(below[left], every[left])
    assert np.all(below[~left] >= threshold)
    assert np.all(below[~left] <= every[~left])
    # Some group's path and order was left out (the cheaper figure stands in).
    assert np.any(below[~left] < every[~left])


@pytest.mark.parametrize("problem", PROBLEMS[:2])
@pytest.mark.parametrize("threshold", [np.inf, 0.0, None])
def test_one_pass_is_below_every_point_of_sampled_groups(
    problem: Problem, threshold: float | None
) -> None:
    # threshold inf: the fixed and relaxed tiers; 0: the least compute span alone; None: the
    # median fixed tier of the groups, where a path and order's fixed price stands in for its
    # relaxed tier at the groups that price rules out.
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.random.default_rng(17).choice(space.size, size=8, replace=False)
    if threshold is None:
        threshold = float(np.median(fixed_lower_bounds(space, groups)))
    bounds = fixed_then_relaxed_bounds(space, groups, threshold)
    for gi, bound in zip(groups.tolist(), bounds.tolist(), strict=True):
        points = space.with_l0_flags(space.l1_choices(gi))
        if points["baseM"].shape[0] == 0:
            continue
        times = estimate_arrays(problem, space.preset, points)["time_us"]
        assert bound <= float(np.min(times)) * (1 + 1e-9)


def test_full_tier_left_out_where_it_rules_nothing_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # 910A fp16 77 x 333 x 1000: the coarse tier leaves 10,000 groups that the full tier
    # cannot rule out either; after a window of them the enumeration goes on without it.
    import tiler.screen as screen_module

    problem = Problem(m=77, n=333, k=1000, soc="Ascend910A")
    full_tier_groups: list[int] = []
    tiers = screen_module.group_lower_bounds

    def counted(space: Any, idx: Any = None, splits: int = 8, **kw: Any) -> Any:
        if splits > 1:
            full_tier_groups.append(len(idx))
        return tiers(space, idx, splits=splits, **kw)

    monkeypatch.setattr(screen_module, "group_lower_bounds", counted)
    preset = load_preset(problem.soc)
    adaptive = screen_module.screen(build_space(problem, preset, {}))
    adaptive_groups = sum(full_tier_groups)
    full_tier_groups.clear()
    monkeypatch.setattr(screen_module, "FULL_TIER_MIN_SHARE", 0.0)
    always = screen_module.screen(build_space(problem, preset, {}))
    assert adaptive.exact and always.exact
    assert adaptive.top[0].time_us == always.top[0].time_us
    assert adaptive.groups_scored == always.groups_scored
    assert adaptive_groups <= sum(full_tier_groups) // 2


def test_one_operands_ub_floors_alone_are_those_of_both() -> None:
    # tiler.levels asks for the floors of the operand whose options the rows are; the other's
    # figures of the same rows were computed for nothing before.
    problem = Problem(m=1, n=5120, k=13824, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    rng = np.random.default_rng(4)
    parts = [space.l1_choices(int(g)) for g in rng.choice(space.size, size=6, replace=False)]
    rows = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
    both = ub_operand_floor_arrays(problem, space.preset, rows, parts=True)
    assert both is not None and rows["baseM"].shape[0] > 0
    for is_a, key in ((True, "time_a_us"), (False, "time_b_us")):
        alone = ub_operand_floor_arrays(problem, space.preset, rows, parts=True, operands=(is_a,))
        assert alone is not None
        other = "time_b_us" if is_a else "time_a_us"
        assert other not in alone
        np.testing.assert_array_equal(alone[key], both[key])


def test_fixed_work_kept_between_a_batchs_operands_gives_the_same_floors() -> None:
    # tiler.levels computes A's floors of a batch, then B's of some of the same groups: the
    # work the groups fix is priced once and gathered for B's rows (and for rows of a group it
    # has not seen, priced anew): the figures of each call alone.
    problem = Problem(m=128, n=11008, k=4096, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    rng = np.random.default_rng(5)
    picked = rng.choice(space.size, size=8, replace=False)
    parts = [space.l1_choices(int(g)) for g in picked]
    rows = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}
    later = {f: np.concatenate([p[f] for p in parts[2:5]]) for f in parts[0]}
    unseen = space.l1_choices(int(next(g for g in range(space.size) if g not in picked)))
    work: dict[bool, Any] = {}
    for is_a, fields in ((True, rows), (False, later), (False, unseen), (True, rows)):
        key = "time_a_us" if is_a else "time_b_us"
        kept = ub_operand_floor_arrays(
            problem, space.preset, fields, parts=True, operands=(is_a,), work=work
        )
        alone = ub_operand_floor_arrays(problem, space.preset, fields, parts=True)
        assert kept is not None and alone is not None and fields["baseM"].shape[0] > 0
        assert set(work) == {True, False} or set(work) == {True}
        np.testing.assert_array_equal(kept[key], alone[key])
        # The pair floor reads the parts: the same figures too.
        for mine, theirs in zip(
            kept["parts_a" if is_a else "parts_b"],
            alone["parts_a" if is_a else "parts_b"],
            strict=True,
        ):
            for x, y in zip(
                [*mine.pipes, mine.makespan], [*theirs.pipes, theirs.makespan], strict=True
            ):
                np.testing.assert_array_equal(x, y)


def test_least_span_is_the_both_buffered_chain_of_a_hand_checked_core() -> None:
    # One core of 32 x 32 in 16 x 16 blocks over K = 64 in 32-wide steps: 4 full blocks, 2 K
    # steps each, every step at max(mm, la + lb); below the fixed tier.
    from simcore.pipeline.busy import block_steps
    from simcore.pipeline.costs import Costs
    from tiler.bounds.chains import least_span

    problem = Problem(m=32, n=32, k=64, soc="Ascend910A")
    c = Costs(problem, load_preset(problem.soc))
    types = block_steps(c, 64, 32, 32, 16, 16, 32)
    per_step = max(c.mmad_cycles(16, 16, 32), c.la_cycles(16, 32) + c.lb_cycles(16, 32))
    assert least_span(types, 2) == pytest.approx(4 * 2 * per_step, rel=1e-12)
    # A group whose base blocks fit L0A once (dbA_max = 1) runs every step at mm + la + lb
    # (dbL0A = 1; dbL0A = 2 is out of its reach); so does every group with dbL0A pinned to 1.
    serial = c.mmad_cycles(16, 16, 32) + c.la_cycles(16, 32) + c.lb_cycles(16, 32)
    g = {"dbA_max": np.array([1, 2]), "dbB_max": np.array([2, 2])}
    k_iter = np.array([2, 2])
    got = least_span(types, k_iter, g, {})
    assert got == pytest.approx([4 * 2 * serial, 4 * 2 * per_step], rel=1e-12)
    pinned = least_span(types, k_iter, g, {"dbL0A": 1})
    assert pinned == pytest.approx([4 * 2 * serial, 4 * 2 * serial], rel=1e-12)


def test_least_scalar_is_the_start_up_and_one_step_per_mmad_of_a_hand_checked_core() -> None:
    # A 32 x 32 core in 16 x 16 blocks over 2 K steps: 8 MMADs; MDL (the default template)
    # counts no copy at least, so the scalar pipe's least busy total is the start-up and 8
    # steps' work; below every point of the group (the first filter of the fixed tier).
    from simcore.pipeline.costs import Costs
    from tiler.bounds.chains import least_scalar

    problem = Problem(m=32, n=32, k=64, soc="Ascend910A")
    preset = load_preset(problem.soc)
    pins = {"singleCoreM": 32, "singleCoreN": 32, "baseM": 16, "baseN": 16, "baseK": 32}
    space = build_space(problem, preset, pins)
    assert space.size == 1
    want = preset.scalar_startup_cycles + 8 * preset.scalar_step_cycles
    got = least_scalar(space, Costs(problem, preset), space.groups)
    assert float(got[0]) == pytest.approx(want, rel=1e-12)
    times = estimate_arrays(problem, preset, space.inner_points(0))
    assert np.all(times["busy_SCALAR"] >= want * (1 - 1e-12))


def test_reuse_cases_priced_at_the_groups_they_hold_give_the_same_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 910A int8 8192 x 4096 x 14336: the cases loading an operand once hold 1-3 % of the groups
    # of most blocks (K = 14336 rarely fits L1), and are priced at those only.
    import tiler.bounds.cases as cases_module

    problem = Problem(m=8192, n=4096, k=14336, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.sort(np.random.default_rng(9).choice(space.size, size=4000, replace=False))
    coarse = group_lower_bounds(space, groups, splits=1)
    relaxed = group_lower_bounds(space, groups, splits=1, relaxed=True)
    monkeypatch.setattr(cases_module, "CASE_TAKE", 0.0)
    np.testing.assert_array_equal(coarse, group_lower_bounds(space, groups, splits=1))
    np.testing.assert_array_equal(
        relaxed, group_lower_bounds(space, groups, splits=1, relaxed=True)
    )
