"""The first block and the first line: the kernel's start-up as paths."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.drains import (
    c1_chain_after_first_line,
)
from simcore.estimate.paths import steps_after_last_copy
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    from simcore.estimate.stalls import Stalls


class FirstBlock(NamedTuple):
    """What :func:`first_block` gives the later terms (named as in its formulas)."""

    a_pass: Any
    last_copy_step: Any
    ub_tail: Any
    b_pass: Any


def first_block(
    r: CoreRecords,
    mk: Makespan,
) -> FirstBlock:
    """The first block: MTE2 brings its chunks, its remaining steps run, every drain follows.

    The first block cannot end before MTE2 has copied the first pass of both operands (in order,
    with the bias slice and the UB staging of the last) and the steps after the last copy have
    run; the drains of all blocks follow in their queue. Pipes: MTE2, MTE1, M, FIX / V / MTE3.
    """
    g, bt, avg, ch, cp, lg, fix, problem = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.fix, r.problem
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    a_last_start, b_last_start, kc_a, kc_b = ch.a_last_start, ch.b_last_start, ch.kc_a, ch.kc_b
    bias_cyc, via_a, via_b = cp.bias_cyc, cp.via_a, cp.via_b
    drain_total, m3_out = bt.drain_total, bt.m3_out
    k_iter = g.k_iter
    la, lb, per = avg.la, avg.lb, avg.per
    kt = (avg.la_kt, avg.lb_kt, avg.per_kt, r.typ.mm_kt)
    # The first block cannot end before MTE2 has brought in every chunk it reads (the first
    # pass of both operands, in order) and the steps after the last of them have run; the
    # drains of all blocks follow it in their queue (with the UB->GM copies without FixPipe).
    a_pass = (kc_a - 1) * a_full[0] + a_last[0]
    b_pass = (kc_b - 1) * b_full[0] + b_last[0]
    last_copy_step = np.maximum(a_last_start, b_last_start)
    ub_tail = 0.0
    if via_a or via_b:
        ub_tail = np.maximum(
            a_last[1] + a_last[2] if via_a else 0.0, b_last[1] + b_last[2] if via_b else 0.0
        )
    # (bias_cyc without a bias slice, ub_tail without UB staging and m3_out with FixPipe are the
    # scalar 0.0: x + 0.0 is x, so those terms are left out there.)
    first_end = bias_cyc + a_pass + b_pass if problem.bias else a_pass + b_pass
    if via_a or via_b:
        first_end = first_end + ub_tail
    first_end = first_end + steps_after_last_copy(k_iter - last_copy_step, per, (la, lb), kt)
    first_all = first_end + drain_total if fix else first_end + drain_total + m3_out
    mk.raise_all(first_all, "first_block")
    return FirstBlock(a_pass=a_pass, last_copy_step=last_copy_step, ub_tail=ub_tail, b_pass=b_pass)


def first_line(
    r: CoreRecords,
    st: Stalls,
    fb: FirstBlock,
    mk: Makespan,
) -> None:
    """The first line's last block when the inner operand is loaded once, then every later drain.

    Without FixPipe MTE2 brings the inner operand's whole panel, the outer one's first pass and a
    bias slice per block before that block's last copy; its steps, then its drain and every later
    one follow (with one L0C buffer through the later blocks' MMAD chains).
    """
    g, bt, avg, ch, cp, f, fix, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.f, r.fix, r.floor
    a_pass, b_pass, last_copy_step, ub_tail = fb.a_pass, fb.b_pass, fb.last_copy_step, fb.ub_tail
    bias_cyc, ga, gb = cp.bias_cyc, cp.ga, cp.gb
    blk_types, drain_total, m3_out = bt.types, bt.drain_total, bt.m3_out
    c1, k_iter, m_iter, n_iter, order = g.c1, g.k_iter, g.m_iter, g.n_iter, g.order
    la, lb, per = avg.la, avg.lb, avg.per
    kt = (avg.la_kt, avg.lb_kt, avg.per_kt, r.typ.mm_kt)
    normal = st.normal
    passes_a, passes_b, streamed_a = ch.passes_a, ch.passes_b, ch.streamed_a
    streamed_b = ch.streamed_b
    if not fix and not floor:
        # Likewise the last block of the first line (column with iterateOrder 0, row with 1)
        # when the inner operand is loaded once: MTE2 has brought its whole panel (every
        # group), the outer operand's first pass and a bias slice per block before that
        # block's last copy; its steps, then its drain and every later one follow (the line's
        # other blocks drain before it). (Seen: 910A int8 512 x 1024 x 3000 by column DMA,
        # the tail A group's 18654-cycle copy ahead of the first column's second block:
        # -10.2 %.) (An inner operand reloaded per line or per block is in the steady paths.)
        # (Priced on the candidates where it applies and the drains take at least half the
        # path so far.)
        outer_b = order == 0
        idx = np.flatnonzero(drain_total + m3_out > 0.5 * mk.value)
        if idx.size:
            ob, m_s, n_s = _sub(outer_b, idx), _sub(m_iter, idx), _sub(n_iter, idx)
            i_s = np.where(ob, m_s, n_s)
            once = np.where(
                ob,
                _sub(passes_a, idx) < _cdiv(m_s, _sub(f["stepM"], idx)) + 0.5,
                _sub(passes_b, idx) < _cdiv(n_s, _sub(f["stepN"], idx)) + 0.5,
            )
            keep = once & (i_s >= 2)
            idx, ob, m_s, n_s, i_s = idx[keep], ob[keep], m_s[keep], n_s[keep], i_s[keep]
        if idx.size:
            o_s = np.where(ob, n_s, m_s)
            # The inner operand's whole panel; the outer one's first pass (every block's
            # share where it is streamed).
            ga_s, gb_s = _sub(ga, idx), _sub(gb, idx)
            line_a = np.where(
                ob, ga_s, np.where(_sub(streamed_a, idx), ga_s / o_s, _sub(a_pass, idx))
            )
            line_b = np.where(
                ob, np.where(_sub(streamed_b, idx), gb_s / o_s, _sub(b_pass, idx)), gb_s
            )
            # The line's blocks before its last: full inner blocks of the first outer line.
            bts = {key: tuple(_sub(x, idx) for x in v) for key, v in blk_types.items()}
            o_1 = o_s >= 2
            d_ff, d_ft = bts[(0, 0)], bts[(0, 1)]
            d_tf = bts[(1, 0)]
            dr_0 = np.where(
                ob,
                np.where(o_1, d_ff[1] + d_ff[2], d_ft[1] + d_ft[2]),
                np.where(o_1, d_ff[1] + d_ff[2], d_tf[1] + d_tf[2]),
            )
            line_end = (
                _sub(bias_cyc, idx) * i_s + line_a + line_b + _sub(ub_tail, idx)
                + _sub(steps_after_last_copy(k_iter - last_copy_step, per, (la, lb), kt), idx)
            )  # fmt: skip
            drains_after = _sub(drain_total + m3_out, idx) - (i_s - 1) * dr_0
            # With one L0C buffer a block's MMADs wait for the L0C->UB leg before, so the
            # drains after the line chain through the blocks' MMAD chains where those exceed the
            # UB->GM copy before (:func:`c1_drain_chain`). (Seen: 910A int8 512 x 1024 x 3000
            # by column DMA, each column's full block's 1920-cycle K loop between the tail
            # block's L0C->UB leg and its own: -6.5 %.)
            c1_s = _sub(c1, idx)
            if np.any(c1_s):
                after_c1 = c1_chain_after_first_line(bts, m_s, n_s, ob, _sub(normal, idx))
                drains_after = np.where(c1_s, np.maximum(drains_after, after_c1), drains_after)
            mk.raise_at(idx, line_end + drains_after, "first_line")
