"""The dealing rule of a dealt split, written once for the simulator and the estimator.

A dealt split (legality rule ``DEALT_SPLIT``, aclnn MatMulV3's base blocks) has more
``singleCoreM x singleCoreN`` tiles than ``usedCoreNum`` cores. The tiles, numbered row-major
over C's tile grid (N inner, MatMulV3's ``blockIdx / nCnt``) within each group of tile columns
(:func:`dealt_groups`, the groups one after the other), go to core ``tile % usedCoreNum`` in
rounds (:func:`dealt_walk`). The simulator plays each core's sequence of tiles
(:func:`simcore.pipeline.traffic.core_programs`); the estimator prices each distinct core
program by how many tiles of each of the four tile shapes it runs and the shape of its first
tile (:func:`dealt_programs`, :mod:`simcore.estimate.dealt`):

* ``0`` full (``singleCoreM x singleCoreN``), ``1`` the tail along M (the last tile row where
  ``singleCoreM`` does not divide M), ``2`` the tail along N, ``3`` both tails.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
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

    ``counts[p, s]`` the tiles of shape s program p runs, ``first[p]`` the shape of its first
    tile, ``cores[p]`` how many cores run it.
    """

    counts: np.ndarray
    first: np.ndarray
    cores: np.ndarray


@lru_cache(maxsize=4096)
def dealt_programs(
    m_tiles: int, n_tiles: int, tail_m: bool, tail_n: bool, used: int, l2_rounds: int
) -> DealtPrograms:
    """The distinct core programs of a split of ``m_tiles x n_tiles`` tiles over ``used`` cores.

    ``tail_m`` (``tail_n``): whether the last tile row (column) is a tail, shorter than the
    others. Cached: the programs depend on these six numbers only.
    """
    rows, cols = dealt_walk(m_tiles, n_tiles, l2_rounds)
    shape = (rows == m_tiles - 1) * int(tail_m) + 2 * (cols == n_tiles - 1) * int(tail_n)
    core = np.arange(shape.shape[0], dtype=np.int64) % used
    counts = np.bincount(core * 4 + shape, minlength=used * 4).reshape(used, 4)
    cores = min(used, shape.shape[0])
    counts, first = counts[:cores], shape[:cores]
    # One integer per core (first shape, then the counts, in base R + 1): a 1-D unique is
    # several times cheaper than one over rows (which stands in where that overflows).
    radix = int(counts.max()) + 1
    if 4 * radix**4 < 2**62:
        key = first
        for s in range(4):
            key = key * radix + counts[:, s]
        _, at, how_many = np.unique(key, return_index=True, return_counts=True)
    else:
        rows = np.column_stack([first, counts])
        _, at, how_many = np.unique(rows, axis=0, return_index=True, return_counts=True)
    return DealtPrograms(counts[at], first[at], how_many)


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


def _undominated(p: DealtPrograms) -> tuple[np.ndarray, np.ndarray]:
    """The programs that no other program covers tile for tile with tiles at least as large.

    Program q covers p where q's first tile is at least as large as p's and p's other tiles
    can each be matched to a distinct other tile of q at least as large (:data:`_UP_SETS`).
    A core's time grows with its tiles' sizes (the estimator's premise for the tail cores of
    one tile per core too: every cost grows with the rows and columns) and with more tiles
    (each adds a period >= 0), so a covered program is never the slowest: only the others
    are priced (where a core runs R full tiles, that core alone).
    """
    if p.first.shape[0] == 1:
        return p.counts, p.first
    rest = p.counts - (p.first[:, None] == np.arange(4))
    ups = rest @ _UP_MATRIX
    # covers[i, j]: program j covers program i (all pairs at once).
    covers = _AT_LEAST[p.first[:, None], p.first[None, :]]
    covers &= np.all(ups[None, :, :] >= ups[:, None, :], axis=2)
    np.fill_diagonal(covers, False)
    keep = ~covers.any(axis=1)
    return p.counts[keep], p.first[keep]


def program_arrays(
    m: int, n: int, single_m: Any, single_n: Any, used: Any, l2_rounds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate, its split's programs (:func:`dealt_programs`) as arrays.

    Returns ``counts`` (candidates x programs x 4, float64) and ``first`` (candidates x
    programs) with the programs of each split padded to the most any split has by repeating
    its first (a repeat changes no maximum over programs), and only those no other covers
    (:func:`_undominated`). Each distinct split is dealt once.
    """
    fields = [np.asarray(x, dtype=np.int64).reshape(-1) for x in (single_m, single_n, used)]
    # One integer per split (a mixed radix over the fields' ranges): a 1-D unique is several
    # times cheaper than one over rows.
    key, radix = np.zeros_like(fields[0]), 1
    for x in fields:
        key, radix = key + x * radix, radix * (int(x.max()) + 1)
    if radix >= 2**62:  # (beyond int64: the rows themselves)
        key = np.unique(np.stack(fields, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
    _, at, inverse = np.unique(key, return_index=True, return_inverse=True)
    progs = [
        _split_programs(m, n, sm, sn, u, l2_rounds)
        for sm, sn, u in zip(*(x[at].tolist() for x in fields), strict=True)
    ]
    # Each split's programs one after the other, then per candidate its split's, padded.
    lengths = np.array([p[1].shape[0] for p in progs])
    offsets = np.cumsum(lengths) - lengths
    j = np.arange(int(lengths.max()))
    pick = (offsets[:, None] + np.where(j < lengths[:, None], j, 0))[inverse.reshape(-1)]
    counts = np.concatenate([p[0] for p in progs]).astype(np.float64)
    return counts[pick], np.concatenate([p[1] for p in progs])[pick]


@lru_cache(maxsize=4096)
def _split_programs(
    m: int, n: int, single_m: int, single_n: int, used: int, l2_rounds: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`dealt_programs` of one split, the dominated programs left out."""
    m_tiles, n_tiles = ceil_div(m, single_m), ceil_div(n, single_n)
    tail_m, tail_n = bool(has_tail(m, single_m)), bool(has_tail(n, single_n))
    return _undominated(dealt_programs(m_tiles, n_tiles, tail_m, tail_n, used, l2_rounds))


def tail_programs(
    m: int, n: int, split: tuple[Any, Any, Any], rounds: Any, l2_rounds: int
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The candidates whose slowest core may run a tail tile, with their core programs.

    ``split``: singleCoreM, singleCoreN and usedCoreNum per candidate, ``rounds`` its tiles per
    core. Candidates of R > 1 with a tail along M or N whose programs (:func:`program_arrays`,
    the covered ones left out) run a tail tile; every other candidate's slowest core runs R
    full tiles. Returns their indices and (counts, first) of :func:`program_arrays`.
    """
    sm, sn, used = (np.asarray(x) for x in split)
    idx = np.flatnonzero((np.asarray(rounds) > 1) & (has_tail(m, sm) | has_tail(n, sn)))
    if not idx.size:
        return idx, (np.zeros((0, 1, 4)), np.zeros((0, 1), dtype=np.int64))
    counts, first = program_arrays(m, n, sm[idx], sn[idx], used[idx], l2_rounds)
    keep = np.any(counts[..., 1:].sum(axis=1) > 0, axis=1)
    return idx[keep], (counts[keep], first[keep])
