"""A's cycle per pass (slot_a_pass.py): rotating and fixed slots, by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simcore.estimate.slot_a import a_hops, a_one_slot_holds
from simcore.estimate.slot_a_pass import a_pass_cycles, later_b_chunks_to_release
from tests.simcore.estimate.support import arr, records


def per_pass(kc: float, slots: float) -> float:
    r = records()
    ch = replace(r.ch, kc_a=arr(kc), slots_a=arr(slots), step_ka=arr(2),
                 single_a=np.array([False]), has_b=np.array([False]))  # fmt: skip
    r = replace(r, ch=ch)
    ah = a_hops(r, ch.kc_a - 1)._replace(hops_f=arr((kc - 1) * 100), hop_f=arr(100))
    ao = a_one_slot_holds(r, ah)._replace(hop_l=arr(60), extra=arr(10), gain_f=arr(0))
    apc = a_pass_cycles(r, ah, ao, ch.kc_a - 1, ch.kc_b - 1)
    return float(apc.per_pass_a[0])


def test_rotating_chunks_average_their_hops_over_the_slots() -> None:
    # 3 chunks through 2 slots: (2 full hops of 100, the K-tail hop of 60, B's gain 10) / 2.
    assert per_pass(3, 2) == (2 * 100 + 60 + 10) / 2


def test_fixed_slots_keep_the_slowest_slot() -> None:
    # 4 chunks in 2 slots (2 rounds): each slot keeps its K positions; without B, the slower
    # of two full hops and a full hop then the K-tail one.
    assert per_pass(4, 2) == max(2 * 100, 100 + 60)


def test_the_release_waits_for_b_chunks_staged_after_the_one_reached() -> None:
    # B's full chunks: GM->UB 300, reorder 100, UB->L1 500; its K-tail chunk: GM->UB 600,
    # reorder 120, UB->L1 260, released 60 after its arrival.
    full = (arr(300), arr(100), arr(500))
    last = (arr(600), arr(120), arr(260))
    # The K-tail chunk right after: its reorder waits for the longer of the full chunk's UB->L1
    # leg (500) and its own GM->UB leg (600, from the reorder before), then its reorder, its
    # UB->L1 leg and its release; from the full chunk's arrival (500 into that).
    one = later_b_chunks_to_release(arr(1), (full, last), arr(60))
    assert one[0] == 600 + 120 + 260 - 500 + 60
    # One more full chunk between: max(500, 300) + 100 from arrival to arrival.
    two = later_b_chunks_to_release(arr(2), (full, last), arr(60))
    assert two[0] == one[0] + 500 + 100
    # The path already at B's K-tail chunk: nothing more.
    assert later_b_chunks_to_release(arr(0), (full, last), arr(60))[0] == 0.0
