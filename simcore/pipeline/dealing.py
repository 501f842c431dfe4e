"""The dealing rule of a dealt split, written once for the simulator and the estimator.

A dealt split (legality rule ``DEALT_SPLIT``, aclnn MatMulV3's base blocks) has more
``singleCoreM x singleCoreN`` tiles than ``usedCoreNum`` cores. The tiles, numbered row-major
over C's tile grid (N inner, MatMulV3's ``blockIdx / nCnt``) within each group of tile columns
(:func:`dealt_groups`, the groups one after the other), go to core ``tile % usedCoreNum`` in
rounds (:func:`dealt_walk`). The simulator plays each core's sequence of tiles
(:func:`simcore.pipeline.traffic.core_programs`); the estimator prices each distinct core
program by how many tiles of each of the four tile shapes it runs and the shape of its last
tile (:func:`dealt_programs`, :mod:`simcore.estimate.dealt`):

* ``0`` full (``singleCoreM x singleCoreN``), ``1`` the tail along M (the last tile row where
  ``singleCoreM`` does not divide M), ``2`` the tail along N, ``3`` both tails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.pipeline.arith import ceil_div

#: The four tile shapes of a split, in the order of the count vectors.
TILE_SHAPES: tuple[str, ...] = ("full", "tail_m", "tail_n", "tail_mn")


def dealt_groups(n_tiles: int, rounds: int) -> list[range]:
    """A dealt split's groups of tile columns (its L2 tiles along N, ``Problem.l2_rounds``).

    One group (all of C's tile columns) unless the kernel walks C in L2 tiles: aclnn MatMulV3
    (``matmul_v3_base_tiling.cpp`` ``DoL2CacheTiling``) keeps each L2 tile's A + B + C within
    the L2 by walking the base blocks tile by tile; the model takes its split along N, which
    sets B's reuse (``ceil(N tiles / rounds)`` columns a group, the last the rest).
    """
    per = ceil_div(n_tiles, max(rounds, 1))
    return [range(start, min(start + per, n_tiles)) for start in range(0, n_tiles, per)]


def dealt_walk(m_tiles: int, n_tiles: int, l2_rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """The tile row and tile column of each tile in dealing order (tile i goes to core i % used).

    Row-major within each group of tile columns (:func:`dealt_groups`), the groups in turn.
    """
    rows, cols = [], []
    for group in dealt_groups(n_tiles, l2_rounds):
        row, col = np.divmod(np.arange(m_tiles * len(group), dtype=np.int64), len(group))
        rows.append(row)
        cols.append(col + group.start)
    return np.concatenate(rows), np.concatenate(cols)


@dataclass(frozen=True)
class DealtPrograms:
    """The distinct core programs of one dealt split, by tile shape (:data:`TILE_SHAPES`).

    ``counts[p, s]`` the tiles of shape s program p runs, ``last[p]`` the shape of its last
    tile, ``cores[p]`` how many cores run it (:func:`dealt_programs`).
    """

    counts: np.ndarray
    last: np.ndarray
    cores: np.ndarray


def dealt_programs(
    m_tiles: int, n_tiles: int, tail_m: bool, tail_n: bool, used: int, l2_rounds: int
) -> DealtPrograms:
    """The distinct core programs of a split of ``m_tiles x n_tiles`` tiles over ``used`` cores.

    ``tail_m`` (``tail_n``): whether the last tile row (column) is a tail, shorter than the
    others (:func:`core_counts` of the one split, the cores with equal programs together).
    """
    counts, last, valid = core_counts(
        np.array([m_tiles]), np.array([n_tiles]), (tail_m, tail_n), used, l2_rounds
    )
    rows = np.column_stack([last[0], counts[0]])[valid[0]]
    programs, how_many = np.unique(rows, axis=0, return_counts=True)
    return DealtPrograms(programs[:, 1:], programs[:, 0], how_many)


def core_counts(
    m_tiles: np.ndarray, n_tiles: np.ndarray, tails: tuple[Any, Any], used: Any, l2_rounds: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per split and core, the tiles of each shape it runs and its last tile's shape.

    The dealing rule of :func:`dealt_walk` counted in closed form, for many splits at once
    (arrays over the splits; ``tails`` whether the last tile row, column is a tail): core k
    takes the tiles at walk positions k, k + used, ...; a group's last tile row is a range of
    positions, the last column the positions of the last group one group width apart, the
    corner tile the last position. A core's last tile is at position ``k + (rounds - 1) x used``
    (the estimator prices a core as its tiles' periods and its last tile's makespan,
    :func:`simcore.estimate.dealt.program_makespan`).

    Returns ``counts`` (splits x cores x 4), ``last`` (splits x cores) and ``valid`` (splits
    x cores: the core is one of the split's ``used``), the cores up to the most ``used``.
    """
    m_t, n_t = np.asarray(m_tiles, dtype=np.int64), np.asarray(n_tiles, dtype=np.int64)
    used_s = np.broadcast_to(np.asarray(used, dtype=np.int64), m_t.shape)
    tail_m, tail_n = (np.broadcast_to(np.asarray(t, dtype=bool), m_t.shape) for t in tails)
    k = np.arange(int(used_s.max()), dtype=np.int64)[None, :]
    u, tiles = used_s[:, None], (m_t * n_t)[:, None]
    valid = k < u

    def before(x: Any) -> Any:
        """Tiles of core k at positions below x."""
        return np.maximum(ceil_div(x - k, u), 0)

    rounds = before(tiles)
    # The position of each core's last tile.
    at = k + np.maximum(rounds - 1, 0) * u
    # The groups of tile columns (dealt_groups): ``per`` columns each, the last the rest.
    per = ceil_div(n_t, max(l2_rounds, 1))[:, None]
    last_row = np.zeros_like(rounds)
    last_in_row = np.zeros(rounds.shape, dtype=bool)
    for g in range(max(l2_rounds, 1)):
        start = g * per
        width = np.clip(n_t[:, None] - start, 0, per)
        low = m_t[:, None] * start + (m_t[:, None] - 1) * width
        high = low + width
        last_row += before(high) - before(low)
        last_in_row |= (at >= low) & (at < high)
    # The last column: in the last group, one position each tile row, ``width`` apart.
    groups = ceil_div(n_t, per[:, 0])[:, None]
    start = (groups - 1) * per
    width = n_t[:, None] - start
    base = m_t[:, None] * start + width - 1
    # Its positions' cores repeat every used / gcd(width, used) rows: the first of them each
    # stand for ceil((rows - r) / period) rows.
    period = u // np.gcd(width, u)
    r = np.arange(k.shape[1], dtype=np.int64)[None, :]
    weight = np.where((r < period) & (r < m_t[:, None]), ceil_div(m_t[:, None] - r, period), 0)
    core_of = (base + r * width) % u
    last_col = np.sum(weight[:, None, :] * (core_of[:, None, :] == k[:, :, None]), axis=2)
    last_in_col = (at >= m_t[:, None] * start) & ((at - m_t[:, None] * start) % width == width - 1)
    corner = k == (tiles - 1) % u
    last_row *= tail_m[:, None]
    last_col *= tail_n[:, None]
    both = corner & (tail_m & tail_n)[:, None]
    counts = np.stack(
        [rounds - last_row - last_col + both, last_row - both, last_col - both, both * 1],
        axis=2,
    )
    last = (last_in_row & tail_m[:, None]) * 1 + (last_in_col & tail_n[:, None]) * 2
    counts = np.where(valid[..., None], counts, 0)
    return counts, last, valid


def has_tail(total: Any, single: Any) -> Any:
    """Whether the last tile along a dimension is a tail: ``single`` does not divide ``total``.

    (Not where one tile spans the dimension: its one tile is then the largest, ``total``.)
    """
    return (total % single != 0) & (total > single)


#: ``_AT_LEAST[a, b]``: whether a tile of shape b is at least as large as one of shape a (no
#: smaller along M or N): the full tile above every tail, either tail above the corner tile.
_AT_LEAST = np.array(
    [[b in ((0,), (0, 1), (0, 2), (0, 1, 2, 3))[a] for b in range(4)] for a in range(4)]
)
#: The up-sets of the shapes ordered by size (Hall's condition: one program's tiles can each
#: be matched to a distinct tile at least as large of another iff, for each up-set, the other
#: has at least as many tiles in it).
_UP_SETS: tuple[tuple[int, ...], ...] = ((0,), (0, 1), (0, 2), (0, 1, 2), (0, 1, 2, 3))
#: ``counts @ _UP_MATRIX``: a program's tiles in each up-set.
_UP_MATRIX = np.array([[s in u for u in _UP_SETS] for s in range(4)], dtype=np.int64)


def _undominated(counts: np.ndarray, last: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per split and core, whether its program is kept: no other covers it, the first of equals.

    Program q covers p where q's last tile is at least as large as p's and p's other tiles
    can each be matched to a distinct other tile of q at least as large (:data:`_UP_SETS`).
    A core's time grows with its tiles' sizes (the estimator's premise for the tail cores of
    one tile per core too: every cost grows with the rows and columns) and with more tiles
    (each adds a period >= 0), so a covered program is never the slowest: only the others
    are priced (where a core runs R full tiles, that core alone). Arrays of splits x cores.
    """
    rest = counts - (last[..., None] == np.arange(4))
    ups = rest @ _UP_MATRIX
    # covers[s, i, j]: core j's program covers core i's (all pairs at once).
    covers = _AT_LEAST[last[:, :, None], last[:, None, :]]
    covers &= np.all(ups[:, None, :, :] >= ups[:, :, None, :], axis=3)
    covers &= valid[:, None, :]
    # (Of equal programs the first core's is kept.)
    cores = np.arange(last.shape[1])
    same = np.all(ups[:, None, :, :] == ups[:, :, None, :], axis=3) & (
        last[:, :, None] == last[:, None, :]
    )
    covers &= ~same | (cores[None, :] < cores[:, None])[None]
    keep: np.ndarray = valid & ~covers.any(axis=2)
    return keep


def program_arrays(
    m: int, n: int, single_m: Any, single_n: Any, used: Any, l2_rounds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate, its split's core programs as arrays.

    Returns ``counts`` (candidates x programs x 4, float64) and ``last`` (candidates x
    programs, its last tile's shape) with the programs of each split padded to the most any
    split has by repeating its first (a repeat changes no maximum over programs), and only
    those no other covers (:func:`_undominated`). Each distinct split is dealt once
    (:func:`core_counts`) and kept in a table per problem, looked up for all candidates at once.
    """
    counts, last, _, pos = _lookup((m, n, l2_rounds), (single_m, single_n, used))
    return counts[pos], last[pos]


def _lookup(problem: tuple[int, int, int], split: tuple[Any, Any, Any]) -> tuple[Any, ...]:
    """The table of the splits' programs (counts, last, the shapes they run) and each one's row.

    (:data:`_TABLES`; the splits not in it dealt and added. Beyond the table's keys a table of
    the distinct splits, not kept.)
    """
    sm, sn, u = (np.asarray(x, dtype=np.int64).reshape(-1) for x in split)
    key = _split_key(sm, sn, u)
    if key is None:
        rows = np.stack([sm, sn, u], axis=1)
        _, at, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        _, counts, last = _dealt_splits(problem, (sm[at], sn[at], u[at]))
        return counts, last, counts.sum(axis=1) > 0, inverse.reshape(-1)
    table = _TABLES.get(problem)
    pos = _find(table, key)
    missing = pos < 0
    if table is None or missing.any():
        new, at = np.unique(key[missing], return_index=True)
        rows_at = np.flatnonzero(missing)[at]
        dealt = _dealt_splits(problem, (sm[rows_at], sn[rows_at], u[rows_at]))
        table = _merged(problem, table, (new, *dealt[1:]))
        pos = _find(table, key)
    return (*table[1:], pos)


#: Per problem (m, n, l2_rounds), its splits' programs: split keys (sorted), counts, last and
#: which shapes the programs run.
_TABLES: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}
#: Problems kept at most.
_TABLES_KEPT = 64


def _split_key(single_m: np.ndarray, single_n: np.ndarray, used: np.ndarray) -> Any:
    """One int64 per split, or None where a field is too large to pack.

    (singleCoreM below 2**23, singleCoreN below 2**24 and used below 2**16 pack.)
    """
    if single_m.size and (
        single_m.max() >= 1 << 23 or single_n.max() >= 1 << 24 or used.max() >= 1 << 16
    ):
        return None
    return (single_m << 40) | (single_n << 16) | used


def _find(table: Any, key: np.ndarray) -> np.ndarray:
    """The rows of ``key`` in a table of :data:`_TABLES` (-1 where absent)."""
    if table is None:
        return np.full(key.shape, -1)
    keys = table[0]
    pos = np.minimum(np.searchsorted(keys, key), keys.shape[0] - 1)
    return np.where(keys[pos] == key, pos, -1)


def _dealt_splits(
    problem: tuple[int, int, int], split: tuple[np.ndarray, ...]
) -> tuple[None, np.ndarray, np.ndarray]:
    """The kept programs (counts, last) of the splits (singleCoreM, singleCoreN, used)."""
    m, n, l2_rounds = problem
    sm, sn, u = split
    counts, last, valid = core_counts(
        ceil_div(m, sm), ceil_div(n, sn), (has_tail(m, sm), has_tail(n, sn)), u, l2_rounds
    )
    # The cores outside a split's ``used`` run core 0's program (a repeat).
    counts = np.where(valid[..., None], counts, counts[:, :1])
    last = np.where(valid, last, last[:, :1])
    radix = int(counts.max()) + 1
    if 4 * radix**4 < 2**62:
        # Each row's distinct programs only (a few of the cores'): the pairs are then few.
        key = last
        for shape in range(4):
            key = key * radix + counts[..., shape]
        at = np.argsort(key, axis=1, kind="stable")
        ordered = np.take_along_axis(key, at, axis=1)
        new = np.ones(key.shape, dtype=bool)
        new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        most = int(new.sum(axis=1).max())
        pick = np.take_along_axis(at, np.argsort(~new, axis=1, kind="stable")[:, :most], axis=1)
        pick = np.where(np.arange(most)[None, :] < new.sum(axis=1)[:, None], pick, pick[:, :1])
        counts = np.take_along_axis(counts, pick[..., None], axis=1)
        last = np.take_along_axis(last, pick, axis=1)
    keep = _undominated(counts, last, np.ones(last.shape, dtype=bool))
    # The kept programs first in each row, padded with the row's first kept one.
    order = np.argsort(~keep, axis=1, kind="stable")
    most = int(keep.sum(axis=1).max())
    j = np.arange(most)[None, :]
    pick = np.where(j < keep.sum(axis=1)[:, None], order[:, :most], order[:, :1])
    kept = np.take_along_axis(counts, pick[..., None], axis=1).astype(np.float64)
    return None, kept, np.take_along_axis(last, pick, axis=1)


def _merged(
    problem: tuple[int, int, int], table: Any, new: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, ...]:
    """``table`` (None: none yet) with the splits ``new`` (keys, counts, last), kept."""
    keys, counts, last = new
    if table is not None:
        width = max(last.shape[1], table[2].shape[1])

        def pad(x: np.ndarray) -> np.ndarray:
            extra = width - x.shape[1]
            return x if not extra else np.concatenate([x] + [x[:, :1]] * extra, axis=1)

        keys = np.concatenate([table[0], keys])
        counts = np.concatenate([pad(table[1]), pad(counts)])
        last = np.concatenate([pad(table[2]), pad(last)])
    order = np.argsort(keys)
    if len(_TABLES) >= _TABLES_KEPT and problem not in _TABLES:
        _TABLES.clear()
    counts, last = counts[order], last[order]
    _TABLES[problem] = keys[order], counts, last, counts.sum(axis=1) > 0
    return _TABLES[problem]


def tail_programs(
    m: int, n: int, split: tuple[Any, Any, Any], rounds: Any, l2_rounds: int
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The candidates whose slowest core may run a tail tile, with their core programs.

    ``split``: singleCoreM, singleCoreN and usedCoreNum per candidate, ``rounds`` its tiles per
    core. Candidates of R > 1 with a tail along M or N whose programs (:func:`program_arrays`,
    the covered ones left out) run a tail tile; every other candidate's slowest core runs R
    full tiles. Returns their indices, (counts, last) of :func:`program_arrays` and which
    shapes their programs run (candidates x 4).
    """
    sm, sn, used = (np.asarray(x) for x in split)
    idx = np.flatnonzero((np.asarray(rounds) > 1) & (has_tail(m, sm) | has_tail(n, sn)))
    if not idx.size:
        none = np.zeros((0, 4), dtype=bool)
        return idx, (np.zeros((0, 1, 4)), np.zeros((0, 1), dtype=np.int64)), none
    counts, last, runs, pos = _lookup((m, n, l2_rounds), (sm[idx], sn[idx], used[idx]))
    keep = runs[pos, 1:].any(axis=1)
    pos = pos[keep]
    return idx[keep], (counts[pos], last[pos]), runs[pos]
