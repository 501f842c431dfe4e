"""The Norm template's step hand-off: MTE2 and MTE1 in series when both operands have one slot.

With the Norm template, one L1 slot per operand and both operands' chunks turning over at the
same K steps, the kernel hands L1 over once per chunk: a chunk's reads wait for both operands'
copies, and the next copies wait for every read before them
(:func:`simcore.pipeline.transfer.norm_step_handoff`, the simulator's rule). So no copy overlaps
a read, and the core takes at least every copy, then every read, then the last MMAD and drain.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords
from simcore.pipeline.arith import ceil_div
from simcore.pipeline.restart import restart_on_last_step, restarts_per_block
from simcore.pipeline.transfer import norm_step_handoff


def step_handoff(r: CoreRecords, mk: Makespan) -> None:
    """Term ``norm_step_handoff``: all copies and all reads in series, then the last MMAD, drain.

    Pipes: MTE2, MTE1 (then M and the drain). Path: ``ga + gb + mte1 + mm + dr_last``, the
    operands' chunk copies (``cp.ga``, ``cp.gb``: MTE2 without the bias slices, which wait for no
    read), MTE1's busy total (``bt.mte1``), the average block's MMAD and the last drain, where
    :func:`~simcore.pipeline.transfer.norm_step_handoff` holds (measured_msprof_910b1_8192.csv
    cases 0-3, Norm with depth = step = 1: task time = MTE2 + MTE1 busy within 2 %).
    """
    applies = _handoff(r)
    if not np.any(applies):
        return
    idx = np.flatnonzero(applies)
    cp, bt = r.cp, r.bt
    # (Priced on the candidates ``idx`` only: the hand-off holds on few of them.)
    # The last MMAD restarts the cube where its step starts a chunk (simcore.pipeline.restart).
    last_restart = r.c.mmad_restart_cycles * restart_on_last_step(
        _sub(applies, idx), _sub(r.g.k_iter, idx), _sub(r.f["stepKa"], idx)
    )
    path = (
        _sub(cp.ga, idx) + _sub(cp.gb, idx) + _sub(bt.mte1, idx) + _sub(r.avg.mm, idx)
        + last_restart + _sub(bt.dr_last, idx)
    )  # fmt: skip
    path = path + in_chunk_mmad_series(r, idx)
    mk.raise_at(idx, np.broadcast_to(path, idx.shape), "norm_step_handoff")


def in_chunk_mmad_series(r: CoreRecords, idx: np.ndarray | None = None) -> Any:
    """The MMADs a single L0 buffer puts between a chunk's reads under the hand-off.

    Within a chunk of stepK steps, the read of step j + 1 into a single L0A buffer waits for the
    MMAD of step j (dbL0A = 1: the A and B reads and the MMAD in series); with only dbL0B = 1 the
    A read of step j + 1 runs under that MMAD and the B read waits for it. The chunk's last
    step is not followed by a read of the chunk (the next copies wait for the reads, not the
    MMAD), and its first MMAD restarts the cube (:mod:`simcore.pipeline.restart`). Per block:
    ``(k_iter - chunks) x mm + chunks of two or more steps x restart`` with dbL0A = 1, each
    MMAD less the A read with only dbL0B = 1 (the average block's step times). On the
    candidates ``idx`` only where given.
    """
    g, avg = r.g, r.avg

    def on(x: Any) -> Any:
        return x if idx is None else _sub(x, idx)

    step_k, k_iter, mm, la = on(r.f["stepKa"]), on(g.k_iter), on(avg.mm), on(avg.la)
    wa, wb = on(g.wa), on(g.wb)
    chunks = ceil_div(k_iter, step_k)
    # Chunks with a step after the first: the full ones when stepK >= 2, the K-tail chunk
    # when it has two steps or more.
    last_steps = k_iter - (chunks - 1) * step_k
    long_chunks = (step_k >= 2) * (chunks - 1) + (last_steps >= 2)
    restart = r.c.mmad_restart_cycles
    plain = (k_iter - chunks) - long_chunks
    only_b = wb - wa
    per_block = wa * (plain * mm + long_chunks * (mm + restart)) + only_b * (
        plain * np.maximum(mm - la, 0.0) + long_chunks * np.maximum(mm + restart - la, 0.0)
    )
    return on(g.blocks) * per_block


def mmad_restart_busy(r: CoreRecords) -> Any:
    """The cube's busy cycles of its MMAD restarts: ``blocks x restarts per block x restart``.

    Under the Norm step hand-off every chunk's first MMAD starts on an idle cube and pays the
    restart (:mod:`simcore.pipeline.restart`; the simulator lengthens the same MMADs), so the
    cube's busy total is the blocks' MMADs plus these. 0 elsewhere.
    """
    applies = _handoff(r)
    if not r.c.mmad_restart_cycles or not np.any(applies):
        return 0.0
    per_block = restarts_per_block(applies, r.g.k_iter, r.f["stepKa"])
    return r.g.blocks * per_block * r.c.mmad_restart_cycles


def _handoff(r: CoreRecords) -> Any:
    """Where the Norm step hand-off holds (:func:`~simcore.pipeline.transfer.norm_step_handoff`)."""
    ch = r.ch
    return norm_step_handoff(
        r.problem, r.c, ch.slots_a, ch.slots_b, r.f["stepKa"], r.f["stepKb"], r.g.k_iter
    )
