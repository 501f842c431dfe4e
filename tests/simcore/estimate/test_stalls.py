"""Stalls of the step chain (stalls.py): a drain at every block boundary, by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simcore.estimate.stalls import chunk_stalls
from tests.simcore.estimate.support import arr, records


def stalls_of(c1: bool, dr: float, normal: float) -> tuple[float, float]:
    r = records()  # 910B2, FixPipe
    # One pass of each operand (no copy at a block boundary after the first), nothing streamed:
    # the only stall is the drain at each of the 4 boundaries between 5 blocks.
    ch = replace(
        r.ch, passes_a=arr(1), passes_b=arr(1), st_a=arr(0), st_b=arr(0),
        kc_a=arr(2), kc_b=arr(2), slots_a=arr(2), slots_b=arr(2),
    )  # fmt: skip
    g = replace(r.g, blocks=arr(5), c1=np.array([c1]))
    typ = replace(r.typ, dr=arr(dr), normal=arr(normal))
    st = chunk_stalls(replace(r, g=g, ch=ch, typ=typ), arr(1), arr(1))
    return float(st.bound_ex[0]), float(st.inner[0])


def test_one_l0c_buffer_puts_the_drain_beyond_the_step_at_every_boundary() -> None:
    # The next block's first MMAD waits for the drain: what it exceeds the part of the first
    # step's period the MMAD does not wait for (normal), at each of blocks - 1 boundaries.
    assert stalls_of(True, 100.0, 30.0) == (4 * (100.0 - 30.0), 0.0)
    # A drain shorter than that part costs nothing.
    assert stalls_of(True, 20.0, 30.0) == (0.0, 0.0)


def test_two_l0c_buffers_overlap_the_drain() -> None:
    assert stalls_of(False, 100.0, 30.0) == (0.0, 0.0)


def test_a_one_slot_copy_stalls_from_the_release_in_the_drain_chain() -> None:
    # (A chip without FixPipe: only its one-L0C drain chain takes these stalls.)
    r = records("Ascend310P3")
    # A in one slot, streamed (one-step chunks, 4 per pass), B resident: each A copy after the
    # first waits for the release of the chunk the step before read, its MMAD start, so its
    # stall is copy + la + lb - per (no lead of A's read ahead of the MMAD); the reads' lead
    # (lead_a = 25) shortens only the read-based stall.
    ch = replace(
        r.ch, passes_a=arr(1), passes_b=arr(1), st_a=arr(1), st_b=arr(0), kc_a=arr(4),
        kc_b=arr(1), slots_a=arr(1), slots_b=arr(2), step_ka=arr(1), single_a=np.array([True]),
        single_af=arr(1), single_b=np.array([False]), single_bf=arr(0), co_steps=arr(1),
    )  # fmt: skip
    cp = replace(r.cp, wait_a=arr(200))
    typ = replace(r.typ, la=arr(30), lb=arr(50), per=arr(100), lead_a=arr(25), lead_b=arr(0))
    st = chunk_stalls(replace(r, ch=ch, cp=cp, typ=typ), arr(3), arr(0))
    # Three copies after the first. From the release each copy starts at the MMAD start of the
    # step before, so MMAD j + 1 starts copy + la + lb after MMAD j: the stalls add up, one per
    # boundary (m = 1). The read-based stall keeps m = slots + 1 = 2 boundaries per jump.
    assert st.inner_rel[0] == 3 * (200 + 30 + 50 - 100)
    assert st.inner[0] == 3 * (200 + 30 + 50 - 25 - 100) / 2
    # A in two slots: a copy waits for the release two chunks back, the jumps overlap as before.
    two = replace(ch, slots_a=arr(2), single_a=np.array([False]), single_af=arr(0))
    st2 = chunk_stalls(replace(r, ch=two, cp=cp, typ=typ), arr(3), arr(0))
    assert st2.inner_rel[0] == st2.inner[0] == 3 * max(200 + 30 + 50 - 25 - 100 - 100, 0) / 3
