"""The bound of a dealt group: a core of R tiles back to back (the ``dealt_rounds`` term).

A dealt split (more ``singleCoreM x singleCoreN`` tiles than ``usedCoreNum``, legality rule
``DEALT_SPLIT``; :func:`tiler.space.dealt_in_space` says where the space holds them) is priced
by the estimator on its largest tile, under the split's own traffic (``usedCoreNum`` active
cores, the dealt same-address sharers), and then by :func:`simcore.estimate.dealt.dealt_rounds`:
the slowest core's R = ceil(tiles / usedCoreNum) tiles cost

    ``makespan = mk + (R - 1) x max(busiest tile pipe, mk - overlap)``, each tile pipe's busy
    total R x a tile's, the scalar pipe's the work of R tiles with the start-up once,

then ``min(max(start-up + makespan, busiest), sum of work) + launch`` as every estimate. So with
floors of one tile under that traffic -- ``MK <= mk`` (the group's fixed paths,
:func:`tiler.bounds.chains.fixed_paths`), ``P`` at most each of its tile pipes (the cube and
MTE1 totals, which the base block fixes; the drains; each operand's copies in the reuse case
the group allows, the bias fetches) and ``SM <= mk - overlap`` (the term's overlap is the last
drain and at most the compute path's start-up, so the seam is at least the compute path's
span of K steps less its first step's loads: the least span over the L0 classes,
:func:`tiler.bounds.chains.least_span`, less a full step) -- the estimate is at least
``after_startup(rounds_makespan(MK, max P, SM, R),
max(R x max P, S), R x sum P + S)`` with ``S`` the scalar pipe's least work of R tiles
(:func:`simcore.pipeline.scalar.least_scalar_cycles` of their K steps, the start-up once): the
term's own rule (:func:`simcore.estimate.dealt.rounds_makespan`, non-decreasing in each floor)
and the combination's (:func:`simcore.pipeline.scalar.after_startup`), the busiest pipe and
the sum of work each at least the HBM floor of the unique bytes (A, B and C once: the
estimator's HBM bytes are those and the reloads that miss, :func:`simcore.pipeline.traffic.
chip_bandwidth_cap`).

Where a split has tail tiles and a core program the estimator keeps runs one, the bound is the
most over those programs of the same combination on per-shape floors (:func:`_program_bounds`,
the term's :func:`simcore.estimate.dealt.program_makespan`): a full tile at the floors above, a
tail tile at its MMADs and, where the figure so far is below the caller's threshold, at the
floors above on its own rows or columns too (docs/search.md, "Dealt groups").

The copy rate is the largest share any tiling of the split gets, ``min(L2 x its most ND->NZ
share / usedCoreNum, the core's port)`` with every reload hitting (as
:func:`simcore.estimate.estimator.operand_floor_arrays` takes it): every copy and drain is
non-increasing in it. The group's order-free terms (:func:`tiler.bounds.group.group_terms`)
take the same share and the dealt same-address factors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.estimate.dealt import program_makespan, rounds_makespan, tile_period
from simcore.hardware.dtypes import bits
from simcore.pipeline.arith import ceil_div
from simcore.pipeline.busy import block_steps, cube_busy
from simcore.pipeline.costs import Costs
from simcore.pipeline.dealing import tail_programs
from simcore.pipeline.scalar import after_startup, least_scalar_cycles, startup_cycles
from simcore.pipeline.traffic import (
    call_refetch,
    hbm_floor_cycles,
    l2_share_most,
    tiles_per_core,
)
from simcore.pipeline.transfer import operand_contention
from tiler.bounds import cases, chains, copies, slots, traffic

__all__ = ["dealt_cap", "dealt_cube_cycles", "dealt_cycles", "dealt_rows"]


def dealt_rows(space: Any, g: dict[str, Any]) -> Any:
    """Which of the groups ``g`` are dealt (more tiles than usedCoreNum): a bool array."""
    p = space.problem
    tiles = -(-p.m // g["singleCoreM"]) * -(-p.n // g["singleCoreN"])
    return tiles > g["usedCoreNum"]


def _rounds(space: Any, g: dict[str, Any]) -> Any:
    p = space.problem
    return tiles_per_core(p.m, p.n, g["singleCoreM"], g["singleCoreN"], g["usedCoreNum"])


def dealt_cap(space: Any, g: dict[str, Any]) -> Any:
    """The largest bytes per cycle a core's copies move in a dealt split (the module's share)."""
    p = space.preset
    chip = p.l2_bytes_per_cycle * l2_share_most(space.problem, p)
    return np.minimum(chip / np.maximum(g["usedCoreNum"], 1), p.l2_core_port)


def dealt_cube_cycles(space: Any, g: dict[str, Any], cube: Any, tails: Any = None) -> Any:
    """The cube tier of dealt groups (cycles): each core's tiles' MMADs, ``cube`` one full tile's.

    A core's makespan is at least its tiles' MMADs (``rounds_makespan(cube, cube, 0, R)``: a
    tile's compute chain holds its MMADs, each further tile at least its busiest pipe), its M
    pipe's busy total the same and the sum of work that and the scalar pipe's start-up. Where
    the split has tail tiles, each core program's tiles by shape (:func:`_tails`, or
    ``tails`` where the caller has them), the slowest core at least any.
    """
    startup = startup_cycles(space.preset, space.problem) if chains.USE_CHAIN_BOUND else 0.0

    def core(mk: Any, work: Any) -> Any:
        mk = mk if chains.USE_CHAIN_BOUND else 0.0
        return after_startup(mk, work, work + startup, startup)

    rounds = _rounds(space, g)
    out = core(rounds_makespan(cube, cube, 0.0, rounds), rounds * cube)
    idx, _, programs, cubes, _ = _tails(space, g) if tails is None else tails
    if idx.size:
        work = _per_core(programs[0], _by_shape(cubes, idx.size))
        out = np.array(np.broadcast_to(out, np.shape(rounds)), dtype=np.float64)
        out[idx] = np.max(core(work, work), axis=1)
    return out


def dealt_cycles(
    space: Any, g: dict[str, Any], terms: Any, terms_of: Any = None, below: Any = None
) -> Any:
    """The bound (cycles) of the dealt groups ``g`` (the module's formula).

    ``terms``: their :class:`tiler.bounds.group.GroupTerms` on the one data path (dealt splits
    are only where no operand is staged through UB), priced at :func:`dealt_cap`. Where a
    split has tail tiles, each core program is priced by its tiles' shapes: the tail tiles at
    their MMADs; with ``terms_of(groups)`` (the terms of other groups) at their own floors
    too, where ``below(cycles)`` (None: everywhere) says the figure so far is below what the
    caller rules out (the others are ruled out either way).
    """
    problem, p = space.problem, space.preset
    c = Costs(problem, p)
    tile = _tile_floors(space, c, g, terms)
    pipes = tile["pipes"]
    busiest = np.maximum.reduce(pipes)
    rounds = _rounds(space, g)
    scalar = least_scalar_cycles(p, problem, rounds * tile["steps"])
    mk = rounds_makespan(tile["mk"], busiest, tile["seam"], rounds)
    # The HBM floor: at least the unique bytes (A, B and C once) cross HBM.
    # (The unique bytes as the search's traffic counts them: tiler.bounds.traffic.)
    hbm = hbm_floor_cycles(traffic.order_traffic(problem, p, g, 0).unique, p)
    busy = np.maximum(np.maximum(rounds * busiest, scalar), hbm)
    total = np.maximum(rounds * sum(pipes) + scalar, hbm)
    bound = np.array(
        np.broadcast_to(after_startup(mk, busy, total, tile["startup"]), rounds.shape),
        dtype=np.float64,
    )
    tails = _tails(space, g)
    idx, fields, programs, cubes, shaped = tails
    hbm_t = np.broadcast_to(hbm, rounds.shape)[idx][:, None]
    if idx.size:
        # The full tiles at the floors above, the tail tiles at their MMADs (a tile's makespan
        # and each further tile's period hold its MMADs, its M pipe's busy total them; the
        # other pipes' >= 0): a floor of each figure the estimator sums.
        def full(x: Any) -> Any:
            return np.broadcast_to(x, rounds.shape)[idx]

        tail_cubes, none = cubes[idx.size :], np.zeros(3 * idx.size)
        floors = {
            "mk": np.concatenate([full(tile["mk"]), tail_cubes]),
            "seam": np.concatenate([full(tile["seam"]), none]),
            "pipes": [
                np.concatenate([full(x), tail_cubes if i == 0 else none])
                for i, x in enumerate(pipes)
            ],
            "steps": shaped["m_iter"] * shaped["n_iter"] * np.tile(full(g["k_iter"]), 4),
            "startup": tile["startup"],
        }
        bound[idx] = np.max(_program_bounds(space, floors, programs, hbm_t), axis=1)
    # (Never below the cube tier, which the screening takes first.)
    cube = cube_busy(
        c, problem.k, g["core_rows"], g["core_cols"], g["baseM"], g["baseN"], g["baseK"]
    )
    bound = np.maximum(bound, dealt_cube_cycles(space, g, cube, tails))
    if idx.size and terms_of is not None:
        # The tiles of the tails along M and along N at their own floors too, where a program
        # runs them (the corner tile, one of the split, stays at its MMADs): both shapes'
        # groups priced in one pass, each figure the larger of its two floors.
        sel = np.arange(idx.size) if below is None else np.flatnonzero(below(bound[idx]))
        runs = programs[0][sel].sum(axis=1) > 0
        at = [sel[runs[:, s]] + s * idx.size for s in (1, 2)]
        rows = np.concatenate(at)
        if rows.size:
            sub = fields(rows)
            tight = _tile_floors(space, c, sub, terms_of(sub))
            for key in ("mk", "seam"):
                floors[key][rows] = np.maximum(floors[key][rows], tight[key])
            for mine, theirs in zip(floors["pipes"], tight["pipes"], strict=True):
                mine[rows] = np.maximum(mine[rows], theirs)
            mine_idx = (sel[None, :] + idx.size * np.arange(4)[:, None]).reshape(-1)
            part = {key: floors[key][mine_idx] for key in ("mk", "seam", "steps")}
            part["pipes"] = [x[mine_idx] for x in floors["pipes"]]
            part["startup"] = floors["startup"]
            progs = (programs[0][sel], programs[1][sel])
            tight_bound = np.max(_program_bounds(space, part, progs, hbm_t[sel]), axis=1)
            bound[idx[sel]] = np.maximum(bound[idx[sel]], tight_bound)
    return bound


def _tile_floors(space: Any, c: Costs, g: dict[str, Any], terms: Any) -> dict[str, Any]:
    """Floors of one tile of the groups' ``core_rows x core_cols`` at the dealt share.

    ``mk`` its makespan (the fixed paths), ``seam`` its makespan less its overlap with the next
    tile, ``pipes`` each tile pipe's busy cycles (cube, MTE1, drain, copies), ``steps`` its K
    steps and ``startup`` the scalar start-up its paths follow.
    """
    rows, cols = g["core_rows"], g["core_cols"]
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    cap = dealt_cap(space, g)
    fx = chains.fixed_paths(space, c, g, terms, cap)
    mte2 = fx.bias_mte2 + _least_copies(space, c, g, terms, cap)
    pipes = [np.broadcast_to(x, rows.shape) for x in (terms.cube, terms.mte1, fx.drain, mte2)]
    # The term's seam (a tile's makespan less its overlap with the next) is at least the
    # compute path without its start-up and last drain, ``span + stalls - (per - mm)``: at
    # least the least span over the L0 classes less one full step's loads and MMAD.
    types = block_steps(c, space.problem.k, rows, cols, bm, bn, bk)
    seam = chains.least_span(types, g["k_iter"]) - terms.step1
    steps = g["m_iter"] * g["n_iter"] * g["k_iter"]
    return {"mk": fx.makespan, "seam": seam, "pipes": pipes, "steps": steps, "startup": fx.startup}


def _program_bounds(space: Any, floors: dict[str, Any], programs: Any, hbm: Any) -> Any:
    """The bound (cycles) of each core program (groups x programs) from its tiles' floors.

    ``floors`` the floors of one tile of each shape (:func:`_tile_floors` of :func:`_tails`'
    groups), ``programs`` the tiles of each shape per program and the last's shape. The
    estimator's term (:func:`simcore.estimate.dealt.dealt_programs_term`) on floors:
    ``program_makespan`` of the last tile's makespan and the other tiles' periods (each at
    least its busiest pipe and its seam), each pipe's busy total the sum over the tiles, the
    scalar pipe's the least work of their K steps, then ``after_startup`` with the HBM floor;
    each step non-decreasing.
    """
    problem, p = space.problem, space.preset
    counts, last = programs
    size = last.shape[0]
    busiest = _by_shape(np.maximum.reduce(floors["pipes"]), size)
    seam = _by_shape(floors["seam"], size)
    periods = [tile_period(busiest[s], seam[s])[:, None] for s in range(4)]
    tail = np.choose(last, [x[:, None] for x in _by_shape(floors["mk"], size)])
    others = [counts[..., s] - (last == s) for s in range(4)]
    mk = program_makespan(tail, others, periods)
    pipes = [_per_core(counts, _by_shape(x, size)) for x in floors["pipes"]]
    steps = _per_core(counts, _by_shape(floors["steps"], size))
    scalar = least_scalar_cycles(p, problem, steps)
    busy = np.maximum(np.maximum(np.maximum.reduce(pipes), scalar), hbm)
    total = np.maximum(sum(pipes) + scalar, hbm)
    return after_startup(mk, busy, total, floors["startup"])


def _tails(space: Any, g: dict[str, Any]) -> tuple[np.ndarray, Any, Any, Any, Any]:
    """The dealt groups whose slowest core may run tail tiles: tile shapes, programs, MMADs.

    The shapes' groups (:data:`simcore.pipeline.dealing.TILE_SHAPES`: full, the tail along M,
    along N, both) one after the other: each the groups' fields with its tile's rows and
    columns (and blocks along them), given for some rows of them by ``fields(rows)`` and the
    fields a shape changes (``shaped``). The groups and programs: :func:`simcore.pipeline.
    dealing.tail_programs` (as the estimator takes them). The MMADs: each shape's tile's cube
    busy cycles. Returns (indices, fields, programs, MMADs, shaped).
    """
    problem = space.problem
    split = (g["singleCoreM"], g["singleCoreN"], g["usedCoreNum"])
    rounds = _rounds(space, g)
    idx, programs, _ = tail_programs(problem.m, problem.n, split, rounds, problem.l2_rounds)
    if not idx.size:
        return idx, None, None, None, None
    full = {name: arr[idx] for name, arr in g.items()}
    rows = problem.m - (ceil_div(problem.m, full["singleCoreM"]) - 1) * full["singleCoreM"]
    cols = problem.n - (ceil_div(problem.n, full["singleCoreN"]) - 1) * full["singleCoreN"]
    # The fields a shape changes, for the four shapes one after the other (the others are the
    # group's: taken only for the groups priced at their own floors, see ``fields``).
    along_m, along_n = [False, True, False, True], [False, False, True, True]
    shaped = {
        "core_rows": np.concatenate([rows if s else full["core_rows"] for s in along_m]),
        "core_cols": np.concatenate([cols if s else full["core_cols"] for s in along_n]),
    }
    shaped["m_iter"] = ceil_div(shaped["core_rows"], np.tile(full["baseM"], 4))
    shaped["n_iter"] = ceil_div(shaped["core_cols"], np.tile(full["baseN"], 4))

    def fields(at: np.ndarray) -> dict[str, Any]:
        """The groups' fields at rows ``at`` of the four shapes one after the other."""
        out = {name: arr[at % idx.size] for name, arr in full.items()}
        if "m_iter" in full:
            out.update({name: arr[at] for name, arr in shaped.items()})
        else:
            out.update(core_rows=shaped["core_rows"][at], core_cols=shaped["core_cols"][at])
        return out

    base = [np.tile(full[name], 4) for name in ("baseM", "baseN", "baseK")]
    c = Costs(problem, space.preset)
    cubes = cube_busy(c, problem.k, shaped["core_rows"], shaped["core_cols"], *base)
    return idx, fields, programs, cubes, shaped


