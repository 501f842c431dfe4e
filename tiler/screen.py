"""Screening: the exact optimum of the estimator over the space, by branch and bound.

The space (:mod:`tiler.space`) has up to ~10^11 points, too many to score one by one even at a
million per second. Its outer level, the *groups* (core split x base block), has at most ~10^6
entries, and for each group a lower bound on the estimated time of every point in it is cheap:

* ``time >= launch + busiest pipe`` -- the estimator clips every makespan to at least its busiest
  pipe (simcore.estimate.estimator's contract, the same one the simulator's seed 003 bounds give);
* the cube (M) and L1->L0 (MTE1) work of a core is fixed by its block and the base block: the
  same MMADs and loads whatever the steps, depths, flags and order (seed 004 / the kernel
  description in simcore.pipeline.traffic), so the group's M and MTE1 busy times are exact;
* FixPipe (or, without FixPipe, L0C->UB and UB->GM) drains every block once at a rate no faster
  than the pipe's own; MTE2 moves each operand's rows of the core at least once, at no more
  than min(peak, the chip's L2 bandwidth shared by the active cores), and the chip's HBM moves
  at least the unique bytes, a share of which the slowest core's copies wait for.

(:mod:`tiler.bounds` has the full list; it is computed in tiers, each never above the next:
first from what the group fixes alone (:func:`tiler.bounds.fixed_lower_bounds`: the compute chain,
the fixed busy totals, the HBM floor), then with one interval of A's share of L1 (relaxed: one
figure below the slot combinations, then each), then with the full cut for the groups left. On
UB-path chips the enumeration's windows add the pair tier between the last two
(:mod:`tiler.pair_tier`: each operand's least copies over its options, coupled through the pair
floor of :func:`simcore.estimate.bounds.ub_pair_floor_us`).)

Inside a group that its bound cannot rule out, a second level bounds each *operand option*
(A: stepM, stepKa, depthA1; B: stepN, stepKb, depthB1; with the iterateOrder) over every
partner option and L0 flag, with :func:`simcore.estimate.estimator.operand_floor_arrays` on chips
without a UB path and :func:`simcore.estimate.bounds.ub_operand_floor_arrays` on UB-path chips
(310P, 910A), one evaluation per option, so #A + #B evaluations rule out #A x #B pairs: only the
pairs of options that both leave below the runner-up are formed at all (on UB-path chips each
pair's own floor, both operands' copies on the pipes they share, then drops most). A third level
bounds each remaining *L1 choice* (steps, L1 depths, iterateOrder) over its L0 flags (dbL0A /
dbL0B / dbL0C) with :func:`simcore.estimate.estimator.makespan_floor_arrays`, the estimator's own
code in floor mode; only the choices whose floor is below the runner-up's time are expanded into
points and scored (and each scored point is checked against its choice's floor as well).

Before the coarse bound of every group, the coarse bound of the groups with the least fixed bound
picks a few groups that are scored in full (a warm start: the bounds then face an incumbent close to
the optimum). Groups are scored in order of their bound; screening stops when the next bound is no
better than the second best time found (so the optimum and the runner-up are both exact). Every
scored point is checked against its group's bound: a violation means the bound is unsafe for this
estimator, and then no group is skipped any more and the certificate says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.estimate.estimator import estimate_arrays, makespan_floor_arrays
from simcore.hardware.dtypes import l1_bytes as l1_block_bytes
from simcore.pipeline.costs import ceil_div
from simcore.tiling.footprints import uses_ub_path
from simcore.version import MODEL_VERSION
from tiler.bounds import (
    cube_lower_bounds,
    fixed_then_relaxed_bounds,
    group_lower_bounds,
)
from tiler.bounds.slots import SPLITS
from tiler.levels import (
    FLOOR_RTOL,
    DeadCells,
    GroupOptions,
    flag_sets,
    operand_floors,
    options,
    surviving_choices,
    table,
)
from tiler.pair_tier import PairTier
from tiler.space import CERTIFICATE_SCOPE, DEALT_SCOPE, Space
from tiler.top_kernels import Candidate, TopKernels

__all__ = [
    "CERTIFICATE_SCOPE",
    "DEALT_SCOPE",
    "ScreenResult",
    "group_lower_bounds",
    "probe_points",
    "screen",
]

FloatArray = npt.NDArray[np.float64]

#: Points scored per estimator call (bounded memory: ~40 arrays of this length).
CHUNK_POINTS = 200_000
#: Points and floors (operand options and L1 choices) one screening evaluates at most by default.
#: About 1 s of work with the batched operand level (under 0.5 s of it in the estimator); it was
#: 600k when the per-group overhead made each unit twice as costly, and the screening time
#: (median, p95 over benchmarks/tune_suite.py) is what it answers to. 1.2M until model
#: 2026.11.30.1: its K-tail step lowers the floors of what follows a block's last copy, and
#: 910A int8 1000^3 (the suite's largest) then certifies its optimum after 1.37M units against
#: 1.23M before; a budget only stops searches that would not finish, so no other shape moves.
DEFAULT_MAX_POINTS = 1_500_000
#: Relative tolerance of 'cannot beat': bounds and times agree to rounding (~1e-12), so a group
#: whose bound is within this of the runner-up can at most tie with it.
TIE_RTOL = 2e-9
#: At most this many groups listed in ScreenResult.tie_groups (the tuner samples a few of them).
TIE_GROUPS_LISTED = 4096
#: Groups whose deferred coarse and full tiers (:func:`_refine`) are computed at once, just
#: before the first of them is enumerated.
REFINE_WINDOW = 2048
#: Groups the pair tier (tiler.pair_tier) is priced on at a time, just before they are
#: enumerated: as many as the groups scored so far, from 32 up to this. Priced a window of
#: 2,048 ahead from the start, it cost 517k option rows on 310P3 fp16 128 x 5120 x 13824, where
#: the whole screening takes 44k units without it and scores 30 groups; capped at 256, each
#: call's fixed cost (the work the groups fix, per path) made 910A int8 1000^3 and 333 x 12345
#: x 777 1.3x slower than with 2,048.
PAIR_WINDOW = 2048

#: The enumeration's windows compute the full tier only while it rules out at least this share
#: of the groups it is computed on (:class:`_FullTier`).
FULL_TIER_MIN_SHARE = 0.02
#: Groups the windows' full tier is first computed on before :data:`FULL_TIER_MIN_SHARE`
#: decides whether it goes on (:class:`_FullTier`).
FULL_TIER_TRIAL = 256
#: Groups probed (two points each) for the first incumbent.
PROBE_GROUPS = 4000
#: Groups scored in full, best cube bound first, when pins filter out every probe.
PIN_FALLBACK_GROUPS = 64
#: Warm start: the groups with the least coarse bound scored in full before the full bound is
#: computed, at most this many and this many points (both warm starts together; they count
#: against the budget like every scored point). On UB-path chips the probes (seed-002-style
#: points) can be a third above the optimum, and the group bounds computed against such an
#: incumbent rule out far fewer groups (910A int8 1000 x 12288 x 4096: 42,200 groups left for the
#: full bound against 1,196 at the optimum); the optimum's group is among the four with the
#: least coarse bound there.
WARM_GROUPS = 8
WARM_POINTS = 100_000
#: The groups with the least fixed bound whose relaxed tier ranks them for the coarse one (a
#: sample of 4,096 missed the best groups of 910B2 fp16 77 x 333 x 1000: 59 groups scored
#: against 12).
WARM_SAMPLE = 16_384
#: Warm start only where the incumbent is this far above the least coarse bound of the sample
#: (closer, it could gain too little for its points).
WARM_GAIN = 1.01
#: Of the sample, the groups with the least relaxed tier whose coarse tier picks the warm-start
#: groups: the coarse tier costs twice the relaxed one, and on 910A it was 0.3 s of every large
#: shape's screening on the 2 x 16,384 groups of the sample.
WARM_COARSE = 2048
#: The first warm start picks from every s-th open group, at most this many.
WARM_POOL = 65_536


@dataclass
class ScreenResult:
    """The outcome of :func:`screen`: best points (best first) and the certificate."""

    top: list[Candidate]
    exact: bool
    scored_points: int
    groups: int
    groups_scored: int
    groups_bounded: int
    bound_violations: int
    seconds: float
    pruned: dict[str, int] = field(default_factory=dict)
    gap_bound: float | None = 0.0
    #: Groups whose lower bound does not rule out a point with the optimum's estimate (scored
    #: or skipped as able at most to tie), least bound first, at most TIE_GROUPS_LISTED.
    tie_groups: list[int] = field(default_factory=list)
    #: The space the certificate is about (:data:`CERTIFICATE_SCOPE` or :data:`DEALT_SCOPE`).
    scope: str = CERTIFICATE_SCOPE

    def certificate(self) -> dict[str, Any]:
        """The certificate of the tune answer (JSON-ready).

        ``scope`` (:attr:`tiler.space.Space.scope`): the space ``exact`` and ``gap_bound`` prove.
        """
        return {
            "scope": self.scope,
            "exact": self.exact,
            "legal_points": self.scored_points,
            "groups": self.groups,
            "groups_scored": self.groups_scored,
            "pruned": {**self.pruned, "lower_bound_groups": self.groups_bounded},
            "bound_violations": self.bound_violations,
            "gap_bound": self.gap_bound,
            "model_version": MODEL_VERSION,
        }


def probe_points(space: Space, groups: Any = None) -> dict[str, npt.NDArray[np.int64]]:
    """Two points per group, K resident first as seed 002 recommends, both iterate orders.

    stepM = stepN = 1, L1 double buffered (depth = 2 x step) with the largest balanced equal
    stepKa = stepKb that fits (single buffered when even one double-buffered step does not),
    the L0 buffers doubled where they fit. Used to order the groups (the best probes are
    enumerated first); pinned fields are honoured by filtering.

    Args:
        space: The legal space.
        groups: Indices of the groups to probe (None: every group).

    Returns:
        The probe points (with their ``group``), as arrays of the search fields.
    """
    index = np.arange(space.size) if groups is None else np.asarray(groups, dtype=np.int64)
    g = {name: arr[index] for name, arr in space.groups.items()}
    a_blk = l1_block_bytes(space.problem.dtype, g["baseM"] * g["baseK"])
    b_blk = l1_block_bytes(space.problem.dtype, g["baseN"] * g["baseK"])
    room = space.preset.l1_bytes - g["bias_l1"]
    k_iter = g["k_iter"]
    s2 = room // (2 * (a_blk + b_blk))
    db = np.where(s2 >= 1, 2, 1)
    s_max = np.maximum(room // (db * (a_blk + b_blk)), 1)
    step_k = np.minimum(k_iter, s_max)
    step_k = ceil_div(k_iter, ceil_div(k_iter, step_k))
    n = a_blk.shape[0]
    pts: dict[str, npt.NDArray[np.int64]] = {}
    for name in ("usedCoreNum", "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK"):
        pts[name] = np.concatenate([g[name], g[name]])
    one = np.ones(2 * n, dtype=np.int64)
    pts["stepM"] = one
    pts["stepN"] = one.copy()
    pts["stepKa"] = np.concatenate([step_k, step_k])
    pts["stepKb"] = pts["stepKa"].copy()
    pts["depthA1"] = np.concatenate([step_k * db, step_k * db])
    pts["depthB1"] = pts["depthA1"].copy()
    pts["iterateOrder"] = np.concatenate([np.zeros(n, dtype=np.int64), one[:n]])
    pts["dbL0A"] = np.concatenate([g["dbA_max"], g["dbA_max"]])
    pts["dbL0B"] = np.concatenate([g["dbB_max"], g["dbB_max"]])
    pts["dbL0C"] = np.concatenate([g["dbC_max"], g["dbC_max"]])
    pts["group"] = np.concatenate([index, index])
    if not space.fixed:
        return pts
    keep = np.ones(2 * n, dtype=bool)
    for name, value in space.fixed.items():
        keep &= pts[name] == value
    return {k: v[keep] for k, v in pts.items()}


@dataclass
class _Tally:
    """What the screening has evaluated so far, and whether it still prunes."""

    scored: int = 0  # points scored
    floored: int = 0  # operand-option and L1-choice floors computed
    floor_pruned: int = 0  # points never scored: a floor of theirs cannot beat the runner-up
    violations: int = 0  # points below a bound of theirs
    use_bound: bool = True  # False after a violation: nothing is pruned any more
    dead_cells: DeadCells = field(default_factory=DeadCells)


def _score_groups(
    space: Space,
    top: TopKernels,
    opts: list[GroupOptions],
    lb: FloatArray,
    t: _Tally,
    max_points: int | None,
) -> bool:
    """Scores the points of the groups ``opts`` that their floors do not rule out.

    The operand floors (:func:`tiler.levels.operand_floors`), the pairs of options both leave
    (and on UB-path chips their pair floors), the L1-choice floors of those, and the points of
    the choices below the runner-up; ``t`` is updated in place.

    Returns:
        True where ``max_points`` ran out inside the batch (its groups are then not done).
    """
    bound = top.threshold() * (1.0 - TIE_RTOL) if t.use_bound else np.inf
    # The iterate orders are the same in every group with points: a group allows both,
    # or the pinned one, once it allows one L0 flag set (the flags do not depend on it).
    orders = opts[0].orders
    tables = (table(opts, True), table(opts, False))
    floors_a = floors_b = parts = None
    if t.use_bound:
        # Second level, per operand: one floor per A option and per B option (and iterate
        # order) bounds all their pairs (tiler.levels.operand_floors); only the pairs that
        # both leave below the runner-up are formed.
        res = operand_floors(space, opts, orders, tables, bound, lb, t.dead_cells)
        if res is not None:
            floors_a, floors_b, parts, rows = res
            t.floored += rows
    merged, floors, cut = surviving_choices(
        space, opts, orders, tables, (floors_a, floors_b), bound, lb, parts
    )
    t.floor_pruned += cut
    n_choices = floors.shape[0]
    for start in range(0, n_choices, CHUNK_POINTS // 8):
        if max_points is not None and start > 0 and t.scored + t.floored >= max_points:
            return True
        sub = {f: v[start : start + CHUNK_POINTS // 8] for f, v in merged.items()}
        part_floors = floors[start : start + CHUNK_POINTS // 8]
        # Third level: the floor of each L1 choice over its L0 flags
        # (simcore.estimate.estimator. makespan_floor_arrays); only choices whose floor is
        # below the runner-up are scored.
        part_floors = np.maximum(
            np.asarray(makespan_floor_arrays(space.problem, space.preset, sub)["time_us"])
            * (1.0 - FLOOR_RTOL),
            part_floors,
        )
        t.floored += int(part_floors.shape[0])
        if t.use_bound:
            live = part_floors < top.threshold() * (1.0 - TIE_RTOL)
            t.floor_pruned += int(flag_sets(space, sub["group"][~live]).sum())
            sub = {f: v[live] for f, v in sub.items()}
            part_floors = part_floors[live]
        pts = space.with_l0_flags(sub)
        bounds = part_floors[pts["choice"]]
        count = pts["baseM"].shape[0]
        for first in range(0, count, CHUNK_POINTS):
            part = {f: v[first : first + CHUNK_POINTS] for f, v in pts.items()}
            times = top.add(part, estimate_arrays(space.problem, space.preset, part))
            bad = times < bounds[first : first + CHUNK_POINTS]
            if bad.any():
                t.violations += int(bad.sum())
                t.use_bound = False
            t.scored += times.shape[0]
    return False


def _warm_start(
    space: Space,
    top: TopKernels,
    groups: Any,
    lb: Any,
    masks: tuple[Any, Any, Any],
    budget: tuple[_Tally, int],
) -> int:
    """Scores the few ``groups`` with the least coarse bound first (see :data:`WARM_GROUPS`).

    The relaxed tier of the :data:`WARM_SAMPLE` open groups with the least bound so far, the
    coarse bound (one interval of L1, with the pass-start stalls) of the :data:`WARM_COARSE` of
    them with the least relaxed bound, then, where the incumbent is
    more than :data:`WARM_GAIN` above the least of them, their best groups, within ``allowance``
    points (``budget``: the tally and the allowance). Each is scored as the enumeration scores a
    group (:func:`_score_groups`: only the points whose floors are below the runner-up), so it is
    done. ``lb`` (the bounds so far), ``masks`` (coarse tier computed, relaxed tier computed,
    warmed) and the tally are
    updated in place.

    Returns:
        The points the warmed groups have (scored or ruled out by their floors).
    """
    coarse_done, relaxed_done, warmed = masks
    t, allowance = budget
    live = groups[(lb[groups] < top.threshold() * (1.0 - TIE_RTOL)) & ~warmed[groups]]
    sample = live[np.argsort(lb[live], kind="stable")[:WARM_SAMPLE]]
    # The relaxed tier (half the coarse tier's cost) of the sample, then the coarse tier of the
    # WARM_COARSE with the least relaxed bound only: the warm groups are the first few of those.
    # (Each data path and iterate order priced only where its fixed price is below the runner-up:
    # the same figures below it, so the same warm groups.)
    thr = top.threshold() * (1.0 - TIE_RTOL)
    todo = sample[~coarse_done[sample] & ~relaxed_done[sample]]
    if todo.shape[0]:
        bound = group_lower_bounds(space, todo, splits=1, relaxed=True, threshold=thr)
        lb[todo] = np.maximum(lb[todo], bound)
        relaxed_done[todo] = True
    sample = sample[np.argsort(lb[sample], kind="stable")[:WARM_COARSE]]
    todo = sample[~coarse_done[sample]]
    if todo.shape[0]:
        lb[todo] = np.maximum(lb[todo], group_lower_bounds(space, todo, splits=1, threshold=thr))
        coarse_done[todo] = True
    if not sample.shape[0] or top.threshold() <= WARM_GAIN * float(lb[sample].min()):
        return 0
    best = sample[lb[sample] < top.threshold() * (1.0 - TIE_RTOL)]
    chosen, points = _warm_groups(space, best, lb, allowance)
    opts = [options(space, gi) for gi in chosen]  # (each has points: _warm_groups)
    if opts:
        _score_groups(space, top, opts, lb, t, None)
    warmed[chosen] = True
    return points


def _warm_groups(space: Space, open_groups: Any, lb: Any, allowance: int) -> tuple[list[int], int]:
    """The groups to score first, and their points: the least bound first.

    At most :data:`WARM_GROUPS` groups and ``allowance`` points (a group whose points do not fit
    what is left is passed over).
    """
    firsts = open_groups[np.argsort(lb[open_groups], kind="stable")[: 2 * WARM_GROUPS]]
    out: list[int] = []
    left = allowance
    for gi in firsts.tolist():
        count = space.point_count(gi)
        if 0 < count <= left:
            out.append(gi)
            left -= count
        if len(out) == WARM_GROUPS:
            break
    return out, allowance - left


def _bound_groups(
    space: Space, top: TopKernels, cheap: Any, t: _Tally
) -> tuple[Any, Any, Any, int]:
    """The bounds of the groups the cube bound ``cheap`` leaves, with the warm starts.

    Returns:
        The bound of every group (inf where none was computed, the cube bound where it rules the
        group out), the groups still open (not ruled out, not scored in full), the groups scored
        in full by the warm starts (mask; ``t`` counts their points), and the groups ruled out by
        the cube bound.
    """
    n = space.size
    # Full bound of the groups the cheap bound leaves (chunked: bounded memory), in tiers, each
    # never below the one before and run only on the groups that one leaves.
    lb = np.full(n, np.inf)
    coarse_done = np.zeros(n, dtype=bool)
    relaxed_done = np.zeros(n, dtype=bool)
    warmed = np.zeros(n, dtype=bool)
    # Warm start (see WARM_GROUPS), first from every s-th open group (the cube bound and the
    # fixed tier of every group then face a closer incumbent), then from the least fixed tier
    # of all.
    cand = np.flatnonzero(cheap < top.threshold())
    pool = cand[:: max(1, -(-cand.shape[0] // WARM_POOL))]
    # (The fixed tier where the first filter leaves a group below the incumbent: the same
    # figures there, so the same warm groups.)
    lb[pool] = fixed_then_relaxed_bounds(
        space, pool, top.threshold() * (1.0 - TIE_RTOL), relaxed=False
    )
    fixed_done = np.zeros(n, dtype=bool)
    fixed_done[pool] = True
    warm_points = _warm_start(
        space, top, pool, lb, (coarse_done, relaxed_done, warmed), (t, WARM_POINTS)
    )
    cand = np.flatnonzero((cheap < top.threshold()) & ~warmed)
    cheap_pruned = n - cand.shape[0] - int(warmed.sum())
    # What the group fixes alone (no reuse case, no split of L1): several times cheaper than
    # the coarse bound and never above it, it rules out most groups of the UB-path chips; the
    # relaxed coarse tier (one figure per split of L1, no one-slot chains, no stalls) of the
    # groups it leaves in the same pass, from the same terms.
    rest = cand[~fixed_done[cand]]
    for start in range(0, rest.shape[0], CHUNK_POINTS):
        idx = rest[start : start + CHUNK_POINTS]
        lb[idx] = fixed_then_relaxed_bounds(space, idx, top.threshold() * (1.0 - TIE_RTOL))
    relaxed_done[rest] = True
    _warm_start(
        space, top, cand, lb, (coarse_done, relaxed_done, warmed), (t, WARM_POINTS - warm_points)
    )
    cand = cand[~warmed[cand]]
    # The relaxed tier of the warm starts' pool; the coarse and full tiers of the groups it
    # leaves wait for the enumeration (_refine).
    coarse = cand[
        (lb[cand] < top.threshold() * (1.0 - TIE_RTOL)) & ~coarse_done[cand] & ~relaxed_done[cand]
    ]
    for start in range(0, coarse.shape[0], CHUNK_POINTS):
        idx = coarse[start : start + CHUNK_POINTS]
        lb[idx] = np.maximum(lb[idx], group_lower_bounds(space, idx, splits=1, relaxed=True))
    lb[cheap >= top.threshold()] = cheap[cheap >= top.threshold()]
    cand = cand[lb[cand] < top.threshold() * (1.0 - TIE_RTOL)]
    return lb, cand, warmed, cheap_pruned


@dataclass
class _FullTier:
    """Whether the full tier still pays in the enumeration's windows (:func:`_refine`).

    The full tier (:data:`SPLITS` intervals of L1) costs 3-10 times the coarse one; where the
    coarse tier leaves only groups that it cannot rule out either, it is pure cost (910A int8
    333 x 12345 x 777: 1.3 s on 10,000 groups, none ruled out; fp16 77 x 333 x 1000: 0.65 s,
    none). Once it has been computed on :data:`FULL_TIER_TRIAL` groups and ruled out less than
    :data:`FULL_TIER_MIN_SHARE` of them, the windows leave it out: their groups are enumerated
    (exact either way), and the groups that may tie or are left on a truncated search still
    get it at the end. The trial is the first groups of the first window(s), not the whole
    window: on the 34 910A and 310P3 shapes of ``benchmarks.screen_ab --every 3`` it ruled out
    none of the groups the enumeration then scores (2 % or more of them only on 310P3 int8 2048
    x 4096 x 4096, 55 of 2,020, every one skipped by the enumeration anyway), and a trial of a
    whole window cost 0.05-0.35 s CPU (int8 333 x 12345 x 777: 0.35 s on 3,023 groups).
    """

    computed: int = 0
    ruled_out: int = 0

    def pays(self) -> bool:
        return (
            self.computed < FULL_TIER_TRIAL or self.ruled_out >= FULL_TIER_MIN_SHARE * self.computed
        )


def _refine(
    space: Space,
    lb: FloatArray,
    pending: tuple[Any, Any],
    groups: Any,
    threshold: float,
    full: _FullTier | None = None,
) -> None:
    """The coarse and then the full tier of the pending ones among ``groups`` (in place).

    Deferred from the bound phase to the enumeration (a window of groups at a time, just before
    they are enumerated), so they face the runner-up found by then rather than the warm start's:
    on 310P3 int8 4095 x 4097 x 1023 the warm start's incumbent is 28 % above the optimum, and
    the full tier of the 19,000 groups it leaves cost more than the enumeration; at the
    optimum 1,200 are left. Each tier only raises a group's bound, and prices a data path and
    iterate order only where its fixed price is below ``threshold`` (``group_lower_bounds``).
    ``pending`` masks the groups whose coarse and whose full tier are not computed yet; ``full``
    (the enumeration's windows) leaves the full tier out where it does not pay
    (:class:`_FullTier`; None: always computed).
    """
    coarse_pending, full_pending = pending
    idx = groups[coarse_pending[groups]]
    coarse_pending[idx] = False
    idx = idx[lb[idx] < threshold]
    if idx.shape[0]:
        bound = group_lower_bounds(space, idx, splits=1, threshold=threshold)
        lb[idx] = np.maximum(lb[idx], bound)
    if full is not None and not full.pays():
        return
    idx = groups[full_pending[groups]]
    full_pending[idx] = False
    idx = idx[lb[idx] < threshold]
    if full is not None and full.computed < FULL_TIER_TRIAL:
        # The trial: its first groups only, the rest of the window where it pays.
        head = FULL_TIER_TRIAL - full.computed
        _full_tier(space, lb, idx[:head], threshold, full)
        if not full.pays():
            # The rest of the window keeps its full tier pending, as a window the tier is
            # left out of does: the tie groups and a truncated search's open groups get it.
            full_pending[idx[head:]] = True
            return
        idx = idx[head:]
    _full_tier(space, lb, idx, threshold, full)


def _full_tier(
    space: Space, lb: FloatArray, idx: Any, threshold: float, full: _FullTier | None
) -> None:
    """The full tier of the groups ``idx`` (in place), counted in ``full`` (:func:`_refine`)."""
    if idx.shape[0]:
        bound = group_lower_bounds(space, idx, splits=SPLITS, threshold=threshold)
        if full is not None:
            full.computed += idx.shape[0]
            full.ruled_out += int((bound >= threshold).sum())
        lb[idx] = np.maximum(lb[idx], bound)


def _floor_bound(space: Space, top: TopKernels) -> bool:
    """Whether the best point's estimate is a resource floor (its pipeline path below it)."""
    if top.times.shape[0] == 0:
        return False
    one = {f: v[:1] for f, v in top.fields.items()}
    est = estimate_arrays(space.problem, space.preset, one)
    return bool(float(est["path_cycles"][0]) < float(est["core_cycles"][0]))


def screen(
    space: Space, top_k: int = 16, max_points: int | None = DEFAULT_MAX_POINTS
) -> ScreenResult:
    """Finds the estimator's optimum over ``space`` (and the next best points).

    Branch and bound over the groups: a cheap bound (the M pipe, after the serial start-up) for
    every group; probes (two
    seed-002-style points) of the groups with the smallest cheap bound give an incumbent; a warm
    start (the few groups with the least coarse bound among those with the least fixed bound, scored
    in full) improves it; the bounds (:mod:`tiler.bounds`, in tiers) of the groups the cheap one
    cannot rule out; then the groups are enumerated in full, best probe first, each only while its
    bound is below the runner-up's time. Enumeration stops when no group left can beat the runner-up
    (the answer is then exact) or when ``max_points`` points were scored (the certificate then gives
    the proven gap).

    Args:
        space: The legal space.
        top_k: How many of the best distinct kernels to return (at least 2: the optimum is
            exact when ``exact`` is true, the others are the best seen; copies of a kernel,
            points with the same estimate and pipeline path, appear once).
        max_points: Points plus floors (operand options and L1 choices) to evaluate at most
            (None: no limit, always exact).

    Returns:
        The best points, best first, and the certificate figures.
    """
    t0 = time.perf_counter()
    n = space.size
    top = TopKernels(top_k)
    t = _Tally()
    cheap = cube_lower_bounds(space)

    # Probes of the groups with the smallest cheap bound: an incumbent for the pruning.
    n_probe = min(n, PROBE_GROUPS)
    probe_groups = np.sort(np.argpartition(cheap, n_probe - 1)[:n_probe]) if n else cheap[:0]
    probes = probe_points(space, probe_groups)
    probe_time = np.full(n, np.inf)
    for start in range(0, probes["group"].shape[0], CHUNK_POINTS):
        part = {f: v[start : start + CHUNK_POINTS] for f, v in probes.items()}
        times = top.add(part, estimate_arrays(space.problem, space.preset, part))
        t.violations += int((times < cheap[part["group"]]).sum())
        np.minimum.at(probe_time, part["group"], times)
        t.scored += times.shape[0]
    if top.threshold() == float("inf") and n:
        # Pins on inner fields (a stepKa, a depth, an L0 flag) can filter every probe out;
        # without an incumbent no group can be ruled out and every group's full bound is
        # computed (tens of seconds on a million groups). Score a few groups in full instead:
        # their points honour the pins by construction.
        for gi in np.argsort(cheap, kind="stable")[:PIN_FALLBACK_GROUPS]:
            pts = space.with_l0_flags(space.l1_choices(int(gi)))
            if pts["baseM"].shape[0] == 0:
                continue
            pts = {f: v[:CHUNK_POINTS] for f, v in pts.items()}
            times = top.add(pts, estimate_arrays(space.problem, space.preset, pts))
            t.violations += int((times < cheap[int(gi)]).sum())
            probe_time[int(gi)] = min(probe_time[int(gi)], float(times.min()))
            t.scored += times.shape[0]
            if top.threshold() < float("inf"):
                break

    t.use_bound = t.violations == 0
    lb, cand, warmed, cheap_pruned = _bound_groups(space, top, cheap, t)
    # Enumeration order: probed groups by probe time, then the rest by bound (where the budget
    # runs out first this found better answers than best-bound-first: 910A fp16 16 x 5120 x 13824).
    order = cand[np.lexsort((lb[cand], probe_time[cand]))]
    # Every group but the candidates is done (ruled out); a mask, not np.setdiff1d, which
    # sorts the whole range (half a second on 600k groups).
    done = np.ones(n, dtype=bool)
    done[cand] = False
    pending = ~done  # the coarse tier not computed yet (_refine)
    full_pending = ~done  # the full tier not computed yet
    full = _FullTier()
    # (Only on UB-path chips: elsewhere the operand floors already see both operands' paths.)
    pair = PairTier() if uses_ub_path(space.problem, space.preset) else None
    pair_pending = ~done
    groups_scored = int(warmed.sum())
    truncated = False
    pos = 0
    while pos < order.shape[0]:
        if max_points is not None and t.scored + t.floored >= max_points:
            truncated = True
            break
        opts: list[GroupOptions] = []
        size = 0
        # Small batches first so the runner-up's time tightens early (as the enumeration's own
        # units grow: the pair tier's rows are not the batches').
        spent = t.scored + t.floored - (pair.rows if pair is not None else 0)
        limit = min(CHUNK_POINTS // 8, max(2_000, spent // 8))
        while pos < order.shape[0] and size < limit:
            gi = int(order[pos])
            if pending[gi] and t.use_bound:
                thr = top.threshold() * (1.0 - TIE_RTOL)
                window = order[pos : pos + REFINE_WINDOW]
                _refine(space, lb, (pending, full_pending), window, thr, full)
            if pair is not None and pair_pending[gi] and t.use_bound:
                # The pair tier (tiler.pair_tier: A's and B's least copies through the pair
                # floor) of the next few groups only: its option rows count in the budget, and
                # the groups further on are often ruled out by the runner-up anyway.
                thr = top.threshold() * (1.0 - TIE_RTOL)
                window = order[pos : pos + min(PAIR_WINDOW, max(32, groups_scored))]
                # (Only groups with their coarse tier: the rest wait for their window.)
                window = window[pair_pending[window] & ~pending[window]]
                pair_pending[window] = False
                t.floored += pair.refine(space, lb, window[lb[window] < thr], thr)
            pos += 1
            done[gi] = True
            if t.use_bound and lb[gi] >= top.threshold() * (1.0 - TIE_RTOL):
                continue  # bounded: cannot beat the runner-up
            groups_scored += 1
            o = options(space, gi)
            if o.a.step.shape[0] == 0 or o.b.step.shape[0] == 0 or o.orders.shape[0] == 0:
                continue  # no point (no L1 choice, or no L0 flag set the pins allow)
            opts.append(o)
            size += (o.a.step.shape[0] + o.b.step.shape[0]) * o.orders.shape[0]
        if not opts:
            continue
        if _score_groups(space, top, opts, lb, t, max_points):
            # Out of budget inside the batch: its groups are not done.
            done[[o.index for o in opts]] = False
            groups_scored -= len(opts)
            truncated = True
            break
    best = float(top.times[0]) if top.times.shape[0] else float("inf")
    if truncated:
        open_groups = np.flatnonzero(~done)
        thr = top.threshold() * (1.0 - TIE_RTOL)
        _refine(space, lb, (pending, full_pending), open_groups, thr)
    # (The groups that might tie get their full bound, as if it had not been deferred.)
    ties = np.flatnonzero(lb <= best * (1.0 + TIE_RTOL))
    if not full.pays() and not _floor_bound(space, top):
        # The tuner reads the tie groups only for a floor-bound optimum
        # (tiler.tune._tied_kernels); otherwise the groups the windows left without the full
        # tier keep the coarse one (a valid bound, so the list still holds every group that
        # may tie).
        full_pending[ties] = False
    _refine(space, lb, (pending, full_pending), ties, np.inf)
    left = lb[~done]
    floor = float(left.min()) if left.shape[0] else best
    exact = t.violations == 0 and (not truncated or floor >= top.threshold() * (1.0 - TIE_RTOL))
    gap = 0.0 if exact else max(0.0, (best - min(floor, best)) / best)
    # Groups whose bound reaches the optimum's time: their points can at most tie with it,
    # so they were skipped once two points held that time; the tuner may sample them.
    tied = np.flatnonzero(lb <= best * (1.0 + TIE_RTOL))
    tied = tied[np.lexsort((probe_time[tied], lb[tied]))][:TIE_GROUPS_LISTED]
    pruned = dict(space.pruned)
    pruned["cube_bound_groups"] = int(cheap_pruned)
    pruned["l1_floor_points"] = int(t.floor_pruned)
    pruned["l1_choices_bounded"] = int(t.floored)
    return ScreenResult(
        top=top.candidates(),
        exact=exact,
        scored_points=t.scored,
        groups=n,
        groups_scored=groups_scored,
        groups_bounded=int(n - groups_scored - (~done).sum()),
        bound_violations=t.violations,
        seconds=time.perf_counter() - t0,
        pruned=pruned,
        gap_bound=gap if t.violations == 0 else None,
        tie_groups=[int(g) for g in tied],
        scope=space.scope,
    )
