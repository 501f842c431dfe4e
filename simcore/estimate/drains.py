"""Drain chains without FixPipe: one L0C buffer, the one C staging buffer, the last drains.

A block's L0C->UB leg (V) waits for its last MMAD and for the previous block's UB->GM copy
(MTE3, one C staging buffer); with one L0C buffer the next block's first MMAD waits for that
leg. These terms chain the drains of consecutive block types, a one-slot outer operand's
copy at its pass starts, and the last two drains behind the slot chains.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords
from simcore.hardware.dtypes import FRACTAL_ROWS
from simcore.pipeline.costs import Costs
from simcore.pipeline.transfer import first_last_legs

if TYPE_CHECKING:
    from simcore.estimate.paths import QueuePaths
    from simcore.estimate.slot_a_pass import AChain
    from simcore.estimate.slot_b import BChain
    from simcore.estimate.stalls import Stalls


def corner_drain_path(
    c: Costs,
    k: int,
    base_k: Any,
    cap: Any,
    idx: np.ndarray,
    grid: tuple[Any, ...],
    per_block: tuple[Any, Any],
    chain_end: Any,
    corner: tuple[Any, Any, Any],
    drain_prev_cycles: Any,
    bias_cycles: Any,
) -> Any:
    """The slot chains' end moved back to the block before the last, then the last two drains.

    Without FixPipe a block's L0C->UB leg waits for the previous block's UB->GM copy (one C
    staging buffer), so the kernel ends no earlier than ``E(B - 2) + drain(B - 2) +
    drain(B - 1)``, ``E`` a block's last MMAD end. The slot chains give ``E(B - 1)``; the last
    block is the corner (tail row, tail column) one, whose copies are a pass of the tail group
    of each operand reloaded in every block. Its cycle is taken as those copies in series, its
    bias slice and its MMAD chain: at least what it is when the chains bind, so ``E(B - 2)``
    is not overstated. (Seen: 310P3 fp16 333 x 777 x 1999 by column DMA, a
    29887-cycle UB->GM copy of a full-row block after which the 5-column corner block's
    10244-cycle chain ends first: -7.9 %.)

    Args:
        c: The costs.
        k: The problem's K.
        base_k: baseK.
        cap: HBM share of the core, bytes per cycle.
        idx: The selected candidates.
        grid: rows, cols, stepM, stepN, baseM, baseN, stepKa, stepKb and the K chunks of A and
            of B (all candidates).
        per_block: Whether A, and B, is reloaded in every block (all candidates).
        chain_end: The slot chains' last MMAD end (all candidates).
        corner: The corner block's MMAD chain, L0C->UB and UB->GM cycles (all candidates).
        drain_prev_cycles: Both drain legs of the block before the last (all candidates).
        bias_cycles: One block's bias slice on MTE2 (all candidates, or a scalar).

    Returns:
        The path's cycles on the selected candidates.
    """
    rows, cols, step_m, step_n, bm, bn, step_ka, step_kb, kc_a, kc_b = (_sub(x, idx) for x in grid)
    bk = _sub(base_k, idx)
    cap_s = _sub(cap, idx)

    def tail_pass(is_a: bool, extent: Any, base: Any, step: Any, step_k: Any, kc: Any) -> Any:
        # The tail group's rows (aligned as L1 stores them) and its chunk copies in series.
        grp = step * base
        last_rows = extent - (_cdiv(_cdiv(extent, base), step) - 1) * grp
        rows_l1 = _cdiv(last_rows, FRACTAL_ROWS) * FRACTAL_ROWS
        full, last = first_last_legs(c, is_a, rows_l1, k, bk, step_k, kc, cap_s)
        return (kc - 1) * sum(full) + sum(last)

    cyc_last = (
        _sub(per_block[0], idx) * tail_pass(True, rows, bm, step_m, step_ka, kc_a)
        + _sub(per_block[1], idx) * tail_pass(False, cols, bn, step_n, step_kb, kc_b)
        + _sub(bias_cycles, idx)
        + _sub(corner[0], idx)
    )
    return (
        _sub(chain_end, idx)
        - cyc_last
        + _sub(drain_prev_cycles, idx)
        + _sub(corner[1] + corner[2], idx)
    )


def _in_order(
    blk_types: dict[tuple[int, int], tuple[Any, Any, Any]], order0: Any
) -> Callable[[int, int], tuple[Any, Any, Any]]:
    """The block types by (inner type, outer type) in the iterate order, each selected once.

    (The chains below meet some types several times; each selection is three ``np.where``.)
    """
    got: dict[tuple[int, int], tuple[Any, Any, Any]] = {}

    def get(inner_t: int, outer_t: int) -> tuple[Any, Any, Any]:
        hit = got.get((inner_t, outer_t))
        if hit is None:
            x = blk_types[(inner_t, outer_t)]
            if inner_t == outer_t:
                # (The full and the corner type are the same in either order.)
                hit = x
            else:
                y = blk_types[(outer_t, inner_t)]
                a0, a1, a2 = (np.where(order0, a, b) for a, b in zip(x, y, strict=True))
                hit = (a0, a1, a2)
            got[(inner_t, outer_t)] = hit
        return hit

    return get


def c1_drain_chain(
    blk_types: dict[tuple[int, int], tuple[Any, Any, Any]],
    m_iter: Any,
    n_iter: Any,
    order0: Any,
    normal: Any,
    stall_cycles: Any = 0.0,
    in_order: Callable[[int, int], tuple[Any, Any, Any]] | None = None,
) -> Any:
    """The L0C drain chain without FixPipe and with one L0C buffer (dbL0C = 1).

    A block's L0C->UB leg waits for its last MMAD and for the previous block's UB->GM copy (one
    C staging buffer); with one L0C buffer a block's first MMAD waits for the previous block's
    L0C->UB leg. So with ``L(b)`` the end of block ``b``'s L0C->UB leg,
    ``L(b) >= L(b - 1) + max(mmads(b), ub_to_gm(b - 1)) + l0c_to_ub(b)``: a full block's long
    UB->GM copy is not hidden behind a tail block's short MMAD chain (alternating full and tail
    rows); the sum of maxima, per pair of consecutive block types in the iterate order, is
    longer than the maximum of the sums the other paths price.

    Args:
        blk_types: Per (row type, column type), 0 full and 1 tail: the block's MMAD chain (sum
            of its step periods), its L0C->UB and its UB->GM cycles.
        m_iter: Row blocks of the core.
        n_iter: Column blocks of the core.
        order0: iterateOrder is 0 (rows inner).
        normal: The part of a block's first step period its MMAD chain does not wait for (its
            loads ran before the drain the MMAD waits for).
        stall_cycles: A block's chunk stalls (copies waiting for a read of the same block),
            averaged over the blocks: they lengthen its MMAD chain after it has started
            behind the drain (seen: 310P3 int8 1500^2 x 700 with a one-slot B in two K chunks
            per block, the second copy's 5768 cycles in every full block's chain: -8.3 %).

        in_order: The block types in the iterate order (:func:`_in_order` of ``blk_types``
            and ``order0``) where the caller has them.

    Returns:
        Cycles from the first block's first MMAD start to the last UB->GM copy's end.
    """
    normal = normal - stall_cycles
    get = in_order if in_order is not None else _in_order(blk_types, order0)

    def step(cur: tuple[Any, Any, Any], prev: tuple[Any, Any, Any]) -> Any:
        return np.maximum(cur[0] - normal, prev[2]) + cur[1]

    i_full = np.where(order0, m_iter, n_iter) - 1
    o_full = np.where(order0, n_iter, m_iter) - 1
    # (The line's full-full and tail-full links, the same for both outer types.)
    n_ff, i_many = np.maximum(i_full - 1, 0), i_full >= 1
    total: Any = 0.0
    for o, o_count in ((0, o_full), (1, 1.0)):
        ff, tf = get(0, o), get(1, o)
        total = total + o_count * (n_ff * step(ff, ff) + i_many * step(tf, ff))
        # The first block of this outer row / column follows the last (tail) block of the
        # previous one, a full one (the tail one is the last).
        first = tuple(np.where(i_many, a, b) for a, b in zip(ff, tf, strict=True))
        n_pred = np.maximum(o_full - 1, 0) if o == 0 else (o_full >= 1)
        total = total + n_pred * step(first, get(1, 0))
    fi = np.where(i_many, 0, 1)
    fo = np.where(o_full >= 1, 0, 1)
    first_blk = [get(a, b) for a in (0, 1) for b in (0, 1)]
    pick = fi * 2 + fo
    span0 = np.choose(pick, [x[0] for x in first_blk]) + stall_cycles
    dr0 = np.choose(pick, [x[1] for x in first_blk])
    return span0 + dr0 + total + get(1, 1)[2]


def c1_chain_after_first_line(
    blk_types: dict[tuple[int, int], tuple[Any, Any, Any]],
    m_iter: Any,
    n_iter: Any,
    order0: Any,
    normal: Any,
) -> Any:
    """:func:`c1_drain_chain` from the end of the first line's last block's MMAD chain on.

    The first line of blocks (a column with iterateOrder 0, a row with 1): its last block's
    L0C->UB leg, then every later block's link of the chain and the last UB->GM copy.

    Returns:
        Cycles from that block's last MMAD to the last UB->GM copy's end.
    """
    in_order = _in_order(blk_types, order0)
    chain = c1_drain_chain(blk_types, m_iter, n_iter, order0, normal, in_order=in_order)

    def get(inner_t: int, outer_t: Any) -> tuple[Any, Any, Any]:
        out = [in_order(inner_t, o) for o in (0, 1)]
        return tuple(np.where(outer_t == 0, a, b) for a, b in zip(*out, strict=True))

    i_full = np.where(order0, m_iter, n_iter) - 1
    o_full = np.where(order0, n_iter, m_iter) - 1
    o_1 = np.where(o_full >= 1, 0, 1)
    ff, tf = get(0, o_1), get(1, o_1)
    fi = np.where(i_full >= 1, 0, 1)
    first = tuple(np.where(fi == 0, a, b) for a, b in zip(ff, tf, strict=True))

    def step(cur: tuple[Any, Any, Any], prev: tuple[Any, Any, Any]) -> Any:
        return np.maximum(cur[0] - normal, prev[2]) + cur[1]

    # The first line's blocks: the chain's start (the first block's steps and L0C->UB leg),
    # then its later blocks' links; what is left starts at the last block's L0C->UB leg.
    line = (
        first[0] + first[1]
        + np.maximum(i_full - 1, 0) * step(ff, ff) + (i_full >= 1) * step(tf, ff)
    )  # fmt: skip
    return chain - line + tf[1]


def c1_pass_start_extra(
    blk_types: dict[tuple[int, int], tuple[Any, Any, Any]],
    order0: Any,
    boundaries: Any,
    normal: Any,
    gap_cycles: Any,
    one_block_lines: Any = False,
) -> Any:
    """Cycles a one-slot outer operand's pass starts add to :func:`c1_drain_chain`.

    Without FixPipe and with one L0C buffer the drain chain runs ``L(b) = max(E(b), M(b - 1))
    + l0c(b)`` (``E`` the block's last MMAD end, ``M`` its UB->GM copy's end), a block's
    first MMAD waiting for ``L(b - 1)``. At a pass start of the outer operand (one L1 slot,
    its whole K in one chunk) the block's first MMAD also waits for that operand's copy, which
    waits for its last read in the block before: ``F(b) >= E(b - 1) + gap`` (``gap``: from
    the last MMAD end back to that read, then the copies on MTE2 and the first reads). Over the
    two blocks from ``L(b - 2)``: ``L(b) >= L(b - 2) + E'(b - 1) + gap + E'(b) + l0c(b)``
    (``E'`` a block's MMAD chain), which exceeds the chain's two steps where the block before
    is a short tail block whose step is its predecessor's long UB->GM copy (seen: 310P3 int8
    2048^3, base 96 x 96 x 288, a 14000-cycle B column copy per column: -13.9 %). The last
    block of a line is the inner tail type; the new line's first block a full one (the last
    boundary enters the outer tail line). Lines of at least two blocks only (the caller
    selects them), so the boundaries' two-block windows do not overlap.

    Args:
        blk_types: As for :func:`c1_drain_chain`, on the selected candidates.
        order0: iterateOrder is 0 (rows inner; B is the outer operand).
        boundaries: Pass starts of the outer operand after the first.
        normal: The part of a block's first step its MMAD chain does not wait for, less the
            block's chunk stalls (which lengthen its chain).
        gap_cycles: Cycles from the block before's last MMAD end to the block's first MMAD
            start through the copy (negative: the last read precedes that end).
        one_block_lines: Lines of one block (a pass spans several lines): every block is of
            the inner tail type.

    Returns:
        The extra cycles, >= 0.
    """
    get = _in_order(blk_types, order0)

    def step(cur: tuple[Any, Any, Any], prev: tuple[Any, Any, Any]) -> Any:
        return np.maximum(cur[0] - normal, prev[2]) + cur[1]

    def first(outer_t: int) -> tuple[Any, Any, Any]:
        return tuple(
            np.where(one_block_lines, a, b)
            for a, b in zip(get(1, outer_t), get(0, outer_t), strict=True)
        )

    prev = get(1, 0)
    pp = first(0)
    out: Any = 0.0
    for cur, count in ((pp, np.maximum(boundaries - 1.0, 0.0)), (first(1), 1.0)):
        two = prev[0] - normal + gap_cycles + cur[0] - normal + cur[1]
        out = out + count * np.maximum(two - step(prev, pp) - step(cur, prev), 0.0)
    return out


def corner_drain(
    r: CoreRecords,
    ac: AChain,
    bc: BChain,
    mk: Makespan,
) -> None:
    """The slot chains' end moved back to the block before the last, then the last two drains.

    Without FixPipe the corner block's L0C->UB leg waits for the UB->GM copy of the block before
    (one C staging buffer), which may outlast the short corner block's chain
    (:func:`corner_drain_path`). Pipes: V, MTE3.
    """
    g, bt, avg, ch, cp, c, cap, f, fix = r.g, r.bt, r.avg, r.ch, r.cp, r.c, r.cap, r.f, r.fix
    floor = r.floor
    bias_cyc = cp.bias_cyc
    bk, blocks, bm, bn, cols, k, m_iter = g.bk, g.blocks, g.bm, g.bn, g.cols, g.k, g.m_iter
    n_iter, order, rows = g.n_iter, g.order, g.rows
    blk_types = bt.types
    chain_a = ac.chain_a
    chain_b = bc.chain_b
    kc_a, kc_b, passes_a, passes_b, step_ka = ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b, ch.step_ka
    step_kb = ch.step_kb
    mm = avg.mm
    if not fix and not floor and blk_types:
        # The slot chains end at the last block's last MMAD, its drain after it. Without
        # FixPipe the drain of the block before (its long UB->GM copy on MTE3) can still be
        # running then: the last (corner) block is short and its L0C->UB leg waits for that
        # copy (one C staging buffer). The block before the last is the full-row tail-column
        # one (rows inner, several rows; or columns inner, one column), else the tail-row
        # full-column one. (Priced on the candidates where that drain exceeds the corner
        # block's MMAD chain only.)
        rows_inner = order == 0
        prev_col = (rows_inner & (m_iter >= 2)) | (~rows_inner & (n_iter == 1))
        # (Both legs of its drain: the sums of the two types selected once, the same values
        # as the sum of the selected legs.)
        t01, t10 = blk_types[(0, 1)], blk_types[(1, 0)]
        drain_prev_cyc = np.where(prev_col, t01[1] + t01[2], t10[1] + t10[2])
        # (At most the chains' end less the corner block's MMAD chain and bias slice, plus the
        # two drains: only where that exceeds the path so far.)
        corner = blk_types[(1, 1)]
        idx = np.flatnonzero(
            (blocks >= 2)
            & (
                np.maximum(chain_a, chain_b) + mm + drain_prev_cyc - corner[0] - bias_cyc
                + corner[1] + corner[2]
                > mk.value
            )
        )  # fmt: skip
        if idx.size:
            # An operand reloaded in every block copies a pass in the corner block; one
            # loaded per pass of several blocks is taken as loaded before it (the corner
            # block is the last of its line and of its group).
            corner_path = corner_drain_path(
                c, k, bk, cap, idx,
                (rows, cols, f["stepM"], f["stepN"], bm, bn, step_ka, step_kb, kc_a, kc_b),
                (passes_a > blocks - 0.5, passes_b > blocks - 0.5),
                np.maximum(chain_a, chain_b) + mm, corner, drain_prev_cyc, bias_cyc,
            )  # fmt: skip
            mk.raise_at(idx, corner_path, "corner_drain")


def c1_pass_start(
    r: CoreRecords,
    st: Stalls,
    qp: QueuePaths,
    mk: Makespan,
) -> None:
    """One L0C buffer without FixPipe: a one-slot outer operand's copy at each of its pass starts.

    Its copy waits for the previous block's last read, which the drain chain does not see; over
    two blocks the chain takes both MMAD chains and the copy (:func:`c1_pass_start_extra`).
    """
    mm_kt = r.typ.mm_kt
    g, bt, avg, ch, cp, lg, f, fix, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.f, r.fix, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    blk_types = bt.types
    blocks, c1, m_iter, n_iter, order = g.blocks, g.c1, g.m_iter, g.n_iter, g.order
    c1_path, idx_c1, stall_c1 = qp.c1_path, qp.idx_c1, qp.stall_c1
    kc_a, kc_b, passes_a, passes_b, slots_a = ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b, ch.slots_a
    slots_b = ch.slots_b
    la, lb, lb_kt = avg.la, avg.lb, avg.lb_kt
    normal = st.normal
    via_a, via_b = cp.via_a, cp.via_b
    if not fix and not floor:
        # One L0C buffer without FixPipe: a one-slot outer operand holding its whole K in one
        # chunk is copied again at each of its pass starts (a new column of blocks with
        # iterateOrder 0, a new row with 1), and that copy waits for the previous block's last
        # read, which the drain chain does not see (priced on those candidates).
        outer_b = order == 0
        # (Also a B holding its whole K in several slots, with iterateOrder 0, when A has one
        # slot and is copied again in every block: B's copy at its pass start queues on MTE2
        # behind A's first copy, which waits for A's last read in the block before, so the
        # same chain runs through B's copy: see :func:`c1_pass_start_extra`.)
        b_behind_a = outer_b & (kc_b == 1) & (slots_a == 1) & (passes_a >= blocks)
        idx = np.flatnonzero(
            c1 & ((np.where(outer_b, slots_b + kc_b, slots_a + kc_a) == 2) | b_behind_a)
        )
        if idx.size:
            ob = _sub(outer_b, idx)
            i_n = np.where(ob, _sub(m_iter, idx), _sub(n_iter, idx))
            p_o = np.where(ob, _sub(passes_b, idx), _sub(passes_a, idx))
            # (Lines of one block where B's pass spans several of them, with A behind.)
            keep = ((i_n >= 2) | (_sub(b_behind_a, idx) & (_sub(f["stepN"], idx) >= 2))) & (
                p_o >= 2
            )
            idx, ob, p_o = idx[keep], ob[keep], p_o[keep]
        if idx.size:
            # The other (inner) operand's copy at the same block start: A's is ahead of B's on
            # MTE2 (and waits for A's last read too when A has one slot); B's is behind A's.
            pa, pb = _sub(passes_a, idx), _sub(passes_b, idx)
            a_again = (pa > _cdiv(_sub(m_iter, idx), _sub(f["stepM"], idx)) + 0.5) & (
                _sub(slots_a, idx) == 1
            )
            b_again = pb > _cdiv(_sub(n_iter, idx), _sub(f["stepN"], idx)) + 0.5
            wait_a1 = _sub(a_last[2] if via_a else a_last[0], idx)
            wait_b1 = _sub(b_last[2] if via_b else b_last[0], idx)
            many_a, many_b = _sub(kc_a, idx) > 1, _sub(kc_b, idx) > 1
            g_a0 = 0.0 if via_a else np.where(many_a, _sub(a_full[0], idx), _sub(a_last[0], idx))
            g_b0 = 0.0 if via_b else np.where(many_b, _sub(b_full[0], idx), _sub(b_last[0], idx))
            la_s, lb_s = _sub(la, idx), _sub(lb, idx)
            # Copies from the last read on, the reads before the first MMAD, and what follows
            # the outer operand's last read in the block before (B's read, for A).
            copies = np.where(ob, a_again * g_a0 + wait_b1, wait_a1)
            reads = np.where(ob, lb_s, np.maximum(la_s, b_again * g_b0) + lb_s)
            # (Its own name: ``after`` is the MTE2 path's tail, used below.)
            after_read = np.where(ob, 0.0, _sub(lb_kt, idx))
            extra_c1 = c1_pass_start_extra(
                {key: tuple(_sub(x, idx) for x in v) for key, v in blk_types.items()},
                ob,
                p_o - 1.0,
                _sub(normal, idx) - stall_c1[np.searchsorted(idx_c1, idx)],
                copies + reads - _sub(mm_kt, idx) - after_read,
                np.where(ob, _sub(m_iter, idx), _sub(n_iter, idx)) == 1,
            )
            mk.raise_at(idx, _sub(c1_path, idx) + extra_c1, "c1_pass_start")
