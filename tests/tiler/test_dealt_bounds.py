"""The search's bounds on dealt groups (tiler.bounds.dealt): below every point, R rounds deep.

A dealt group's points are priced by the estimator with the ``dealt_rounds`` term (a core of R
tiles back to back); every tier of the group bound, the operand floors and the L1-choice floors
must stay below each of them, or the certificate's ``exact`` is false.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from simcore.estimate.estimator import estimate_arrays, makespan_floor_arrays
from simcore.hardware.presets import load_preset
from simcore.pipeline.traffic import tiles_per_core
from simcore.tiling.problem import Problem
from tiler.bounds import (
    cube_lower_bounds,
    fixed_lower_bounds,
    fixed_then_relaxed_bounds,
    group_lower_bounds,
)
from tiler.bounds.dealt import dealt_rows
from tiler.levels import operand_floor_values
from tiler.screen import DEALT_SCOPE, screen
from tiler.space import build_space

PROBLEMS = [
    Problem(m=4096, n=4096, k=4096),
    Problem(m=8192, n=8192, k=8192, template="mdl"),
    Problem(m=2048, n=3000, k=700, dtype="bf16", soc="Ascend910B4", bias=True),
    Problem(m=1000, n=5000, k=256, dtype="int8", soc="Ascend910B4", trans_a=True),
    Problem(m=4096, n=2048, k=1024, soc="Ascend910B3", bias=True),
    Problem(m=4095, n=4097, k=1023, trans_b=True, unit_flag=True),
]


def _sampled(space: Any, gi: int, rng: np.random.Generator, most: int) -> dict[str, Any]:
    pts = space.inner_points(gi)
    n = pts["baseM"].shape[0]
    if n > most:
        pick = rng.choice(n, size=most, replace=False)
        pts = {f: v[pick] for f, v in pts.items()}
    return pts


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: f"{p.soc}-{p.m}x{p.n}x{p.k}")
def test_every_tier_of_a_dealt_group_is_below_its_points(problem: Problem) -> None:
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(25)
    space = build_space(problem, preset, {})
    dealt = np.flatnonzero(dealt_rows(space, space.groups))
    assert dealt.shape[0] > 100
    groups = rng.choice(dealt, size=16, replace=False)
    tiers = [
        cube_lower_bounds(space, groups),
        fixed_then_relaxed_bounds(space, groups, 0.0),
        fixed_lower_bounds(space, groups),
        fixed_then_relaxed_bounds(space, groups, np.inf),
        group_lower_bounds(space, groups, splits=1, relaxed=True),
        group_lower_bounds(space, groups),
    ]
    # Each tier never above the next (the screening takes them in this order).
    for low, high in itertools.pairwise(tiers):
        assert np.all(low <= high * (1 + 1e-12))
    tight = 0.0
    for gi, bound in zip(groups, tiers[-1], strict=True):
        pts = _sampled(space, int(gi), rng, 3000)
        # The points are priced with their rounds: R > 1 tiles on the slowest core.
        rounds = tiles_per_core(
            problem.m, problem.n, pts["singleCoreM"], pts["singleCoreN"], pts["usedCoreNum"]
        )
        assert (rounds > 1).all()
        est = estimate_arrays(problem, preset, pts)
        times = np.asarray(est["time_us"])
        assert np.all(bound <= times * (1 + 1e-9)), (int(gi), float(bound), float(times.min()))
        tight = max(tight, float(bound / times.min()))
        # The L1-choice floors (R rounds of the floor over the L0 flags) hold point by point.
        floors = makespan_floor_arrays(problem, preset, pts)["time_us"]
        assert np.all(floors <= times * (1 + 1e-12))
        # The operand floors leave a dealt group to its group bound (no one-tile floor).
        res = operand_floor_values(space, pts)
        assert res is not None
        assert not np.any(res["time_a_us"]) and not np.any(res["time_b_us"])
    # Not vacuous: some dealt group's bound is close to its best sampled point.
    assert tight > 0.8


def test_the_dealt_bound_prices_the_rounds_not_one_tile() -> None:
    # MatMulV3's group on 8192^3 (MDL): 2,048 tiles of 128 x 256 on 24 cores, 86 rounds on the
    # slowest. One tile's bound would be ~1/86 of the time; the bound is within 10 % of the
    # group's best point (each further tile bounded by its busiest pipe, not its path less the
    # overlap the term takes: tiler.bounds.dealt).
    problem = Problem(m=8192, n=8192, k=8192, template="mdl")
    preset = load_preset(problem.soc)
    space = build_space(
        problem, preset, {"singleCoreM": 128, "singleCoreN": 256, "baseM": 128, "baseN": 256}
    )
    g = space.groups
    assert (tiles_per_core(problem.m, problem.n, 128, 256, g["usedCoreNum"]) == 86).all()
    rng = np.random.default_rng(3)
    bounds = group_lower_bounds(space)
    for gi, bound in enumerate(bounds):
        times = np.asarray(
            estimate_arrays(problem, preset, _sampled(space, gi, rng, 4000))["time_us"]
        )
        assert bound <= times.min() * (1 + 1e-9)
        if g["baseK"][gi] == 64:
            assert bound > 0.9 * times.min()


def test_8192_cubed_mdl_is_certified_over_the_dealt_splits_too() -> None:
    # The certificate's scope holds the dealt splits, the screening still finishes exact at
    # the default budget, and its optimum is at least as fast (estimated) as MatMulV3's form.
    problem = Problem(m=8192, n=8192, k=8192, template="mdl")
    preset = load_preset(problem.soc)
    space = build_space(problem, preset, {})
    res = screen(space)
    cert = res.certificate()
    assert cert["scope"] == DEALT_SCOPE and cert["exact"] and cert["bound_violations"] == 0
    v3 = build_space(
        problem, preset,
        {"singleCoreM": 128, "singleCoreN": 256, "baseM": 128, "baseN": 256, "baseK": 64},
    )  # fmt: skip
    v3_best = min(
        float(np.min(estimate_arrays(problem, preset, v3.inner_points(g))["time_us"]))
        for g in range(v3.size)
    )
    assert res.top[0].time_us <= v3_best
