"""UB staging chains (staging.py) by hand: GM->UB after the reorder before, reorder after UB->L1."""

from __future__ import annotations

import numpy as np

from simcore.estimate.staging import (
    staged_b_between_a,
    staged_one_slot_chain,
    staging_chain_to,
)


def a(x: float) -> np.ndarray:
    return np.array([float(x)])


FULL = (a(10), a(30), a(20))  # GM->UB, reorder, UB->L1 of a full chunk
LAST = (a(6), a(12), a(8))  # of the K-tail chunk


def test_chain_to_the_first_chunk_is_its_three_legs() -> None:
    chain, own_m2, end_m2 = staging_chain_to(a(0), a(3), FULL, LAST)
    assert (chain[0], own_m2[0], end_m2[0]) == (10 + 30 + 20, 10, 30 + 20)


def test_chain_to_the_k_tail_chunk_links_through_the_longer_leg() -> None:
    # Chunks 0, 1 full, 2 the K tail: g0 + v0, then per later chunk max(g, previous u) + v, then
    # the last chunk's UB->L1 leg.
    chain, own_m2, end_m2 = staging_chain_to(a(2), a(3), FULL, LAST)
    assert chain[0] == 10 + 30 + max(10, 20) + 30 + max(6, 20) + 12 + 8
    assert own_m2[0] == 10 + 10 + 6  # MTE2's own GM->UB legs up to that chunk
    assert end_m2[0] == 12 + 8


def test_one_slot_chain_per_chunk_is_its_ub_to_l1_and_the_longer_of_reads_and_next_reorder() -> (
    None
):
    # Two chunks per pass, two passes; reads of 25 (full) and 9 (tail), no stay.
    out = staged_one_slot_chain((a(2), a(2)), (FULL, LAST), (a(25), a(9), a(0)))
    per_pass = (20 + 8) + max(25, 12) + max(9, 30)  # u_f + u_l, full reads vs the tail's
    # reorder, the tail's reads vs the next pass's first reorder
    assert out[0] == (10 + 30) + 2 * per_pass


def _b_pass(kc_b: int) -> tuple[float, float]:
    """(a pass start's B chunks, the first block's after its first) with round legs."""
    one = np.array([0])
    a_full, a_last = (np.array([700.0]), np.array([200.0]), np.array([500.0])), (
        np.array([600.0]), np.array([550.0]), np.array([400.0]))  # fmt: skip
    b_full, b_last = (np.array([1700.0]), np.array([500.0]), np.array([1100.0])), (
        np.array([900.0]), np.array([250.0]), np.array([600.0]))  # fmt: skip
    args = (
        one,
        (np.array([2.0]), np.array([float(kc_b)]), np.array([6.0]), np.array([7.0])),
        (a_full, a_last, b_full, b_last),
        (np.array([600.0]), np.array([450.0])),
    )
    between, first = staged_b_between_a(*args)
    return float(between[0]), float(first[0])


def test_first_block_b_pass_is_every_b_chunk_after_the_first() -> None:
    # A B chunk followed by an A chunk: max(500, 1700) + 500 + max(1100, 700) - max(500, 700)
    # = 2600; B's last chunk ends the block's chain: max(400, 900) + 250 + 600 + 450 - (400 +
    # 600) = 1200 (A's own last UB->L1 leg and reads are what it replaces).
    assert _b_pass(2) == (2600 + 1200, 1200)
    assert _b_pass(3) == (2 * 2600 + 1200, 2600 + 1200)
    # One B chunk: the start-up holds it.
    assert _b_pass(1)[1] == 0.0
