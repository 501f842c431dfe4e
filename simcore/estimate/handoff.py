"""The Norm template's step hand-off: MTE2 and MTE1 in series when both operands have one slot.

With the Norm template, one L1 slot per operand and both operands' chunks turning over at the
same K steps, the kernel hands L1 over once per chunk: a chunk's reads wait for both operands'
copies, and the next copies wait for every read before them
(:func:`simcore.pipeline.transfer.norm_step_handoff`, the simulator's rule). So no copy overlaps
a read, and the core takes at least every copy, then every read, then the last MMAD and drain.
"""

from __future__ import annotations

import numpy as np

from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords
from simcore.pipeline.transfer import norm_step_handoff


def step_handoff(r: CoreRecords, mk: Makespan) -> None:
    """Term ``norm_step_handoff``: all copies and all reads in series, then the last MMAD, drain.

    Pipes: MTE2, MTE1 (then M and the drain). Path: ``ga + gb + mte1 + mm + dr_last``, the
    operands' chunk copies (``cp.ga``, ``cp.gb``: MTE2 without the bias slices, which wait for no
    read), MTE1's busy total (``bt.mte1``), the average block's MMAD and the last drain, where
    :func:`~simcore.pipeline.transfer.norm_step_handoff` holds (measured_msprof_910b1_8192.csv
    cases 0-3, Norm with depth = step = 1: task time = MTE2 + MTE1 busy within 2 %).
    """
    ch, g = r.ch, r.g
    applies = norm_step_handoff(
        r.problem, r.c, ch.slots_a, ch.slots_b, r.f["stepKa"], r.f["stepKb"], g.k_iter
    )
    if not np.any(applies):
        return
    idx = np.flatnonzero(applies)
    cp, bt = r.cp, r.bt
    path = cp.ga + cp.gb + bt.mte1 + r.avg.mm + bt.dr_last
    mk.raise_at(idx, np.broadcast_to(path, applies.shape)[idx], "norm_step_handoff")
