"""Phases: where block types or lines are bound by different chains, a sum of maxima."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.lines import (
    both_reloaded_phase_gain,
    line_phase_path,
)
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    from simcore.estimate.compute import ComputePath
    from simcore.estimate.paths import QueuePaths
    from simcore.estimate.slot_a_pass import AChain
    from simcore.estimate.slot_b import BChain
    from simcore.estimate.stalls import Stalls


def _panels(r: CoreRecords, idx: np.ndarray | None) -> tuple[Any, Any, Any, Any]:
    """One block's A panel copies (full, tail row) and B's (full, tail column), on ``idx``.

    The copies' own passes over a group's K chunks (:attr:`Copies.panels`, the simulator's copy
    cost per chunk): where the gain applies (stepM = stepN = 1) a group is one block's rows
    (columns) and the tail group the tail row's (column's), so a pass is the panel, bit for
    bit. Elsewhere these are other finite cycles, and the caller's mask takes the gain to 0
    there. On all candidates where ``idx`` is None.
    """
    (a_f, a_t), (b_f, b_t) = _direct(r.cp.panels[0]), _direct(r.cp.panels[1])
    if idx is None:
        return a_f, a_t, b_f, b_t
    return _sub(a_f, idx), _sub(a_t, idx), _sub(b_f, idx), _sub(b_t, idx)


def _direct(panels: tuple[Any, Any] | None) -> tuple[Any, Any]:
    """An operand's panels; the callers price them for direct copies only."""
    if panels is None:
        raise ValueError("panels are priced for operands copied directly to L1 only")
    return panels


