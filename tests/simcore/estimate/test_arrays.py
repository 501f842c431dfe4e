"""The estimator's array helpers (arrays.py): the bit select against np.where."""

from __future__ import annotations

import numpy as np

from simcore.estimate.arrays import select, select_bits


def test_select_picks_the_same_bits_as_np_where() -> None:
    rng = np.random.default_rng(7)
    cond = rng.random(16384) < 0.4
    x = rng.random(16384) * 1e6
    y = -rng.random(16384)
    x[:3] = (np.nan, np.inf, -0.0)
    y[3:6] = (-0.0, -np.inf, np.nan)
    for a, b in ((x, y), (x, 0.0), (-0.0, y), (x, np.float64(2.5))):
        want = np.where(cond, a, b)
        got = select(cond, a, b, select_bits(cond))
        assert got.dtype == np.float64 and got.shape == want.shape
        assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_select_falls_back_where_the_bits_would_not_be_floats() -> None:
    cond = np.arange(16384) % 3 == 0
    ints = np.arange(16384, dtype=np.int64)
    floats = ints * 0.5
    # Integer fields (the floors'), scalars only, a non-boolean condition, a short one:
    # np.where's result.
    for c, a, b in (
        (cond, ints, floats),
        (cond, 1.0, 2.0),
        (cond.astype(np.int64), floats, 0.0),
        (cond[:100], floats[:100], 0.0),
    ):
        want = np.where(c, a, b)
        got = select(c, a, b, select_bits(c))
        assert got.dtype == want.dtype and np.array_equal(got, want)
    assert select_bits(cond.astype(np.float64)) is None
    assert select_bits(cond[:100]) is None
