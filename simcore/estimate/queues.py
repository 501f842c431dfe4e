"""Queue totals as paths: V, MTE3 and the UB staging buffers, each after what must precede it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    pass


class UbTails(NamedTuple):
    """What :func:`queue_paths` gives the later terms (named as in its formulas)."""

    after: Any
    last_u: Any


def queue_paths(
    r: CoreRecords,
    mk: Makespan,
) -> UbTails:
    """The vector and MTE3 queues and the UB staging totals as paths.

    Without FixPipe (or with UB staging) V runs the reorders and drains after the first copy, MTE3
    the UB->L1 and UB->GM legs after the first reorder. The UB staging buffers chain the copies
    of both operands: every GM->UB copy after the previous reorder, every reorder after the
    previous UB->L1 copy (``ub_staging_mte2``, ``ub_staging_vector``).
    """
    bt, typ, cp, fix = r.bt, r.typ, r.cp, r.fix
    after: Any = None  # (set where the term applies)
    last_u: Any = None  # (set where the term applies)
    dr_last = bt.dr_last
    ga, ga1, gb, gb1, mte3, ua, ua1 = cp.ga, cp.ga1, cp.gb, cp.gb1, cp.mte3, cp.ua, cp.ua1
    ub, ub1, va, va1, vb, vec, via_a = cp.ub, cp.ub1, cp.va, cp.va1, cp.vb, cp.vec, cp.via_a
    via_b = cp.via_b
    la, lb, m3c, mm = typ.la, typ.lb, typ.m3c, typ.mm
    if not fix or via_a or via_b:
        mk.raise_all(ga1 + vec + (m3c if not fix else ua1 + la + lb + mm), "vector_queue")
        mk.raise_all(ga1 + va1 + mte3, "mte3_queue")
    if via_a or via_b:
        # The UB staging buffers chain the copies of both operands: a GM->UB copy waits for the
        # previous reorder, a reorder for the previous UB->L1 copy.
        g_ub = (ga if via_a else 0.0) + (gb if via_b else 0.0)
        v_ub = va + vb
        u_ub = ua + ub
        after = la + lb + mm + dr_last
        last_u = np.where(via_b, ub1, ua1) if (via_a and via_b) else (ub1 if via_b else ua1)
        first_g = ga1 if via_a else gb1
        mk.raise_all(g_ub + v_ub + last_u + after, "ub_staging_mte2")
        mk.raise_all(first_g + v_ub + u_ub + after, "ub_staging_vector")
    return UbTails(after=after, last_u=last_u)
