"""A's slot chain (slot_a.py): a hop is the slot-waiting leg, the reads, the stay."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.slot_a import a_hops, tail_release
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
    # Full chunk: its copy (the slot-waiting leg on MTE2), its 4 steps from the arrival to the
    # slot's release, the last step's MMAD start (after that step's B read).
    assert ah.hop_f[0] == 70 + avg.qa(arr(4))[0]
    assert ah.rel_af[0] >= ra(arr(4))[0] + avg.lb[0]
    assert ah.hops_f[0] == 2 * ah.hop_f[0]  # a pass's 2 full chunks
    # The K-tail chunk: its copy and its 2 reads, the last one the K-tail step's load.
    assert ah.reads_al[0] == ra(arr(2))[0] - avg.la[0] + avg.la_kt[0]
    assert ah.wait_al[0] == 30.0


def test_a_k_tail_chunk_is_released_after_its_b_read_and_the_mmad_before() -> None:
    r = records()
    g = replace(r.g, wb=arr(0.0))
    avg = replace(r.avg, mm=arr(50), lb_kt=arr(8))

    def q(steps: object) -> object:
        return arr(100) * steps  # type: ignore[operator]

    doubled = replace(r, g=g, avg=avg)
    # Two steps: the MMAD before ends at q(1) + mm = 150, after the last read (120) plus the
    # K-tail B read (8): the release is 150.
    assert tail_release(doubled, arr(120), q, arr(2))[0] == 150.0
    # With one L0B buffer the K-tail B read itself waits for that MMAD: 150 + 8.
    single = replace(r, g=replace(r.g, wb=arr(1.0)), avg=avg)
    assert tail_release(single, arr(120), q, arr(2))[0] == 158.0
    # One step: no MMAD before, the last read and the B read.
    assert tail_release(doubled, arr(120), q, arr(1))[0] == 128.0
