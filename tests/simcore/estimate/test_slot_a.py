"""A's slot chain (slot_a.py): a hop is the slot-waiting leg, the reads, the stay."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.slot_a import a_hops
from tests.simcore.estimate.support import arr, records


def test_hop_of_a_chunk_read_by_one_block() -> None:
    r = records()  # 910B2: direct copies, FixPipe
    # A reloaded in each of the 4 blocks: a chunk stays for no other block's compute.
    ch = replace(r.ch, passes_a=arr(4), step_ka=arr(4), kc_a=arr(3), a_last_start=arr(8),
                 r_last_a=arr(2))  # fmt: skip
    g = replace(r.g, blocks=arr(4), blocks_n=arr(4))
    lg = replace(r.lg, a_full=(arr(70), 0.0, 0.0), a_last=(arr(30), 0.0, 0.0))
    ah = a_hops(replace(r, ch=ch, g=g, lg=lg), arr(2))
    ra, avg = r.avg.ra, r.avg
    assert ah.stay_a[0] == 0.0
    # Full chunk: its copy (the slot-waiting leg on MTE2), its 4 reads from the arrival.
    assert ah.hop_f[0] == 70 + ra(arr(4))[0]
    assert ah.hops_f[0] == 2 * ah.hop_f[0]  # a pass's 2 full chunks
    # The K-tail chunk: its copy and its 2 reads, the last one the K-tail step's load.
    assert ah.reads_al[0] == ra(arr(2))[0] - avg.la[0] + avg.la_kt[0]
    assert ah.wait_al[0] == 30.0
