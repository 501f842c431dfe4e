"""Checks of the search's group bounds against the estimator, shared by the bound tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.estimate.estimator import estimate_arrays


def all_times(space: Any, gi: int, rng: np.random.Generator, most: int) -> np.ndarray:
    """Estimated times of the points of group ``gi`` (all, or ``most`` drawn at random)."""
    pts = space.inner_points(gi)
    n = pts["baseM"].shape[0]
    if n > most:
        pick = rng.choice(n, size=most, replace=False)
        pts = {f: v[pick] for f, v in pts.items()}
    return np.asarray(estimate_arrays(space.problem, space.preset, pts)["time_us"])


def assert_raised_bounds_hold(
    space: Any,
    groups: np.ndarray,
    bounds: np.ndarray,
    before: np.ndarray,
    rng: np.random.Generator,
    checked: int,
    most: int,
) -> None:
    """The groups whose bound a term raised (``bounds`` against ``before``, the bounds without
    it) are at least 10, and the first ``checked`` of them stay below every point scored (up to
    ``most`` points a group): the term raises bounds here, and stays a lower bound."""
    raised = groups[bounds > before * (1 + 1e-12)]
    assert raised.shape[0] >= 10, "the term raises no bound here: the test tests nothing"
    for gi in raised[:checked]:
        bound = float(bounds[np.flatnonzero(groups == gi)[0]])
        times = all_times(space, int(gi), rng, most)
        assert np.all(bound <= times * (1 + 1e-9)), (int(gi), bound, float(times.min()))
