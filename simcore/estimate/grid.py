"""The core's share as a grid of blocks, and each block type's K loop and drain.

A core computes ``rows x cols`` of the output in ``baseM x baseN`` blocks (full row and column
blocks and one tail row and column), each a loop of ``k_iter`` K steps of ``baseK`` (the last the
K tail). :func:`block_grid` gives that geometry; :func:`block_types` the per-type totals the terms
start from: the MMAD-start chain through each block type (the sum of its steps' periods), the
cube's, MTE1's and the drain's busy cycles. The L0 loads and MMADs come from
:mod:`simcore.pipeline.transfer` and :mod:`simcore.pipeline.mmad` (the simulator's formulas, in
its order of operations, so the busy totals equal the simulator's bit for bit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import gather
from simcore.hardware.dtypes import FRACTAL_ROWS
from simcore.pipeline.costs import Costs, at_least
from simcore.pipeline.mmad import mmad_k_cycles
from simcore.pipeline.transfer import l1_to_l0_cycles


@dataclass(frozen=True, slots=True)
class Grid:
    """One core's blocks and K loop (arrays over the candidates, or scalars).

    Attributes:
        rows: Output rows of the core (singleCoreM); ``cols`` its columns (singleCoreN).
        cols: See ``rows``.
        k: The problem's K.
        bm: baseM; ``bn`` baseN, ``bk`` baseK.
        bn: See ``bm``.
        bk: See ``bm``.
        m_iter: Row blocks; ``n_iter`` column blocks; ``k_iter`` K steps per block.
        n_iter: See ``m_iter``.
        k_iter: See ``m_iter``.
        m_f: Full row blocks (``m_iter - 1``); ``n_f`` full column blocks; ``kf`` full K steps.
        n_f: See ``m_f``.
        kf: See ``m_f``.
        blocks: ``m_iter x n_iter``; ``blocks_n`` the same at least 1.
        blocks_n: See ``blocks``.
        rm_t: Rows of the tail row block; ``cn_t`` columns of the tail column block.
        cn_t: See ``rm_t``.
        k_t: K of the K-tail step.
        step_m: stepM; ``step_n`` stepN.
        step_n: See ``step_m``.
        order: iterateOrder (0: rows inner, lines of blocks are columns; 1: rows).
        db_c: dbL0C; ``c1`` it is 1 (one L0C buffer).
        c1: See ``db_c``.
        a1: dbL0A is 1; ``b1`` dbL0B is 1.
        b1: See ``a1``.
        wa: The loads a single L0 buffer puts in series with the MMAD, as float weights:
            ``wa`` = (dbL0A == 1), ``wb`` = (dbL0A == 1 or dbL0B == 1).
        wb: See ``wa``.
        fr_f: Fractal rows (of 16) of a full and of the tail row block; ``fc_*`` columns.
        fr_t: See ``fr_f``.
        fc_f: See ``fr_f``.
        fc_t: See ``fr_f``.
        fk_f: C0 groups of a full and of the K-tail step.
        fk_t: See ``fk_f``.
        ka_f: Bytes of one L1 row over a full (``ka_t``: the K-tail) step's K.
        ka_t: See ``ka_f``.
        zero: Zeros and ones of the candidates' shape (bounds of ``np.maximum`` as arrays:
            numpy 2 misses its SIMD loop with a scalar operand).
        ones: See ``zero``.
    """

    rows: Any
    cols: Any
    k: int
    bm: Any
    bn: Any
    bk: Any
    m_iter: Any
    n_iter: Any
    k_iter: Any
    m_f: Any
    n_f: Any
    kf: Any
    blocks: Any
    blocks_n: Any
    rm_t: Any
    cn_t: Any
    k_t: Any
    step_m: Any
    step_n: Any
    order: Any
    db_c: Any
    c1: Any
    a1: Any
    b1: Any
    wa: Any
    wb: Any
    fr_f: Any
    fr_t: Any
    fc_f: Any
    fc_t: Any
    fk_f: Any
    fk_t: Any
    ka_f: Any
    ka_t: Any
    zero: Any
    ones: Any


@dataclass(frozen=True, slots=True)
class BlockCounts:
    """Counts of the core share the caller has already formed (the chip traffic needs them).

    The records take them instead of forming them again (the same integers, exact in float64).

    Attributes:
        m_iter: Row blocks of the core (``ceil(rows / baseM)``); ``n_iter`` column blocks.
        n_iter: See ``m_iter``.
        k_iter: K steps per block (``ceil(K / baseK)``).
        slots_a: L1 slots of A (:func:`simcore.pipeline.traffic.slots`); ``slots_b`` of B.
        slots_b: See ``slots_a``.
        kc_a: K chunks per pass of A (:func:`simcore.pipeline.traffic.k_chunking`); ``kc_b`` B's.
        kc_b: See ``kc_a``.
        m_cores: Cores along M (``ceil(M / singleCoreM)``); ``n_cores`` along N.
        n_cores: See ``m_cores``.
    """

    m_iter: Any
    n_iter: Any
    k_iter: Any
    slots_a: Any
    slots_b: Any
    kc_a: Any
    kc_b: Any
    m_cores: Any
    n_cores: Any


def block_grid(
    c: Costs, k: int, f: dict[str, Any], rows: Any, cols: Any, counts: BlockCounts | None = None
) -> Grid:
    """The grid of blocks of a ``rows x cols`` core share for the struct fields ``f``.

    ``counts`` gives the blocks and K steps where the caller has them.
    """
    bm, bn, bk = f["baseM"], f["baseN"], f["baseK"]
    if counts is None:
        m_iter, n_iter, k_iter = _cdiv(rows, bm), _cdiv(cols, bn), _cdiv(k, bk)
    else:
        m_iter, n_iter, k_iter = counts.m_iter, counts.n_iter, counts.k_iter
    blocks = m_iter * n_iter
    m_f, n_f, kf = m_iter - 1, n_iter - 1, k_iter - 1  # full row / column blocks, K steps
    rm_t = rows - m_f * bm
    cn_t = cols - n_f * bn
    k_t = k - kf * bk
    a1 = f["dbL0A"] == 1
    b1 = f["dbL0B"] == 1
    ones = np.ones(np.shape(blocks))
    fk_f, fk_t = _cdiv(bk, c.c0), _cdiv(k_t, c.c0)
    return Grid(
        rows=rows, cols=cols, k=k, bm=bm, bn=bn, bk=bk, m_iter=m_iter, n_iter=n_iter,
        k_iter=k_iter, m_f=m_f, n_f=n_f, kf=kf, blocks=blocks,
        blocks_n=np.maximum(blocks, ones), rm_t=rm_t, cn_t=cn_t,
        k_t=k_t, step_m=f["stepM"], step_n=f["stepN"], order=f["iterateOrder"],
        db_c=f["dbL0C"], c1=f["dbL0C"] == 1, a1=a1, b1=b1,
        wa=a1.astype(np.float64), wb=(a1 | b1).astype(np.float64),
        fr_f=_cdiv(bm, FRACTAL_ROWS), fr_t=_cdiv(rm_t, FRACTAL_ROWS),
        fc_f=_cdiv(bn, FRACTAL_ROWS), fc_t=_cdiv(cn_t, FRACTAL_ROWS), fk_f=fk_f, fk_t=fk_t,
        ka_f=(fk_f * c.c0) * c.in_bytes, ka_t=(fk_t * c.c0) * c.in_bytes,
        zero=np.full(np.shape(blocks), 0.0), ones=ones,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class BlockTypes:
    """Per block type (full / tail row x full / tail column) K loops and drains, summed.

    Attributes:
        span: The MMAD-start chain inside all blocks (the sum of their steps' periods).
        span_tail: The same over the tail row's blocks; ``span_ctail`` the tail column's,
            ``span_corner`` the corner block's (tail row and column).
        span_ctail: See ``span_tail``.
        span_corner: See ``span_tail``.
        span_seq: The span of blocks that follow each other unstalled (a staged pass's later
            blocks, one L0B buffer), ``span`` elsewhere; 0.0 with FixPipe or in the floors.
        cube: The cube's busy cycles; ``mte1`` MTE1's.
        mte1: See ``cube``.
        drain_total: FixPipe's busy cycles, or the L0C->UB legs (V) without FixPipe.
        m3_out: The UB->GM legs (MTE3) without FixPipe, else 0.0.
        dr_last: The last (corner) block's drain, both legs; with UnitFlag (FixPipe) what of it
            outlasts the block's last MMAD (:func:`simcore.pipeline.drain.unit_flag_drain_tail`).
        types: Without FixPipe, per ``(row type, column type)`` (0 full, 1 tail): one block's
            MMAD chain, its L0C->UB and its UB->GM cycles; empty with FixPipe.
    """

    span: Any
    span_tail: Any
    span_ctail: Any
    span_corner: Any
    span_seq: Any
    cube: Any
    mte1: Any
    drain_total: Any
    m3_out: Any
    dr_last: Any
    types: dict[tuple[int, int], tuple[Any, Any, Any]]


def _times(n: Any, x: Any) -> Any:
    # ``n * x``; the tail row / column type's count is the int 1: no pass for it.
    return x if isinstance(n, int) and n == 1 else n * x


def _at(x: Any, idx: Any) -> Any:
    # ``x`` at the candidates ``idx`` (a scalar, or the int 1 of a tail type's count, as it is).
    return gather(x, idx) if np.ndim(x) else x


def _period(mm: Any, wla: Any, wlb: Any, la_lb: Any) -> Any:
    # :func:`simcore.estimate.steps.period` with its terms that depend on the row or the column
    # type alone (``wa * la``, ``wb * lb``) computed once per type, not once per block type.
    return np.maximum((mm + wla) + wlb, la_lb)


def _total(bt: dict[tuple[int, int], Any]) -> Any:
    # Over the block types in the order of the loop (the sums' rounding is the simulator's).
    return bt[(0, 0)] + bt[(1, 0)] + bt[(0, 1)] + bt[(1, 1)]


def block_types(c: Costs, g: Grid, f: dict[str, Any], cap: Any, floor: bool) -> BlockTypes:
    """Each block type's K loop (the span of its steps' periods), cube, MTE1 and drain cycles.

    A block's K step period is :func:`simcore.estimate.steps.period` of its L0 loads and MMAD;
    the K-tail step takes its own. The drain is FixPipe's, or without FixPipe an L0C->UB leg (V)
    and a UB->GM leg (MTE3). The tail row / column types have a count of the int 1.
    """
    p = c.preset
    fix = c.has_fixpipe
    ovh, frc = p.mmad_overhead_cycles, c.fractal_cycles
    bm, bn, wa, wb = g.bm, g.bn, g.wa, g.wb
    m_f, n_f, kf = g.m_f, g.n_f, g.kf
    ka_f, ka_t = g.ka_f, g.ka_t
    # Per row type (full, tail; rows, fractal rows, row blocks) the A loads of a full K step and
    # of the K tail and their period terms; per column type the same for B.
    row_types = ((bm, g.fr_f, m_f), (g.rm_t, g.fr_t, 1))
    col_types = ((bn, g.fc_f, n_f), (g.cn_t, g.fc_t, 1))
    loads_r = []
    for _, fr, _ in row_types:
        la_f = l1_to_l0_cycles(p, True, (fr * FRACTAL_ROWS), ka_f)
        la_t = l1_to_l0_cycles(p, True, (fr * FRACTAL_ROWS), ka_t)
        loads_r.append((la_f, la_t, wa * la_f, wa * la_t))
    loads_c = []
    for _, fc, _ in col_types:
        lb_f = l1_to_l0_cycles(p, False, (fc * FRACTAL_ROWS), ka_f)
        lb_t = l1_to_l0_cycles(p, False, (fc * FRACTAL_ROWS), ka_t)
        loads_c.append((lb_f, lb_t, wb * lb_f, wb * lb_t))
    mte1 = (
        (m_f * g.n_iter) * (kf * loads_r[0][0] + loads_r[0][1])
        + g.n_iter * (kf * loads_r[1][0] + loads_r[1][1])
        + (n_f * g.m_iter) * (kf * loads_c[0][0] + loads_c[0][1])
        + g.m_iter * (kf * loads_c[1][0] + loads_c[1][1])
    )
    seq = not fix and not floor
    if seq:
        # Blocks that follow each other unstalled (a staged pass's later blocks): with one L0B
        # buffer (two L0A) a step's B read waits for the MMAD before it, the K-tail step's for a
        # full MMAD, the next block's first step's for the K-tail one. (Seen: 910A fp16, 1008 +
        # 16 of K, B staged per column of 4 blocks: the tail step's B read waits for the
        # 65-cycle full MMAD, 262 cycles per block, not 200: -8.9 %.) (With one L0A buffer the
        # sum is the same; with both doubled the loads run ahead. Each operand's K in one chunk
        # per block.) On those candidates wa = 0 and wb = 1: the period is
        # ``max(mm + lb, la + lb)``.
        seq_on = (
            (kf >= 1) & g.b1 & ~g.a1 & (f["stepKa"] >= g.k_iter) & (f["stepKb"] >= g.k_iter)
        )  # fmt: skip
        # (Priced on those candidates only: under 1 % of model_speed's draws on 910A / 310P3.)
        on = np.flatnonzero(seq_on)
        kf_1 = _at(kf, on) - 1
    # Per block type (row type i, column type j; 0 full, 1 tail): the span (sum of the steps'
    # periods: the MMAD-start to MMAD-start chain through the core), the cube's and the drain's
    # (FIX, or the V leg of the drain, and the MTE3 leg) cycles over the type's blocks, the span
    # of its blocks following each other unstalled (above).
    span_bt: dict[tuple[int, int], Any] = {}
    cube_bt: dict[tuple[int, int], Any] = {}
    drain_bt: dict[tuple[int, int], Any] = {}
    m3_bt: dict[tuple[int, int], Any] = {}
    seq_bt: dict[tuple[int, int], Any] = {}
    types: dict[tuple[int, int], tuple[Any, Any, Any]] = {}
    dr_last: Any = 0.0
    if not fix:
        # (Each row and column type's own part of the L0C->UB legs once, not once per pair.)
        c_to_ub = c.c_to_ub_table([rt[0] for rt in row_types], [ct[0] for ct in col_types])
    for j, (col, fc, nc) in enumerate(col_types):
        lb_f, lb_t, wlb_f, wlb_t = loads_c[j]
        for i, (r, fr, nr) in enumerate(row_types):
            la_f, la_t, wla_f, wla_t = loads_r[i]
            count = _times(nr, nc)
            frc_rc = fr * fc * frc
            mm_f = mmad_k_cycles(ovh, frc_rc, g.fk_f)
            mm_t = mmad_k_cycles(ovh, frc_rc, g.fk_t)
            s_f, s_t = la_f + lb_f, la_t + lb_t
            p_f = _period(mm_f, wla_f, wlb_f, s_f)
            span_rc = _times(count, kf * p_f + _period(mm_t, wla_t, wlb_t, s_t))
            span_bt[(i, j)] = span_rc
            if seq:
                mm_f_on, mm_t_on, lb_f_on, lb_t_on = (_at(x, on) for x in (mm_f, mm_t, lb_f, lb_t))
                s_f_on, s_t_on = _at(s_f, on), _at(s_t, on)
                seq_bt[(i, j)] = _times(
                    _at(count, on),
                    kf_1 * _at(p_f, on)
                    + np.maximum(mm_t_on + lb_f_on, s_f_on)
                    + np.maximum(mm_f_on + lb_t_on, s_t_on),
                )
            cube_bt[(i, j)] = _times(count, kf * mm_f + mm_t)
            if fix:
                drain_bt[(i, j)] = _times(count, c.fix_cycles(r, col, cap))
                if (i, j) == (1, 1):
                    # The last (corner) block's drain after its last (K-tail) MMAD: all of it,
                    # or with UnitFlag what outlasts that MMAD (Costs.fix_last_drain_cycles).
                    dr_last = c.fix_last_drain_cycles(r, col, cap, mm_t)
            else:
                dr_rc = c_to_ub[(i, j)]
                m3_rc = c.c_ub_to_gm_cycles(r, col, cap)
                drain_bt[(i, j)] = _times(count, dr_rc)
                m3_bt[(i, j)] = _times(count, m3_rc)
                # (``span_rc / 1`` is span_rc.)
                blk = span_rc if isinstance(count, int) else span_rc / at_least(count, 1)
                types[(i, j)] = (blk, dr_rc, m3_rc)
    span = _total(span_bt)
    span_seq: Any = 0.0
    if seq:
        seq_total = _total(seq_bt)
        span_seq = np.array(span, dtype=np.result_type(span, seq_total))
        span_seq.flat[on] = seq_total
    return BlockTypes(
        span=span,
        span_tail=span_bt[(1, 0)] + span_bt[(1, 1)],
        span_ctail=span_bt[(0, 1)] + span_bt[(1, 1)],
        span_corner=span_bt[(1, 1)],
        span_seq=span_seq,
        cube=_total(cube_bt),
        mte1=mte1,
        drain_total=_total(drain_bt),
        m3_out=0.0 if fix else _total(m3_bt),
        # (The corner block's count is 1.)
        dr_last=dr_last if fix else drain_bt[(1, 1)] + m3_bt[(1, 1)],
        types=types,
    )
