"""Bound check: every lower bound the search prunes with, against the estimate, on random tilings.

The certified search (:func:`tiler.screen.screen`) is exact only while no bound exceeds the
estimate of a point it covers. This draws random legal tilings (:mod:`tests.support.random_tilings`)
of three problems on each of four chips (910B2, 310P3, 910A, 310B1; fp16 and int8, transposes,
bias, NZ) and a small kernel on each of the three of arch 2002 (where the start-up can set the
time), 4,000 per problem (60,000 in all), and as many random points of random dealt groups
(:mod:`tiler.bounds.dealt`) of six problems on 910B2, 910B3 and 910B4 (24,000; the levels the
screening takes on them, :func:`check_dealt`), and counts per chip the tilings whose estimate is
below

* the group bound of their core split and base block (:func:`tiler.bounds.group_lower_bounds`,
  rounding margin 1e-9 as in the tests), its cheap first tier
  (:func:`tiler.bounds.fixed_lower_bounds`), its relaxed coarse tier (one interval of L1,
  ``relaxed=True``) and the least compute span that filters the first tier
  (:func:`tiler.bounds.fixed_then_relaxed_bounds` at a threshold of 0: the span and the
  scalar pipe alone) and the screening's cheap first bound (:func:`tiler.bounds.
  cube_lower_bounds`: the M pipe, and the start-up where it runs serial);
* the floor of their A and of their B L1 choice (:func:`simcore.estimate.estimator.
  operand_floor_arrays`, or :func:`simcore.estimate.bounds.ub_operand_floor_arrays` on UB-path
  chips; margin :data:`tiler.screen.FLOOR_RTOL`), and on UB-path chips the floor of their pair
  of choices (:func:`simcore.estimate.bounds.ub_pair_floor_us`) and the pair tier of their group
  (:mod:`tiler.pair_tier`; on the tilings that are points of the space: balanced K steps);
* the floor of their L1 choice over the L0 flags (:func:`simcore.estimate.estimator.
  makespan_floor_arrays`; same margin).

It prints the counts and the median ratio bound / estimate of each level (how tight it is), and
exits 1 on any violation:

    uv run python -m benchmarks.bound_check
    uv run python -m benchmarks.bound_check --per-problem 500   # a quick look
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from simcore.alloc import tune_allocator
from simcore.estimate.bounds import ub_operand_floor_arrays, ub_pair_floor_us
from simcore.estimate.estimator import (
    ESTIMATOR_FIELDS,
    estimate_arrays,
    makespan_floor_arrays,
    operand_floor_arrays,
)
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from tests.support.random_tilings import random_tiling
from tiler.bounds import (
    cube_lower_bounds,
    fixed_lower_bounds,
    fixed_then_relaxed_bounds,
    group_lower_bounds,
)
from tiler.bounds.dealt import dealt_rows
from tiler.levels import operand_floor_values
from tiler.pair_tier import PairTier
from tiler.screen import FLOOR_RTOL
from tiler.space import GROUP_FIELDS, build_space

#: Three problems per chip: an LLM layer, an odd shape with bias or a transpose, and int8 (on
#: 910B2 a cold N-heavy one, which the refetch term slows; and one with UnitFlag); and a small
#: kernel on 310P3, 910A and 310B1, where the serial start-up is a large share of the time.
PROBLEMS: tuple[dict[str, Any], ...] = (
    {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096},
    {"soc": "Ascend910B2", "m": 1000, "n": 8192, "k": 6144, "dtype": "bf16", "trans_b": True,
     "bias": True},
    # (A + B + C above the usable L2: every read of B a first touch under the refetch term.)
    {"soc": "Ascend910B2", "m": 16, "n": 28672, "k": 8192, "dtype": "int8"},
    # (A kernel compiled with UnitFlag: its drains overlap the last MMADs.)
    {"soc": "Ascend910B2", "m": 2048, "n": 4096, "k": 1024, "unit_flag": True},
    {"soc": "Ascend310P3", "m": 1000, "n": 2000, "k": 3000},
    {"soc": "Ascend310P3", "m": 640, "n": 3000, "k": 700, "trans_b": True, "bias": True},
    {"soc": "Ascend310P3", "m": 4095, "n": 4097, "k": 1023, "dtype": "int8"},
    {"soc": "Ascend310P3", "m": 640, "n": 3, "k": 640, "dtype": "int8"},
    {"soc": "Ascend910A", "m": 1000, "n": 12288, "k": 4096, "dtype": "int8"},
    {"soc": "Ascend910A", "m": 2048, "n": 8192, "k": 8192},
    {"soc": "Ascend910A", "m": 1000, "n": 3000, "k": 2000, "bias": True, "trans_a": True},
    {"soc": "Ascend910A", "m": 77, "n": 333, "k": 1000},
    {"soc": "Ascend310B1", "m": 2048, "n": 2048, "k": 2048, "bias": True},
    {"soc": "Ascend310B1", "m": 333, "n": 784, "k": 2000, "format_b": "NZ", "trans_a": True},
    {"soc": "Ascend310B1", "m": 512, "n": 1024, "k": 3000, "dtype": "int8"},
    {"soc": "Ascend310B1", "m": 64, "n": 256, "k": 512},
)  # fmt: skip
#: Problems whose space holds dealt splits (tiler.space.dealt_in_space: the 910B family): random
#: points of random dealt groups, priced with their rounds (the dealt_rounds term).
DEALT_PROBLEMS: tuple[dict[str, Any], ...] = (
    {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096},
    {"soc": "Ascend910B2", "m": 8192, "n": 8192, "k": 8192, "template": "mdl"},
    {"soc": "Ascend910B4", "m": 1000, "n": 8192, "k": 6144, "dtype": "bf16", "trans_b": True,
     "bias": True},
    {"soc": "Ascend910B2", "m": 16, "n": 28672, "k": 8192, "dtype": "int8"},
    {"soc": "Ascend910B2", "m": 2048, "n": 4096, "k": 1024, "unit_flag": True},
    {"soc": "Ascend910B3", "m": 4096, "n": 2048, "k": 1024, "bias": True},
)  # fmt: skip
#: Rounding margin of the group bound (tests/tiler/test_bound.py uses the same).
GROUP_RTOL = 1e-9


def _fields(tilings: list[Any]) -> dict[str, np.ndarray]:
    return {f: np.array([int(getattr(t, f)) for t in tilings]) for f in ESTIMATOR_FIELDS}


def _group_bounds(problem: Problem, tilings: list[Any]) -> tuple[np.ndarray, ...]:
    """The group bound of each tiling's (core split, base block), in one call.

    Each tiling's group is built as the space does (:func:`tiler.space.build_space` with the
    group's fields pinned, which gives its derived columns: block counts, bias bytes, the L0 flags
    its blocks fit); the groups are then bounded together in one space without pins (the bound
    reads the pins of iterateOrder and the L0 flags only, none of which is pinned here).
    """
    preset = load_preset(problem.soc)
    spaces = [
        build_space(problem, preset, {f: int(getattr(t, f)) for f in GROUP_FIELDS}) for t in tilings
    ]
    merged = {
        name: np.concatenate([s.groups[name][:1] for s in spaces]) for name in spaces[0].groups
    }
    space = dataclasses.replace(spaces[0], fixed={}, groups=merged)
    return (
        np.asarray(group_lower_bounds(space)),
        np.asarray(fixed_lower_bounds(space)),
        np.asarray(group_lower_bounds(space, splits=1, relaxed=True)),
        np.asarray(fixed_then_relaxed_bounds(space, None, 0.0)),
        np.asarray(cube_lower_bounds(space)),
        _pair_tier(space, tilings),
    )


def _pair_tier(space: Any, tilings: list[Any]) -> np.ndarray:
    """The pair tier of each tiling's group (:mod:`tiler.pair_tier`), NaN off the space.

    The tier bounds the points of the space, whose K steps are balanced (``ceil(kIter / c)``)
    and whose steps are options of their group; a random tiling need not be one, and there the
    tier is not a bound of it (NaN: not counted). ``space``: one group per tiling.
    """
    tier = PairTier().bounds(space, np.arange(len(tilings), dtype=np.int64))
    member = np.zeros(len(tilings), dtype=bool)
    for i, t in enumerate(tilings):
        _, a, b, _ = space._group_operands(i)
        in_a = (
            (a.step == t.stepM) & (a.step_k == t.stepKa) & (a.step * a.step_k * a.db == t.depthA1)
        )
        in_b = (
            (b.step == t.stepN) & (b.step_k == t.stepKb) & (b.step * b.step_k * b.db == t.depthB1)
        )
        member[i] = bool(in_a.any()) and bool(in_b.any())
    return np.where(member, tier, np.nan)


def check(problem: Problem, count: int, seed: int) -> dict[str, Any]:
    """Violations and tightness of each bound level on ``count`` random tilings of ``problem``."""
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(seed)
    tilings = [random_tiling(problem, preset, rng) for _ in range(count)]
    fields = _fields(tilings)
    times = np.asarray(estimate_arrays(problem, preset, fields)["time_us"])
    group, fixed, relaxed, span, cube, pair_tier = _group_bounds(problem, tilings)
    levels: dict[str, tuple[np.ndarray, float]] = {
        "group": (group, GROUP_RTOL),
        "group (fixed tier)": (fixed, GROUP_RTOL),
        "group (relaxed tier)": (relaxed, GROUP_RTOL),
        "group (least span)": (span, GROUP_RTOL),
        "group (cube tier)": (cube, GROUP_RTOL),
    }
    floors = ub_operand_floor_arrays(problem, preset, fields, parts=True)
    if floors is not None:
        rows = np.arange(count)
        pair = ub_pair_floor_us(preset, (floors["parts_a"], floors["parts_b"]), rows, rows)
        levels["pair (A, B)"] = (np.asarray(pair), FLOOR_RTOL)
        levels["group (pair tier)"] = (pair_tier, FLOOR_RTOL)
    else:
        floors = operand_floor_arrays(problem, preset, fields)
    if floors is not None:
        levels["operand A"] = (np.asarray(floors["time_a_us"]), FLOOR_RTOL)
        levels["operand B"] = (np.asarray(floors["time_b_us"]), FLOOR_RTOL)
    levels["L1 choice"] = (
        np.asarray(makespan_floor_arrays(problem, preset, fields)["time_us"]),
        FLOOR_RTOL,
    )
    out: dict[str, Any] = {}
    for name, (bound, rtol) in levels.items():
        out[name] = (
            int(np.sum(bound > times * (1.0 + rtol))),
            # (NaN: a tiling the bound does not cover, see _pair_tier.)
            float(np.nanmedian(bound / times)),
        )
    return out


def check_dealt(problem: Problem, count: int, seed: int) -> dict[str, Any]:
    """:func:`check` on random points of random dealt groups (tiler.bounds.dealt).

    The levels the screening takes on a dealt group: every tier of the group bound, the operand
    floors as the screening computes them (:func:`tiler.levels.operand_floor_values`, which
    leaves a dealt group to its group bound) and the L1-choice floors with usedCoreNum.
    """
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(seed)
    space = build_space(problem, preset, {})
    dealt = np.flatnonzero(dealt_rows(space, space.groups))
    groups = rng.choice(dealt, size=count)
    picked = []
    for gi in groups.tolist():
        pts = space.inner_points(gi)
        j = int(rng.integers(pts["baseM"].shape[0]))
        picked.append({f: v[j : j + 1] for f, v in pts.items()})
    fields = {f: np.concatenate([p[f] for p in picked]) for f in picked[0]}
    times = np.asarray(estimate_arrays(problem, preset, fields)["time_us"])
    levels: dict[str, tuple[np.ndarray, float]] = {
        "group": (group_lower_bounds(space, groups), GROUP_RTOL),
        "group (fixed tier)": (fixed_lower_bounds(space, groups), GROUP_RTOL),
        "group (relaxed tier)": (
            group_lower_bounds(space, groups, splits=1, relaxed=True), GROUP_RTOL,
        ),
        "group (least span)": (fixed_then_relaxed_bounds(space, groups, 0.0), GROUP_RTOL),
        "group (cube tier)": (cube_lower_bounds(space, groups), GROUP_RTOL),
    }  # fmt: skip
    floors = operand_floor_values(space, fields)
    levels["operand A"] = (np.asarray(floors["time_a_us"]), FLOOR_RTOL)
    levels["operand B"] = (np.asarray(floors["time_b_us"]), FLOOR_RTOL)
    levels["L1 choice"] = (
        np.asarray(makespan_floor_arrays(problem, preset, fields)["time_us"]),
        FLOOR_RTOL,
    )
    return {
        name: (int(np.sum(bound > times * (1.0 + rtol))), float(np.median(bound / times)))
        for name, (bound, rtol) in levels.items()
    }


def main() -> int:
    tune_allocator()
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-problem", type=int, default=4000, help="Random tilings per problem.")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    total = 0
    drawn = 0
    per_chip: dict[str, dict[str, list[Any]]] = {}
    t0 = time.perf_counter()
    runs = [(spec, check) for spec in PROBLEMS] + [(spec, check_dealt) for spec in DEALT_PROBLEMS]
    for i, (spec, checker) in enumerate(runs):
        problem = Problem.model_validate(spec)
        res = checker(problem, args.per_problem, args.seed + i)
        kind = " dealt" if checker is check_dealt else ""
        drawn += args.per_problem
        cells = []
        for name, (bad, ratio) in res.items():
            total += bad
            chip = per_chip.setdefault(problem.soc + kind, {})
            chip.setdefault(name, [0, []])
            chip[name][0] += bad
            chip[name][1].append(ratio)
            cells.append(f"{name} {bad} (median bound/estimate {ratio:.3f})")
        label = f"{problem.soc} {problem.dtype} {problem.m}x{problem.n}x{problem.k}{kind}"
        print(f"{label:32s} " + "; ".join(cells), flush=True)
    print("\nviolations per chip (tilings whose estimate is below the bound):")
    for soc, levels in per_chip.items():
        print(f"  {soc:12s} " + ", ".join(f"{n}: {v[0]}" for n, v in levels.items()))
    print(
        f"\n{total} floor violations on {drawn:,} random tilings of {len(per_chip)} chips "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
