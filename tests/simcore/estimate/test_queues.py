"""Queue totals as paths (queues.py): V and MTE3 after the first copy, the UB staging buffers."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.queues import queue_paths
from tests.simcore.estimate.support import arr, bound_by, makespan, records


def test_vector_and_mte3_queues_without_fixpipe() -> None:
    r = records("Ascend910A")  # no FixPipe; 1024^3 fp16 ND: both operands staged through UB
    assert r.cp.via_a and r.cp.via_b
    cp = replace(
        r.cp, ga=arr(300), gb=arr(200), va=arr(400), vb=arr(100), ua=arr(50), ub=arr(40),
        ga1=arr(30), gb1=arr(20), va1=arr(40), ua1=arr(5), ub1=arr(4),
        vec=arr(1000), mte3=arr(700),
    )  # fmt: skip
    typ = replace(r.typ, m3c=arr(60), la=arr(1), lb=arr(2), mm=arr(3))
    bt = replace(r.bt, dr_last=arr(10))
    mk = makespan(0.0)
    tails = queue_paths(replace(r, bt=bt, typ=typ, cp=cp), mk)
    after = 1 + 2 + 3 + 10  # a step's loads and MMAD, the last drain
    paths = {
        "vector_queue": 30 + 1000 + 60,  # first copy, V's work, the last UB->GM leg
        "mte3_queue": 30 + 40 + 700,  # first copy and reorder, MTE3's work
        # every GM->UB copy after a reorder: MTE2's staged legs, the reorders, the last
        # UB->L1 leg (B's, staged last), then the last step
        "ub_staging_mte2": (300 + 200) + (400 + 100) + 4 + after,
        # every reorder after a UB->L1 leg: the first GM->UB leg, reorders, UB->L1 legs
        "ub_staging_vector": 30 + (400 + 100) + (50 + 40) + after,
    }
    assert tails.after[0] == after
    assert mk.value[0] == max(paths.values())
    assert bound_by(mk) == max(paths, key=lambda k: paths[k])
