"""The Norm step hand-off term (handoff.py), by hand."""

from __future__ import annotations

from dataclasses import replace

from pytest import approx

from simcore.estimate.handoff import in_chunk_mmad_series, mmad_restart_busy, step_handoff
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


#: The MMAD restart of the 910B family (model_constants.json, fitted on the profiler's file).
_RESTART = 60.3


def test_norm_one_slot_runs_every_copy_then_every_read() -> None:
    # ga + gb + mte1 + mm + dr_last: no copy overlaps a read; the last MMAD starts a chunk, on
    # an idle cube, so it restarts it.
    value, term = _priced(_ONE_SLOT, "norm")
    assert term == "norm_step_handoff"
    assert value == approx(3000 + 5000 + 2000 + 20 + _RESTART + 40)


def _chunked(step_k: int, db_l0a: int, db_l0b: int) -> tuple[float, float]:
    """(in-chunk MMAD series, restart busy) of 4 blocks of 16 K steps, mm 20, la 10."""
    spec = {**_ONE_SLOT, "depthA1": step_k, "depthB1": step_k, "stepKa": step_k,
            "stepKb": step_k, "dbL0A": db_l0a, "dbL0B": db_l0b}  # fmt: skip
    r = records(spec=spec, template="norm")
    r = replace(r, avg=replace(r.avg, mm=arr(20), la=arr(10)))
    return float(in_chunk_mmad_series(r)[0]), float(mmad_restart_busy(r)[0])


def test_a_single_l0_buffer_puts_the_chunk_s_mmads_between_its_reads() -> None:
    # stepK 2: 8 chunks of two steps per block; the first MMAD of each (restarting the cube)
    # sits between the chunk's reads. 4 blocks.
    assert _chunked(2, 1, 2)[0] == approx(4 * 8 * (20 + _RESTART))
    # Only dbL0B = 1: the A read (10) runs under the MMAD.
    assert _chunked(2, 2, 1)[0] == approx(4 * 8 * (20 + _RESTART - 10))
    # stepK 4: per chunk three MMADs between reads, the first restarting: 4 chunks a block.
    assert _chunked(4, 1, 2)[0] == approx(4 * 4 * (3 * 20 + _RESTART))
    # One step per chunk, or both L0 buffers doubled: no MMAD between a chunk's reads.
    assert _chunked(1, 1, 1)[0] == 0.0 and _chunked(2, 2, 2)[0] == 0.0
    # The cube's busy restarts: one per chunk, 4 blocks.
    assert _chunked(2, 2, 2)[1] == approx(4 * 8 * _RESTART)
    assert _chunked(1, 2, 2)[1] == approx(4 * 16 * _RESTART)


def test_mdl_and_unequal_chunks_keep_their_per_operand_flags() -> None:
    assert _priced(_ONE_SLOT, "mdl") == (100, "compute")
    unequal = {**_ONE_SLOT, "depthB1": 2, "stepKb": 2}
    assert _priced(unequal, "norm") == (100, "compute")
