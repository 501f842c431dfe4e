"""An operand's chunk copies: how K is chunked through its L1 slots, the copies' totals and legs.

Each operand moves through L1 in chunks of ``stepK`` K steps (times stepM / stepN blocks of
rows), held in ``slots`` L1 slots; a copy waits for the last read of the chunk ``slots`` copies
back. :func:`chunking` gives the chunk counts, passes and slot flags; :func:`copy_totals` each
pipe's busy cycles of the copies and one average copy's legs; :func:`chunk_legs_of` the legs of
one full and of the last (K-tail) chunk copy, from :mod:`simcore.pipeline.transfer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import divides as _divides
from simcore.estimate.arrays import select
from simcore.estimate.grid import BlockCounts, BlockTypes, Grid
from simcore.pipeline.costs import Costs
from simcore.pipeline.traffic import operand_traffic, slots
from simcore.pipeline.transfer import (
    ChunkShapes,
    chunk_legs,
    chunk_shapes,
    column_latency_cycles,
    copy_totals,
    direct_copy_costs,
    operand_contention,
    shape_cost_sum,
    shape_costs,
    shape_pieces,
    with_bias_slices,
)

Legs = tuple[Any, Any, Any]


@dataclass(frozen=True, slots=True)
class Chunking:
    """How each operand's K goes through its L1 slots (arrays over the candidates).

    Attributes:
        step_ka: stepKa, ``step_kb`` stepKb: K steps per chunk.
        step_kb: See ``step_ka``.
        slots_a: L1 slots of A (``slots_b`` of B): chunks it holds at once.
        slots_b: See ``slots_a``.
        loads_a: A's chunk copies on the core (``loads_b`` B's); ``el_a`` / ``el_b`` elements.
        loads_b: See ``loads_a``.
        el_a: See ``loads_a``.
        el_b: See ``loads_a``.
        kc_a: K chunks per pass of A (``kc_b`` of B), the last one the K tail.
        kc_b: See ``kc_a``.
        km_a: ``kc_a - 1``, the full chunks of a pass; ``km_b`` B's.
        km_b: See ``km_a``.
        passes_a: Passes over K of A (its copies / kc_a); ``passes_b`` of B.
        passes_b: See ``passes_a``.
        single_a: A has one slot (``single_af`` as 0.0 / 1.0); likewise B.
        single_b: See ``single_a``.
        single_af: See ``single_a``.
        single_bf: See ``single_a``.
        streamed_a: More chunks than slots (``st_a`` as 0.0 / 1.0); likewise B.
        streamed_b: See ``streamed_a``.
        st_a: See ``streamed_a``.
        st_b: See ``streamed_a``.
        a_last_start: First step of A's last chunk; ``b_last_start`` of B's.
        b_last_start: See ``a_last_start``.
        r_last_a: Steps of A's last chunk; ``r_last_b`` of B's.
        r_last_b: See ``r_last_a``.
        a_many: A has more than one chunk per pass; ``b_many`` B.
        b_many: See ``a_many``.
        has_b: B is copied at all.
        co_frac: Share of A's passes that reload B; ``co_rest`` the others; ``co_frac_ab`` share
            of B's passes that reload A.
        co_rest: See ``co_frac``.
        co_frac_ab: See ``co_frac``.
        co_lcm: lcm(stepKa, stepKb); ``co_steps`` steps of a pass where both start a chunk.
        co_steps: See ``co_lcm``.
        ka_div: stepKb divides stepKa; ``kb_short`` B's chunks are shorter; ``kb_off`` shorter
            and not tiling A's (they start at varying offsets inside A's chunks).
        kb_short: See ``ka_div``.
        kb_off: See ``ka_div``.
        shapes: Each operand's groups and its passes over the full and the tail groups of the
            core, where the caller had them (else None).
    """

    step_ka: Any
    step_kb: Any
    slots_a: Any
    slots_b: Any
    loads_a: Any
    loads_b: Any
    el_a: Any
    el_b: Any
    kc_a: Any
    kc_b: Any
    km_a: Any
    km_b: Any
    passes_a: Any
    passes_b: Any
    single_a: Any
    single_b: Any
    single_af: Any
    single_bf: Any
    streamed_a: Any
    streamed_b: Any
    st_a: Any
    st_b: Any
    a_last_start: Any
    b_last_start: Any
    r_last_a: Any
    r_last_b: Any
    a_many: Any
    b_many: Any
    has_b: Any
    co_frac: Any
    co_rest: Any
    co_frac_ab: Any
    co_lcm: Any
    co_steps: Any
    ka_div: Any
    kb_short: Any
    kb_off: Any
    shapes: tuple[tuple[Any, ...], tuple[Any, ...]] | None


def chunking(
    c: Costs,
    g: Grid,
    f: dict[str, Any],
    traffic: tuple[Any, ...] | None,
    counts: BlockCounts | None = None,
) -> Chunking:
    """Chunks, slots and passes of both operands (``traffic``: their loads and elements).

    ``traffic`` may go on with each operand's groups and its passes over the full and the tail
    groups (:func:`simcore.pipeline.traffic.operand_chip_traffic`'s ``shape``, A's then B's):
    the chunk shapes take them (:func:`copy_totals_of`). ``counts`` gives the slots and the K
    chunks where the caller has them.
    """
    order = g.order
    step_ka, step_kb = f["stepKa"], f["stepKb"]
    if counts is None:
        slots_a = slots(f["depthA1"], f["stepM"], step_ka)
        slots_b = slots(f["depthB1"], f["stepN"], step_kb)
        kc_a, kc_b = _cdiv(g.k_iter, step_ka), _cdiv(g.k_iter, step_kb)
    else:
        slots_a, slots_b, kc_a, kc_b = counts.slots_a, counts.slots_b, counts.kc_a, counts.kc_b
    if traffic is None:
        traffic = (
            *operand_traffic(
                g.rows, g.bm, f["stepM"], g.k, g.bk, step_ka, slots_a, g.n_iter, order == 0, c.c0
            ),
            *operand_traffic(
                g.cols, g.bn, f["stepN"], g.k, g.bk, step_kb, slots_b, g.m_iter, order == 1, c.c0
            ),
        )
    loads_a, el_a, loads_b, el_b = traffic[:4]
    shapes = (traffic[4:7], traffic[7:10]) if len(traffic) == 10 else None
    passes_a = loads_a / kc_a
    passes_b = loads_b / kc_b
    single_a = slots_a == 1
    single_b = slots_b == 1
    streamed_a = kc_a > slots_a
    streamed_b = kc_b > slots_b
    km_a, km_b = kc_a - 1, kc_b - 1
    a_last_start = km_a * step_ka
    b_last_start = km_b * step_kb
    ones = g.ones
    co_frac = np.minimum(passes_b / np.maximum(passes_a, ones), ones)
    co_lcm = np.lcm(step_ka.astype(np.int64), step_kb.astype(np.int64))  # (an integer ufunc)
    ka_div = _divides(step_ka, step_kb)
    kb_short = step_kb < step_ka
    # (single_* and streamed_* as 0 / 1 too: each weighs several products, and a bool x float
    # product costs about three times a float one; ``x * st_a`` is ``np.where(streamed_a, x,
    # 0.0)`` for a finite x, about a seventh of its instructions.)
    return Chunking(
        step_ka=step_ka, step_kb=step_kb, slots_a=slots_a, slots_b=slots_b, loads_a=loads_a,
        loads_b=loads_b, el_a=el_a, el_b=el_b, kc_a=kc_a, kc_b=kc_b, km_a=km_a, km_b=km_b,
        passes_a=passes_a,
        passes_b=passes_b, single_a=single_a, single_b=single_b,
        single_af=single_a.astype(np.float64), single_bf=single_b.astype(np.float64),
        streamed_a=streamed_a, streamed_b=streamed_b, st_a=streamed_a.astype(np.float64),
        st_b=streamed_b.astype(np.float64), a_last_start=a_last_start,
        b_last_start=b_last_start, r_last_a=g.k_iter - a_last_start,
        r_last_b=g.k_iter - b_last_start, a_many=kc_a > 1, b_many=kc_b > 1, has_b=loads_b > 0,
        co_frac=co_frac, co_rest=1.0 - co_frac,
        co_frac_ab=np.minimum(passes_a / np.maximum(passes_b, ones), ones), co_lcm=co_lcm,
        co_steps=_cdiv(g.k_iter, co_lcm),  # steps where both operands start a chunk, per pass
        ka_div=ka_div, kb_short=kb_short, kb_off=kb_short & ~ka_div, shapes=shapes,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Copies:
    """Busy cycles of all chunk copies per pipe, and one average copy's legs.

    Attributes:
        via_a: A is staged through UB (GM->UB, reorder, UB->L1); ``via_b`` B.
        via_b: See ``via_a``.
        ga: A's MTE2 cycles (GM->L1 or GM->UB), ``va`` its reorders (V), ``ua`` its UB->L1
            legs (MTE3); ``gb`` / ``vb`` / ``ub`` B's.
        va: See ``ga``.
        ua: See ``ga``.
        gb: See ``ga``.
        vb: See ``ga``.
        ub: See ``ga``.
        mte2: MTE2's busy cycles (both operands and the bias slices); ``vec`` V's (with the
            drains' L0C->UB legs without FixPipe); ``mte3`` MTE3's (with the UB->GM legs).
        vec: See ``mte2``.
        mte3: See ``mte2``.
        ga1: One average A copy's legs (``gb1``... B's).
        va1: See ``ga1``.
        ua1: See ``ga1``.
        gb1: See ``ga1``.
        vb1: See ``ga1``.
        ub1: See ``ga1``.
        wait_a: The leg of an A copy that waits for its L1 slot (the last one); ``wait_b`` B's.
        wait_b: See ``wait_a``.
        b_after_a: What a B copy issued right after an A copy takes behind it (MTE2, or the UB
            staging).
        reorders_a: The reorder of a full and a K-tail A chunk averaged over the groups' shapes
            (None off the UB path); ``reorders_b`` B's.
        reorders_b: See ``reorders_a``.
        bias_cyc: One block's bias slice on MTE2 (0.0 without bias).
    """

    via_a: bool
    via_b: bool
    ga: Any
    va: Any
    ua: Any
    gb: Any
    vb: Any
    ub: Any
    mte2: Any
    vec: Any
    mte3: Any
    ga1: Any
    va1: Any
    ua1: Any
    gb1: Any
    vb1: Any
    ub1: Any
    wait_a: Any
    wait_b: Any
    b_after_a: Any
    reorders_a: tuple[Any, Any] | None
    reorders_b: tuple[Any, Any] | None
    bias_cyc: Any
    #: Same-address factors of A's and B's direct copies (simcore.pipeline.transfer).
    contention: tuple[Any, Any]
    #: Direct copies' MTE2 legs per operand (full-K, K-tail), averaged over the groups' shapes
    #: (None for a staged or column-path operand).
    directs: tuple[tuple[Any, Any] | None, tuple[Any, Any] | None]
    #: Per operand copied directly, the MTE2 cycles of one pass over a full group's K chunks
    #: and over the tail group's (None for a staged or column-path operand): with one block per
    #: group (stepM = 1 for A, stepN = 1 for B), one block's panel of the full and of the tail
    #: row (column).
    panels: tuple[tuple[Any, Any] | None, tuple[Any, Any] | None]
    #: DMA copies of A and of B (per base block under Norm): the scalar pipe's copy counts.
    dma_copies: tuple[Any, Any]


def _count(pieces: Any) -> Any:
    """The DMA copies of one chunk shape (its :func:`shape_pieces`), as a chunk cost."""

    def count(rows: Any, kk: Any) -> Any:
        pr, pk = pieces(rows, kk)
        return pr * pk

    return count


def _direct_copies(
    c: Costs,
    is_a: bool,
    cap: Any,
    contention: Any,
    shapes: ChunkShapes,
    bases: tuple[Any, Any],
    loads: Any,
) -> tuple[Any, tuple[Any, ...]]:
    """An operand's DMA copies and, copied directly, its MTE2 total and per-chunk legs.

    DMA copies (the scalar pipe's per-copy work): one per chunk, one per base block (Norm).
    The direct copies' cycles (:func:`direct_copy_costs`) price the same copy pieces, computed
    once per shape. Returns ``(dma copies, (total, full-K leg, K-tail leg, group passes))``
    (:func:`direct_copy_costs`), the second empty on the UB path or the column path (priced by
    the caller).
    """
    if c.a_via_ub if is_a else c.b_via_ub:
        return loads, ()
    pieces = shape_pieces(c.norm, shapes, bases[0], bases[1])
    dma = shape_cost_sum(_count(pieces), shapes) if c.norm else loads
    if c.a_by_column if is_a else c.b_by_column:
        return dma, ()
    return dma, direct_copy_costs(c, is_a, cap, contention, shapes, pieces)


def copy_totals_of(
    c: Costs,
    g: Grid,
    bt: BlockTypes,
    ch: Chunking,
    f: dict[str, Any],
    bias: bool,
    cap: Any,
    counts: BlockCounts | None = None,
) -> Copies:
    """Each operand's copies per pipe (:mod:`simcore.pipeline.transfer`) and one copy's legs.

    ``counts`` gives the cores along M and N where the caller has them.
    """
    fix = c.has_fixpipe
    order = g.order
    loads_a, loads_b = ch.loads_a, ch.loads_b
    a_args = (g.rows, g.bm, f["stepM"], ch.slots_a, g.n_iter, order == 0, g.k, g.bk, ch.step_ka)
    b_args = (g.cols, g.bn, f["stepN"], ch.slots_b, g.m_iter, order == 1, g.k, g.bk, ch.step_kb)
    # Each operand's chunk shapes, shared by the sums over its copies below.
    # (Their K chunks and blocks are the chunking's and the grid's.)
    passes = ch.shapes if ch.shapes is not None else (None, None)
    shapes_a = chunk_shapes(*a_args, (ch.kc_a, g.m_iter), passes[0])
    shapes_b = chunk_shapes(*b_args, (ch.kc_b, g.n_iter), passes[1])
    direct_a = not (c.a_via_ub or c.a_by_column)
    direct_b = not (c.b_via_ub or c.b_by_column)
    # (A direct operand's MTE2 total is priced per shape below, with no V or MTE3 legs.)
    ga, va, ua = (
        (0.0, 0.0, 0.0) if direct_a else copy_totals(c, loads_a, ch.el_a * c.in_bytes, True, cap)
    )
    gb, vb, ub = (
        (0.0, 0.0, 0.0) if direct_b else copy_totals(c, loads_b, ch.el_b * c.in_bytes, False, cap)
    )
    reorders_a: tuple[Any, Any] | None = None
    reorders_b: tuple[Any, Any] | None = None
    if c.a_via_ub:
        va, ra_f, ra_l = shape_costs(c.nd2nz_shape_cycles(True), shapes_a)
        reorders_a = (ra_f, ra_l)
    if c.b_via_ub:
        vb, rb_f, rb_l = shape_costs(c.nd2nz_shape_cycles(False), shapes_b)
        reorders_b = (rb_f, rb_l)
    used = f.get("usedCoreNum")
    cores = None if counts is None or used is not None else (counts.m_cores, counts.n_cores)
    fa, fb = operand_contention(c, f["singleCoreM"], f["singleCoreN"], used, cores)
    dma_a, direct_legs_a = _direct_copies(c, True, cap, fa, shapes_a, (g.bm, g.bk), loads_a)
    dma_b, direct_legs_b = _direct_copies(c, False, cap, fb, shapes_b, (g.bn, g.bk), loads_b)
    directs_a: tuple[Any, Any] | None = None
    directs_b: tuple[Any, Any] | None = None
    panels_a: tuple[Any, Any] | None = None
    panels_b: tuple[Any, Any] | None = None
    if direct_a:
        ga, directs_a, panels_a = direct_legs_a[0], direct_legs_a[1:3], direct_legs_a[3]
    if direct_b:
        gb, directs_b, panels_b = direct_legs_b[0], direct_legs_b[1:3], direct_legs_b[3]
    dma = (dma_a, dma_b)
    if c.a_by_column:
        dmas_a = shape_cost_sum(lambda r, kk: c.load_instructions(True, r, kk), shapes_a)
        ga = ga + column_latency_cycles(c, dmas_a, loads_a)
    if c.b_by_column:
        dmas_b = shape_cost_sum(lambda r, kk: c.load_instructions(False, r, kk), shapes_b)
        gb = gb + column_latency_cycles(c, dmas_b, loads_b)
    mte2 = ga + gb
    vec = bt.drain_total * (not fix) + va + vb
    mte3 = bt.m3_out + ua + ub
    if bias:
        # The bias slice of every block is fetched before its copies (simulator program order).
        mte2 = with_bias_slices(c, mte2, g.blocks, g.m_iter, g.cols, cap)
    # Legs of one typical copy (averages over the copies of the operand).
    la_n = np.maximum(loads_a, g.ones)
    lb_n = np.maximum(loads_b, g.ones)
    ga1, va1, ua1 = ga / la_n, va / la_n, ua / la_n
    gb1, vb1, ub1 = gb / lb_n, vb / lb_n, ub / lb_n
    via_a, via_b = c.a_via_ub, c.b_via_ub
    return Copies(
        via_a=via_a, via_b=via_b, ga=ga, va=va, ua=ua, gb=gb, vb=vb, ub=ub, mte2=mte2, vec=vec,
        mte3=mte3, ga1=ga1, va1=va1, ua1=ua1, gb1=gb1, vb1=vb1, ub1=ub1,
        # The leg that waits for the L1 slot (the last one) and what precedes it.
        wait_a=ua1 if via_a else ga1, wait_b=ub1 if via_b else gb1,
        # B copy issued right after an A copy: behind it on MTE2 (direct) or on the UB staging.
        b_after_a=(vb1 + ub1) if via_b else gb1,
        reorders_a=reorders_a, reorders_b=reorders_b,
        # A block's bias slice on MTE2 (before its chunk copies).
        bias_cyc=c.bias_load_cycles(np.minimum(g.bn, g.cols), cap) if bias else 0.0,
        contention=(fa, fb),
        directs=(directs_a, directs_b),
        panels=(panels_a, panels_b),
        dma_copies=dma,
    )  # fmt: skip


def leg_after_a(via_a: bool, via_b: bool, legs_b: Legs) -> Any:
    """Cycles a B copy issued with an A copy adds after the A copy's slot-waiting leg."""
    g, v, u = legs_b
    if via_a:
        return v + u if via_b else 0.0 * g
    return g + v + u if via_b else g


@dataclass(frozen=True, slots=True)
class ChunkLegs:
    """(MTE2, V, MTE3) legs of one full and of the last (K-tail) chunk copy of each operand.

    At the group rows averaged over the passes (the legs are affine in the rows, so a chain over
    all passes sums to passes x the average hop); V and MTE3 are 0.0 for a direct copy.

    Attributes:
        a_full: A full A chunk's legs; ``a_last`` the K-tail chunk's; likewise B.
        a_last: See ``a_full``.
        b_full: See ``a_full``.
        b_last: See ``a_full``.
        b_first: B's first chunk of a pass (the K-tail one when it is the only one).
        a_first0: MTE2 leg of A's first copy of a pass.
        b_leg_f: What B's first copy adds after an A copy's slot-waiting leg (the whole copy
            behind a direct A copy on MTE2; behind a staged A copy its reorder and UB->L1 leg);
            ``b_leg_lc`` the same for B's last chunk.
        b_leg_lc: See ``b_leg_f``.
        b_next: A further B copy queued behind the previous one (MTE2, or the staging chain);
            ``b_next_l`` with the K-tail chunk.
        b_next_l: See ``b_next``.
        b_next_in: ``b_next``, with one B slot at least the previous chunk's reads and the
            slot-waiting leg; ``b_next_in_l`` with the K-tail chunk.
        b_next_in_l: See ``b_next_in``.
    """

    a_full: Legs
    a_last: Legs
    b_full: Legs
    b_last: Legs
    b_first: Legs
    a_first0: Any
    b_leg_f: Any
    b_leg_lc: Any
    b_next: Any
    b_next_l: Any
    b_next_in: Any
    b_next_in_l: Any


def chunk_legs_of(c: Costs, g: Grid, ch: Chunking, cp: Copies, rb_kb: Any, cap: Any) -> ChunkLegs:
    """Both operands' chunk legs (``rb_kb``: a full B chunk's release from its arrival)."""
    via_a, via_b, bk, k = cp.via_a, cp.via_b, g.bk, g.k
    step_ka, step_kb = ch.step_ka, ch.step_kb
    # Each operand's full K chunk and its last (K-tail) one, in K elements as given and as L1
    # holds them (C0-aligned); a pass moves kc - 1 full chunks and the aligned tail.
    # (Computed once for the pass size and the copy legs both.)
    # (The K before the last chunk, formed once for both uses.)
    before_a, before_b = ch.a_last_start * bk, ch.b_last_start * bk
    chunk_ka, chunk_kb = step_ka * bk, step_kb * bk
    last_ka, last_kb = k - before_a, k - before_b
    al_last_a, al_last_b = _cdiv(last_ka, c.c0) * c.c0, _cdiv(last_kb, c.c0) * c.c0
    # Group rows averaged over the passes (full groups and the tail group).
    grp_a = ch.el_a / np.maximum(ch.passes_a * (before_a + al_last_a), g.ones)
    grp_b = ch.el_b / np.maximum(ch.passes_b * (before_b + al_last_b), g.ones)
    fa, fb = cp.contention
    a_full, a_last = chunk_legs(
        c, True, grp_a, (chunk_ka, last_ka), (_cdiv(chunk_ka, c.c0) * c.c0, al_last_a), cap,
        cp.reorders_a, (g.bm, bk), fa, cp.directs[0],
    )  # fmt: skip
    b_full, b_last = chunk_legs(
        c, False, grp_b, (chunk_kb, last_kb), (_cdiv(chunk_kb, c.c0) * c.c0, al_last_b), cap,
        cp.reorders_b, (g.bn, bk), fb, cp.directs[1],
    )  # fmt: skip
    # B's first chunk of a pass (the only one, with the K tail, when kc_b is 1), selected by
    # 0.0 / 1.0 weights (the legs are finite): 1.0 where B has more than one chunk per pass.
    many_b = np.minimum(ch.km_b, g.ones)
    one_b = g.ones - many_b
    b_first: Legs
    if via_b:
        b_first = tuple(select(many_b, x, y, one_b) for x, y in zip(b_full, b_last, strict=True))
    else:
        b_first = (select(many_b, b_full[0], b_last[0], one_b), 0.0, 0.0)
    many_a = np.minimum(ch.km_a, g.ones)
    # A further B copy queued behind the previous one (MTE2 order, or the UB staging chain).
    b_next = (np.maximum(b_full[0], b_full[2]) + b_full[1]) if via_b else b_full[0]
    b_next_l = (np.maximum(b_last[0], b_full[2]) + b_last[1]) if via_b else b_last[0]
    # With one B slot the next B copy's slot-waiting leg also waits for the release of the
    # previous B chunk (a full one): the copies arrive a chunk's steps plus that leg apart.
    b_slot_f = rb_kb + (b_full[2] if via_b else b_full[0])
    b_slot_l = rb_kb + (b_last[2] if via_b else b_last[0])
    # (``max(b_next, b_slot x single)`` is the select: b_next, a copy's cycles, is >= 0.)
    return ChunkLegs(
        a_full=a_full, a_last=a_last, b_full=b_full, b_last=b_last, b_first=b_first,
        a_first0=select(many_a, a_full[0], a_last[0], g.ones - many_a),
        b_leg_f=leg_after_a(via_a, via_b, b_first), b_leg_lc=leg_after_a(via_a, via_b, b_last),
        b_next=b_next, b_next_l=b_next_l,
        b_next_in=np.maximum(b_next, b_slot_f * ch.single_bf),
        b_next_in_l=np.maximum(b_next_l, b_slot_l * ch.single_bf),
    )  # fmt: skip
