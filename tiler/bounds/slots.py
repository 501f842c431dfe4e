"""L1 slots: how A and B share L1, how many copies that takes, and the one-slot chain.

A and B share L1 (less the bias slices): with A holding ``ua`` blocks, B holds at most ``(room -
ua x a_blk) / b_blk``. Each operand holds one slot (``depth = step x stepK``, chunks of up to its
share) or two (chunks of up to half of it: twice the copies at least). The range of A's share is
cut into intervals (:data:`SPLITS`); on each, A's copies are at least those at its top and B's at
least those at its bottom, and the four slot combinations are priced apart
(:func:`split_bound`). With one slot an operand's copies and the MMADs they feed run in series
(:func:`one_slot_chain`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.pipeline.costs import Costs
from simcore.pipeline.scalar import after_startup
from tiler.bounds import chains, copies

__all__ = ["SPLITS", "CaseTerms", "L1Shares", "one_slot_chain", "split_bound"]

#: Intervals of A's share of L1 in the copy-count bound.
SPLITS = 8


@dataclass(frozen=True, slots=True)
class L1Shares:
    """What L1 (and UB, through it) lets each operand hold, in blocks.

    Attributes:
        room: L1 bytes beside the bias slices.
        a_blk: One A block's bytes (baseM x baseK); ``b_blk`` B's.
        b_blk: See ``a_blk``.
        ub_cap_a: Blocks of A one chunk holds at most through UB (two tiles fit UB,
            :func:`simcore.pipeline.costs.vector_path_array`); inf off the UB path.
        ub_cap_b: See ``ub_cap_a``.
        a_total: A's (row block, K step) blocks of the core; ``b_total`` B's.
        b_total: See ``a_total``.
    """

    room: Any
    a_blk: Any
    b_blk: Any
    ub_cap_a: Any
    ub_cap_b: Any
    a_total: Any
    b_total: Any


@dataclass(frozen=True, slots=True)
class CaseTerms:
    """One reuse case's figures that every split shares.

    Attributes:
        a_terms: A's :func:`tiler.bounds.copies.copy_terms`; ``b_terms`` B's.
        b_terms: See ``a_terms``.
        a_passes: A's passes at least (1 loaded once, else one per column block); ``b_passes``.
        b_passes: See ``a_passes``.
        a_lo: A's share of L1 at least (blocks): what the case keeps resident.
        a_hi: A's share at most (B holding its least).
        hbm: The case's HBM floor.
        stalled: ``[sa][sb]`` compute paths with the pass-start stalls
            (:func:`tiler.bounds.stalls.stalled_paths`), or empty where they do not apply.
        infeasible: 0 where some tiling of the group falls in the case, inf elsewhere.
        scalar: The scalar pipe's busy cycles of the group's steps for a count of DMA copies
            (:func:`simcore.pipeline.scalar.scalar_cycles`, non-decreasing in the count).
        norm_blocks: (A, B) DMA copies at least from the Norm template's one copy per base
            block of a direct operand: passes x blocks (0 elsewhere).
        read_floor: Cycles the core's A and B copies move their bytes in at least under the
            refetch term (:func:`tiler.bounds.traffic.refetched_reads_cycles`; 0 without it):
            with their latencies, a floor on MTE2 beside the copies' own bytes terms.
        k_row_issues: (A, B) reorder issues at least of each load of one row group
            (:func:`tiler.bounds.copies.k_row_issues`; 0 where the ND rows are not K).
    """

    a_terms: tuple[Any, ...]
    b_terms: tuple[Any, ...]
    a_passes: Any
    b_passes: Any
    a_lo: Any
    a_hi: Any
    hbm: Any
    stalled: list[list[Any]]
    infeasible: Any
    scalar: Callable[[Any], Any]
    norm_blocks: tuple[Any, Any]
    read_floor: Any = 0.0
    k_row_issues: tuple[Any, Any] = (0.0, 0.0)


def one_slot_chain(
    terms: tuple[Any, ...],
    via_ub: bool,
    instr: Any,
    mmads: tuple[tuple[Any, Any], ...],
    partner: Any,
) -> Any:
    """Least ``max(makespan, busiest)`` with an operand in one L1 slot (db = 1).

    Simulator precedences, a floor of the estimator's slot chains. With one slot, chunk ``j + 1``'s
    copy (its slot-waiting leg: the GM->L1 copy, all its column DMAs, or the UB->L1 leg through UB)
    waits for the last read of chunk ``j``, the read of some step ``t``, which waits for its L0
    buffer (dbL0 <= 2): the MMAD of step ``t - 2`` is done. Each step reads one chunk and, with one
    slot, the steps of a chunk are consecutive; the M pipe runs in order, so every MMAD of chunk
    ``j`` but its last two ran between chunk ``j``'s arrival and chunk ``j + 1``'s copy. The
    arrivals chain, and the makespan is at least ``sum_j d(j) + sum_j e(j)``: ``d`` the copy legs
    (latency per instruction plus bytes at the capped rate), ``e(j)`` chunk ``j``'s MMADs but its
    last two, at least ``m(j) - 2 x mm_max`` (``m(j)`` its MMAD cycles, ``mm_max`` the largest
    full-K MMAD) and at least ``(s(j) - 2) x mm_min`` (``s(j)`` its steps, ``mm_min`` the smallest
    full-K MMAD), and ``>= 0``. Only full-K steps are counted (every block's K steps but its last:
    dropping a step never raises the figure), so with ``work`` = their MMAD cycles (or their count x
    ``mm_min``) and ``per_copy`` = ``2 x mm_max`` (or ``2 x mm_min``), ``L`` copies, ``I``
    instructions at least (``instr``: ``max(loads, column DMAs)``, see
    :func:`tiler.bounds.copies.copy_busy`) and latency ``lat``, the sum is at least ``bytes +
    g(L)``, ``g(L) = max(L, I) x lat + max(work - L x per_copy, 0)``, non-increasing for ``L <= I``;
    both pairs are priced and the larger figure kept.

    Where ``lat < per_copy`` more copies shorten that chain but lengthen the pipe the
    copies load (``partner``: the copy path ``mte2 + step + dr_last`` for direct copies, the
    MTE3 busy through UB, priced at ``instr``; each further copy adds ``lat``), and the
    estimate's ``max(makespan, busiest)`` is at least both. So the figure returned is the
    least over ``L >= I`` of ``max(chain(L), partner(L))``: both convex piecewise linear in
    ``L``, their maximum too, so the least is at ``I`` or at a break point above it (the
    chain's knee ``work / per_copy``, their crossing): at ``I`` where ``lat >= per_copy``
    (both rise), else at the crossing clipped to ``[I, knee]`` (the chain falls
    there, the partner rises, and past the knee both rise). It is non-decreasing in
    ``partner``, so any lower bound of that pipe may be passed.

    Estimator formulas it relies on: the slot chains ``slot_chain_a`` / ``slot_chain_b``
    (:mod:`simcore.estimate.slot_a_pass`, :func:`simcore.estimate.slot_b.b_chain`; a single slot:
    ``passes x ((kc - 1) x hop_f + hop_l)`` with the hops of :func:`simcore.estimate.slot_a.a_hops`
    and :func:`simcore.estimate.slot_b.b_hops`, hop = slot-waiting leg + the chunk's reads
    (:func:`simcore.estimate.steps.restart_reads`, at least ``(r - 2) x mm`` for ``r`` steps) +
    ``stay``, the compute of the other blocks that read the chunk) enter its makespan with ``+ mm
    + dr_last``; ``tests/tiler/test_bound.py`` checks the bound against it.
    """
    g_lat, g_bytes, _, _, _, u_lat, u_bytes = terms[:7]
    # (Through UB the UB->L1 leg is one instruction a copy: instr = loads.)
    lat, nbytes = (u_lat, u_bytes) if via_ub else (g_lat, g_bytes)
    base = instr * lat
    out: Any = 0.0
    for work, per_copy in mmads:
        knee = work / per_copy
        cross = (nbytes + work - partner + base) / per_copy
        # Where lat >= per_copy both lines rise from L = I on; otherwise the chain falls until
        # the knee and the partner rises: the least is at their crossing, clipped to [I, knee].
        n = np.where(lat < per_copy, np.clip(cross, instr, np.maximum(knee, instr)), instr)
        extra = (n - instr) * lat
        chain = nbytes + base + extra + np.maximum(work - n * per_copy, 0.0)
        out = np.maximum(out, np.maximum(chain, partner + extra))
    return out


def split_bound(
    c: Costs,
    shares: L1Shares,
    case: CaseTerms,
    fixed: chains.FixedPaths,
    terms: Any,
    k_iter: Any,
    splits: int = SPLITS,
    relaxed: bool = False,
) -> Any:
    """The least ``min(max(MK, RB), SQ)`` of a reuse case over the splits of L1 and slot counts.

    Every tiling of the case falls in one interval of A's share of L1 and one slot count per
    operand, where each of its busy totals and paths is at least the figure priced there
    (:func:`_pair_bound`), and ``min(max(MK, RB), SQ)`` is non-decreasing in each.

    Args:
        c: The costs on the path priced.
        shares: What L1 and UB let each operand hold.
        case: The reuse case's figures.
        fixed: The group's fixed paths (:func:`tiler.bounds.chains.fixed_paths`).
        terms: The order-free terms (:class:`tiler.bounds.group.GroupTerms`).
        k_iter: K steps.
        splits: Intervals of A's share.
        relaxed: Price one figure per split below all four slot combinations instead of each
            (:func:`_relaxed_pair`): about a third of the cost, never above, a first tier.
    """
    s, a_terms, b_terms = shares, case.a_terms, case.b_terms
    a_lo, a_hi = case.a_lo, case.a_hi
    best: Any = np.inf
    for j in range(splits):
        u0 = a_lo + np.floor(j / splits * (a_hi - a_lo))
        u1 = np.maximum(a_lo + np.floor((j + 1) / splits * (a_hi - a_lo)), 1.0)
        ub_max = np.maximum(np.floor((s.room - u0 * s.a_blk) / s.b_blk), 1.0)
        # Each operand holds one L1 slot (db = 1: chunks of up to its share) or two (chunks of
        # up to half of it, twice the copies); with one slot its copies and the MMADs they feed
        # chain (one_slot_chain). Price the four combinations apart (the chain and the copy
        # count move in opposite ways).
        legs_a = []
        legs_b = []
        # Blocks one chunk holds at most (L1 slot, UB tile), per slot count.
        chunk_a = []
        chunk_b = []
        # Column DMAs at least (0 off the column path), the same for either slot count.
        instr_a = copies.least_instructions(a_terms, u1)
        instr_b = copies.least_instructions(b_terms, ub_max)
        # Reorder issues at least of the row-group loads an operand holding at most this share
        # of L1 makes (either slot count).
        issues_a = copies.group_load_issues(case.k_row_issues[0], s.a_total / k_iter, k_iter, u1)
        issues_b = copies.group_load_issues(
            case.k_row_issues[1], s.b_total / k_iter, k_iter, ub_max
        )
        for n_slots in (1.0, 2.0):
            chunk_a.append(np.maximum(np.minimum(np.floor(u1 / n_slots), s.ub_cap_a), 1.0))
            chunk_b.append(np.maximum(np.minimum(np.floor(ub_max / n_slots), s.ub_cap_b), 1.0))
            a_copies = np.ceil(s.a_total / chunk_a[-1])
            b_copies = np.ceil(s.b_total / chunk_b[-1])
            legs_a.append(copies.copy_busy(a_terms, case.a_passes * a_copies, instr_a, issues_a))
            legs_b.append(copies.copy_busy(b_terms, case.b_passes * b_copies, instr_b, issues_b))
        # The scalar pipe's copy counts per slot count: at least the chunk copies (the
        # estimator's DMA copies are its chunk copies, or under Norm each direct chunk's base
        # blocks, at least one per chunk) and under Norm every base block of each pass.
        dma_a = [
            np.maximum(case.a_passes * np.ceil(s.a_total / ch), case.norm_blocks[0])
            for ch in chunk_a
        ]
        dma_b = [
            np.maximum(case.b_passes * np.ceil(s.b_total / ch), case.norm_blocks[1])
            for ch in chunk_b
        ]
        # Per operand and slot count (combined per pair below): the steps left after its last
        # copy in the copy path, with the copies that shortening costs (last_chunk_steps).
        after = [
            [
                chains.last_chunk_steps(
                    terms.per_lo, k_iter, op_terms[0], passes, chunks[sl], legs[sl][3]
                )
                for sl in (0, 1)
            ]
            for op_terms, passes, chunks, legs in (
                (a_terms, case.a_passes, chunk_a, legs_a),
                (b_terms, case.b_passes, chunk_b, legs_b),
            )
        ]
        if relaxed:
            pair = _relaxed_pair(c, case, fixed, terms, (legs_a, legs_b), after, (dma_a, dma_b))
            best = np.minimum(best, pair + case.infeasible)
            continue
        for sa in (0, 1):
            for sb in (0, 1):
                pair = _pair_bound(
                    c, case, fixed, terms, (legs_a[sa], legs_b[sb]), (sa, sb),
                    np.minimum(after[0][sa], after[1][sb]), case.scalar(dma_a[sa] + dma_b[sb]),
                )  # fmt: skip
                best = np.minimum(best, pair + case.infeasible)
    return best


def _relaxed_pair(
    c: Costs,
    case: CaseTerms,
    fixed: chains.FixedPaths,
    terms: Any,
    legs: tuple[list[Any], list[Any]],
    after: list[list[Any]],
    dma: tuple[list[Any], list[Any]],
) -> Any:
    """One figure of a split at most each of :func:`_pair_bound`'s four slot combinations.

    With one slot an operand holds chunks of up to its whole share, so its copies (and their
    instructions, DMA copies and every leg of :func:`tiler.bounds.copies.copy_busy`, each
    non-decreasing in the copies) are at most those with two; the steps after the last copy
    are the least over both slot counts; and the one-slot chain and the pass-start stalls,
    which only raise a combination's makespan, are left out. :func:`_pair_bound`'s figure is
    non-decreasing in each of these, so this is at most every combination's.
    """
    (legs_a, legs_b), (dma_a, dma_b) = legs, dma
    least_after = np.minimum(
        np.minimum(after[0][0], after[0][1]), np.minimum(after[1][0], after[1][1])
    )
    bare = CaseTerms(
        a_terms=case.a_terms, b_terms=case.b_terms, a_passes=case.a_passes,
        b_passes=case.b_passes, a_lo=case.a_lo, a_hi=case.a_hi, hbm=case.hbm, stalled=[],
        infeasible=case.infeasible, scalar=case.scalar, norm_blocks=case.norm_blocks,
        read_floor=case.read_floor, k_row_issues=case.k_row_issues,
    )  # fmt: skip
    # Pair (1, 1): no one-slot chain is priced (the legs passed are the one-slot ones).
    return _pair_bound(
        c, bare, fixed, terms, (legs_a[0], legs_b[0]), (1, 1), least_after,
        case.scalar(dma_a[0] + dma_b[0]),
    )  # fmt: skip


def _pair_bound(
    c: Costs,
    case: CaseTerms,
    fixed: chains.FixedPaths,
    terms: Any,
    legs: tuple[tuple[Any, ...], tuple[Any, ...]],
    pair: tuple[int, int],
    after: Any,
    scalar: Any,
) -> Any:
    """``min(max(MK, RB), SQ)`` of one split with A in ``sa + 1`` slots and B in ``sb + 1``.

    The pipes: MTE2 carries both operands' copies and the bias slices; V and MTE3 their UB legs
    and, without FixPipe, the drain's. The makespan is at least the group's fixed paths, the
    copy path (all MTE2 copies, then the steps left after the last copy, a typical block's last
    step and the last drain: :func:`tiler.bounds.chains.last_chunk_steps`), the compute path with
    the pass-start stalls, through UB the staging paths (``V(inputs) + max(GM->UB, UB->L1) + la
    + lb + mm + dr_last``: every reorder waits for the previous UB->L1 copy and every GM->UB copy
    for the previous reorder), and with one slot the slot chain against the pipe its copies load
    (``max(makespan, busiest)`` is at least both, :func:`one_slot_chain`).
    """
    p = c.preset
    (ga, va, ua, _), (gb, vb, ub, _) = legs
    sa, sb = pair
    # (What follows the last copy: at least the K-tail step, steps_after_last_copy.)
    step1, dr_last = terms.step_kt, fixed.dr_last
    mte2 = ga + gb + fixed.bias_mte2
    g_ub = ga * c.a_via_ub + gb * c.b_via_ub
    if not (np.isscalar(case.read_floor) and case.read_floor == 0.0):
        # Under the refetch term the copies' bytes take at least the case's read floor in all
        # (each copy pays its latency on top: ga + gb less their bytes terms).
        short = np.maximum(case.read_floor - (case.a_terms[1] + case.b_terms[1]), 0.0)
        mte2 = mte2 + short
        if c.a_via_ub and c.b_via_ub:
            # Both operands staged: their GM->UB copies are all of the core's reads, so the
            # staging path's GM->UB leg takes the read floor as well.
            g_ub = g_ub + short
    vec = va + vb
    mte3 = ua + ub
    # Without FixPipe the drain's legs are on V and MTE3 too.
    pipes = [mte2, vec, mte3] if p.has_fixpipe else [mte2, fixed.drain + vec, fixed.c_out + mte3]
    busiest = np.maximum(np.maximum(np.maximum.reduce(pipes), fixed.fixed_busy), case.hbm)
    # The scalar pipe with the split's least DMA copies (``scalar``): a busy pipe as well. (The
    # sum of work keeps the fixed paths' scalar with fewer copies: lower, still valid.)
    busiest = np.maximum(busiest, scalar)
    total = np.maximum(sum(pipes) + fixed.fixed_sum, case.hbm)
    makespan = fixed.makespan
    if chains.USE_CHAIN_BOUND:
        makespan = np.maximum(makespan, mte2 + after + step1 + dr_last)
        if case.stalled:
            makespan = np.maximum(makespan, case.stalled[sa][sb])
        if c.a_via_ub or c.b_via_ub:
            makespan = np.maximum(makespan, vec + np.maximum(g_ub, mte3) + step1 + dr_last)
        for one_slot, op_terms, via, instr in (
            (sa == 0, case.a_terms, c.a_via_ub, legs[0][3]),
            (sb == 0, case.b_terms, c.b_via_ub, legs[1][3]),
        ):
            if one_slot:
                pipe = mte3 if via else mte2 + step1 + dr_last
                busiest = np.maximum(
                    busiest, one_slot_chain(op_terms, via, instr, terms.mmads, pipe)
                )
    # (The estimate's paths start after the scalar start-up: estimator._finish_block.)
    return after_startup(makespan, busiest, total, fixed.startup)