def _by_shape(x: Any, size: int) -> Any:
    """A figure of :func:`_tails`' stacked groups as (shapes, groups)."""
    return np.broadcast_to(x, (4 * size,)).reshape(4, size)


def _per_core(counts: Any, values: Any) -> Any:
    """Per core program, the sum over its tiles of a per-tile figure (one per shape)."""
    out = counts[..., 0] * np.asarray(values[0])[:, None]
    for s in range(1, len(values)):
        out = out + counts[..., s] * np.asarray(values[s])[:, None]
    return out


def _least_copies(space: Any, c: Costs, g: dict[str, Any], terms: Any, cap: Any) -> Any:
    """A tile's least MTE2 cycles of A's and B's copies over the iterate orders and reuse cases.

    In each reuse case (:mod:`tiler.bounds.cases`: an operand loaded once where L1 can hold
    what it keeps resident, else once per block of the other) an operand's copies move its
    passes' rows x K at no more than ``cap``, or at least their ND row requests, each pass at
    least one copy's latency (:func:`tiler.bounds.copies.copy_terms`); under the refetch term
    (no bias, as there) the core's R tiles' reads take at least
    :func:`tiler.bounds.traffic.refetched_reads_cycles` (with ``r >= R_chip / usedCoreNum``:
    the slowest core reads R of the largest tiles, the chip at most R x usedCoreNum of them),
    a tile at least its R-th.
    """
    problem, p = space.problem, space.preset
    k = problem.k
    rows, cols = g["core_rows"], g["core_cols"]
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    m_iter, n_iter, k_iter = g["m_iter"], g["n_iter"], g["k_iter"]
    in_b = bits(problem.dtype) / 8.0
    fa, fb = operand_contention(c, rows, cols, g["usedCoreNum"])
    shares = slots.L1Shares(
        room=p.l1_bytes - g["bias_l1"], a_blk=bm * bk * in_b, b_blk=bn * bk * in_b,
        ub_cap_a=np.inf, ub_cap_b=np.inf, a_total=m_iter * k_iter, b_total=n_iter * k_iter,
    )  # fmt: skip
    a_panel, b_panel = shares.a_blk * k_iter, shares.b_blk * k_iter

    def copy(is_a: bool, passes: Any) -> Any:
        extent, base, factor = (rows, bm, fa) if is_a else (cols, bn, fb)
        per_pass = terms.a_pass if is_a else terms.b_pass
        t = copies.copy_terms(
            c, is_a, passes, extent, k, cap, per_pass, (base, bk), contention=factor
        )
        return passes * t[0] + t[1]

    # The refetch term (model 2026.11.28.2): the core's R tiles' reads at the cap of
    # tiler.bounds.traffic.refetched_reads_cycles, over usedCoreNum active cores, at a mix of 1
    # (its largest); the core's reads are at least the chip's over them (R tiles of the largest).
    first_touch = call_refetch(problem, p).first_touch_bytes
    rounds = _rounds(space, g)
    used = g["usedCoreNum"]
    rate_no_miss = np.minimum(
        p.l2_bytes_per_cycle * l2_share_most(problem, p) / np.maximum(used, 1), p.l2_core_port
    )
    orders = [space.fixed["iterateOrder"]] if "iterateOrder" in space.fixed else [0, 1]
    best: Any = np.inf
    for order in orders:
        need = (
            m_iter * a_panel if order == 0 else a_panel,
            n_iter * b_panel if order == 1 else b_panel,
        )
        for a_once in (True, False):
            for b_once in (True, False):
                infeasible = cases.case_range(c, p, (a_once, b_once), need, shares)[2]
                a_passes, b_passes = (1 if a_once else n_iter), (1 if b_once else m_iter)
                tile = copy(True, a_passes) + copy(False, b_passes)
                if first_touch and not problem.bias:
                    reads = a_passes * c.l1_tile_bytes(rows, k) + b_passes * c.l1_tile_bytes(
                        cols, k
                    )
                    core = traffic.refetched_reads_cycles(
                        rounds * reads, first_touch, used, rate_no_miss, 1.0, p
                    )
                    tile = np.maximum(tile, core / rounds)
                best = np.minimum(best, tile + infeasible)
    return best
