"""The two bounds of issue 16's search work: the relaxed coarse tier and the UB pair floor.

* :func:`tiler.bounds.group_lower_bounds` with ``relaxed=True`` prices each split of L1 once,
  below its four slot combinations: it must stay below the coarse tier (and so the estimate)
  and rule out nearly every group the coarse tier rules out.
* :func:`simcore.estimate.bounds.ub_pair_floor_us` bounds a pair of operand choices on UB-path
  chips with both operands' copies on the pipes they share: it must stay below every point of
  the pair and above both operand floors, and rule out pairs the operand floors leave.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimate.bounds import ub_operand_floor_arrays, ub_pair_floor_us
from simcore.estimate.estimator import estimate_arrays, estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.traffic import kernel_us
from simcore.tiling.problem import Problem
from tests.support.random_tilings import random_tiling
from tiler.bounds import group_lower_bounds
from tiler.screen import FLOOR_RTOL
from tiler.space import GROUP_FIELDS, build_space

UB_PROBLEMS = [
    Problem(m=1000, n=12288, k=4096, dtype="int8", soc="Ascend910A"),
    Problem(m=300, n=77, k=5000, dtype="int8", soc="Ascend310P3", bias=True),
    Problem(m=640, n=3000, k=700, soc="Ascend310P3", trans_b=True),
]


@pytest.mark.parametrize(
    "problem",
    [
        Problem(m=4096, n=4096, k=4096),
        Problem(m=300, n=77, k=5000, dtype="int8", soc="Ascend310P3", bias=True),
        Problem(m=2048, n=8192, k=8192, soc="Ascend910A"),
    ],
)
def test_relaxed_tier_is_below_the_coarse_tier_and_every_point(problem: Problem) -> None:
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(11)
    for _ in range(20):
        t = random_tiling(problem, preset, rng)
        space = build_space(problem, preset, {f: int(getattr(t, f)) for f in GROUP_FIELDS})
        relaxed = float(group_lower_bounds(space, splits=1, relaxed=True)[0])
        coarse = float(group_lower_bounds(space, splits=1)[0])
        assert relaxed <= coarse * (1 + 1e-12)
        assert relaxed <= estimate_one(problem, t, preset)["time_us"] * (1 + 1e-9)


def test_relaxed_tier_rules_out_what_the_coarse_tier_does() -> None:
    # 910A int8 1000 x 12288 x 4096 (issue 16's held-out shape): at a threshold that the coarse
    # tier rules most sampled groups out with, the relaxed tier rules out nearly all the same.
    problem = Problem(m=1000, n=12288, k=4096, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.random.default_rng(5).choice(space.size, size=3000, replace=False)
    coarse = group_lower_bounds(space, groups, splits=1)
    relaxed = group_lower_bounds(space, groups, splits=1, relaxed=True)
    assert np.all(relaxed <= coarse * (1 + 1e-12))
    threshold = float(np.quantile(coarse, 0.2))
    out_coarse = coarse >= threshold
    assert np.mean(relaxed[out_coarse] >= threshold) >= 0.95


def _pair_points(problem: Problem, seed: int) -> dict[str, np.ndarray]:
    """Every point (L1 choice x L0 flags) of a few random groups."""
    space = build_space(problem, load_preset(problem.soc), {})
    rng = np.random.default_rng(seed)
    parts = []
    for g in rng.choice(space.size, size=min(6, space.size), replace=False):
        choices = space.l1_choices(int(g))
        if choices["baseM"].shape[0]:
            parts.append(space.with_l0_flags(choices))
    return {f: np.concatenate([p[f] for p in parts]) for f in parts[0]}


@pytest.mark.parametrize("problem", UB_PROBLEMS)
def test_pair_floor_is_below_every_point_and_above_both_operand_floors(problem: Problem) -> None:
    preset = load_preset(problem.soc)
    pts = _pair_points(problem, seed=3)
    times = np.asarray(estimate_arrays(problem, preset, pts)["time_us"])
    res = ub_operand_floor_arrays(problem, preset, pts, parts=True)
    assert res is not None
    rows = np.arange(times.shape[0])
    pair = np.asarray(ub_pair_floor_us(preset, (res["parts_a"], res["parts_b"]), rows, rows))
    assert np.all(pair <= times * (1 + FLOOR_RTOL))
    both = np.maximum(np.asarray(res["time_a_us"]), np.asarray(res["time_b_us"]))
    assert np.all(pair >= both * (1 - 1e-12))


def test_pair_floor_counts_both_operands_on_mte2() -> None:
    # By hand: every A and B copy is on MTE2, so the pair floor is at least the time of both
    # operands' MTE2 cycles on that pipe, where each operand floor counts its own alone; on the
    # held-out 910A int8 shape that rules out pairs both operand floors leave.
    problem = Problem(m=1000, n=12288, k=4096, dtype="int8", soc="Ascend910A")
    preset = load_preset(problem.soc)
    pts = _pair_points(problem, seed=4)
    res = ub_operand_floor_arrays(problem, preset, pts, parts=True)
    assert res is not None
    rows = np.arange(pts["baseM"].shape[0])
    pair = np.asarray(ub_pair_floor_us(preset, (res["parts_a"], res["parts_b"]), rows, rows))
    # The least over the paths the pair can reach of both operands' MTE2 cycles.
    least = np.full(rows.shape[0], np.inf)
    for pa in res["parts_a"]:
        for pb in res["parts_b"]:
            if pa.on_vector == pb.on_vector:
                mte2 = np.asarray(pa.own[0]) + np.asarray(pb.own[0]) + np.asarray(pa.fixed[2])
                least = np.minimum(least, np.where(pa.reach & pb.reach, mte2, np.inf))
    assert np.all(pair >= kernel_us(preset, least / preset.clock_mhz) * (1 - 1e-6))
    both = np.maximum(np.asarray(res["time_a_us"]), np.asarray(res["time_b_us"]))
    times = np.asarray(estimate_arrays(problem, preset, pts)["time_us"])
    threshold = float(np.quantile(times, 0.05))
    left_by_operands = both < threshold
    assert left_by_operands.sum() > 0
    assert np.mean(pair[left_by_operands] >= threshold) >= 0.5


def test_second_operands_floors_are_left_out_only_where_no_pair_can_beat_the_bound() -> None:
    # tiler.levels.operand_floors computes one operand's floors first and the other's only in
    # the (group, iterateOrder) cells where some option of the first is below the bound: every
    # floor it does compute equals the full computation's, and a cell it leaves out holds no
    # option of the first below the bound.
    from tiler.levels import DeadCells, operand_floor_values, operand_floors, operand_rows, table
    from tiler.levels import options as group_options

    problem = Problem(m=333, n=12345, k=777, dtype="int8", soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), {})
    groups = np.random.default_rng(8).choice(space.size, size=40, replace=False)
    opts = [o for o in (group_options(space, int(g)) for g in groups) if o.a.step.shape[0]]
    orders = opts[0].orders
    tables = (table(opts, True), table(opts, False))
    full = [
        np.asarray(operand_floor_values(space, operand_rows(space, opts, orders, t, i == 0))[k])
        for i, (t, k) in enumerate(zip(tables, ("time_a_us", "time_b_us"), strict=True))
    ]
    bound = float(np.quantile(np.concatenate(full), 0.3))
    lb = np.zeros(space.size)
    for first_a in (True, False):
        # Rates so lopsided that the operand computed first is the one named.
        cells = DeadCells(dead=[1000, 0] if first_a else [0, 1000], seen=[1000, 1000])
        res = operand_floors(space, opts, orders, tables, bound, lb, cells)
        assert res is not None
        fa, fb, _, computed = res
        first, second = (fa, fb) if first_a else (fb, fa)
        i_first, i_second = (0, 1) if first_a else (1, 0)
        assert np.allclose(first, full[i_first] * (1 - FLOOR_RTOL), rtol=1e-15)
        kept = np.isfinite(second)
        assert np.allclose(second[kept], full[i_second][kept] * (1 - FLOOR_RTOL), rtol=1e-15)
        assert computed == first.shape[0] + int(kept.sum())
        assert (~kept).any(), "the bound leaves every cell open: nothing to check"
        # A left-out row's cell: no option of the first operand there is below the bound.
        cell_first = _cells(tables[i_first].count, orders.shape[0])
        cell_second = _cells(tables[i_second].count, orders.shape[0])
        open_cells = set(cell_first[first < bound].tolist())
        assert not open_cells & set(cell_second[~kept].tolist())


def _cells(count: np.ndarray, n_orders: int) -> np.ndarray:
    """The (iterateOrder, group) cell of each operand row (as tiler.levels.operand_rows)."""
    pos = np.repeat(np.arange(count.shape[0]), count)
    return (np.arange(n_orders)[:, None] * count.shape[0] + pos[None, :]).reshape(-1)


@pytest.mark.parametrize(
    "pins",
    [{}, {"iterateOrder": 1}, {"dbL0A": 2}, {"dbL0C": 2, "iterateOrder": 0}, {"dbL0B": 1}],
)
def test_group_orders_match_the_flag_combinations(pins: dict[str, int]) -> None:
    # tiler.levels.options takes a group's iterate orders without building its flag
    # combinations (Space._flags): the same orders, pins included.
    from tiler.levels import options as group_options

    problem = Problem(m=1000, n=3000, k=2000, soc="Ascend910A")
    space = build_space(problem, load_preset(problem.soc), pins)
    for g in np.random.default_rng(2).choice(space.size, size=min(300, space.size), replace=False):
        o = group_options(space, int(g))
        expected = sorted(set(space._flags(o.scalars)[:, 0].tolist()))
        assert o.orders.tolist() == expected
