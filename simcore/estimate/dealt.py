"""The ``dealt_rounds`` term: a core of a dealt split runs its tiles back to back.

A dealt split (legality rule ``DEALT_SPLIT``, aclnn MatMulV3's base blocks) has more
``singleCoreM x singleCoreN`` tiles than cores; core i takes tiles i, i + usedCoreNum, ... and
the slowest core ``R = ceil(tiles / usedCoreNum)`` of them
(:func:`simcore.pipeline.traffic.core_programs`). Each tile is one Matmul (``IterateAll``);
the kernel's loop sets the next tile's A and B right after, so the next tile's first copies
start as soon as their L1 slots free (the MMAD start of the previous tile's last chunks' last
step) and its first MMADs may run while the previous tile's last drain does: the simulator
plays the tiles' instruction streams one after the other on the same queues.

The term prices the core as the largest tile's makespan ``mk`` (every other term, priced on
one tile) and ``R - 1`` more tiles at the steady state, each at least the tile's busiest pipe
and at least its seam, when the next tile starts after this one starts
(:func:`next_tile_seam`, model 2026.11.30.1): the latest of the end of the tile's last copy on
MTE2 (the next tile's first copies follow it in MTE2 order), its last MMAD's end less the
start-up (the next tile's first MMAD follows it) and, per operand, the release of the L1 slot
the next tile's first chunk takes less what precedes that copy (:func:`slot_release_back`):

    ``mk + (R - 1) x max(busiest pipe, mk - overlap, copy_end)``

Before, the seam was ``mk - dr_last`` (``- start`` too with two or more slots each): with one
slot the next tile's start-up was taken to wait for the whole tile, and with two the copy
chain was not seen, so the periods of MTE2-bound tiles came out up to 40 % long
(``benchmarks.agreement_dealt``, seed 2026: p95 4.3 / 4.4 / 6.9 %, max 33.4 %, on 910B2 / 910B3
/ 910B4). Model 2026.11.30.1 also prices the K-tail step after a block's last copy, in the first
block and in the drain path as the K-tail step it is (:func:`simcore.estimate.paths.
steps_after_last_copy`, :func:`simcore.estimate.paths.first_block_steps`), which a tile of one
or two blocks shows: p95 1.7 / 2.2 / 2.1 % on seed 2026 (docs/benchmarks.md for seeds 7 and 11).

Each pipe's busy time is R tiles' (the scalar pipe's start-up once). Where the split has tail
tiles (M or N not a multiple of the tile) each tile is priced by its own shape and each core by
its program (model 2026.11.29.1, :func:`dealt_programs_term`): since model 2026.11.30.1 the last
tile's makespan and each other tile's period (:func:`program_makespan`; a tail tile after a full
one starts inside the full tile's last steps), the pipes' sums over its tiles; only the programs
no other covers tile for
tile with tiles at least as large (:func:`simcore.pipeline.dealing.tail_programs`), so where a
core runs R full tiles the formula above stands (18.5 / 27.8 / 22.1 % p95 on seed 2026 with
every tile priced as the largest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.binding import TERM
from simcore.estimate.paths import periods_into_k_tail
from simcore.pipeline.arith import ceil_div
from simcore.pipeline.busy import cube_busy
from simcore.pipeline.costs import Costs
from simcore.pipeline.dealing import tail_programs
from simcore.pipeline.scalar import after_startup

if TYPE_CHECKING:
    from simcore.estimate.compute import ComputePath
    from simcore.estimate.paths import QueuePaths
    from simcore.estimate.records import CoreRecords

#: The pipes whose work repeats per tile (the scalar pipe's start-up does not).
TILE_PIPES: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")


def tile_period(busiest: Any, seam: Any) -> Any:
    """A further tile's period: ``max(busiest pipe, seam)`` (the module's formula)."""
    return np.maximum(busiest, seam)


class Seam(NamedTuple):
    """What of a tile overlaps the next in a core's program (:func:`next_tile_seam`).

    ``overlap``: the tile's makespan less the seam's makespan-bound chains; ``copy_end``: the
    end of the tile's last copy on MTE2 (cycles from the tile's first copy).
    """

    overlap: Any
    copy_end: Any


def next_tile_seam(r: CoreRecords, cm: ComputePath, qp: QueuePaths, gap_path: Any) -> Seam:
    """The ``next_tile_seam`` term's inputs: how soon a core's next tile starts (MTE2, M, FIX).

    The next tile of a dealt program issues its first copies (its bias slice, A's first chunk,
    then B's, in MTE2 order) once MTE2 is done with this tile's copies and their L1 slots are
    free, and its first MMAD follows them as the tile's own did (``start``) and the tile's last
    MMAD. So the next tile starts (the seam, :func:`tile_seam`) at the latest of: the end of
    the tile's last copy (``copy_end``, the MTE2 path less what follows it); the last MMAD's
    end less the start-up (``mk - dr_last - start``); and per operand the release of the slot
    its first chunk takes (:func:`slot_release_back`), less the bias slice (and for B less
    A's first copy ``ga1``, which it follows on MTE2). Seen on 910B4 int8 1096 x 422 x 4096
    (80 x 32 tiles, R = 10, two A slots, one B): the simulator's period is 5,436 cycles, MTE2's
    copies and the 194-cycle wait of B's second chunk; the last drain alone (the term before)
    left 7,683 (+33 %). On 910B4 int8 1358 x 1308 x 512 (two A slots of one step each) the next
    tile's first A copy waits for the second-to-last MMAD's start: period 3,946 cycles against
    the M chain's 1,846. The numbers are the estimator's own legs (:class:`CoreRecords`).
    """
    bt, typ, ch, cp = r.bt, r.typ, r.ch, r.cp
    bias = cp.bias_cyc if r.problem.bias else 0.0
    # After the last MMAD's start: its MMAD and the last drain.
    last = bt.dr_last + typ.mm_kt + bias
    steps = (r.g.k_iter, r.avg.per, r.avg.per_kt)
    chunks_a, chunks_b = (ch.kc_a, ch.loads_a, r.g.blocks), (ch.kc_b, ch.loads_b, r.g.blocks)
    back_a = slot_release_back(ch.slots_a, chunks_a, ch.step_ka, ch.r_last_a, steps)
    back_b = slot_release_back(ch.slots_b, chunks_b, ch.step_kb, ch.r_last_b, steps)
    back_b = np.where(ch.has_b, back_b + cp.ga1, np.inf)
    overlap = np.minimum(bt.dr_last + cm.start, last + np.minimum(back_a, back_b))
    # A one-slot operand's last copy waits for its previous chunk's release, and the tile's
    # path runs through it: MTE2 is done with the tile what follows that copy before its end.
    chained = (ch.single_a & (ch.loads_a >= 2)) | (ch.single_b & (ch.loads_b >= 2) & ch.has_b)
    overlap = np.where(chained, np.minimum(overlap, qp.tail_plain), overlap)
    copy_end = np.maximum(qp.copy_path, gap_path) - qp.tail_plain
    if r.floor:
        # A floor over the L0 flags leaves the seam out (the start-up is not monotone in
        # them): each further tile at least its busiest pipe.
        return Seam(overlap + np.inf, 0.0 * copy_end)
    return Seam(overlap, copy_end)


def slot_release_back(
    slots: Any, chunks: tuple[Any, Any, Any], step_k: Any, r_last: Any, steps: tuple[Any, Any, Any]
) -> Any:
    """How long before a tile's last MMAD starts the slot of the next tile's first chunk frees.

    The next tile's first chunk of an operand of ``S`` L1 slots takes the slot of the chunk
    ``S - 1`` before the tile's last, freed when the MMAD of that chunk's last step starts
    (:func:`simcore.pipeline.precedence.l1_slot_release`): with one slot the last MMAD's
    start (0), else ``r_last + (S - 2) x stepK`` steps before it within the last pass
    (``r_last`` the last chunk's steps), the last of them a step with the K tail's loads
    (``steps``: K steps, a full step's period and that one's). Where a pass has fewer chunks
    (``chunks``: per pass, on the tile, and the tile's blocks) and the operand is copied again
    for every block, that chunk is ``S - 1`` chunks of ``K steps / chunks`` back over the
    blocks before; otherwise (fewer copies than slots, or a pass kept over several blocks) it
    is long free: +inf (no wait). Pipes: M (the MMAD starts), MTE1 (the loads between).
    """
    per_pass, loads, blocks = chunks
    k_iter, per, per_kt = steps
    within = r_last + (slots - 2) * step_k
    across = r_last + (slots - 2) * k_iter / np.maximum(per_pass, 1)
    reload = (loads >= slots) & (loads >= per_pass * blocks)
    back_steps = np.where(per_pass >= slots, within, np.where(reload, across, np.inf))
    return np.where(slots < 2, 0.0, periods_into_k_tail(back_steps, per, per_kt))


def tile_seam(makespan: Any, overlap: Any, copy_end: Any) -> Any:
    """A further tile's seam: ``max(makespan - overlap, copy_end)`` (:func:`next_tile_seam`).

    Non-decreasing in the makespan and the copy end, so floors of those (overlap +inf, copy
    end 0: the seam of a floor) keep the period a floor.
    """
    return np.maximum(makespan - overlap, copy_end)


def program_makespan(last: Any, others: Sequence[Any], periods: Sequence[Any]) -> Any:
    """The makespan of a core's tiles: each tile's period but the last's, + the last's makespan.

    The term's rule, written once: ``last + sum over shapes of others[s] x periods[s]``
    (``others[s]`` the tiles of shape s before the last, ``periods[s]`` :func:`tile_period` of
    one): each tile starts its seam after the one before (the next tile's start, from its
    own) and the last runs to its end. With one shape it is the first tile's makespan and
    R - 1 periods; with tail tiles the last tile's makespan counts, not the first's (model
    2026.11.30.1: a small tail tile after a full one starts inside the full tile's last steps;
    910B4 int8 560 x 1008 x 256, a 240 x 160 tile then an 80 x 48 one: +217 cycles in the
    simulator, the tail tile's whole period before). Non-decreasing in every argument (counts
    >= 0), so floors of the makespan and of the periods give a floor of the core's makespan
    (the search's bounds, :mod:`tiler.bounds.dealt`). Scalars or arrays.
    """
    out = last
    for count, period in zip(others, periods, strict=True):
        out = out + count * period
    return out


def rounds_makespan(makespan: Any, busiest: Any, seam: Any, rounds: Any) -> Any:
    """The makespan of R tiles of one shape: ``makespan + (R - 1) x max(busiest, seam)``.

    :func:`program_makespan` with one shape: :func:`dealt_rounds` calls it with a tile's
    makespan, its busiest pipe and ``seam`` the makespan less what overlaps the next tile; the
    search's bounds (:mod:`tiler.bounds.dealt`) with floors of each (``seam`` 0 where they have
    none: the period is at least the busiest pipe). Non-decreasing in every argument (R >= 1).
    """
    return program_makespan(makespan, (rounds - 1,), (tile_period(busiest, seam),))


def dealt_rounds(
    makespan: np.ndarray,
    code: np.ndarray | None,
    busy: dict[str, Any],
    seam: Seam,
    scalar: Any,
    rounds: Any,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The makespan and busy totals of the slowest core of R tiles (the module's formula).

    Args:
        makespan: One tile's makespan per candidate (updated in place where R > 1).
        code: The binding codes (set to ``dealt_rounds`` where R > 1), or None.
        busy: One tile's busy cycles per pipe.
        seam: Per candidate, what of the tile overlaps the next (:func:`next_tile_seam`).
        scalar: Per candidate, the scalar pipe's busy cycles of R tiles.
        rounds: Per candidate, R.

    Returns:
        (makespan, busy) of the core of R tiles.
    """
    rounds = np.broadcast_to(rounds, makespan.shape)
    idx = np.flatnonzero(rounds > 1)
    if not idx.size:
        return makespan, busy
    r = rounds[idx]
    one = {p: np.broadcast_to(busy[p], makespan.shape)[idx] for p in busy}
    busiest = one[TILE_PIPES[0]]
    for p in TILE_PIPES[1:]:
        busiest = np.maximum(busiest, one[p])
    # The rest of the tile's path repeats at each further tile.
    overlap, copy_end = (np.broadcast_to(x, makespan.shape)[idx] for x in seam)
    makespan = np.array(makespan, dtype=np.float64)
    at = makespan[idx]
    makespan[idx] = rounds_makespan(at, busiest, tile_seam(at, overlap, copy_end), r)
    if code is not None:
        code[idx] = TERM["dealt_rounds"]
    out = {p: np.array(np.broadcast_to(busy[p], makespan.shape), dtype=np.float64) for p in busy}
    for p in TILE_PIPES:
        out[p][idx] = r * one[p]
    out["SCALAR"][idx] = np.broadcast_to(scalar, makespan.shape)[idx]
    return makespan, out


#: The columns of :func:`dealt_programs_term`'s table of one tile per shape: the tile pipes'
#: busy cycles, then its K steps and DMA copies (the scalar pipe's work), its makespan and its
#: :class:`Seam` with the next tile.
TILE_COLUMNS: tuple[str, ...] = (*TILE_PIPES, "steps", "copies", "mk", "overlap", "copy_end")


def dealt_programs_term(
    table: np.ndarray,
    programs: tuple[np.ndarray, np.ndarray],
    scalar: Callable[[Any, Any], Any],
    hbm_floor: Any,
    startup: float,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The makespan and busy totals of the slowest core of a dealt split with tail tiles.

    Each core program (:func:`simcore.pipeline.dealing.program_arrays`: per candidate, the
    tiles of each shape a program runs and the shape of its last) is priced by its tiles'
    own shapes: :func:`program_makespan` of the last tile's makespan and the other tiles'
    :func:`tile_period`, each tile pipe's busy total the sum over its tiles, the scalar pipe's
    the work of its tiles with the start-up once. The slowest core is the program of the
    longest time once combined as every estimate is
    (:func:`simcore.pipeline.scalar.after_startup`, with the HBM floor).

    Args:
        table: Per candidate and tile shape (:data:`simcore.pipeline.dealing.TILE_SHAPES`),
            one tile's :data:`TILE_COLUMNS` (0 where the shape is absent).
        programs: ``counts`` (candidates x programs x shapes) and ``last``.
        scalar: The scalar pipe's busy cycles of (K steps, copies).
        hbm_floor: Per candidate, the HBM floor (cycles).
        startup: The scalar start-up (cycles).

    Returns:
        (makespan, busy) of the slowest program per candidate.
    """
    counts, last = programs
    pipes = len(TILE_PIPES)
    mk, overlap, copy_end = table[..., pipes + 2], table[..., pipes + 3], table[..., pipes + 4]
    # (Pairwise maxima and sums over the pipes: a reduction along a short last axis costs
    # several times more.)
    busiest = table[..., 0]
    for i in range(1, pipes):
        busiest = np.maximum(busiest, table[..., i])
    periods = tile_period(busiest, tile_seam(mk, overlap, copy_end))
    tail = np.take_along_axis(mk, last, axis=1)
    others = [counts[..., s] - (last == s) for s in range(table.shape[1])]
    makespan = program_makespan(tail, others, [periods[:, s, None] for s in range(len(others))])
    # Every pipe's and the scalar pipe's work of each program: its tiles' sums, one matmul.
    totals = np.matmul(counts, table[..., : pipes + 2])
    busy = {p: totals[..., i] for i, p in enumerate(TILE_PIPES)}
    busy["SCALAR"] = scalar(totals[..., pipes], totals[..., pipes + 1])
    hbm = np.asarray(hbm_floor)[:, None]
    peak, work = busy["SCALAR"], busy["SCALAR"]
    for p in TILE_PIPES:
        peak, work = np.maximum(peak, busy[p]), work + busy[p]
    span = after_startup(makespan, np.maximum(peak, hbm), np.maximum(work, hbm), startup)
    pick = np.argmax(span, axis=1)[:, None]
    out = {p: np.take_along_axis(busy[p], pick, axis=1)[:, 0] for p in busy}
    return np.take_along_axis(makespan, pick, axis=1)[:, 0], out


#: The candidates a dealt split's tail tiles are priced at: their indices, per tail shape
#: (shape, indices, rows, columns), and their core programs (:func:`tail_extents`).
Tails = tuple[np.ndarray, list[tuple[int, np.ndarray, Any, Any]], tuple[np.ndarray, np.ndarray]]


def tail_extents(
    m: int, n: int, f: dict[str, Any], rounds: Any, extents: tuple[Any, Any], l2_rounds: int
) -> Tails | None:
    """The dealt candidates whose slowest core may run tail tiles, and those tiles' extents.

    Candidates of R > 1 with a tail along M or N whose core programs
    (:func:`simcore.pipeline.dealing.program_arrays`, the covered ones left out) run a tail
    tile; per tail shape (1, 2, 3 of :data:`simcore.pipeline.dealing.TILE_SHAPES`) the ones
    whose programs run it with its rows and columns (``extents``: the full tile's and the
    tail's, rows and columns). None where there is none: every other candidate's slowest core
    runs R full tiles (:func:`dealt_rounds`).
    """
    split = tuple(f[name] for name in ("singleCoreM", "singleCoreN", "usedCoreNum"))
    idx, programs, runs = tail_programs(m, n, split, rounds, l2_rounds)
    if not idx.size:
        return None
    (rows_c, cols_c), (rows_t, cols_t) = extents
    shapes = []
    for s in (1, 2, 3):
        at = idx[runs[:, s]]
        if at.size:
            rows = rows_t if s & 1 else rows_c
            cols = cols_t if s & 2 else cols_c
            shapes.append((s, at, np.take(rows, at), np.take(cols, at)))
    return idx, shapes, programs


def price_tails(
    tails: Tails | None,
    at: np.ndarray | None,
    price: Callable[[np.ndarray, Any, Any], dict[str, Any]],
) -> list[tuple[int, np.ndarray, dict[str, Any], slice]]:
    """Prices the tail shapes of :func:`tail_extents` among the candidates ``at`` (None: all).

    ``price(indices, rows, cols)`` prices one tile (the estimator's core) at those candidates,
    called once for the shapes one after the other (one call's fixed cost, not three).
    Returns (shape, indices, the result, the shape's slice of it) per shape present.
    """
    if tails is None:
        return []
    shapes, size = [], 0
    for s, idx, rows, cols in tails[1]:
        keep = np.arange(idx.size) if at is None else np.flatnonzero(np.isin(idx, at))
        if keep.size:
            shapes.append((s, idx[keep], rows[keep], cols[keep], slice(size, size + keep.size)))
            size += keep.size
    if not shapes:
        return []
    where, rows, cols = (np.concatenate([x[i] for x in shapes]) for i in (1, 2, 3))
    res = price(where, rows, cols)
    res["size"] = size
    return [(s, idx, res, part) for s, idx, _, _, part in shapes]


class TileMakespan(NamedTuple):
    """A tail tile's makespan in :func:`tail_floor` (read as the estimator core's ``mk.value``)."""

    value: Any


def tail_floor(c: Costs, k: int, f: dict[str, Any], rows: Any, cols: Any) -> dict[str, Any]:
    """A floor of a tail tile's figures (the floors' stand-in for the estimator's core).

    Its MMADs: a tile's makespan and its period as a further tile hold them, its M pipe's busy
    total them (:func:`simcore.pipeline.busy.cube_busy`); its K steps (the scalar pipe's work
    without its copies); every other figure 0.
    """
    bm, bn, bk = f["baseM"], f["baseN"], f["baseK"]
    cube = np.asarray(cube_busy(c, k, rows, cols, bm, bn, bk), dtype=np.float64)
    zero = np.zeros_like(cube)
    steps = ceil_div(rows, bm) * ceil_div(cols, bn) * ceil_div(k, bk)
    busy = {p: cube if p == "M" else zero for p in TILE_PIPES}
    return {
        "mk": TileMakespan(cube),
        "busy": busy,
        "dealt": (zero, zero),
        "tile_work": (steps, zero),
    }


def with_tails(
    one_tile: tuple[Any, dict[str, Any]],
    dealt: tuple[np.ndarray, dict[str, Any], tuple[Any, ...], tuple[Any, ...]],
    parts: Sequence[tuple[Any, dict[str, Any]]],
    programs: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]],
    combine: tuple[Callable[[Any, Any], Any], Any, float],
) -> tuple[np.ndarray, dict[str, Any]]:
    """:func:`dealt_programs_term` put in place for the candidates ``programs[0]``.

    ``one_tile`` the full tile's makespan and busy totals, ``dealt`` the makespan and busy
    totals after :func:`dealt_rounds` with the full tile's :class:`Seam` and scalar work (the
    estimator core's ``dealt``) and its K steps and copies (``tile_work``); ``parts`` the
    estimator's core results with their tail shapes' (``res["tails"]``, :func:`price_tails`;
    in the floors :func:`tail_floor`'s),
    ``combine`` the scalar pipe's rule, the HBM floor (per candidate) and the start-up.
    Returns copies of the makespan and busy totals.
    """
    makespan, busy, (seam, _), (steps, copies) = dealt
    idx, counts_last = programs
    table = np.zeros((idx.size, 4, len(TILE_COLUMNS)))
    shape = makespan.shape
    full = [one_tile[1][p] for p in TILE_PIPES] + [steps, copies, one_tile[0], *seam]
    for i, x in enumerate(full):
        table[:, 0, i] = np.broadcast_to(x, shape)[idx]
    for _, res in parts:
        for s, where, r, part in res["tails"]:
            at, size = np.searchsorted(idx, where), r["size"]
            tail = [r["busy"][p] for p in TILE_PIPES] + [*r["tile_work"], r["mk"].value]
            for i, x in enumerate([*tail, *r["dealt"][:2]]):
                table[at, s, i] = np.broadcast_to(x, size)[part]
    scalar, hbm_floor, startup = combine
    hbm = np.broadcast_to(hbm_floor, shape)[idx]
    mk, out = dealt_programs_term(table, counts_last, scalar, hbm, startup)
    makespan = np.array(makespan, dtype=np.float64)
    makespan[idx] = mk
    busy = {p: np.array(np.broadcast_to(busy[p], shape), dtype=np.float64) for p in busy}
    for p in out:
        busy[p][idx] = out[p]
    return makespan, busy
