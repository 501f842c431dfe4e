"""Staged operands reloaded per pass of several blocks (without FixPipe).

The drain of the block before a pass precedes the pass's reorders in the vector queue and its
UB->GM copy the UB->L1 legs in MTE3's, so a cycle runs per pass (and per column of passes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords
from simcore.pipeline.costs import Costs
from simcore.pipeline.transfer import first_last_legs

if TYPE_CHECKING:
    from simcore.estimate.compute import ComputePath
    from simcore.estimate.slot_a import AHops
    from simcore.estimate.slot_b import BHops


def staged_pass_paths(
    c: Costs,
    k: int,
    bk: Any,
    cap: Any,
    drain_legs: tuple[Any, Any],
    blk: Any,
    run_ends: tuple[Any, Any],
    grid: tuple[Any, Any, Any, Any, Any, Any, Any],
    ops: tuple[tuple[Any, ...], tuple[Any, ...]],
) -> Any:
    """Cycles, without FixPipe, of an operand staged through UB and reloaded per pass.

    The drain's L0C->UB leg precedes the next block's reorders in the vector queue and its
    UB->GM copy the next UB->L1 legs in MTE3's, so a pass's staging starts after the drain of
    the block before it (the GM->UB leg of its first chunk has run ahead); the pass's blocks
    then run from its last chunk's arrival. Two paths repeat:

    * per pass, averaged over the passes: the drain, the pass's reorders and UB->L1 legs, the
      last chunk's reads and MMAD, the other blocks of the pass;
    * per column (A reloaded in every column: ``p`` passes of ``stepM`` block rows, the last one
      with the tail rows; likewise B per row): the full passes priced at their own group rows,
      not averaged with the tail pass, and the longer of two ways through the column's last
      pass: its blocks and drain, or its staging up to its last reorder, after which the next
      column's first GM->UB leg may start (the staging buffer), exposing that leg. When the
      other operand is staged too and reloaded in that first pass with the same K chunks, the
      two operands' copies alternate there, each GM->UB leg after the reorder before it.

    Every link is a precedence the simulator obeys (queue order, the one staging buffer, the
    L0 reads of the arrived chunk); the legs are those of the pass's own rows, or averages
    over the passes where a path runs through all of them. Only the estimate uses these paths,
    not the floors (which stay as they were, so they remain below the estimate).

    Args:
        c: Costs of the chip and dtype.
        k: Problem K.
        bk: baseK per candidate.
        cap: Per-core bandwidth cap (bytes per cycle).
        drain_legs: Drain (L0C->UB) cycles averaged over the blocks, and one full block's
            UB->GM copy cycles.
        blk: MMAD chain cycles of one block (averaged over the blocks).
        run_ends: Cycles from the arrival of A's (B's) last chunk of a block to its last MMAD's
            end: the chunk's reads, the step's other L0 load after them in MTE1 order, the MMAD.
        grid: Row and column blocks of the core, stepM, stepN, baseM, baseN, blocks.
        ops: Per operand (A, B): staged, passes, loads, V and MTE3 totals, K chunks per pass,
            stepK, L1 slots, and the (MTE2, V, MTE3) legs of a full and of the last K chunk
            at the group rows averaged over the passes.

    Returns:
        The longest path's cycles between the first block's start and the last pass's steps
        (0 where neither applies).
    """
    dr_b, m3c = drain_legs
    m_iter, n_iter, step_m, step_n, bm, bn, blocks = grid
    out: Any = 0.0
    for i, (via, passes, _loads, v_o, u_o, kc_o, sk_o, sl_o, _f, _l) in enumerate(ops):
        if not via:
            continue
        run = run_ends[i]
        p_n = np.maximum(passes, 1.0)
        it_o, it_x, st_o, dim_o = (m_iter, n_iter, step_m, bm) if i == 0 else (
            n_iter, m_iter, step_n, bn)  # fmt: skip
        several, per_col, p_col = _pass_conditions(passes, blocks, it_o, it_x, st_o, kc_o, sl_o)
        # (The pass's later blocks are bound by their MMAD chain or by the drains: a block's
        # L0C->UB leg waits for the UB->GM copy before it, the next pass's reorders for the
        # last L0C->UB leg in the vector queue. Seen: 910A int8 4096 x 512 x 768, A staged per
        # row of two blocks, two 132-cycle UB->GM copies per row: -5.5 %.)
        per_pass = (
            dr_b + (v_o + u_o) / p_n + run + (blocks / p_n - 1.0) * np.maximum(blk, dr_b + m3c)
        )
        out = np.maximum(out, several * (passes - 1) * per_pass)

        full, last = first_last_legs(c, i == 0, st_o * dim_o, k, bk, sk_o, kc_o, cap)
        many = kc_o > 1
        g0 = np.where(many, full[0], last[0])
        v0 = np.where(many, full[1], last[1])
        u0 = np.where(many, full[2], last[2])
        # Chunks 1 .. kc - 1: reorder and UB->L1 legs, and for chunks 2 on the GM->UB leg
        # beyond the previous UB->L1 leg (it starts at the previous reorder's end).
        rest_vu = many * ((kc_o - 2) * (full[1] + full[2]) + last[1] + last[2])
        rest = rest_vu + many * (
            np.maximum(kc_o - 3, 0) * np.maximum(full[0] - full[2], 0.0)
            + (kc_o > 2) * np.maximum(last[0] - full[2], 0.0)
        )
        g1_gap = many * np.maximum(np.where(kc_o > 2, full[0], last[0]) - u0, 0.0)
        # A pass after a drain: its first reorder (GM->UB ran ahead) or the UB->GM copy
        # before its first UB->L1 leg; the column's first pass after the previous pass's last
        # reorder: its whole chain from the first GM->UB leg.
        stage_mid = np.maximum(v0, m3c) + u0 + rest
        stage_first = g0 + v0 + u0 + g1_gap + rest
        # The last pass of a column (the tail rows): the column's totals minus its full passes.
        tail_v = np.maximum(v_o / it_x - (p_col - 1) * ((kc_o - 1) * full[1] + last[1]), 0.0)
        tail_u = np.maximum(u_o / it_x - (p_col - 1) * ((kc_o - 1) * full[2] + last[2]), 0.0)
        n_tail = it_o - (p_col - 1) * st_o
        tv0 = tail_v / kc_o
        tail_mid = np.maximum(tv0, m3c) + tail_u + tail_v - tv0
        tail_pre = np.where(many, np.maximum(tv0, m3c) + (tail_u + tail_v) * (kc_o - 1) / kc_o, tv0)
        other_first: Any = 0.0
        cross: Any = None
        if ops[1 - i][0]:
            _, o_pass, o_ld, o_v, o_u, _, _, _, xf, xl = ops[1 - i]
            o_col = o_pass >= it_x - 0.5
            # The other operand reloaded at the column's first pass: its reorders and a
            # UB->L1 leg join that pass's chain, and the later GM->UB legs of this operand
            # wait for the other's reorders between them.
            other_first = o_col * (o_v / np.maximum(o_pass, 1.0) + o_u / np.maximum(o_ld, 1.0))
            g_rest = many * ((kc_o - 2) * full[0] + last[0])
            stage_first = np.where(
                o_col, np.maximum(stage_first, g0 + v0 + u0 + rest_vu + g_rest), stage_first
            )
            # Same K chunks: the copies alternate A, B in program order, each GM->UB leg
            # after the reorder before it, each reorder after the UB->L1 leg before it.
            af, al, bf, bl = (full, last, xf, xl) if i == 0 else (xf, xl, full, last)
            cross = (
                (kc_o - 1) * (af[1] + bf[1] + np.maximum(af[2], bf[0]))
                + al[1] + bl[1] + np.maximum(al[2], bl[0])
                + many * (
                    np.maximum(kc_o - 2, 0) * np.maximum(bf[2], af[0]) + np.maximum(bf[2], al[0])
                )
                + bl[2]
            )  # fmt: skip
            cross = np.where(o_col & (ops[0][6] == ops[1][6]), cross, 0.0)
        full_pass = run + (st_o - 1) * blk
        mid = (p_col - 2) * (dr_b + stage_mid + full_pass)
        col_g = stage_first + other_first + full_pass + mid + dr_b + tail_pre
        col_c = full_pass + mid + dr_b + tail_mid + run + (n_tail - 1) * blk + dr_b
        col = np.maximum(col_g, col_c + stage_mid)
        if cross is not None:
            col = np.maximum(col, col_c + cross)
        # After the last column's staging: its passes up to the last block's steps (which
        # the caller adds).
        last_col = full_pass + mid + dr_b + tail_mid + (n_tail - 1) * blk
        out = np.maximum(out, per_col * ((it_x - 1) * col + last_col))
    return out


def staged_pass(
    r: CoreRecords,
    cm: ComputePath,
    ah: AHops,
    bh: BHops,
    mk: Makespan,
) -> None:
    """An operand staged per pass of several blocks, without FixPipe: the per-pass cycles.

    The drain before a pass precedes its reorders (V) and UB->L1 legs (MTE3), so a cycle runs per
    pass and per column of passes (:func:`staged_pass_paths`).
    """
    m3c, mm_kt = r.typ.m3c, r.typ.mm_kt
    g, bt, avg, ch, cp, lg, c, cap, f = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.c, r.cap, r.f
    fix, floor = r.fix, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    bk, blocks, blocks_n, bm, bn, k, k_iter = g.bk, g.blocks, g.blocks_n, g.bm, g.bn, g.k, g.k_iter
    m_iter, n_iter = g.m_iter, g.n_iter
    dr_last, drain_total, span, span_seq = bt.dr_last, bt.drain_total, bt.span, bt.span_seq
    kc_a, kc_b, loads_a, loads_b, passes_a = ch.kc_a, ch.kc_b, ch.loads_a, ch.loads_b, ch.passes_a
    passes_b, slots_a, slots_b, step_ka = ch.passes_b, ch.slots_a, ch.slots_b, ch.step_ka
    step_kb = ch.step_kb
    lb_kt, mm, per = avg.lb_kt, avg.mm, avg.per
    reads_al = ah.reads_al
    reads_bl = bh.reads_bl
    start = cm.start
    ua, ub, va, vb, via_a, via_b = cp.ua, cp.ub, cp.va, cp.vb, cp.via_a, cp.via_b
    if not fix and (via_a or via_b) and not floor:
        # Passes of several blocks, for an operand staged through UB: the drain of the block
        # before a pass precedes the pass's reorders in the vector queue (and its UB->GM copy
        # the UB->L1 legs in MTE3's), so a cycle runs per pass through the drain, the pass's
        # staging chain, its last chunk's reads and the steps of its blocks.
        grid = (m_iter, n_iter, f["stepM"], f["stepN"], bm, bn, blocks)
        ops = (
            (via_a, passes_a, loads_a, va, ua, kc_a, step_ka, slots_a, a_full, a_last),
            (via_b, passes_b, loads_b, vb, ub, kc_b, step_kb, slots_b, b_full, b_last),
        )
        # Priced on the candidates where a path applies (about 40 % on 910A and 310P3); the
        # others' paths are 0 (the path's products with its conditions), as here.
        i = np.flatnonzero(_applies(grid, ops))
        staged = np.zeros(np.shape(blocks))
        if i.size:
            staged[i] = staged_pass_paths(
                c, k, _sub(bk, i), _sub(cap, i),
                drain_legs=(_sub(drain_total / blocks_n, i), _sub(m3c, i)),
                blk=_sub(np.maximum(span, span_seq) / blocks_n, i),
                run_ends=(_sub(reads_al + lb_kt + mm_kt, i), _sub(reads_bl + mm_kt, i)),
                grid=tuple(_sub(x, i) for x in grid),
                ops=(_ops_at(ops[0], i), _ops_at(ops[1], i)),
            )  # fmt: skip
        tail_path = (k_iter - 1) * per + mm + dr_last
        mk.raise_all(start + staged + tail_path, "staged_pass")


def _applies(grid: tuple[Any, ...], ops: tuple[tuple[Any, ...], tuple[Any, ...]]) -> Any:
    """Where :func:`staged_pass_paths` gives a path: an operand's passes or columns repeat.

    (Its conditions ``several`` and ``per_col``, written once in :func:`_pass_conditions`.)
    """
    m_iter, n_iter, step_m, step_n, _bm, _bn, blocks = grid
    out: Any = False
    for i, (via, passes, _, _, _, kc_o, _, sl_o, _, _) in enumerate(ops):
        if via:
            it_o, it_x, st_o = (m_iter, n_iter, step_m) if i == 0 else (n_iter, m_iter, step_n)
            several, per_col, _ = _pass_conditions(passes, blocks, it_o, it_x, st_o, kc_o, sl_o)
            out = out | several | per_col
    return out


def _pass_conditions(
    passes: Any, blocks: Any, it_o: Any, it_x: Any, st_o: Any, kc_o: Any, sl_o: Any
) -> tuple[Any, Any, Any]:
    """An operand's passes of several blocks, its reload in every column, its passes per column.

    ``it_o`` / ``st_o``: the operand's blocks and groups along its dimension; ``it_x`` the
    other's blocks (:func:`staged_pass_paths`).
    """
    several = (passes > 1.0) & (passes < blocks)
    p_col = _cdiv(it_o, st_o)
    # Reloaded in every column, its K panel resident (not streamed through the slots).
    per_col = (p_col >= 2) & (it_x >= 2) & (passes >= it_x * p_col - 0.5) & (kc_o <= sl_o)
    return several, per_col, p_col


def _ops_at(op: tuple[Any, ...], idx: np.ndarray) -> tuple[Any, ...]:
    """An operand's entry of ``ops`` (:func:`staged_pass_paths`) on the candidates ``idx``."""
    return (op[0], *(_sub(x, idx) for x in op[1:8]), *(tuple(_sub(x, idx) for x in legs)
            for legs in op[8:]))  # fmt: skip
