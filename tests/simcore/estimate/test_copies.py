"""Chunking and copy legs (copies.py), by hand."""

from __future__ import annotations

import numpy as np

from simcore.estimate.copies import chunking, leg_after_a
from tests.simcore.estimate.support import records


def test_chunks_of_k_through_the_slots() -> None:
    r = records()  # 1024 of K in 64: 16 steps
    f = dict(r.f, stepKa=np.array([3.0]), stepKb=np.array([16.0]))
    ch = chunking(r.c, r.g, f, None)
    # A: 16 steps in chunks of 3 -> 6 chunks, the last (the K tail) from step 15, one step long.
    assert (ch.kc_a[0], ch.a_last_start[0], ch.r_last_a[0]) == (6, 15, 1)
    # B: one chunk of all 16 steps.
    assert (ch.kc_b[0], ch.b_last_start[0], ch.b_many[0]) == (1, 0, False)
    assert ch.passes_a[0] == ch.loads_a[0] / 6


def test_what_a_b_copy_adds_after_an_a_copy() -> None:
    legs = (10.0, 20.0, 30.0)  # B's GM->UB (or GM->L1), reorder, UB->L1
    assert leg_after_a(False, False, legs) == 10.0  # behind A's copy on MTE2
    assert leg_after_a(False, True, legs) == 60.0  # B's whole staging after A's direct copy
    assert leg_after_a(True, True, legs) == 50.0  # B's GM->UB ran meanwhile
    assert leg_after_a(True, False, legs) == 0.0  # a direct B copy is not behind a staged A
