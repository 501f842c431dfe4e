"""The MTE2 and drain paths (paths.py), by hand."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.compute import ComputePath
from simcore.estimate.paths import copy_and_drain_paths
from simcore.estimate.stalls import Stalls
from tests.simcore.estimate.support import arr, records


def test_copy_path_is_mte2_then_the_steps_after_the_last_copy() -> None:
    r = records()  # 910B2: FixPipe, direct copies
    g = replace(r.g, k_iter=arr(16))
    # A's last chunk starts at step 12 (4 chunks of 4: km_a = 3), B's at step 8 (km_b = 2);
    # the record's chunking has 4 steps per chunk and both operands copied.
    assert (r.ch.step_ka[0], r.ch.step_kb[0]) == (4, 4) and r.ch.loads_b[0] > 0
    cp = replace(r.cp, mte2=arr(5000))
    typ = replace(r.typ, la=arr(5), lb=arr(7), per=arr(30), mm=arr(20), per_kt=arr(27),
                  mm_kt=arr(12))  # fmt: skip
    bt = replace(r.bt, dr_last=arr(40), drain_total=arr(900))
    st = Stalls(bound_ex=arr(0), burst_a=arr(0), inner=arr(0), inner_rel=arr(0), normal=arr(0))
    cm = ComputePath(compute_path=arr(0), start=arr(200), start_0=arr(0))
    r = replace(r, g=g, bt=bt, typ=typ, cp=cp)
    qp = copy_and_drain_paths(r, st, cm, 15, arr(3), arr(2))
    # After MTE2's last copy (A's, step 12): step 12's loads, steps 13 and 14 at the period, the
    # period into the K-tail step 15 (its loads after a full MMAD) and its MMAD, the last drain.
    tail = 5 + 7 + (16 - 12 - 2) * 30 + 27 + 12 + 40
    assert qp.copy_path[0] == 5000 + tail
    # The drain path: the first block's steps from the start-up (14 full periods, the one into
    # the K-tail step and its MMAD), then every drain.
    assert qp.drain_path[0] == 200 + 14 * 30 + 27 + 12 + 900
