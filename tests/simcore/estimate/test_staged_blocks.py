"""Per-block staged cycles (staged_blocks.py): B's one-slot chain behind A's staging, by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simcore.estimate.slot_b import BChain
from simcore.estimate.staged_blocks import b_chain_behind_a_staging
from tests.simcore.estimate.support import arr, bound_by, makespan, records


def test_b_first_read_waits_for_a_staging_chain_at_each_a_pass() -> None:
    r = records("Ascend310P3", format_b="NZ")  # A staged through UB, B direct
    assert r.cp.via_a and not r.cp.via_b
    # A in 3 chunks of 2 steps per pass (legs GM->UB 10, reorder 30, UB->L1 20; the K tail's
    # 6, 12, 8), B in 2 chunks of 4 steps in one slot (first copy 25), B copied in all 8 blocks,
    # A in 2 passes.
    ch = replace(
        r.ch, kc_a=arr(3), kc_b=arr(2), step_ka=arr(2), step_kb=arr(4), single_b=np.array([True]),
        passes_a=arr(2), passes_b=arr(8), has_b=np.array([True]),
    )  # fmt: skip
    lg = replace(r.lg, a_full=(arr(10), arr(30), arr(20)), a_last=(arr(6), arr(12), arr(8)),
                 b_full=(arr(25), 0.0, 0.0), b_last=(arr(15), 0.0, 0.0))  # fmt: skip
    g = replace(r.g, blocks=arr(8))
    bt = replace(r.bt, dr_last=arr(7))
    avg = replace(r.avg, mm=arr(5))
    mk = makespan(0.0)
    b_chain_behind_a_staging(
        replace(r, ch=ch, lg=lg, g=g, bt=bt, avg=avg), BChain(arr(1000), arr(0), arr(0)), mk
    )
    # B's first chunk spans A's chunks 0 and 1 (4 steps / 2): GM->UB 10, reorder 30, then the
    # link max(UB->L1 20, GM->UB 10) and the second reorder 30, then its UB->L1 leg 20; less
    # B's own first copy (25) that it replaces, once per A pass.
    a_stage = 10 + 30 + max(20, 10) + 30 + 20
    assert mk.value[0] == 1000 + 2 * (a_stage - 25) + 5 + 7
    assert bound_by(mk) == "b_chain_behind_a_staging"