def phase_terms(
    r: CoreRecords,
    st: Stalls,
    cm: ComputePath,
    qp: QueuePaths,
    ac: AChain,
    bc: BChain,
    mk: Makespan,
) -> None:
    """Phases: per block type (or line) the longer of two chains counts, not the longer of the sums.

    B reloaded every block runs its slot chain per block while the tail row's blocks take a
    shorter step chain (``phase_b_every_block``); lines of full and tail outer blocks bound by
    drains or by MMAD / slot chains (``line_phase``); one operand (or both) reloaded every block
    puts the same copies in blocks of different step chains (``phase_copies``).
    """
    g, bt, avg, ch, cp, c, f, fix, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.c, r.f, r.fix, r.floor
    blk_types, dr_last, span, span_corner = bt.types, bt.dr_last, bt.span, bt.span_corner
    span_ctail, span_tail = bt.span_ctail, bt.span_tail
    blocks, blocks_n, bm, bn, cn_t = g.blocks, g.blocks_n, g.bm, g.bn, g.cn_t
    k_iter, m_iter, n_iter, order = g.k_iter, g.m_iter, g.n_iter, g.order
    rm_t, zero = g.rm_t, g.zero
    bound_ex, inner = st.bound_ex, st.inner
    chain_b, pass_b_cyc, per_pass_b = bc.chain_b, bc.pass_b_cyc, bc.per_pass_b
    compute_path, start = cm.compute_path, cm.start
    copy_path = qp.copy_path
    ga, gb, mte2, via_a, via_b = cp.ga, cp.gb, cp.mte2, cp.via_a, cp.via_b
    kc_a, kc_b, passes_a, passes_b = ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    mm, per = avg.mm, avg.per
    per_pass_a = ac.per_pass_a
    if not floor:
        # Phases: a B reloaded in every block runs its slot chain once per block, and the blocks
        # of the tail row take a shorter step chain, so those may be bound by B's copies while
        # the others are bound by the compute. The paths above are totals over all blocks; per
        # block type the core takes the longer of the two. With d = chain - compute per type
        # (the chain's reads after each chunk's first step follow the type's step period, a
        # share w of the steps; its copies are the same) and x, y = blocks x d of the full and
        # the tail row, sum(max) - max(sum) = relu(x) + relu(y) - relu(x + y), which is
        # min(|x|, |y|) where their signs differ, else 0.
        def flip_gain(x: Any, y: Any) -> Any:
            # relu(min(x, -y)) + relu(min(-x, y)): at most one term is > 0, and min(-x, y) is
            # -max(x, -y), so max(min(x, -y), -max(x, -y), 0) (two operations fewer).
            neg_y = -y
            return np.maximum(np.maximum(np.minimum(x, neg_y), -np.maximum(x, neg_y)), zero)

        pa_every = passes_a >= blocks
        pb_every = passes_b >= blocks
        w = (k_iter - kc_b) / k_iter
        w_tail = 1.0 - w
        c_blk = (pass_b_cyc - w * span - bound_ex - inner) / blocks_n
        x = (blocks - n_iter) * c_blk - w_tail * (span - span_tail)
        y = n_iter * c_blk - w_tail * span_tail
        gain = pb_every * flip_gain(x, y)
        # (The compute path and B's chain are in the makespan already: the path can only exceed
        # it where the gain is positive, so it is priced there.)
        idx = np.flatnonzero(gain > 0.0)
        if idx.size:
            path = np.maximum(
                _sub(compute_path, idx), _sub(chain_b, idx) + _sub(mm, idx) + _sub(dr_last, idx)
            )
            mk.raise_at(idx, path + gain[idx], "phase_b_every_block")
        if not fix:
            # Without FixPipe the drains chain through the one C staging buffer (V then MTE3),
            # and their cost follows the block's rows and columns: a line of blocks (column
            # with iterateOrder 0, row with 1) of the full outer type may be bound by the
            # drains while the tail line, with short drains, is bound by its MMAD chain or by
            # the inner operand's slot chain (reloaded in every block). The core takes the
            # longer of the two per line, not the longer of the sums. (Seen: 310P3 int8
            # 512 x 1024 x 3000, a 7-row tail row of 22 blocks bound by B's copies: -9.3 %.)
            # (Only where a full line's inner full blocks and the tail line's lean different
            # ways, drains against MMAD chains with their stalls; priced on those.)
            order0 = order == 0
            stall_blk_all = (bound_ex + inner) / blocks_n
            t00, t01, t10 = blk_types[(0, 0)], blk_types[(0, 1)], blk_types[(1, 0)]
            # (Each type's two drain legs summed once; the tail line's type selected once:
            # the same values per candidate as the selects of the differences.)
            dr_f, dr_t = t00[1] + t00[2], np.where(order0, t01[1] + t01[2], t10[1] + t10[2])
            lean_f = dr_f - t00[0] - stall_blk_all
            lean_t = dr_t - np.where(order0, t01[0], t10[0]) - stall_blk_all
            # The inner operand reloaded in every block also takes its copies per block on
            # MTE2 (with the bias slices), the same in every line: a tail line of short
            # drains may be bound by them. (Seen: 910A fp16 1024^3, B direct in three chunks
            # per block, a 7-row tail row bound by MTE2 after the full rows' drains: -3.2 %.)
            in_again = np.where(order0, passes_a, passes_b) > blocks - 0.5
            copy_blk = in_again * (mte2 - np.where(order0, gb, ga)) / blocks_n
            lean_fc = np.minimum(lean_f, dr_f - copy_blk)
            lean_tc = np.minimum(lean_t, dr_t - copy_blk)
            idx = np.flatnonzero((lean_f * lean_t < 0.0) | (lean_fc * lean_tc < 0.0))
            if idx.size:
                o0 = _sub(order0, idx)
                pa, pb, bl = _sub(passes_a, idx), _sub(passes_b, idx), _sub(blocks, idx)
                pp_in = np.where(o0, pa * _sub(per_pass_a, idx), pb * _sub(per_pass_b, idx))
                ki = _sub(k_iter, idx)
                w_in = np.where(o0, (ki - _sub(kc_a, idx)) / ki, (ki - _sub(kc_b, idx)) / ki)
                stalls = _sub(bound_ex + inner, idx)
                bn_s = np.maximum(bl, 1)
                c_in = (
                    (np.where(o0, pa, pb) > bl - 0.5)
                    * (pp_in - w_in * _sub(span, idx) - stalls)
                    / bn_s
                )
                lines = line_phase_path(
                    {key: tuple(_sub(x, idx) for x in v) for key, v in blk_types.items()},
                    o0, (_sub(m_iter, idx), _sub(n_iter, idx)), stalls / bn_s, c_in, w_in,
                    _sub(copy_blk, idx),
                )  # fmt: skip
                mk.raise_at(idx, _sub(start - (per - mm), idx) + lines, "line_phase")
        # Likewise MTE2 with one operand reloaded in every block (A, or B): its copies are the
        # same in the blocks of the full and the tail column (row), whose step chains differ,
        # so the tail blocks may be bound by MTE2 and the others by the compute.
        only_a = pa_every & ~pb_every
        # (n_t as an exact integer sum: cheaper than a select.)
        n_t = n_iter + only_a * (m_iter - n_iter)
        sp_t = np.where(only_a, span_ctail, span_tail)
        m_blk = (mte2 - bound_ex - inner) / blocks_n
        x = (blocks - n_t) * m_blk - (span - sp_t)
        y = n_t * m_blk - sp_t
        gain = (pa_every ^ pb_every) * flip_gain(x, y)
        # Both operands reloaded in every block, with a tail line (a set disjoint from the one
        # above, whose gain is 0 there: the two gains add).
        both_tail: Any = None
        n_both = 0
        if not (via_a or via_b or c.a_by_column or c.b_by_column):
            both_tail = (
                pa_every & pb_every & (f["stepM"] == 1) & (f["stepN"] == 1)
                & (((m_iter > 1) & (rm_t < bm)) | ((n_iter > 1) & (cn_t < bn)))
            )  # fmt: skip
            n_both = int(np.count_nonzero(both_tail))
        # (Priced on all candidates where they are more than a quarter, else on those only: a
        # gather costs several times an operation.)
        few = 4 * n_both <= np.size(blocks)
        if n_both and not few:
            gain = gain + both_tail * both_reloaded_phase_gain(
                _panels(r, None), (m_iter, n_iter), (span, span_tail, span_ctail, span_corner),
                bound_ex + inner, blocks_n,
            )  # fmt: skip
        # (Likewise the compute and the copy path are in the makespan already.)
        idx = np.flatnonzero(gain > 0.0)
        if idx.size:
            cc_sub = np.maximum(_sub(compute_path, idx), _sub(copy_path, idx))
            mk.raise_at(idx, cc_sub + gain[idx], "phase_copies")
        if n_both and few:
            idx = np.flatnonzero(both_tail)
            gain = both_reloaded_phase_gain(
                _panels(r, idx), (_sub(m_iter, idx), _sub(n_iter, idx)),
                (_sub(span, idx), _sub(span_tail, idx), _sub(span_ctail, idx),
                 _sub(span_corner, idx)),
                _sub(bound_ex + inner, idx), _sub(blocks_n, idx),
            )  # fmt: skip
            cc_sub = np.maximum(_sub(compute_path, idx), _sub(copy_path, idx))
            mk.raise_at(idx, cc_sub + gain, "phase_copies")
