"""The bound of a group (core split x base block): the entry points and what the group fixes.

:func:`group_lower_bounds` is the least estimated time of every point of each group, the smallest
over the data paths a tiling of the group can take and the iterate orders of
:func:`tiler.bounds.cases.order_bound`; :func:`cube_lower_bounds` a cheap first bound (the M
pipe's busy time, after the start-up where it runs serial). Each combines its terms as the
estimate does, through :func:`simcore.pipeline.scalar.after_startup`. docs/search.md lists the
bounds and why each is valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.busy import BlockSteps, block_steps, compute_busy_of, cube_busy
from simcore.pipeline.costs import Costs, ceil_div, vector_path_array
from simcore.pipeline.scalar import after_startup, startup_cycles
from simcore.pipeline.traffic import kernel_us, l2_share_most
from simcore.pipeline.transfer import operand_contention
from simcore.tiling.problem import Problem
from tiler.bounds import cases, chains, copies, dealt, slots, traffic
from tiler.bounds.rows import TAKE_ALL, take_rows

__all__ = [
    "GroupTerms",
    "cube_lower_bounds",
    "fixed_lower_bounds",
    "fixed_then_relaxed_bounds",
    "group_lower_bounds",
    "group_terms",
    "pass_start_stalls_apply",
]

FloatArray = npt.NDArray[np.float64]

#: Relative safety margin against floating-point rounding (the estimator sums in another order).
_ROUNDING = 1e-9
#: Groups bounded per pass: the bound is elementwise over the groups, and blocks of this size keep
#: its intermediate arrays in the CPU caches (1.5x the throughput of 200k at a time on 910A).
BOUND_BLOCK = 16384


def cube_lower_bounds(space: Any, idx: Any = None) -> FloatArray:
    """A cheap bound (us): the M pipe's busy time, the start-up and launch, for groups ``idx``.

    Valid because the estimate is at least the busiest pipe and the M pipe's work is fixed by
    the group (:func:`simcore.pipeline.busy.cube_busy`). Where the start-up runs serial
    (:func:`simcore.pipeline.scalar.startup_cycles`) the estimate ``min(max(start-up +
    makespan, busiest), sum of work)`` is at least ``cube + start-up``: the makespan holds the
    cube's work (the compute chain, :data:`tiler.bounds.chains.USE_CHAIN_BOUND`; without it
    the start-up is left out) and the sum of work the cube's and the scalar pipe's, at least the
    start-up (:func:`simcore.pipeline.scalar.after_startup`). Elementwise over the groups, so
    priced :data:`BOUND_BLOCK` at a time: its temporaries stay in the CPU caches instead of some
    forty fresh arrays of every group (2M on 910A fp16 4095 x 4097 x 1023, where the screening's
    one call took 0.3-0.5 s CPU, most of it page faults, against 0.14 s once warm).
    """
    problem, preset = space.problem, space.preset
    c = Costs(problem, preset)
    groups = space.groups
    rows = np.arange(space.size) if idx is None else np.asarray(idx)
    out = np.empty(rows.shape[0], dtype=np.float64)
    startup = startup_cycles(preset, problem) if chains.USE_CHAIN_BOUND else 0.0
    for start in range(0, rows.shape[0], BOUND_BLOCK):
        part = (
            slice(start, start + BOUND_BLOCK) if idx is None else rows[start : start + BOUND_BLOCK]
        )
        g = {name: groups[name][part] for name in _CUBE_FIELDS}
        cube = cube_busy(
            c, problem.k, g["core_rows"], g["core_cols"], g["baseM"], g["baseN"], g["baseK"]
        )
        # The makespan is at least the cube's work (the compute chain's K-step periods each
        # hold their MMAD: tiler.bounds.chains.least_span) and the sum of work at least the
        # cube's and the scalar pipe's, which holds the start-up: cube + start-up either way.
        cycles = after_startup(cube, cube, cube + startup, startup)
        if "usedCoreNum" in groups:
            # A dealt group's core runs R tiles (tiler.bounds.dealt).
            d = {name: groups[name][part] for name in _DEALT_FIELDS}
            rows_dealt = np.flatnonzero(dealt.dealt_rows(space, d))
            if rows_dealt.shape[0]:
                sub = {name: arr[rows_dealt] for name, arr in d.items()}
                cycles = np.array(cycles, dtype=np.float64)
                cycles[rows_dealt] = dealt.dealt_cube_cycles(space, sub, cube[rows_dealt])
        # (The estimate's time: simcore.pipeline.traffic.kernel_us, issue 17.)
        out[start : start + BOUND_BLOCK] = kernel_us(preset, cycles / preset.clock_mhz) * (
            1.0 - _ROUNDING
        )
    return out


#: The group fields :func:`cube_lower_bounds` reads.
_CUBE_FIELDS = ("core_rows", "core_cols", "baseM", "baseN", "baseK")
#: The group fields a dealt group's cube tier reads (:mod:`tiler.bounds.dealt`).
_DEALT_FIELDS = ("singleCoreM", "singleCoreN", "usedCoreNum", *_CUBE_FIELDS)


def group_lower_bounds(
    space: Any,
    idx: Any = None,
    splits: int = slots.SPLITS,
    stalls: bool = True,
    relaxed: bool = False,
    threshold: float = np.inf,
) -> FloatArray:
    """A lower bound of the estimated time (us) of every point of each group.

    Args:
        space: A :class:`tiler.space.Space`.
        idx: Indices of the groups to bound (None: every group).
        splits: Intervals of A's share of L1 (:func:`tiler.bounds.slots.split_bound`). Each
            interval of a finer cut lies in one of a coarser cut whose figure is no larger, so
            more splits never lower the bound; 1 is several times cheaper, a first pass before
            the full bound.
        stalls: Whether to price the pass-start stalls (:mod:`tiler.bounds.stalls`; see
            :func:`pass_start_stalls_apply`). Leaving them out only lowers the bound and
            makes it about a fifth cheaper where they apply: a first pass.
        relaxed: Price each split of L1 once, below its four slot combinations, without the
            one-slot chains and the pass-start stalls (:func:`tiler.bounds.slots.split_bound`):
            never above the bound without it and several times cheaper, a first pass.
        threshold: Price a data path and iterate order only at the groups whose fixed price
            there (:func:`fixed_lower_bounds`' figure of the path and order) is below this (us);
            elsewhere that price stands in. The bound is the same figure wherever it is below
            the threshold, and at or above the threshold wherever it was (inf: every group).

    Returns:
        One bound per selected group, in microseconds (launch overhead included).
    """
    how = (splits, stalls, relaxed)
    return _in_blocks(space, idx, lambda g: _group_bound(space, g, how, threshold), threshold)


def _in_blocks(space: Any, idx: Any, bound: Any, threshold: float = np.inf) -> FloatArray:
    """``bound`` of the groups ``idx`` (all: None), :data:`BOUND_BLOCK` groups at a time.

    Each block's fields are gathered as it is priced (gathered for every group at once, the
    fields of the 900k groups the cube bound leaves on 910A fp16 4095 x 4097 x 1023 were 140 MB
    of fresh memory, page by page).
    """
    groups = space.groups
    n = int(groups["baseM"].shape[0] if idx is None else np.shape(idx)[0])
    ids = np.arange(n) if idx is None else np.asarray(idx)
    if n <= BOUND_BLOCK:
        return _with_dealt(space, _select(groups, idx), bound, (ids, threshold))
    out = np.empty(n, dtype=np.float64)
    for start in range(0, n, BOUND_BLOCK):
        part = ids[start : start + BOUND_BLOCK]
        out[start : start + BOUND_BLOCK] = _with_dealt(
            space, {name: arr[part] for name, arr in groups.items()}, bound, (part, threshold)
        )
    return out


def _with_dealt(
    space: Any, g: dict[str, Any], bound: Any, at: tuple[Any, float] | None = None
) -> FloatArray:
    """``bound`` of the one-tile groups of ``g``, :mod:`tiler.bounds.dealt`'s of the dealt ones.

    Every tier prices a dealt group at the same figure (the rounds of its fixed paths and
    pipes; a split's tail tiles at their own floors where that figure is below the tier's
    threshold, us: the groups at or above it are ruled out either way), so the tiers stay in
    order (each never above the next). ``at``: the groups' indices in the space and the
    threshold (None: unknown indices, no threshold). The figure is kept per group
    (``space.dealt_memo``) and taken again where it was priced in full or is at or above the
    threshold.
    """
    is_dealt = dealt.dealt_rows(space, g)
    if not is_dealt.any():
        return np.asarray(bound(g), dtype=np.float64)
    out = np.empty(is_dealt.shape[0], dtype=np.float64)
    one = np.flatnonzero(~is_dealt)
    if one.shape[0]:
        out[one] = bound({name: arr[one] for name, arr in g.items()})
    rows = np.flatnonzero(is_dealt)
    threshold = np.inf if at is None else at[1]
    todo = rows
    if at is not None:
        memo = space.dealt_memo
        if not memo:
            memo["figure"] = np.full(space.size, np.nan)
            memo["full"] = np.zeros(space.size, dtype=bool)
        ids = np.asarray(at[0])[rows]
        known = memo["figure"][ids]
        done = memo["full"][ids] | (known >= threshold)
        out[rows[done]] = known[done]
        todo = rows[~done]
    if not todo.size:
        return out
    sub = {name: arr[todo] for name, arr in g.items()}
    c = Costs(space.problem, space.preset)
    # (The tail tiles at their own floors only where the figure so far is below threshold.)
    below = None if threshold == np.inf else lambda x: _to_us(space.preset, x) < threshold
    cycles = dealt.dealt_cycles(
        space, sub, group_terms(space, c, sub), lambda t: group_terms(space, c, t), below
    )
    out[todo] = _to_us(space.preset, cycles)
    if at is not None:
        ids = np.asarray(at[0])[todo]
        memo["figure"][ids] = out[todo]
        # (Priced in full: no threshold, or below it; at or above it only as far as needed.)
        memo["full"][ids] = (threshold == np.inf) | (out[todo] < threshold)
    return out


def _group_bound(
    space: Any, g: dict[str, Any], how: tuple[int, bool, bool], threshold: float
) -> FloatArray:
    """:func:`group_lower_bounds` of the groups ``g`` (one block).

    ``how``: its splits, stalls and relaxed arguments.
    """
    splits, stalls, relaxed = how
    problem, preset = space.problem, space.preset

    def price(c: Costs, sub: dict[str, Any], orders: list[int]) -> Any:
        terms = group_terms(space, c, sub)
        part: Any = np.inf
        for order in orders:
            if threshold == np.inf:
                bound = cases.order_bound(space, c, sub, order, terms, splits, stalls, relaxed)
            else:
                tr = traffic.order_traffic(problem, preset, sub, order)
                fx = chains.fixed_paths(space, c, sub, terms, tr.cap)
                pre = (order, tr, fx, _fixed_price(tr, fx))
                bound = _order_bound_below(space, (c, sub, terms), pre, how, threshold)
            part = np.minimum(part, bound)
        return part

    return _least_over_paths(space, g, price)


def _order_bound_below(
    space: Any,
    path: tuple[Costs, dict[str, Any], GroupTerms],
    pre: tuple[int, Any, Any, Any],
    how: tuple[int, bool, bool],
    threshold: float,
) -> Any:
    """:func:`tiler.bounds.cases.order_bound` where the order's fixed price is below ``threshold``.

    ``path``: the costs, groups and terms of one data path; ``pre``: the iterate order, its
    traffic, fixed paths and fixed price (cycles) at those groups. Elsewhere the fixed price (a
    bound of the path and order, at or above the threshold) stands in, so the least over the
    paths and orders is the same figure wherever it is below the threshold.
    """
    c, sub, terms = path
    order, tr, fx, price = pre
    splits, stalls, relaxed = how
    size = sub["baseM"].shape[0]
    rows = np.flatnonzero(_to_us(space.preset, price) < threshold)
    if rows.shape[0] == 0:
        return price
    if rows.shape[0] >= TAKE_ALL * size:
        # Most groups left: every group of the path costs less than taking the terms at those
        # (every figure is elementwise over the groups).
        return cases.order_bound(space, c, sub, order, terms, splits, stalls, relaxed, (tr, fx))
    part = cases.order_bound(
        space, c, take_rows(sub, rows, size), order, take_rows(terms, rows, size),
        splits, stalls, relaxed, (take_rows(tr, rows, size), take_rows(fx, rows, size)),
    )  # fmt: skip
    out = np.array(price, dtype=np.float64, copy=True)
    out[rows] = part
    return out


def _least_over_paths(space: Any, g: dict[str, Any], price: Any) -> FloatArray:
    """The least ``price(costs, groups, orders)`` over the data paths each group can take.

    ``price`` gives cycles; the result is in microseconds, with the launch overhead and the
    rounding margin.
    """
    problem, preset = space.problem, space.preset
    orders = [space.fixed["iterateOrder"]] if "iterateOrder" in space.fixed else [0, 1]
    best = np.full(g["baseM"].shape, np.inf)
    for vector_path, reach in _reachable_paths(space, g):
        sub = g if reach is None else {name: arr[reach] for name, arr in g.items()}
        if sub["baseM"].shape[0] == 0:
            continue
        part = price(Costs(problem, preset, vector_path), sub, orders)
        if reach is None:
            best = np.minimum(best, part)
        else:
            best[reach] = np.minimum(best[reach], part)
    return _to_us(preset, best)


def _to_us(preset: HardwarePreset, cycles: Any) -> FloatArray:
    """A bound in cycles as microseconds, with the launch overhead and the rounding margin."""
    # (The estimate's time: simcore.pipeline.traffic.kernel_us, issue 17.)
    out = kernel_us(preset, cycles / preset.clock_mhz)
    return np.asarray(out * (1.0 - _ROUNDING), dtype=np.float64)


def fixed_lower_bounds(space: Any, idx: Any = None) -> FloatArray:
    """A bound (us) from what the group fixes alone: a cheap tier before :func:`group_lower_bounds`.

    ``min(max(MK, RB), SQ)`` with ``MK`` the group's fixed paths (the compute chain of its
    cheapest L0 class, the first block, the one-L0C drains: :func:`tiler.bounds.chains.
    fixed_paths`), ``RB`` the largest of the M, MTE1 (and FIX) totals and the order's HBM floor,
    ``SQ`` their sum (or the HBM floor), at the least over the data paths and iterate orders. Each
    is at most what :func:`tiler.bounds.cases.order_bound` prices (its pipes add the copies to
    these, its makespan the copy, staging and slot paths), so this is never above the group
    bound; it skips the reuse cases and the splits of L1, several times cheaper.
    """
    return _in_blocks(space, idx, lambda g: _fixed_bound(space, g))


def _fixed_bound(space: Any, g: dict[str, Any]) -> FloatArray:
    """:func:`fixed_lower_bounds` of the groups ``g`` (one block)."""
    problem, preset = space.problem, space.preset

    def price(c: Costs, sub: dict[str, Any], orders: list[int]) -> Any:
        terms = group_terms(space, c, sub)
        part: Any = np.inf
        for order in orders:
            tr = traffic.order_traffic(problem, preset, sub, order)
            part = np.minimum(
                part, _fixed_price(tr, chains.fixed_paths(space, c, sub, terms, tr.cap))
            )
        return part

    return _least_over_paths(space, g, price)


def _fixed_price(tr: traffic.OrderTraffic, fx: chains.FixedPaths) -> Any:
    """``min(max(MK, RB), SQ)`` from what a group fixes (cycles, :func:`fixed_lower_bounds`)."""
    # (The estimate's paths start after the scalar start-up: estimator._finish_block.)
    busiest = np.maximum(fx.fixed_busy, tr.hbm_floor)
    return after_startup(fx.makespan, busiest, np.maximum(fx.fixed_sum, tr.hbm_floor), fx.startup)


def fixed_then_relaxed_bounds(
    space: Any, idx: Any, threshold: float, relaxed: bool = True
) -> FloatArray:
    """The fixed tier, raised by the relaxed tier where the fixed tier is below ``threshold`` (us).

    Equal, group by group, to :func:`fixed_lower_bounds` where that is not below ``threshold``
    and to its larger with ``group_lower_bounds(splits=1, relaxed=True)`` elsewhere: the same
    figures, in one pass. The relaxed tier's order-free terms (:func:`group_terms`), traffic
    (:func:`tiler.bounds.traffic.order_traffic`) and fixed paths
    (:func:`tiler.bounds.chains.fixed_paths`) are the fixed tier's, so they are computed once
    and taken at the groups the fixed tier leaves (they were a third of the relaxed tier's cost
    on 910A fp16 4096 x 28672 x 8192).

    First, over all the groups, the least span of the compute chain
    (:func:`tiler.bounds.chains.least_span`) and the scalar pipe's least busy total
    (:func:`tiler.bounds.chains.least_scalar`), each at most the fixed tier: the groups their
    larger puts at or above ``threshold`` keep it (ruled out either way) and get no other term;
    the others are priced together, in full blocks (filtered block by block, a block whose
    filter left three quarters or more was priced whole: on 910A fp16 4095 x 4097 x 1023 the
    filter rules out 306k of the 910k groups the cube bound leaves, most of them in such blocks).

    Args:
        space: A :class:`tiler.space.Space`.
        idx: Indices of the groups to bound (None: every group).
        threshold: The time a group's fixed tier must be below for its relaxed tier, us.
        relaxed: False: the fixed tier alone where the filter leaves a group below
            ``threshold`` (:func:`fixed_lower_bounds`' figure there; the warm start's pool).

    Returns:
        One bound per selected group, in microseconds (launch overhead included).
    """
    out = _in_blocks(space, idx, lambda g: _least_span_or_scalar(space, g), threshold)
    if not chains.USE_CHAIN_BOUND:
        out[:] = -np.inf
    keep = np.flatnonzero(out < threshold)
    if keep.shape[0]:
        rest = keep if idx is None else np.asarray(idx)[keep]
        # (Below -inf no group gets the relaxed tier.)
        inner = threshold if relaxed else -np.inf
        out[keep] = _in_blocks(
            space, rest, lambda g: _fixed_then_relaxed(space, g, inner), threshold
        )
    return out


def _least_span_or_scalar(space: Any, g: dict[str, Any]) -> FloatArray:
    """The larger of the least compute span and the least scalar busy total of groups ``g``, us.

    Both busy pipes hold the scalar pipe's total, and the sum of work holds it and M + MTE1 (at
    least the span; where the start-up runs serial it is in the scalar pipe's total and the
    makespan follows it: the span after the start-up, :func:`simcore.pipeline.scalar.
    after_startup`); every L0 class's compute chain is at least the span
    (:func:`tiler.bounds.chains.least_span`). On the path with the fewest copies: on 910A int8
    1000^3 the span alone puts 78k of the 533k groups the cube bound leaves at or above the
    runner-up, with the scalar pipe 354k, of the 410k the fixed tier does.
    """
    problem, preset = space.problem, space.preset
    n = g["baseM"].shape[0]
    types = _steps_of(space, g)
    scalar = np.minimum.reduce(
        [
            np.broadcast_to(chains.least_scalar(space, Costs(problem, preset, path), g), (n,))
            for path in ((True, False) if _has_two_paths(problem, preset) else (True,))
        ]
    )
    span = chains.least_span(types, g["k_iter"], g, space.fixed)
    # The makespan is at least the span, the busiest pipe the scalar pipe and the sum of work
    # both (the start-up, 0 unless it runs serial, is in the scalar pipe's total).
    startup = startup_cycles(preset, problem)
    return _to_us(preset, after_startup(span, np.maximum(span, scalar), span + scalar, startup))


def _steps_of(space: Any, g: dict[str, Any]) -> list[BlockSteps]:
    """:func:`simcore.pipeline.busy.block_steps` of the groups ``g`` (no data path moves them)."""
    problem = space.problem
    return block_steps(
        Costs(problem, space.preset), problem.k, g["core_rows"], g["core_cols"], g["baseM"],
        g["baseN"], g["baseK"],
    )  # fmt: skip


def _fixed_then_relaxed(space: Any, g: dict[str, Any], threshold: float) -> FloatArray:
    """:func:`fixed_then_relaxed_bounds` of the groups ``g`` after its filter (one block)."""
    return _fixed_then_relaxed_of(space, g, threshold, _steps_of(space, g))


def _fixed_then_relaxed_of(
    space: Any, g: dict[str, Any], threshold: float, types: list[BlockSteps]
) -> FloatArray:
    """The fixed tier, then the relaxed one where it is below ``threshold`` (one block)."""
    problem, preset = space.problem, space.preset
    orders = [space.fixed["iterateOrder"]] if "iterateOrder" in space.fixed else [0, 1]
    n = g["baseM"].shape[0]
    fixed = np.full(n, np.inf)
    kept = []
    for vector_path, reach in _reachable_paths(space, g):
        sub = g if reach is None else {name: arr[reach] for name, arr in g.items()}
        if sub["baseM"].shape[0] == 0:
            continue
        c = Costs(problem, preset, vector_path)
        terms = group_terms(space, c, sub, types if reach is None else take_rows(types, reach, n))
        part: Any = np.inf
        per_order = []
        for order in orders:
            tr = traffic.order_traffic(problem, preset, sub, order)
            fx = chains.fixed_paths(space, c, sub, terms, tr.cap)
            price = _fixed_price(tr, fx)
            part = np.minimum(part, price)
            per_order.append((order, tr, fx, price))
        dest = slice(None) if reach is None else reach
        fixed[dest] = np.minimum(fixed[dest], part)
        kept.append((reach, c, sub, terms, per_order))
    out = _to_us(preset, fixed)
    live = out < threshold
    if not live.any():
        return out
    relaxed = np.full(n, np.inf)
    for reach, c, sub, terms, per_order in kept:
        part = np.inf
        for pre in per_order:
            # Only where this path and order's own fixed price is below the threshold (on 910A
            # int8 128 x 11008 x 4096 one order's price rules out 44 % of the groups the other
            # leaves).
            bound = _order_bound_below(space, (c, sub, terms), pre, (1, True, True), threshold)
            part = np.minimum(part, bound)
        dest = slice(None) if reach is None else reach
        relaxed[dest] = np.minimum(relaxed[dest], part)
    out[live] = np.maximum(out[live], _to_us(preset, relaxed[live]))
    return out


def pass_start_stalls_apply(space: Any) -> bool:
    """Whether the group bound prices pass-start stalls (no FixPipe, an operand staged in UB)."""
    c = Costs(space.problem, space.preset, True)
    return chains.USE_CHAIN_BOUND and not space.preset.has_fixpipe and (c.a_via_ub or c.b_via_ub)


@dataclass(frozen=True, slots=True)
class GroupTerms:
    """The terms of :func:`tiler.bounds.cases.order_bound` that no iterate order moves.

    Attributes:
        cube: The M pipe's busy cycles (:func:`simcore.pipeline.busy.compute_busy`).
        mte1: MTE1's.
        chain_classes: The compute chain per L0 class (:func:`tiler.bounds.chains.chain_classes`).
        step1: A typical block's full-K step: ``la + lb + mm``.
        step_kt: Its K-tail step's (``step1`` where K has no tail): what follows a block's
            last copy at least (:func:`simcore.estimate.paths.steps_after_last_copy`).
        per_lo: The least period of a typical block's full-K step (every L0 class).
        step_avg: The step at the block dimensions averaged over the core's blocks
            (:func:`tiler.bounds.chains.average_step`), which the first-block path prices.
        a_pass: A's per-pass floors (:func:`tiler.bounds.copies.pass_floor`); ``b_pass`` B's.
        b_pass: See ``a_pass``.
        mmads: The one-slot chains' MMAD figures (:func:`tiler.bounds.slots.one_slot_chain`).
    """

    cube: Any
    mte1: Any
    chain_classes: list[tuple[Any, Any, Any, Any]]
    step1: Any
    step_kt: Any
    per_lo: Any
    step_avg: Any
    a_pass: tuple[Any, ...]
    b_pass: tuple[Any, ...]
    mmads: tuple[tuple[Any, Any], ...]


def group_terms(
    space: Any, c: Costs, g: dict[str, Any], types: list[BlockSteps] | None = None
) -> GroupTerms:
    """The terms of the groups ``g`` on the path of ``c`` that no iterate order moves.

    ``types``: the groups' :func:`simcore.pipeline.busy.block_steps` where the caller has them.

    The compute chain's L0 classes take the first copies' bytes at the largest bandwidth share
    any order allows (the L2 share with every reload hitting). The one-slot chains take the MMAD
    cycles of the full-K steps (each block's last step left out) and twice the largest full-K
    MMAD; or the full-K steps at the smallest full-K MMAD each, and twice that.
    """
    problem, p = space.problem, space.preset
    k = problem.k
    rows, cols = g["core_rows"], g["core_cols"]
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    m_iter, n_iter, k_iter = g["m_iter"], g["n_iter"], g["k_iter"]
    rm_t = rows - (m_iter - 1) * bm
    cn_t = cols - (n_iter - 1) * bn
    r1 = np.where(m_iter == 1, rm_t, bm)
    c1 = np.where(n_iter == 1, cn_t, bn)
    la1, lb1, mm1 = c.la_cycles(r1, bk), c.lb_cycles(c1, bk), c.mmad_cycles(r1, c1, bk)
    # (The K-tail step's depth: bk where it divides K.)
    bk_t = k - (k_iter - 1) * bk
    # (A dealt split's tiles run on usedCoreNum cores, the estimator's active cores.)
    used = g.get("usedCoreNum")
    active = ceil_div(problem.m, rows) * ceil_div(problem.n, cols)
    if used is not None:
        active = np.minimum(active, used)
    # (The ND->NZ share of the chip's L2 rate: simcore.pipeline.traffic.l2_share_most.)
    chip = p.l2_bytes_per_cycle * l2_share_most(problem, p)
    cap = np.minimum(chip / np.maximum(active, 1), p.l2_core_port)
    # (The same-address factors, fixed by the core split: simcore.pipeline.transfer.)
    ready = copies.first_copy_legs(
        c, k, (rm_t, cn_t), k_iter, cap, operand_contention(c, rows, cols, used), (bm, bn, bk)
    )
    # Each block type's step costs, priced once for the busy totals, the chain and the MMADs.
    if types is None:
        types = block_steps(c, k, rows, cols, bm, bn, bk)
    cube, mte1 = compute_busy_of(types, k_iter)
    mm_max = c.mmad_cycles(np.where(m_iter > 1, bm, rm_t), np.where(n_iter > 1, bn, cn_t), bk)
    mm_steps: Any = 0.0
    for b in types:
        mm_steps = mm_steps + b.count * np.maximum(k_iter - 1, 0) * b.mm
    steps = m_iter * n_iter * np.maximum(k_iter - 1, 0)
    mm_min = c.mmad_cycles(rm_t, cn_t, bk)
    return GroupTerms(
        cube=cube,
        mte1=mte1,
        chain_classes=chains.chain_classes(c, k, g, space.fixed, ready, types),
        step1=la1 + lb1 + mm1,
        step_kt=c.la_cycles(r1, bk_t) + c.lb_cycles(c1, bk_t) + c.mmad_cycles(r1, c1, bk_t),
        per_lo=np.maximum(mm1, la1 + lb1),
        step_avg=chains.average_step(c, g),
        a_pass=copies.pass_floor(c, True, rows, bm, rm_t, k, bk),
        b_pass=copies.pass_floor(c, False, cols, bn, cn_t, k, bk),
        mmads=(
            (mm_steps, np.maximum(2.0 * mm_max, 1e-9)),
            (steps * mm_min, np.maximum(2.0 * mm_min, 1e-9)),
        ),
    )


def _reachable_paths(space: Any, g: dict[str, Any]) -> list[tuple[bool, Any]]:
    """The data paths (vector reorder or not) some tiling of each group can take.

    On chips without the two UB paths only the one (``None``: every group). Otherwise
    (:func:`simcore.pipeline.costs.vector_path_array`) the vector path needs ``max(shareUbSize, 2 x
    transLength) <= UB``, where shareUbSize is fixed by the group and transLength is the
    largest of the A, B, C and bias tiles in UB, each non-decreasing in the steps (a tile of
    ``rows x cols`` takes ``rows x cols`` elements, ``rows x (cols + 16)`` when cols is a
    multiple of 256, and the step extents are multiples of 16): a group reaches the vector
    path only if it fits with every step at 1, and the column path only if it does not fit
    with every step at its largest (the core's blocks, all of K).
    """
    problem, preset = space.problem, space.preset
    if not _has_two_paths(problem, preset):
        return [(True, None)]
    if preset.nd2nz_on_the_fly:
        # Only the C drain differs (no FixPipe): price both paths everywhere.
        return [(True, None), (False, None)]
    one = np.ones_like(g["baseM"])
    lo = {**g, "stepM": one, "stepN": one, "stepKa": one, "stepKb": one}
    hi = {
        **g,
        "stepM": g["m_iter"],
        "stepN": g["n_iter"],
        "stepKa": g["k_iter"],
        "stepKb": g["k_iter"],
    }
    vec_lo = vector_path_array(problem, lo, preset)
    vec_hi = vector_path_array(problem, hi, preset)
    if vec_lo is None or vec_hi is None:
        return [(True, None)]
    return [(True, np.flatnonzero(vec_lo)), (False, np.flatnonzero(~vec_hi))]


def _select(groups: dict[str, Any], idx: Any) -> dict[str, Any]:
    if idx is None:
        return groups
    return {name: arr[idx] for name, arr in groups.items()}


def _has_two_paths(problem: Problem, preset: HardwarePreset) -> bool:
    # Costs differ between the vector and the column path only for ND inputs on chips without
    # on-the-fly ND->NZ (simcore.pipeline.costs.Costs: a_via_ub / a_by_column), and for the C drain
    # without FixPipe.
    return not preset.nd2nz_on_the_fly or not preset.has_fixpipe
