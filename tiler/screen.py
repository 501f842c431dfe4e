"""Screening: the exact optimum of the estimator over the space, by branch and bound.

The space (:mod:`tiler.space`) has up to ~10^11 points, too many to score one by one even at a
million per second. Its outer level, the *groups* (core split x base block), has at most ~10^6
entries, and for each group a lower bound on the estimated time of every point in it is cheap:

* ``time >= launch + busiest pipe`` -- the estimator clips every makespan to at least its busiest
  pipe (simcore.estimator's contract, the same one the simulator's seed 003 bounds give);
* the cube (M) and L1->L0 (MTE1) work of a core is fixed by its block and the base block: the
  same MMADs and loads whatever the steps, depths, flags and order (seed 004 / the kernel
  description in simcore.kernel), so the group's M and MTE1 busy times are exact;
* FixPipe (or, without FixPipe, L0C->UB and UB->GM) drains every block once at a rate no faster
  than the pipe's own; MTE2 moves each operand's rows of the core at least once, at no more
  than min(peak, the chip's L2 bandwidth shared by the active cores), and the chip's HBM moves
  at least the unique bytes, a share of which the slowest core's copies wait for.

Inside a group that its bound cannot rule out, a second level bounds each *operand choice*
(A: stepM, stepKa, depthA1; B: stepN, stepKb, depthB1; with the iterateOrder) over every
partner choice and L0 flag with :func:`simcore.estimator.operand_floor_arrays` (chips without a
UB path), one evaluation per distinct choice, so #A + #B evaluations rule out #A x #B pairs. A
third level bounds each remaining *L1 choice* (steps, L1 depths, iterateOrder) over its L0
flags (dbL0A / dbL0B / dbL0C) with
:func:`simcore.estimator.makespan_floor_arrays`, the estimator's own code in floor mode; only
the choices whose floor is below the runner-up's time are expanded into points and scored
(and each scored point is checked against its choice's floor as well).

Groups are scored in order of their bound; screening stops when the next bound is no better than
the second best time found (so the optimum and the runner-up are both exact). Every scored
point is checked against its group's bound: a violation means the bound is unsafe for this
estimator, and then no group is skipped any more and the certificate says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.costs import ceil_div
from simcore.estimator import estimate_arrays, makespan_floor_arrays, operand_floor_arrays
from simcore.version import MODEL_VERSION
from tiler.bound import cube_lower_bounds, group_lower_bounds
from tiler.space import SEARCH_FIELDS, Space

__all__ = ["Candidate", "ScreenResult", "group_lower_bounds", "probe_points", "screen"]

FloatArray = npt.NDArray[np.float64]

#: Points scored per estimator call (bounded memory: ~40 arrays of this length).
CHUNK_POINTS = 200_000
#: Points (and L1-choice floors) one screening scores at most by default (about 0.5 s of
#: estimator time).
DEFAULT_MAX_POINTS = 600_000
#: Relative tolerance of 'cannot beat': bounds and times agree to rounding (~1e-12), so a group
#: whose bound is within this of the runner-up can at most tie with it.
TIE_RTOL = 2e-9
#: Groups probed (two points each) for the first incumbent.
PROBE_GROUPS = 4000


@dataclass
class Candidate:
    """One scored point: its searched fields and its estimated time."""

    fields: dict[str, int]
    time_us: float


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

    def certificate(self) -> dict[str, Any]:
        """The certificate of the tune answer (JSON-ready)."""
        return {
            "exact": self.exact,
            "legal_points": self.scored_points,
            "groups": self.groups,
            "groups_scored": self.groups_scored,
            "pruned": {**self.pruned, "lower_bound_groups": self.groups_bounded},
            "bound_violations": self.bound_violations,
            "gap_bound": self.gap_bound,
            "model_version": MODEL_VERSION,
        }


class _Top:
    """The k best distinct points seen so far."""

    def __init__(self, k: int) -> None:
        self.k = max(k, 2)
        self.times: FloatArray = np.zeros(0)
        self.fields: dict[str, npt.NDArray[np.int64]] = {
            f: np.zeros(0, dtype=np.int64) for f in SEARCH_FIELDS
        }

    def add(self, pts: dict[str, npt.NDArray[np.int64]], times: FloatArray) -> None:
        if times.shape[0] > self.k:
            idx = np.argpartition(times, self.k - 1)[: self.k]
        else:
            idx = np.arange(times.shape[0])
        all_t = np.concatenate([self.times, times[idx]])
        all_f = {f: np.concatenate([self.fields[f], pts[f][idx]]) for f in SEARCH_FIELDS}
        # Ties broken by the fields so the answer does not depend on enumeration order.
        keys = [all_f[f] for f in reversed(SEARCH_FIELDS)] + [all_t]
        order = np.lexsort(keys)[: self.k]
        self.times = all_t[order]
        self.fields = {f: all_f[f][order] for f in SEARCH_FIELDS}

    def threshold(self) -> float:
        """The time a group must beat to change the best two (inf until two are known)."""
        return float(self.times[1]) if self.times.shape[0] >= 2 else float("inf")

    def candidates(self) -> list[Candidate]:
        return [
            Candidate({f: int(self.fields[f][i]) for f in SEARCH_FIELDS}, float(self.times[i]))
            for i in range(self.times.shape[0])
        ]


def probe_points(space: Space) -> dict[str, npt.NDArray[np.int64]]:
    """Two points per group, K resident first as seed 002 recommends, both iterate orders.

    stepM = stepN = 1, L1 double buffered (depth = 2 x step) with the largest balanced equal
    stepKa = stepKb that fits (single buffered when even one double-buffered step does not),
    the L0 buffers doubled where they fit. Used to order the groups (the best probes are
    enumerated first); pinned fields are honoured by filtering.
    """
    g = space.groups
    in_bits = space.in_bits
    a_blk = g["baseM"] * g["baseK"] * in_bits // 8
    b_blk = g["baseN"] * g["baseK"] * in_bits // 8
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
    pts["group"] = np.concatenate([np.arange(n), np.arange(n)])
    keep = np.ones(2 * n, dtype=bool)
    for name, value in space.fixed.items():
        keep &= pts[name] == value
    return {k: v[keep] for k, v in pts.items()}


def _points_of(
    space: Space, n_cut: int, batch: list[dict[str, npt.NDArray[np.int64]]], live: Any
) -> int:
    """Points of the L1 choices the floors cut (each has one point per allowed L0 flag set)."""
    if n_cut == 0:
        return 0
    groups = np.concatenate([b["group"] for b in batch])[~live]
    per_group = np.ones(groups.shape[0], dtype=np.int64)
    # As in Space.with_l0_flags: each flag takes 1 or 2 up to its group's maximum, or its pin.
    for name, top_name in (("dbL0A", "dbA_max"), ("dbL0B", "dbB_max"), ("dbL0C", "dbC_max")):
        most = space.groups[top_name][groups]
        if name in space.fixed:
            per_group *= space.fixed[name] <= most
        else:
            per_group *= most
    return int(per_group.sum())


#: The fields of one operand's L1 choice (with its group and the order, which its reuse needs).
_A_KEY = ("group", "iterateOrder", "stepM", "stepKa", "depthA1")
_B_KEY = ("group", "iterateOrder", "stepN", "stepKb", "depthB1")


def _row_keys(choices: dict[str, npt.NDArray[np.int64]], key: tuple[str, ...]) -> Any:
    """One integer per row that identifies the row's values of ``key``.

    Mixed radix: a 1-D unique over these is an order of magnitude faster than a row-wise one.
    """
    code = np.zeros(choices["baseM"].shape[0], dtype=np.int64)
    span = 1
    for f in key:
        col = choices[f] - int(choices[f].min())
        radix = int(col.max()) + 1
        if span * radix >= 2**62:
            # Does not fit 64 bits (never seen): fall back to the row-wise unique's labels.
            labels = np.unique(
                np.stack([choices[g] for g in key], axis=1), axis=0, return_inverse=True
            )[1]
            return labels.reshape(-1)
        code = code * radix + col
        span *= radix
    return code


def _operand_floors(
    space: Space, choices: dict[str, npt.NDArray[np.int64]]
) -> tuple[FloatArray, int]:
    """Per-choice max of its A choice's and B choice's floors, and how many were evaluated.

    Each distinct A choice (and B choice) of the batch is evaluated once with
    :func:`simcore.estimator.operand_floor_arrays`, which bounds every pair it is part of.
    On chips where that bound is not available the floors are 0 and nothing is evaluated.
    """
    n = choices["baseM"].shape[0]
    out = np.zeros(n)
    if n == 0:
        return out, 0
    evaluated = 0
    for key, name in ((_A_KEY, "time_a_us"), (_B_KEY, "time_b_us")):
        _, first, inverse = np.unique(
            _row_keys(choices, key), return_index=True, return_inverse=True
        )
        # Any pair holding the operand choice serves: the bound reads only that operand.
        rep = {f: v[first] for f, v in choices.items()}
        res = operand_floor_arrays(space.problem, space.preset, rep)
        if res is None:
            return np.zeros(n), 0
        evaluated += int(first.shape[0])
        out = np.maximum(out, np.asarray(res[name])[inverse.reshape(-1)])
    return out, evaluated


def screen(
    space: Space, top_k: int = 16, max_points: int | None = DEFAULT_MAX_POINTS
) -> ScreenResult:
    """Finds the estimator's optimum over ``space`` (and the next best points).

    Branch and bound over the groups: a cheap bound (the M pipe) for every group; probes (two
    seed-002-style points) of the groups with the smallest cheap bound give an incumbent; the
    full bound (:mod:`tiler.bound`) of the groups the cheap one cannot rule out; then the
    groups are enumerated in full, best probe first, each only while its bound is below the
    runner-up's time. Enumeration stops when no group left can beat the runner-up (the answer
    is then exact) or when ``max_points`` points were scored (the certificate then gives the
    proven gap).

    Args:
        space: The legal space.
        top_k: How many of the best points to return (at least 2: the optimum and runner-up
            are exact when ``exact`` is true, the others are the best seen).
        max_points: Points plus L1-choice floors to score at most (None: no limit, always
            exact).

    Returns:
        The best points, best first, and the certificate figures.
    """
    t0 = time.perf_counter()
    n = space.size
    top = _Top(top_k)
    scored = 0
    violations = 0
    cheap = cube_lower_bounds(space)

    # Probes of the groups with the smallest cheap bound: an incumbent for the pruning.
    n_probe = min(n, PROBE_GROUPS)
    probe_groups = np.sort(np.argpartition(cheap, n_probe - 1)[:n_probe]) if n else cheap[:0]
    probes = probe_points(space)
    sel = np.isin(probes["group"], probe_groups)
    probes = {k: v[sel] for k, v in probes.items()}
    probe_time = np.full(n, np.inf)
    for start in range(0, probes["group"].shape[0], CHUNK_POINTS):
        part = {f: v[start : start + CHUNK_POINTS] for f, v in probes.items()}
        times = np.asarray(estimate_arrays(space.problem, space.preset, part)["time_us"])
        violations += int((times < cheap[part["group"]]).sum())
        np.minimum.at(probe_time, part["group"], times)
        top.add(part, times)
        scored += times.shape[0]

    # Full bound of the groups the cheap bound leaves (chunked: bounded memory).
    cand = np.flatnonzero(cheap < top.threshold())
    cheap_pruned = n - cand.shape[0]
    lb = np.full(n, np.inf)
    for start in range(0, cand.shape[0], CHUNK_POINTS):
        idx = cand[start : start + CHUNK_POINTS]
        lb[idx] = group_lower_bounds(space, idx)
    lb[cheap >= top.threshold()] = cheap[cheap >= top.threshold()]
    cand = cand[lb[cand] < top.threshold() * (1.0 - TIE_RTOL)]
    # Enumeration order: probed groups by probe time, then the rest by bound.
    order = cand[np.lexsort((lb[cand], probe_time[cand]))]
    done = np.zeros(n, dtype=bool)
    done[np.setdiff1d(np.arange(n), cand)] = True
    groups_scored = 0
    use_bound = violations == 0
    truncated = False
    floored = 0  # L1 choices whose floor was computed
    floor_pruned = 0  # points never scored: their L1 choice's floor cannot beat the runner-up
    pos = 0
    while pos < order.shape[0]:
        if max_points is not None and scored + floored >= max_points:
            truncated = True
            break
        batch: list[dict[str, npt.NDArray[np.int64]]] = []
        size = 0
        # Small batches first so the runner-up's time tightens early.
        limit = min(CHUNK_POINTS // 4, max(5_000, (scored + floored) // 4))
        while pos < order.shape[0] and size < limit:
            gi = int(order[pos])
            pos += 1
            done[gi] = True
            if use_bound and lb[gi] >= top.threshold() * (1.0 - TIE_RTOL):
                continue  # bounded: cannot beat the runner-up
            choices = space.l1_choices(gi)
            groups_scored += 1
            count = choices["baseM"].shape[0]
            if count == 0:
                continue
            batch.append(choices)
            size += count
        if not batch:
            continue
        merged = {f: np.concatenate([b[f] for b in batch]) for f in batch[0]}
        floors = lb[merged["group"]]
        if use_bound:
            # Second level, per operand: one floor per A choice and per B choice bounds all
            # their pairs (simcore.estimator.operand_floor_arrays); only the pairs that both
            # leave below the runner-up get the floor of the pair.
            own, evaluated = _operand_floors(space, merged)
            floored += evaluated
            floors = np.maximum(floors, own)
            live = floors < top.threshold() * (1.0 - TIE_RTOL)
        else:
            live = np.ones(size, dtype=bool)
        sub = {f: v[live] for f, v in merged.items()}
        # Third level: the floor of each L1 choice over its L0 flags (simcore.estimator.
        # makespan_floor_arrays); only choices whose floor is below the runner-up are scored.
        floors = np.maximum(
            np.asarray(makespan_floor_arrays(space.problem, space.preset, sub)["time_us"]),
            floors[live],
        )
        floored += int(floors.shape[0])
        if use_bound:
            live_pair = floors < top.threshold() * (1.0 - TIE_RTOL)
            sub = {f: v[live_pair] for f, v in sub.items()}
            floors = floors[live_pair]
            live[np.flatnonzero(live)[~live_pair]] = False
        pts = space.with_l0_flags(sub)
        if use_bound:
            floor_pruned += _points_of(space, size - int(floors.shape[0]), batch, live)
        bounds = floors[pts["choice"]]
        count = pts["baseM"].shape[0]
        for start in range(0, count, CHUNK_POINTS):
            part = {f: v[start : start + CHUNK_POINTS] for f, v in pts.items()}
            times = np.asarray(estimate_arrays(space.problem, space.preset, part)["time_us"])
            bad = times < bounds[start : start + CHUNK_POINTS]
            if bad.any():
                violations += int(bad.sum())
                use_bound = False
            top.add(part, times)
            scored += times.shape[0]
    best = float(top.times[0]) if top.times.shape[0] else float("inf")
    left = lb[~done]
    floor = float(left.min()) if left.shape[0] else best
    exact = violations == 0 and (not truncated or floor >= top.threshold() * (1.0 - TIE_RTOL))
    gap = 0.0 if exact else max(0.0, (best - min(floor, best)) / best)
    pruned = dict(space.pruned)
    pruned["cube_bound_groups"] = int(cheap_pruned)
    pruned["l1_floor_points"] = int(floor_pruned)
    pruned["l1_choices_bounded"] = int(floored)
    return ScreenResult(
        top=top.candidates(),
        exact=exact,
        scored_points=scored,
        groups=n,
        groups_scored=groups_scored,
        groups_bounded=int(n - groups_scored - (~done).sum()),
        bound_violations=violations,
        seconds=time.perf_counter() - t0,
        pruned=pruned,
        gap_bound=gap if violations == 0 else None,
    )
