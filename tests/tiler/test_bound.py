"""The screening's group lower bound never exceeds the estimator (what makes `exact` true)."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimator import estimate_one
from simcore.hardware import load_preset
from simcore.problem import Problem
from simcore.random_tilings import random_tiling
from tiler.screen import group_lower_bounds
from tiler.space import GROUP_FIELDS, build_space


@pytest.mark.parametrize(
    "problem",
    [
        Problem(m=4096, n=4096, k=4096),
        Problem(m=1, n=11008, k=4096, dtype="bf16", soc="Ascend910B4"),
        Problem(m=300, n=77, k=5000, dtype="int8", soc="Ascend310P3", bias=True),
        Problem(m=2048, n=640, k=333, trans_a=True, bias=True),
    ],
)
def test_group_bound_is_below_every_point_of_the_group(problem: Problem) -> None:
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(7)
    for _ in range(40):
        t = random_tiling(problem, preset, rng)
        pins = {f: int(getattr(t, f)) for f in GROUP_FIELDS}
        space = build_space(problem, preset, pins)
        assert space.size == 1
        bound = float(group_lower_bounds(space)[0])
        assert bound <= estimate_one(problem, t, preset)["time_us"] * (1 + 1e-9)


def test_bound_holds_on_the_column_dma_path_of_ub_chips() -> None:
    # On 310P a tiling whose reorder halves do not fit in UB takes the column DMA path
    # (simcore.costs.vector_path_array) with no vector reorder: its V time is below the vector
    # path's, and the group bound must take the smaller of the two paths.
    from simcore.costs import vector_path_array

    problem = Problem(m=1000, n=2000, k=3000, dtype="fp16", soc="Ascend310P3")
    preset = load_preset(problem.soc)
    rng = np.random.default_rng(11)
    column = 0
    for _ in range(400):
        t = random_tiling(problem, preset, rng)
        fields = {f: np.array([getattr(t, f)]) for f in ("baseM", "baseN", "baseK", "stepM",
                  "stepN", "stepKa", "stepKb", "depthA1", "depthB1", "singleCoreM",
                  "singleCoreN", "iterateOrder", "dbL0A", "dbL0B", "dbL0C")}  # fmt: skip
        on_vector = vector_path_array(problem, fields, preset)
        assert on_vector is not None
        if bool(on_vector[0]):
            continue
        column += 1
        space = build_space(problem, preset, {f: int(getattr(t, f)) for f in GROUP_FIELDS})
        bound = float(group_lower_bounds(space)[0])
        assert bound <= estimate_one(problem, t, preset)["time_us"]
        if column >= 25:
            break
    assert column >= 5, "no column-path tiling drawn: the test would not test the bound there"
