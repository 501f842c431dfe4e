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
and at least the tile's path less what overlaps the tile before: its last drain (``dr_last``:
the next tile's steps run meanwhile) and, where A and B both have two or more L1 slots, its
start-up (the first copies and reads, :class:`simcore.estimate.compute.ComputePath` ``start``:
the next tile's first chunks copy into the free slots while the tile's last chunks are read):

    ``mk + (R - 1) x max(busiest pipe, mk - dr_last - start [two slots each])``

Measured against the simulator (R = 4 tiles of random tilings' shapes, 910B2 / 910B4): with one
slot the next tile's start-up overlaps the tile before by ~100-1,000 cycles only (its first
copies wait for the release of the last chunks), so it stays in the period. On aclnn MatMulV3's
tiles (one 128 x 256 base block, full K streamed, two slots each) the term is within 2 % of the
simulator; on random dealt tilings of 910B p95 9 %, of the UB-path chips (310P, 910A, 310B)
p95 22-35 % (docs/estimator.md): not in the agreement benchmark's draws.

Each pipe's busy time is R tiles' (the scalar pipe's start-up once). The largest tile stands
for every tile of the core: where a core's tiles include tail tiles the term is above the
simulator's core.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.estimate.binding import TERM

#: The pipes whose work repeats per tile (the scalar pipe's start-up does not).
_TILE_PIPES: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")


def rounds_makespan(makespan: Any, busiest: Any, seam: Any, rounds: Any) -> Any:
    """The makespan of R tiles back to back: ``makespan + (R - 1) x max(busiest, seam)``.

    The term's rule (the module's formula), written once: :func:`dealt_rounds` calls it with a
    tile's makespan, its busiest pipe and ``seam`` the makespan less what overlaps the next
    tile; the search's bounds (:mod:`tiler.bounds.dealt`) with floors of each (``seam`` 0 where
    they have none: the period is at least the busiest pipe). Non-decreasing in every argument
    (R >= 1), so floors of the three give a floor of the makespan. Scalars or arrays.
    """
    return makespan + (rounds - 1) * np.maximum(busiest, seam)


def dealt_rounds(
    makespan: np.ndarray,
    code: np.ndarray | None,
    busy: dict[str, Any],
    overlap: Any,
    scalar: Any,
    rounds: Any,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The makespan and busy totals of the slowest core of R tiles (the module's formula).

    Args:
        makespan: One tile's makespan per candidate (updated in place where R > 1).
        code: The binding codes (set to ``dealt_rounds`` where R > 1), or None.
        busy: One tile's busy cycles per pipe.
        overlap: Per candidate, what of the tile overlaps the next (the module's formula).
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
    busiest = one[_TILE_PIPES[0]]
    for p in _TILE_PIPES[1:]:
        busiest = np.maximum(busiest, one[p])
    # The rest of the tile's path repeats at each further tile.
    seam = makespan[idx] - np.broadcast_to(overlap, makespan.shape)[idx]
    makespan = np.array(makespan, dtype=np.float64)
    makespan[idx] = rounds_makespan(makespan[idx], busiest, seam, r)
    if code is not None:
        code[idx] = TERM["dealt_rounds"]
    out = {p: np.array(np.broadcast_to(busy[p], makespan.shape), dtype=np.float64) for p in busy}
    for p in _TILE_PIPES:
        out[p][idx] = r * one[p]
    out["SCALAR"][idx] = np.broadcast_to(scalar, makespan.shape)[idx]
    return makespan, out
