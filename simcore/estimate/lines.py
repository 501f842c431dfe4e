"""Lines of blocks (a column with iterateOrder 0, a row with 1): stays, phases, flips.

An outer operand loaded once per line holds its slots over the line's blocks; full lines and
the tail line have their own block sizes, so each line type takes the longer of its own drains,
steps and copies (a sum of maxima, which exceeds the maximum of the sums).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    from simcore.estimate.slot_a import AHops
    from simcore.estimate.slot_a_pass import APassCycles
    from simcore.estimate.slot_b import BHops


def line_stay_path(
    is_a: bool,
    blk_types: dict[tuple[int, int], tuple[Any, Any, Any]],
    idx: np.ndarray,
    legs: tuple[Any, Any, Any, Any, Any, Any],
    dims: tuple[Any, Any, Any, Any, Any, Any, Any, Any],
    o_lead: Any = 0.0,
) -> Any:
    """The outer operand's slot chain with its stay over each line's blocks priced per line.

    Without FixPipe, an operand loaded once per line of blocks (A per row with iterateOrder 1,
    B per column with 0) in at most as many chunks as slots is copied again at the next line
    only after the line's last block has read it. That block's MMADs wait for the drain chain
    through the line (each L0C->UB leg after the UB->GM copy before it, dbL0C blocks back), or
    for the line's step chain. The full lines and the tail line have their own block sizes, so
    each line type takes the longer of its own drains and steps (a sum of maxima).

    Args:
        is_a: The outer operand is A (lines are rows), else B (lines are columns).
        blk_types: As for :func:`c1_drain_chain`, over all candidates (subset by ``idx``).
        idx: The candidates priced.
        legs: The slot chain's legs: the full and K-tail chunk's wait and reads, the chain's
            start, and what the other operand's copies add per pass.
        dims: Chunks and slots of the outer operand, row and column blocks, dbL0C, and the
            other operand's per-block chain: in one chunk (its copy and reads, which follow
            the steps), in several (its copies and reads), and through a line's first block
            (0 where it does not apply).
        o_lead: The part of that first-block chain the start already holds (the other
            operand's first copy, issued before the outer one's), left out of the first line.

    Returns:
        Cycles from the start to the last block's last MMAD start.
    """
    wait_f, reads_f, wait_l, reads_l, start, gain = legs
    kc, n_slots, m_it, n_it, db_c, o_one, o_many, o_blk = dims
    n_out, n_in = (m_it, n_it) if is_a else (n_it, m_it)
    others = n_in - 1
    # (What does not depend on the line type, once: the masks as 0 / 1 floats where they
    # weigh a product, the same values as the bools.)
    full = kc == n_slots
    full_w = np.asarray(full, dtype=np.float64)
    many = kc > 1
    behind = others - db_c
    enters = np.asarray(others >= db_c, dtype=np.float64)
    reads_wf, reads_wl = wait_f + reads_f, wait_l + reads_l
    first_w = np.where(many, wait_f, wait_l) + o_blk
    km = kc - 1
    path = start
    for t, count in ((0, n_out - 1), (1, 1.0)):
        # The line's blocks: n_in - 1 full inner blocks and one tail inner block.
        keys = ((t, 0), (t, 1)) if is_a else ((0, t), (1, t))
        x, y = (tuple(_sub(v, idx) for v in blk_types[key]) for key in keys)
        step_per = (others * x[0] + y[0]) / n_in
        l0c_per = (others * x[1] + y[1]) / n_in
        drain_per = (others * (x[1] + x[2]) + y[1] + y[2]) / n_in
        if t == 0:
            step_0 = step_per
        # (The other operand's copy and reads priced for a full block; a tail line's blocks
        # read faster by what their steps are shorter.)
        inner = np.maximum(step_per, np.maximum(o_one + step_per - step_0, o_many))
        behind_dr = behind * drain_per
        held = np.maximum(others * inner, behind_dr)
        enter = enters * (l0c_per + step_per)
        stay = np.maximum(held, behind_dr + enter)
        hop_f = reads_wf + stay
        hop_l = reads_wl + stay
        per_pass = np.where(
            full,
            np.where(many, np.maximum(hop_f, hop_l), hop_l),
            (km * hop_f + hop_l) / n_slots,
        )
        first = first_w + step_per - step_0 + stay
        per_gain = per_pass + gain
        one_pass = np.maximum(per_gain, full_w * first)
        # The core's first line: this type where there are full lines, else the tail line.
        is_first = (n_out >= 2) if t == 0 else (n_out < 2)
        lead_pass = np.maximum(per_gain, full_w * (first - o_lead))
        path = path + count * one_pass + is_first * (lead_pass - one_pass)
    return path


def line_phase_path(
    blk_types: dict[tuple[int, int], tuple[Any, Any, Any]],
    order0: Any,
    iters: tuple[Any, Any],
    stall_cycles: Any,
    chain_cycles: Any,
    chain_share: Any,
    copy_cycles: Any = 0.0,
) -> Any:
    """Sum over the lines of blocks of the longer of their drain chain and their compute.

    Without FixPipe a block's L0C->UB leg waits for the previous block's UB->GM copy (one C
    staging buffer), so the drains of a line take the sum of their two legs; the line's blocks
    also take their MMAD chains (with their stalls) or, with the inner operand reloaded in every
    block, its slot chain (a fixed part per block plus a share of the block's steps). A line of
    full outer blocks and the tail line differ in both, and each line is bound by the longer:
    the sum of per-line maxima, which exceeds the maximum of the sums the other paths price.

    Args:
        blk_types: As for :func:`c1_drain_chain`: per (row type, column type) the block's
            MMAD chain, its L0C->UB and its UB->GM cycles.
        order0: iterateOrder is 0 (rows inner, lines are columns).
        iters: Row and column blocks of the core.
        stall_cycles: Boundary and chunk stalls per block (added to its MMAD chain).
        chain_cycles: The inner operand's slot chain per block without its steps (0 where it
            is not reloaded in every block).
        chain_share: Share of the block's steps on that chain.
        copy_cycles: That operand's MTE2 copies per block (with the bias slices), 0 where it
            is not reloaded in every block.

    Returns:
        Cycles from the first MMAD start.
    """
    m_iter, n_iter = iters
    i_n = np.where(order0, m_iter, n_iter)
    o_n = np.where(order0, n_iter, m_iter)
    # Drains (both legs) and MMAD chains per block type; the full-full and tail-tail types
    # are the same in both orders, the other two swap.
    drain = {key: v[1] + v[2] for key, v in blk_types.items()}
    span = {key: v[0] for key, v in blk_types.items()}
    # The inner tail block of a full line, and the inner full block of the tail line.
    d_x = np.where(order0, drain[(1, 0)], drain[(0, 1)])
    d_y = np.where(order0, drain[(0, 1)], drain[(1, 0)])
    s_x = np.where(order0, span[(1, 0)], span[(0, 1)])
    s_y = np.where(order0, span[(0, 1)], span[(1, 0)])
    n_full = i_n - 1
    total: Any = 0.0
    for count, drains, spans in (
        (o_n - 1, n_full * drain[(0, 0)] + d_x, n_full * span[(0, 0)] + s_x),
        (1.0, n_full * d_y + drain[(1, 1)], n_full * s_y + span[(1, 1)]),
    ):
        compute = spans + i_n * stall_cycles
        chain = np.maximum(i_n * chain_cycles + chain_share * spans, i_n * copy_cycles)
        total = total + count * np.maximum(drains, np.maximum(compute, chain))
    return total


def both_reloaded_phase_gain(
    copies: tuple[Any, Any, Any, Any],
    iters: tuple[Any, Any],
    spans: tuple[Any, Any, Any, Any],
    stalls: Any,
    blocks_n: Any,
) -> Any:
    """Extra cycles when both operands are reloaded in every block and tail blocks flip.

    With A and B both copied again for every block (K streamed through L1), a block of the
    tail column copies a full A panel but a narrow B one while its K loop is as short as its
    columns (likewise the tail row), so on a kernel whose full blocks are bound by the compute
    the tail blocks can be bound by MTE2 (seen: 910B2 fp32 4096 x 3584 x 18944, base 128 x 128
    x 64, the 4 tail-column blocks of 40 each take 199k cycles of copies for 114k of MMADs: the
    totals missed 3 %). Per block type (full / tail row x full / tail column) the core takes
    the longer of copies and compute: with d the (copies - compute) of each type, sum(max) -
    max(sum) = sum(relu(d)) - relu(sum(d)). The compute of a type is its MMAD chain (``spans``:
    all blocks, the tail row's, the tail column's and the corner's) plus its share of the
    boundary and chunk stalls, spread evenly over the blocks. Direct copies (no UB, no column
    DMA) and stepM = stepN = 1 only (the caller passes those candidates, or masks the others'
    gains). ``copies`` holds one block's A panel copies (full, tail row) and B's (full, tail
    column), :attr:`simcore.estimate.copies.Copies.panels`; ``iters`` m_iter and n_iter;
    ``blocks_n`` is max(m_iter x n_iter, 1).
    """
    a_f, a_t, b_f, b_t = copies
    m_iter, n_iter = iters
    span, span_tail, span_ctail, span_corner = spans
    m_1, n_1 = m_iter - 1, n_iter - 1
    # (Arrays, not scalars, against np.maximum: numpy misses its SIMD loop with a scalar.)
    zero = np.zeros(np.shape(a_f))
    types = (
        (m_1 * n_1, a_f + b_f, span - span_tail - span_ctail + span_corner),
        (n_1, a_t + b_f, span_tail - span_corner),
        (m_1, a_f + b_t, span_ctail - span_corner),
    )
    ds = [
        count * copies - span_type - stalls * count / blocks_n for count, copies, span_type in types
    ]
    ds.append(a_t + b_t - span_corner - stalls / blocks_n)  # the corner block (count 1)
    relu_sum, d_sum = np.maximum(ds[0], zero), ds[0]
    for d in ds[1:]:
        relu_sum = relu_sum + np.maximum(d, zero)
        d_sum = d_sum + d
    return np.maximum(relu_sum - np.maximum(d_sum, zero), zero)


def line_stay(
    r: CoreRecords,
    ah: AHops,
    apc: APassCycles,
    bh: BHops,
    mk: Makespan,
) -> None:
    """An outer operand loaded once per line: its slot chain with the stay priced per line type.

    Without FixPipe its next line's copy waits for its last read in the line's last block, so
    its chain holds each line's blocks: the longer of the line's drain chain, its step chain and
    the other operand's one-slot copies and reads (:func:`line_stay_path`). Pipes: MTE2, MTE1,
    M, V, MTE3.
    """
    g, bt, avg, ch, cp, lg, f, fix, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.f, r.fix, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    bias_cyc, via_a, via_b = cp.bias_cyc, cp.via_a, cp.via_b
    blk_types, dr_last = bt.types, bt.dr_last
    blocks, k_iter, m_iter, n_iter, order = g.blocks, g.k_iter, g.m_iter, g.n_iter, g.order
    gain_pass_a = apc.gain_pass_a
    has_b, kc_a, kc_b, passes_a, passes_b = ch.has_b, ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    slots_a, slots_b = ch.slots_a, ch.slots_b
    la, la_kt, lb, lb_kt, mm, rb_kb = avg.la, avg.la_kt, avg.lb, avg.lb_kt, avg.mm, avg.qb_kb
    # (The slot hops run to the releases, the MMAD start of a chunk's last step.)
    reads_af, reads_al, wait_af, wait_al = ah.rel_af, ah.rel_al, ah.wait_af, ah.wait_al
    reads_bl, wait_bf, wait_bl = bh.rel_bl, bh.wait_bf, bh.wait_bl
    if not fix and not floor and blk_types:
        # An outer operand that stays for a whole line of blocks (one pass per line) holds its
        # slots over the line's blocks: the stay above averages their drains over all lines,
        # but a full line's long UB->GM copies and the tail line's short ones do not average
        # (each line takes the longer of its drains and its step chain). Priced per line type.
        # (Seen: 310P3 int8 512 x 1024 x 3000 by column DMA, A per row of 22 blocks, 6007-cycle
        # output copies in the two full rows, 876 in the tail row: -7.0 %.) (Priced on the
        # candidates where it applies only.)
        for is_a in (True, False):
            n_out = m_iter if is_a else n_iter
            pas, kc_o, sl_o = (passes_a, kc_a, slots_a) if is_a else (passes_b, kc_b, slots_b)
            idx = np.flatnonzero(
                (order == (1 if is_a else 0)) & (n_out >= 2) & (np.abs(pas - n_out) < 0.5)
                & (kc_o <= sl_o) & (blocks >= 2 * n_out)
            )  # fmt: skip
            if not idx.size:
                continue
            # The other operand copied in every block in one slot: with its K in one chunk each
            # block's copy waits for the last read of the block before, so a block takes at
            # least that copy and its reads (a tail line's blocks read faster by what their
            # steps are shorter); in several chunks each copy waits for the reads of the chunk
            # before: the block takes its copies and its reads. And in a line's first block the
            # outer operand's first chunk waits for that chain too (its later chunks' copies
            # queued on MTE2 among the other's; with the other in one chunk they overlap its
            # reads). (Both direct or by column DMA.)
            ka_s, kb_s, bl_s, ki_s = (_sub(x, idx) for x in (kc_a, kc_b, blocks, k_iter))
            # (The other operand's passes and slots.)
            po_s, so_s = (
                _sub(x, idx) for x in ((passes_b, slots_b) if is_a else (passes_a, slots_a))
            )
            if is_a:
                legs = (wait_af, reads_af, wait_al, reads_al, bias_cyc, gain_pass_a)
                kc_p, w_f, w_l = kb_s, _sub(wait_bf, idx), _sub(wait_bl, idx)
                r_one, l_f, l_t = _sub(reads_bl, idx), _sub(lb, idx), _sub(lb_kt, idx)
                rest = (ka_s > 1) * ((ka_s - 2) * _sub(a_full[0], idx) + _sub(a_last[0], idx))
                o_on = (po_s > bl_s - 0.5) & (so_s == 1) & _sub(has_b, idx)
            else:
                lead = r.lg.a_first0  # (A's first copy of a pass: its full or K-tail leg)
                legs = (wait_bf, rb_kb, wait_bl, reads_bl, bias_cyc + lead, 0.0)
                kc_p, w_f, w_l = ka_s, _sub(wait_af, idx), _sub(wait_al, idx)
                r_one, l_f, l_t = _sub(reads_al, idx), _sub(la, idx), _sub(la_kt, idx)
                rest = (kb_s > 1) * ((kb_s - 2) * _sub(b_full[0], idx) + _sub(b_last[0], idx))
                o_on = (po_s > bl_s - 0.5) & (so_s == 1)
            one = kc_p == 1
            copies = (kc_p - 1) * w_f + w_l
            reads = (ki_s - 1) * l_f + l_t
            o_blk = np.where(
                one, w_l + np.maximum(reads, rest), copies + reads - (rest > 0) * l_f + rest
            )
            path = line_stay_path(
                is_a, blk_types, idx, tuple(_sub(x, idx) for x in legs),
                (_sub(kc_o, idx), _sub(sl_o, idx), _sub(m_iter, idx), _sub(n_iter, idx),
                 _sub(f["dbL0C"], idx), (o_on & one) * (w_l + r_one),
                 (o_on & ~one) * (copies + reads), o_on * o_blk * (not (via_a or via_b))),
                # (With B outer the chain's start holds A's first copy, which is the first
                # line's first block's own: not counted twice.)
                0.0 if is_a else o_on * _sub(lead, idx) * (not (via_a or via_b)),
            )  # fmt: skip
            mk.raise_at(idx, path + _sub(mm + dr_last, idx), "line_stay")
