"""The makespan as the longest of the named terms, and which term set it.

Every term of the estimator is a path of precedences the simulator also obeys; the makespan of
the slowest core is the longest of them. :class:`Makespan` keeps that maximum and, per
candidate, the code of the term that set it (the first term in composition order that reached
the final value), so an estimate can say which mechanism binds. The codes index
:data:`BINDING_NAMES`: the terms of :data:`TERM_NAMES`, then the resource floors and the
sequential clip the estimate applies after the makespan (``min(max(makespan, busiest pipe or
HBM floor), sum of work)``).

Tracking costs one comparison and one masked store per term that raises the path on all
candidates (on a subset, on that subset only); the floors (:func:`makespan_floor_arrays`) do
not track.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: The estimator's terms in composition order (see docs/estimator.md for each mechanism).
TERM_NAMES: tuple[str, ...] = (
    "compute",
    "copy",
    "drain",
    "c1_drain_chain",
    "vector_queue",
    "mte3_queue",
    "ub_staging_mte2",
    "ub_staging_vector",
    "ub_staging_links",
    "mte2_linked_pairs",
    "mte2_linked_by_place",
    "mte2_direct_between_staged",
    "mte2_idle_behind_staged_pass",
    "slot_chain_a",
    "slot_chain_b",
    "b_chain_at_a_pass_start",
    "line_stay",
    "corner_drain",
    "phase_b_every_block",
    "line_phase",
    "phase_copies",
    "mte2_gap",
    "b_slot_gap_behind_a",
    "staged_block_cycle",
    "staged_first_chunk",
    "staged_b_block_cycle",
    "staged_a_block_cycle",
    "b_chain_behind_a_staging",
    "staged_one_slot_chain",
    "staged_one_a_slot_cycle",
    "mte2_behind_slot_waiting_b",
    "staged_pass",
    "c1_pass_start",
    "mte2_bias_between_staged",
    "first_block",
    "first_line",
    "block_replay",
)
#: The clip's outcomes after the terms: a pipe's busy total, the chip's HBM time, the sum of all
#: work (a core that cannot overlap anything).
FLOOR_NAMES: tuple[str, ...] = (
    "pipe:MTE2",
    "pipe:MTE1",
    "pipe:M",
    "pipe:FIX",
    "pipe:V",
    "pipe:MTE3",
    "hbm_floor",
    "sequential",
)
#: Every binding code's name: ``BINDING_NAMES[code]``.
BINDING_NAMES: tuple[str, ...] = TERM_NAMES + FLOOR_NAMES
TERM: dict[str, int] = {name: i for i, name in enumerate(BINDING_NAMES)}


class Makespan:
    """The longest path so far over the candidates, and the code of the term that set it.

    Args:
        value: The first path (an array over the candidates).
        term: Its term name.
        track: Keep the binding codes (off for the floors, which only need the value).
    """

    def __init__(self, value: Any, term: str, track: bool = True) -> None:
        self.value = value
        self.track = track
        # (Empty when not tracking: nothing reads it then.)
        shape = np.shape(value) if track else (0,)
        self.code: np.ndarray = np.full(shape, TERM[term], dtype=np.int8)

    def raise_all(self, path: Any, term: str | np.ndarray) -> None:
        """``max(makespan, path)`` on every candidate; ``term`` may be a code per candidate."""
        if self.track:
            hit = path > self.value
            code = TERM[term] if isinstance(term, str) else term
            if isinstance(code, np.ndarray):
                np.copyto(self.code, code, where=hit, casting="unsafe")
            else:
                np.putmask(self.code, hit, code)
        self.value = np.maximum(self.value, path)

    def pick(self, cond: Any, yes: str, no: str) -> str | np.ndarray:
        """Per candidate ``yes`` where ``cond`` holds, else ``no`` (one name when not tracking)."""
        if not self.track:
            return no
        return np.where(cond, np.int8(TERM[yes]), np.int8(TERM[no]))

    def raise_at(self, idx: np.ndarray, path: Any, term: str) -> None:
        """``max(makespan, path)`` on the candidates ``idx`` (``path`` given on those only).

        The result is a fresh array, as the value may be a scalar, a broadcast or an array
        another name still holds.
        """
        out = np.array(np.broadcast_to(self.value, np.shape(self.value)), dtype=np.float64)
        cur = out[idx]
        if self.track:
            self.code[idx[path > cur]] = TERM[term]
        out[idx] = np.maximum(cur, path)
        self.value = out


def clip_binding(
    code: np.ndarray, makespan: Any, busy: list[Any], floor: Any, busiest: Any, seq: Any
) -> np.ndarray:
    """The binding code after the clip ``min(max(makespan, busiest), sum of work)``.

    Where the sum of work is below ``max(makespan, busiest)`` (a core that overlaps nothing)
    the code is ``sequential``; else where the busiest pipe or the HBM floor exceeds the
    makespan, that resource (the first of the pipes in :data:`FLOOR_NAMES` order, then HBM, on
    a tie); else the term's own code.

    Args:
        code: The terms' codes (:attr:`Makespan.code`).
        makespan: The makespan the terms give.
        busy: The pipes' busy totals in :data:`FLOOR_NAMES` order.
        floor: The HBM floor in cycles.
        busiest: The largest of ``busy`` and ``floor``.
        seq: The sum of all work (at least the HBM floor).

    Returns:
        The binding codes.
    """
    out = np.array(code, dtype=np.int8)
    idx = np.flatnonzero(np.broadcast_to(busiest > makespan, out.shape))
    if idx.size:
        res = [np.broadcast_to(x, out.shape)[idx] for x in (*busy, floor)]
        best = res[0]
        which = np.zeros(idx.size, dtype=np.int8)
        for i, r in enumerate(res[1:], start=1):
            which[r > best] = i
            best = np.maximum(best, r)
        out[idx] = len(TERM_NAMES) + which
    out[np.broadcast_to(seq < np.maximum(makespan, busiest), out.shape)] = TERM["sequential"]
    return out
