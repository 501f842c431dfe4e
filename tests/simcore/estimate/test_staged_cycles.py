"""The staged per-block cycles (staged_cycles.py), by hand."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from simcore.estimate.slot_a import AHops
from simcore.estimate.slot_b import BHops
from simcore.estimate.staged_cycles import _one_slot_a_pass_start, _one_slot_mte3_cycle
from tests.simcore.estimate.support import arr, records


def test_one_slot_staged_operand_chains_its_ub_to_l1_legs_through_the_releases() -> None:
    r = records("Ascend310P3")
    # A staged through UB in every block, one L1 slot, two chunks: UB->L1 legs of 220 (full)
    # and 210 (K tail); released 180 and 150 after their arrivals (their last MMAD starts).
    r = replace(
        r,
        ch=replace(r.ch, single_a=np.array([True]), kc_a=arr(2)),
        cp=replace(r.cp, via_a=True, via_b=False),
        lg=replace(
            r.lg, a_full=(arr(300), arr(80), arr(220)), a_last=(arr(100), arr(60), arr(210))
        ),
        bt=replace(r.bt, drain_total=arr(40)),
        g=replace(r.g, blocks_n=arr(2)),
        typ=replace(r.typ, m3c=arr(130), mm_kt=arr(60)),
    )
    ah: Any = AHops(**{name: arr(0) for name in AHops._fields})._replace(
        rel_af=arr(180), rel_al=arr(150)
    )
    bh: Any = BHops(*(arr(0) for _ in BHops._fields))
    # The block before's L0C->UB (40 / 2 blocks) and UB->GM (130) legs, A's first UB->L1 leg
    # and its release, the K-tail chunk's leg and release, the K-tail MMAD.
    cyc = _one_slot_mte3_cycle(r, ah, bh, (np.array([True]), np.array([False])))
    assert cyc[0] == 20 + 130 + (220 + 180) + (210 + 150) + 60
    # Not reloaded in every block: no such cycle.
    none = _one_slot_mte3_cycle(r, ah, bh, (np.array([False]), np.array([False])))
    assert np.all(np.asarray(none) == 0.0)


def test_b_pass_start_holds_the_release_of_a_one_slot_a_chunk() -> None:
    r = records("Ascend310P3")
    # Both staged, A in one slot and three chunks per block (full legs GM->UB 300, reorder 80,
    # UB->L1 220; K tail UB->L1 210, released 180 / 150 after arrival), B's K in one chunk
    # per pass (GM->UB 700, reorder 1300, UB->L1 400); A's first chunk spans 2 K steps, whose
    # last MMAD starts 250 after B's arrival.
    r = replace(
        r,
        ch=replace(r.ch, single_a=np.array([True]), kc_a=arr(3), kc_b=arr(1), step_ka=arr(2)),
        cp=replace(r.cp, via_a=True, via_b=True),
        lg=replace(
            r.lg,
            a_full=(arr(300), arr(80), arr(220)),
            a_last=(arr(100), arr(60), arr(210)),
            b_last=(arr(700), arr(1300), arr(400)),
        ),
        bt=replace(r.bt, drain_total=arr(40)),
        g=replace(r.g, blocks_n=arr(2)),
        typ=replace(r.typ, m3c=arr(130), mm_kt=arr(60)),
    )
    ah: Any = AHops(**{name: arr(0) for name in AHops._fields})._replace(
        rel_af=arr(180), rel_al=arr(150), rel_b_ka=arr(250)
    )
    # From the block before's L0C->UB leg: A's first reorder (80), B's GM->UB leg (80 + 700
    # after it, later than A's first UB->L1 leg at max(80, 130) + 220 = 350), B's reorder and
    # UB->L1 leg, B's reads to A's first release (250), A's middle chunk (220 + 180), A's
    # K-tail chunk (210 + 150), the K-tail MMAD (60), the L0C->UB leg (40 / 2 blocks): 3590,
    # less the block's cycle of 1000.
    extra = _one_slot_a_pass_start(r, ah, arr(1000))
    assert extra[0] == (80 + 700 + 1300 + 400 + 250 + 400 + 360 + 60 + 20) - 1000
    # A's first UB->L1 leg later than B's GM->UB leg: B's reorder waits for it.
    late = replace(r, typ=replace(r.typ, m3c=arr(900)))
    assert _one_slot_a_pass_start(late, ah, arr(1000))[0] == extra[0] + (900 + 220) - 780
    # A in two slots, or in one chunk: not this chain.
    two = replace(r, ch=replace(r.ch, single_a=np.array([False])))
    one = replace(r, ch=replace(r.ch, kc_a=arr(1)))
    assert _one_slot_a_pass_start(two, ah, arr(1000))[0] == 0.0
    assert _one_slot_a_pass_start(one, ah, arr(1000))[0] == 0.0
