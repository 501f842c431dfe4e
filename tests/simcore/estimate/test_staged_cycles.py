"""The staged per-block cycles (staged_cycles.py), by hand."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from simcore.estimate.slot_a import AHops
from simcore.estimate.slot_b import BHops
from simcore.estimate.staged_cycles import _one_slot_mte3_cycle
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
