"""MTE2 behind the UB staging buffer (mte2_linked.py): linked GM->UB pairs, by hand."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.mte2_linked import linked_pairs
from simcore.estimate.queues import UbTails
from tests.simcore.estimate.support import arr, bound_by, makespan, records


def test_a_gm_to_ub_copy_right_after_another_waits_for_its_reorder() -> None:
    r = records("Ascend310P3", format_b="NZ")  # A staged through UB, B direct; no bias
    # 10 A copies, 2 B copies breaking two pairs: 10 - 1 - 2 = 7 linked pairs, each idling MTE2
    # for the shorter of the average reorder (50) and the full / K-tail ones (40, 30).
    ch = replace(r.ch, loads_a=arr(10), loads_b=arr(2), passes_b=arr(2), kc_a=arr(2),
                 step_ka=arr(2), step_kb=arr(4))  # fmt: skip
    cp = replace(r.cp, mte2=arr(1000), va1=arr(50), ua1=arr(20))
    lg = replace(r.lg, a_full=(arr(10), arr(40), arr(20)), a_last=(arr(6), arr(30), arr(8)))
    mk = makespan(0.0)
    # (In the floors' pass the linked pairs are not priced by place as well.)
    floors = replace(r, ch=ch, cp=cp, lg=lg, floor=True)
    linked_pairs(floors, None, UbTails(after=arr(100), last_u=arr(0)), mk)  # type: ignore[arg-type]
    # All copies, the idle reorders, then the last copy's reorder and UB->L1 leg, the last
    # step and the drain (``after``).
    assert mk.value[0] == 1000 + 7 * 30 + 50 + 20 + 100
    assert bound_by(mk) == "mte2_linked_pairs"
