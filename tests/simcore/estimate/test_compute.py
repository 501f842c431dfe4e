"""The compute path (compute.py): start-up, the blocks' MMAD chain, stalls, the last drain."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.compute import compute_chain
from simcore.estimate.stalls import Stalls
from tests.simcore.estimate.support import arr, records


def test_compute_path_by_hand() -> None:
    r = records()  # 910B2, direct copies, both L0 buffers doubled
    cp = replace(r.cp, ga1=arr(100), gb1=arr(50))
    typ = replace(r.typ, la=arr(5), lb=arr(7), per=arr(30), mm=arr(20))
    bt = replace(r.bt, span=arr(1000), dr_last=arr(40))
    st = Stalls(bound_ex=arr(11), burst_a=arr(0), inner=arr(13), inner_rel=arr(13), normal=arr(0))
    cm = compute_chain(replace(r, bt=bt, typ=typ, cp=cp), st)
    # Start-up: A's first copy then B's on MTE2 (100, then 150), A's read after 100, B's after
    # both: max(100 + 5, 150) + 7 = 157. The first period's loads are in the start-up already:
    # start_0 = 157 - (30 - 20). Then the span, the stalls and the last drain.
    assert cm.start[0] == 157
    assert cm.start_0[0] == 147
    assert cm.compute_path[0] == 147 + 1000 + 11 + 13 + 40
