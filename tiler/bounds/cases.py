"""Reuse cases: whether each operand stays in L1 for the core (loaded once) or is reloaded.

The chip's reads, the copy counts and the copy rate of a tiling all follow from how often it
loads each operand, one of four reuse cases of :func:`simcore.pipeline.traffic.pass_coefficients`
per iterate order: an operand is loaded once only when what must stay resident fits next to one
block of the other operand (the inner operand: all its blocks of the core; the outer one: one K
panel), otherwise at least once per block of the other operand. :func:`order_bound` bounds each
case L1 can hold (its traffic :mod:`tiler.bounds.traffic`, its copies
:mod:`tiler.bounds.copies`, the splits of L1 and slot counts :mod:`tiler.bounds.slots`) and
keeps the least: every tiling falls in one case.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.hardware.dtypes import bits
from simcore.pipeline.costs import Costs
from simcore.pipeline.scalar import scalar_cycles
from simcore.pipeline.transfer import operand_contention
from tiler.bounds import chains, copies, slots, stalls, traffic
from tiler.bounds.rows import take_rows

__all__ = ["case_range", "order_bound"]

#: A reuse case is priced at the groups it holds only where they are fewer than this share of
#: the block (taking them costs more than pricing a larger share of empty ones: on 910A int8
#: 333 x 12345 x 777 the cases hold 50-83 %, on the large-K shapes 1-3 %).
CASE_TAKE = 0.25
#: The group fields :func:`_case` reads (the ones taken with a case's groups).
_CASE_FIELDS = ("core_rows", "core_cols", "baseM", "baseN", "baseK", "m_iter", "n_iter", "k_iter")


def order_bound(
    space: Any,
    c: Costs,
    g: dict[str, Any],
    order: int,
    terms: Any,
    splits: int = slots.SPLITS,
    with_stalls: bool = True,
    relaxed: bool = False,
    pre: tuple[Any, Any] | None = None,
) -> Any:
    """``min(max(MK, RB), SQ)`` in cycles (no launch) for one data path and one iterate order.

    Args:
        space: The :class:`tiler.space.Space`.
        c: The costs on the path priced.
        g: The groups' fields.
        order: iterateOrder (0: A inner... as the struct field).
        terms: :func:`tiler.bounds.group.group_terms` of the same path and groups.
        splits: Intervals of A's share of L1 (:func:`tiler.bounds.slots.split_bound`).
        with_stalls: Whether to price the pass-start stalls (:mod:`tiler.bounds.stalls`).
        relaxed: One figure per split below its four slot combinations
            (:func:`tiler.bounds.slots.split_bound`); the stalls are then not priced.
        pre: The order's traffic (:func:`tiler.bounds.traffic.order_traffic`) and fixed paths
            (:func:`tiler.bounds.chains.fixed_paths` at its ``cap``) of the same groups, where
            the caller has them (None: computed here).
    """
    problem, p = space.problem, space.preset
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    m_iter, n_iter, k_iter = g["m_iter"], g["n_iter"], g["k_iter"]
    in_b = bits(problem.dtype) / 8.0
    if pre is None:
        tr = traffic.order_traffic(problem, p, g, order)
        fixed = chains.fixed_paths(space, c, g, terms, tr.cap)
    else:
        tr, fixed = pre
    reads = traffic.case_reads(problem, g, order)
    a_blk = bm * bk * in_b
    b_blk = bn * bk * in_b
    shares = slots.L1Shares(
        room=p.l1_bytes - g["bias_l1"],
        a_blk=a_blk,
        b_blk=b_blk,
        # Through UB (the vector path) a chunk is one UB tile and two tiles fit UB
        # (simcore.pipeline.costs.vector_path_array: 2 x transLength <= UB, transLength at least
        # the chunk's bytes, simcore.tiling.footprints.trans_length).
        ub_cap_a=np.floor(p.ub_bytes / (2.0 * a_blk)) if c.a_via_ub else np.inf,
        ub_cap_b=np.floor(p.ub_bytes / (2.0 * b_blk)) if c.b_via_ub else np.inf,
        # Copies per pass: each moves step x stepK blocks, no more than the operand's share of
        # L1, and a pass covers all the operand's (row block, K step) blocks.
        a_total=m_iter * k_iter,
        b_total=n_iter * k_iter,
    )
    a_panel = bm * k_iter * bk * in_b
    b_panel = bn * k_iter * bk * in_b
    # Resident need of an operand loaded once: all its blocks when inner, one panel when outer.
    need = (
        m_iter * a_panel if order == 0 else a_panel,
        n_iter * b_panel if order == 1 else b_panel,
    )
    best: Any = np.inf
    for a_once in (True, False):
        for b_once in (True, False):
            reach = case_range(c, p, (a_once, b_once), need, shares)
            # Only the groups with a tiling in the case (elsewhere its figure is inf): on
            # large-K shapes the cases loading an operand once hold 1-3 % of the groups.
            rows = np.flatnonzero(np.isfinite(reach[2]))
            if rows.shape[0] == 0:
                continue
            size = reach[2].shape[0]
            if rows.shape[0] >= CASE_TAKE * size:
                rows = np.arange(size)
            case_g = {name: g[name] for name in _CASE_FIELDS}
            args = take_rows((case_g, shares, tr, reads, fixed, terms, reach, k_iter), rows, size)
            part = _case_bound(space, c, (a_once, b_once), args, (splits, with_stalls, relaxed))
            if rows.shape[0] == size:
                best = np.minimum(best, part)
            else:
                full = np.full(size, np.inf)
                full[rows] = part
                best = np.minimum(best, full)
    return best


def _case_bound(
    space: Any,
    c: Costs,
    once: tuple[bool, bool],
    args: tuple[Any, ...],
    how: tuple[int, bool, bool],
) -> Any:
    """:func:`slots.split_bound` of one reuse case (``args``: :func:`order_bound`'s figures)."""
    g, shares, tr, reads, fixed, terms, reach, k_iter = args
    splits, with_stalls, relaxed = how
    case = _case(
        space, c, g, once, reach, shares, (tr, reads), fixed, terms, with_stalls and not relaxed
    )
    return slots.split_bound(c, shares, case, fixed, terms, k_iter, splits, relaxed)


def case_range(
    c: Costs, p: Any, once: tuple[bool, bool], need: tuple[Any, Any], shares: slots.L1Shares
) -> tuple[Any, Any, Any]:
    """A's least and most blocks of L1 in a reuse case, and ``inf`` where the case is empty.

    A's share of L1 is at least what the case keeps resident (``a_lo`` blocks) and at most what
    B's least leaves; where that range is empty no tiling of the group is in the case. Through
    UB an operand's chunk is one UB tile of at least its blocks' bytes, and the vector path needs
    two tiles in UB (:func:`simcore.pipeline.costs.vector_path_array`); loaded once, its chunks
    fill at most two slots (depth = step x stepK x db, db <= 2), so a chunk holds at least half of
    what must stay resident, and where two such tiles exceed UB the case has no vector-path
    tiling.

    Returns:
        ``a_lo``, ``a_hi`` and the case's ``infeasible`` (0.0 or inf per group).
    """
    a_once, b_once = once
    a_need, b_need = need
    s = shares
    a_lo = np.ceil(np.where(a_once, a_need, s.a_blk) / s.a_blk)
    b_lo = np.ceil(np.where(b_once, b_need, s.b_blk) / s.b_blk)
    a_hi = np.floor((s.room - b_lo * s.b_blk) / s.a_blk)
    infeasible = np.where(a_hi >= a_lo, 0.0, np.inf)
    for op_once, via, op_need, blk in (
        (a_once, c.a_via_ub, a_need, s.a_blk),
        (b_once, c.b_via_ub, b_need, s.b_blk),
    ):
        if op_once and via:
            tile = np.ceil(np.ceil(op_need / blk) / 2.0) * blk
            infeasible = infeasible + np.where(2.0 * tile > p.ub_bytes, np.inf, 0.0)
    return a_lo, a_hi, infeasible


def _case(
    space: Any,
    c: Costs,
    g: dict[str, Any],
    once: tuple[bool, bool],
    reach: tuple[Any, Any, Any],
    shares: slots.L1Shares,
    chip: tuple[traffic.OrderTraffic, traffic.CaseReads],
    fixed: chains.FixedPaths,
    terms: Any,
    with_stalls: bool,
) -> slots.CaseTerms:
    """The figures of one reuse case that every split of L1 shares.

    ``reach`` is the case's :func:`case_range`.
    """
    p = space.preset
    rows, cols = g["core_rows"], g["core_cols"]
    bm, bn = g["baseM"], g["baseN"]
    m_iter, n_iter, k_iter = g["m_iter"], g["n_iter"], g["k_iter"]
    a_once, b_once = once
    tr, reads = chip
    s = shares
    a_lo, a_hi, infeasible = reach
    a_passes = 1 if a_once else n_iter
    b_passes = 1 if b_once else m_iter
    hbm, cap_case, mix_case = traffic.case_traffic(p, tr, reads, a_once, b_once)
    k = space.problem.k
    bk = g["baseK"]
    read_floor: Any = 0.0
    if tr.first_touch and not space.problem.bias:
        # The refetch term slows every read of the tiling by its chip-wide share of refetched
        # bytes, which no single copy's share bounds, but all the core's copies together do:
        # their bytes (the passes' rows x K at least) under the slowed cap.
        core_reads = a_passes * c.l1_tile_bytes(rows, k) + b_passes * c.l1_tile_bytes(cols, k)
        read_floor = traffic.refetched_reads_cycles(
            core_reads, tr.first_touch, tr.active, tr.rate_no_miss, mix_case, p
        )
    # (The same-address factors, fixed by the core split: simcore.pipeline.transfer.)
    fa, fb = operand_contention(c, rows, cols)
    a_terms = copies.copy_terms(
        c, True, a_passes, rows, k, cap_case, terms.a_pass, (bm, bk), contention=fa
    )
    b_terms = copies.copy_terms(
        c, False, b_passes, cols, k, cap_case, terms.b_pass, (bn, bk), contention=fb
    )
    stalled: list[list[Any]] = []
    if with_stalls and chains.USE_CHAIN_BOUND and not p.has_fixpipe and (c.a_via_ub or c.b_via_ub):
        m3c = c.c_ub_to_gm_cycles(np.minimum(bm, rows), np.minimum(bn, cols), cap_case)
        b_most = np.floor((s.room - a_lo * s.a_blk) / s.b_blk)
        stalled = stalls.stalled_paths(
            terms.chain_classes,
            (
                (a_terms, a_passes, a_hi, s.ub_cap_a, m_iter, c.a_via_ub, 1),
                (b_terms, b_passes, b_most, s.ub_cap_b, n_iter, c.a_via_ub and c.b_via_ub, 2),
            ),
            (fixed.dr_block, m3c, fixed.dr_last, fixed.drain_ex),
            (m_iter * n_iter, k_iter),
        )
    problem = space.problem
    steps = m_iter * n_iter * k_iter
    return slots.CaseTerms(
        a_terms=a_terms, b_terms=b_terms, a_passes=a_passes, b_passes=b_passes, a_lo=a_lo,
        a_hi=a_hi, hbm=hbm, stalled=stalled, infeasible=infeasible, read_floor=read_floor,
        k_row_issues=(
            copies.k_row_issues(c, True, a_passes, k), copies.k_row_issues(c, False, b_passes, k)
        ),
        # (simcore.pipeline.scalar, issue 17: the core's K steps, its DMA copies.)
        scalar=lambda dma: scalar_cycles(p, problem, steps, dma),
        # Norm copies each base block of a direct operand apart
        # (simcore.estimate.copies.copy_totals_of, dma_copies): every pass copies them all.
        norm_blocks=(
            a_passes * s.a_total * (c.norm and not c.a_via_ub),
            b_passes * s.b_total * (c.norm and not c.b_via_ub),
        ),
    )  # fmt: skip
