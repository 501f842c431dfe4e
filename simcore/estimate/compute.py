"""The compute path: the MMAD chain of every block from the first copies to the last drain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.estimate.records import CoreRecords
from simcore.hardware.dtypes import FRACTAL_ROWS
from simcore.pipeline.transfer import l1_to_l0_cycles

if TYPE_CHECKING:
    from simcore.estimate.stalls import Stalls


class ComputePath(NamedTuple):
    """What :func:`compute_chain` gives the later terms (named as in its formulas)."""

    compute_path: Any
    start: Any
    start_0: Any


def compute_chain(
    r: CoreRecords,
    st: Stalls,
) -> ComputePath:
    """The compute path: start-up, every block's step chain with its stalls, the last drain.

    Start-up is the first copies (A, then B, in MTE2 order; through UB their staging legs) and
    the first reads; then the MMAD-start chain of every block (``span``), the boundary and chunk
    stalls and the last block's drain. With FixPipe and one L0B buffer each MMAD pairs with the
    next step's loads, so the K-tail step's short loads follow a full MMAD. Pipes: MTE2, MTE1, M,
    FIX / V / MTE3.
    """
    g, bt, typ, cp, fix, floor = r.g, r.bt, r.typ, r.cp, r.fix, r.floor
    p = r.c.preset
    a1, b1, blocks, k_iter, ka_t = g.a1, g.b1, g.blocks, g.k_iter, g.ka_t
    bound_ex, inner = st.bound_ex, st.inner
    dr_last, span = bt.dr_last, bt.span
    fr_1, la, lb, mm, mm_kt, per = typ.fr_1, typ.la, typ.lb, typ.mm, typ.mm_kt, typ.per
    ga1, gb1, ua1, ub1, va1, vb1, via_a = cp.ga1, cp.gb1, cp.ua1, cp.ub1, cp.va1, cp.vb1, cp.via_a
    via_b = cp.via_b
    # --- start-up: first copies (A then B) and the first reads --------------------------------
    if via_a and via_b:
        a_rdy = ga1 + va1 + ua1
        b_rdy = np.maximum(a_rdy, ga1 + va1 + gb1) + vb1 + ub1
    elif via_a:
        a_rdy = ga1 + va1 + ua1
        b_rdy = ga1 + gb1
    elif via_b:
        a_rdy = ga1
        b_rdy = ga1 + gb1 + vb1 + ub1
    else:
        a_rdy = ga1
        b_rdy = ga1 + gb1
    start = np.maximum(a_rdy + la, b_rdy) + lb
    # Span between the first MMAD start of block 0 and the first MMAD start: per-block gaps
    # were summed for every block; block 0 has none.
    # The first step's period counts its loads, which the start-up already holds.
    start_0 = start - (per - mm)
    compute_path = start_0 + span + bound_ex + inner + dr_last
    if not floor and fix:
        # With one L0B buffer (and two L0A) a step's B read waits for the MMAD before it, and
        # its A read follows the B read before it on MTE1: the MMAD-start chain pairs each MMAD
        # with the next step's loads, ``max(mm, la_next) + lb_next``, not with its own. Across
        # the K-tail step the full MMAD meets the short tail loads and the short tail MMAD the
        # next block's full loads, which is longer (rearrangement: the correction is >= 0).
        # (With dbL0A = 1 everything runs in series, the sum is the same; with both doubled
        # the loads run a step ahead; without FixPipe the block boundaries are priced from the
        # drain instead.) Priced on the typical block, for every block.
        # (Priced on the candidates where it applies only.)
        idx = np.flatnonzero(b1 & ~a1 & (k_iter >= 2))
        if idx.size:
            mm_s, la_s, mk_s = _sub(mm, idx), _sub(la, idx), _sub(mm_kt, idx)
            la_t1 = l1_to_l0_cycles(p, True, (_sub(fr_1, idx) * FRACTAL_ROWS), _sub(ka_t, idx))
            pair = (
                np.maximum(mm_s, la_t1)
                + np.maximum(mk_s, la_s)
                - np.maximum(mm_s, la_s)
                - np.maximum(mk_s, la_t1)
            )
            # (A fresh array of this function's: raised in place, not copied.)
            compute_path = np.asarray(compute_path, dtype=np.float64)
            compute_path[idx] += _sub(blocks, idx) * pair
    # MTE2 runs ahead of the chain; after its last copy the remaining steps of that chunk and the
    return ComputePath(compute_path=compute_path, start=start, start_0=start_0)
