"""The Norm step hand-off term (handoff.py), by hand."""

from __future__ import annotations

from dataclasses import replace

from simcore.estimate.handoff import step_handoff
from tests.simcore.estimate.support import arr, bound_by, makespan, records

#: One L1 slot per operand, one K step per chunk (the profiler file's Norm cases).
_ONE_SLOT = {
    "usedCoreNum": 16, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128, "baseN": 128,
    "baseK": 64, "depthA1": 1, "depthB1": 1, "stepM": 1, "stepN": 1, "stepKa": 1, "stepKb": 1,
}  # fmt: skip


def _priced(spec: dict[str, int], template: str) -> tuple[float, str]:
    r = records(spec=spec, template=template)
    cp = replace(r.cp, ga=arr(3000), gb=arr(5000))
    bt = replace(r.bt, mte1=arr(2000), dr_last=arr(40))
    avg = replace(r.avg, mm=arr(20))
    mk = makespan(100)
    step_handoff(replace(r, cp=cp, bt=bt, avg=avg), mk)
    return float(mk.value[0]), bound_by(mk)


def test_norm_one_slot_runs_every_copy_then_every_read() -> None:
    # ga + gb + mte1 + mm + dr_last: no copy overlaps a read.
    assert _priced(_ONE_SLOT, "norm") == (3000 + 5000 + 2000 + 20 + 40, "norm_step_handoff")


def test_mdl_and_unequal_chunks_keep_their_per_operand_flags() -> None:
    assert _priced(_ONE_SLOT, "mdl") == (100, "compute")
    unequal = {**_ONE_SLOT, "depthB1": 2, "stepKb": 2}
    assert _priced(unequal, "norm") == (100, "compute")
