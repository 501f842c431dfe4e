"""A staged operand reloaded per pass of blocks (staged_passes.py), by hand."""

from __future__ import annotations

import numpy as np

from simcore.estimate.staged_passes import _applies, staged_pass_paths
from tests.simcore.estimate.support import arr, records


def test_per_pass_cycle_is_the_drain_the_staging_the_reads_and_the_other_blocks() -> None:
    r = records("Ascend910A")
    legs = ((arr(10), arr(30), arr(20)), (arr(6), arr(12), arr(8)))
    ops = (
        # A staged, 4 passes over the 8 blocks (2 blocks each), reorders 200 and UB->L1 legs
        # 80 in all, 2 chunks per pass.
        (True, arr(4), arr(8), arr(200), arr(80), arr(2), arr(1), arr(2), *legs),
        (False, arr(8), arr(16), arr(0), arr(0), arr(2), arr(1), arr(2), *legs),  # B direct
    )
    out = staged_pass_paths(
        r.c, 1024, arr(64), r.cap, drain_legs=(arr(10), arr(5)), blk=arr(40),
        run_ends=(arr(7), arr(9)),
        grid=(arr(1), arr(8), arr(1), arr(1), arr(64), arr(64), arr(8)), ops=ops,
    )  # fmt: skip
    # Per pass after the first: the drain before it (10), its reorders and UB->L1 legs (280 / 4
    # passes), its last chunk's reads to the last MMAD (7), then its other block at the longer
    # of its MMAD chain (40) and the drains (10 + 5). One row of blocks: no per-column cycle.
    per_pass = 10 + (200 + 80) / 4 + 7 + (8 / 4 - 1) * max(40, 10 + 5)
    assert out[0] == (4 - 1) * per_pass


def test_no_path_without_a_staged_operand() -> None:
    r = records("Ascend910A")
    legs = ((arr(10), arr(30), arr(20)), (arr(6), arr(12), arr(8)))
    direct = (False, arr(4), arr(8), arr(0), arr(0), arr(2), arr(1), arr(2), *legs)
    out = staged_pass_paths(
        r.c, 1024, arr(64), r.cap, (arr(10), arr(5)), arr(40), (arr(7), arr(9)),
        (arr(1), arr(8), arr(1), arr(1), arr(64), arr(64), arr(8)), (direct, direct),
    )  # fmt: skip
    assert out == 0.0


def test_the_path_is_zero_where_it_does_not_apply() -> None:
    # The term prices only the candidates where an operand's passes or columns repeat
    # (staged_passes._applies); everywhere else the path must be 0, as the term leaves it.
    r = records("Ascend910A")
    rng = np.random.default_rng(7)
    n = 4000

    def ints(lo: int, hi: int) -> np.ndarray:
        return rng.integers(lo, hi, n).astype(np.float64)

    def legs() -> tuple[tuple[np.ndarray, ...], ...]:
        return tuple(tuple(ints(1, 400) for _ in range(3)) for _ in range(2))

    m_iter, n_iter, step_m, step_n = ints(1, 9), ints(1, 9), ints(1, 4), ints(1, 4)
    blocks = m_iter * n_iter
    grid = (m_iter, n_iter, step_m, step_n, ints(1, 9) * 16, ints(1, 9) * 16, blocks)
    ops = tuple(
        (True, np.minimum(ints(1, 65), blocks), ints(1, 65), ints(0, 4000), ints(0, 4000),
         ints(1, 5), ints(1, 5), ints(1, 5), *legs())
        for _ in range(2)
    )  # fmt: skip
    out = staged_pass_paths(
        r.c, 1024, ints(1, 5) * 16, r.cap, (ints(1, 300), ints(0, 300)), ints(1, 900),
        (ints(1, 300), ints(1, 300)), grid, (ops[0], ops[1]),
    )  # fmt: skip
    applies = _applies(grid, (ops[0], ops[1]))
    assert 0 < applies.sum() < n  # both kinds of candidate are drawn
    assert np.all(out[~applies] == 0.0)
    assert np.any(out[applies] > 0.0)
