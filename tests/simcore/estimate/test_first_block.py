"""The first block (first_block.py): MTE2 brings its chunks, its steps run, the drains follow."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.first_block import first_block
from tests.simcore.estimate.support import arr, bound_by, makespan, records


def test_first_block_is_the_first_passes_the_last_steps_and_every_drain() -> None:
    r = records()  # 910B2: FixPipe, direct copies, no bias
    # A in 2 chunks (copies of 100 and 60 cycles, the last from step 4), B in 1 chunk of 80;
    # K of 8 steps of period 30 after the last copy's step, loads 5 + 7 and an MMAD of 20; the
    # K-tail step's loads 3 + 4 (period 27 after the full MMAD before) and MMAD 12.
    ch = replace(r.ch, kc_a=arr(2), kc_b=arr(1), a_last_start=arr(4), b_last_start=arr(0))
    lg = replace(r.lg, a_full=(arr(100), 0.0, 0.0), a_last=(arr(60), 0.0, 0.0),
                 b_full=(arr(999), 0.0, 0.0), b_last=(arr(80), 0.0, 0.0))  # fmt: skip
    avg = replace(r.avg, la=arr(5), lb=arr(7), mm=arr(20), per=arr(30), la_kt=arr(3),
                  lb_kt=arr(4), per_kt=arr(27))  # fmt: skip
    typ = replace(r.typ, mm_kt=arr(12))
    bt = replace(r.bt, drain_total=arr(400))
    g = replace(r.g, k_iter=arr(8))
    mk = makespan(0.0)
    fb = first_block(replace(r, g=g, bt=bt, avg=avg, typ=typ, ch=ch, lg=lg), mk)
    # A's pass 100 + 60, B's 80; steps 4 .. 7 after the last copy: the first one's loads, 2
    # periods, the period into the K-tail step and its MMAD; then all drains.
    expected = (100 + 60) + 80 + 5 + 7 + 2 * 30 + 27 + 12 + 400
    assert mk.value[0] == expected
    assert bound_by(mk) == "first_block"
    assert (fb.a_pass[0], fb.b_pass[0], fb.last_copy_step[0]) == (160.0, 80.0, 4.0)


def test_first_block_does_not_raise_a_longer_path() -> None:
    r = records()
    mk = makespan(1e12)
    first_block(r, mk)
    assert bound_by(mk) == "compute"
