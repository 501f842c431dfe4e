"""B's slot chain (slot_b.py): passes of hops, rotating or fixed slots, by hand."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from simcore.estimate.slot_a import AHops
from simcore.estimate.slot_a_pass import AChain
from simcore.estimate.slot_b import BHops, b_chain
from tests.simcore.estimate.support import arr, bound_by, makespan, records


def chain(kc: float, slots: float, stay: float = 0.0) -> tuple[float, str]:
    r = records()  # 910B2, no bias
    ch = replace(
        r.ch, kc_b=arr(kc), slots_b=arr(slots), passes_b=arr(3), streamed_b=np.array([False])
    )
    lg = replace(r.lg, a_first0=arr(40))
    bt = replace(r.bt, dr_last=arr(7))
    avg = replace(r.avg, mm=arr(5))
    # Hops of a full chunk (100) and of the K-tail chunk (60): each a copy's slot-waiting leg,
    # the reads from its arrival and the stay.
    bh = BHops(hop_f=arr(100), hop_l=arr(60), kc_b1=arr(kc - 1), own_b=0.0, reads_bl=arr(0),
               rel_bl=arr(0), wait_bf=arr(30), wait_bl=arr(20))  # fmt: skip
    ah: Any = AHops(**{name: arr(0) for name in AHops._fields})._replace(stay_b=arr(stay))
    ac = AChain(chain_a=arr(0), own_a=0.0, per_pass_a=arr(0))
    mk = makespan(0.0)
    bc = b_chain(replace(r, ch=ch, lg=lg, bt=bt, avg=avg), ah, ac, bh, mk)
    assert mk.value[0] == bc.chain_b[0] + 5 + 7  # then an MMAD and the last drain
    return float(bc.chain_b[0]), bound_by(mk)


def test_rotating_slots_average_the_hops() -> None:
    # 3 chunks through 2 slots rotate: per pass (2 x 100 + 60) / 2; 3 passes; A's first copy
    # (issued before B's) leads the chain.
    assert chain(3, 2) == (3 * (2 * 100 + 60) / 2 + 40, "slot_chain_b")


def test_fixed_slots_keep_the_slowest_slot() -> None:
    # 4 chunks in 2 slots: each slot keeps its K positions, the slowest sets the pace: max(2 x
    # 100, 100 + 60) per pass.
    assert chain(4, 2) == (3 * max(2 * 100, 100 + 60) + 40, "slot_chain_b")
