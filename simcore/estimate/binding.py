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

from simcore.estimate.arrays import gather

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
    "norm_step_handoff",
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
    "pipe:SCALAR",
    "hbm_floor",
    "sequential",
)
#: One sentence per binding name: the mechanism that sets the time when it binds.
MECHANISMS: dict[str, str] = {
    "dealt_rounds": "a dealt split: the core runs its tiles back to back, the largest tile's "
    "path and each further tile at the steady state (its busiest pipe, or its path less the "
    "start-up and last drain that overlap the tile before)",
    "norm_step_handoff": "the Norm template's L1 hand-off with one slot per operand: every "
    "copy waits for the reads before it and every read for both operands' copies, so MTE2 and "
    "MTE1 run in series",
    "compute": "the MMAD chain of every block, from the first copies to the last drain, with the "
    "stalls where a chunk copy or a drain holds a step back",
    "copy": "MTE2 busy with every copy, then the steps and drain after the last one",
    "drain": "the drains of all blocks in their queue after the first block",
    "c1_drain_chain": "one L0C buffer without FixPipe: each block's MMADs wait for the L0C->UB "
    "leg before, which waits for the UB->GM copy before it",
    "vector_queue": "the vector queue (reorders and L0C->UB legs) after the first copy",
    "mte3_queue": "the MTE3 queue (UB->L1 and UB->GM legs) after the first reorder",
    "ub_staging_mte2": "every GM->UB copy waits for the reorder before it (the staging "
    "buffer's source half)",
    "ub_staging_vector": "every reorder waits for the UB->L1 copy before it (the staging "
    "buffer's destination half)",
    "ub_staging_links": "the reorders chained through the longer of each UB->L1 leg and the "
    "next GM->UB leg",
    "mte2_linked_pairs": "a GM->UB copy right after another waits on MTE2 for that one's reorder",
    "mte2_linked_by_place": "linked GM->UB pairs priced at the full or K-tail reorder they wait "
    "for",
    "mte2_direct_between_staged": "MTE2 idles for what a reorder exceeds the direct copy between "
    "two GM->UB copies",
    "mte2_idle_behind_staged_pass": "MTE2 idles once per staged pass for the staging legs the "
    "direct operand's slot waits for",
    "slot_chain_a": "A's copies chained through their chunks' reads (each copy waits for the "
    "last read of the chunk `slots` copies back)",
    "slot_chain_b": "B's copies chained through their chunks' reads (each copy waits for the "
    "last read of the chunk `slots` copies back)",
    "b_chain_at_a_pass_start": "B's slot chain takes A's first copy at every A pass start",
    "line_stay": "an outer operand loaded once per line holds its slots over the line's blocks, "
    "each line type at its own drains and steps",
    "corner_drain": "the last block's drain waits for the long UB->GM copy of the block before",
    "phase_b_every_block": "B reloaded every block: per block type the longer of its slot chain "
    "and its step chain",
    "line_phase": "per line of blocks the longer of its drains and its MMAD or slot chains",
    "phase_copies": "an operand reloaded every block: per block type the longer of its copies "
    "and its step chain",
    "mte2_gap": "a one-slot operand's second copy waits for its first chunk's last read, so MTE2 "
    "idles once per pass",
    "b_slot_gap_behind_a": "one B slot: B's second copy waits for B's read behind the A chunk "
    "under it",
    "staged_block_cycle": "an operand staged every block: the drain, the staging chain, the "
    "reads and the MMAD in a cycle per block",
    "staged_first_chunk": "an operand staged every block: the block's MMADs after its first "
    "chunk's arrival, behind the drain",
    "staged_b_block_cycle": "a direct copy waiting for its slot, then B's staging chain behind "
    "it, per block",
    "staged_a_block_cycle": "A's staging chain up to a B read, then B's copies behind it, per "
    "block",
    "b_chain_behind_a_staging": "B's one-slot chain waits for A's staging chain at every A pass "
    "start",
    "staged_one_slot_chain": "a staged one-slot operand: each UB->L1 leg after the chunk "
    "before's last read, each reorder after that leg",
    "staged_one_a_slot_cycle": "both staged, A in one slot: a per-block cycle through both "
    "operands' staging legs",
    "mte2_behind_slot_waiting_b": "the next A copy queues on MTE2 behind a B copy that waits "
    "for its slot",
    "staged_pass": "a staged operand reloaded per pass: the drain, the pass's staging and its "
    "blocks in a cycle per pass",
    "c1_pass_start": "one L0C buffer: a one-slot outer operand's copy at each pass start "
    "between two drains",
    "mte2_bias_between_staged": "both staged with a bias slice: MTE2 idles between GM->UB legs "
    "for the reorders",
    "first_block": "the first block waits for MTE2 to bring its chunks; every drain follows",
    "first_line": "the first line's last block waits for the inner operand's whole panel; every "
    "later drain follows",
    "block_replay": "blocks repeating the same copies, played in program order with the "
    "simulator's queue, slot, L0 and UB rules",
    "pipe:MTE2": "MTE2 (GM->L1 / GM->UB copies) is busy the whole time",
    "pipe:MTE1": "MTE1 (L1->L0 loads) is busy the whole time",
    "pipe:M": "the cube (MMADs) is busy the whole time",
    "pipe:FIX": "FixPipe (drains to GM) is busy the whole time",
    "pipe:V": "the vector unit (reorders, L0C->UB) is busy the whole time",
    "pipe:MTE3": "MTE3 (UB->L1, UB->GM) is busy the whole time",
    "pipe:SCALAR": "the scalar pipe (the kernel's start-up, loop and copy set-up) is busy the "
    "whole time",
    "hbm_floor": "the chip's HBM traffic at its bandwidth",
    "sequential": "the sum of all the core's work (nothing overlaps)",
}
#: Terms applied after the clip's inputs are known (a dealt split's rounds,
#: simcore.estimate.dealt), coded after the floors so that the earlier codes keep their values.
LATE_TERM_NAMES: tuple[str, ...] = ("dealt_rounds",)
#: Every binding code's name: ``BINDING_NAMES[code]``.
BINDING_NAMES: tuple[str, ...] = TERM_NAMES + FLOOR_NAMES + LATE_TERM_NAMES
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
        # (Whether ``value`` is an array only this object holds: then it is raised in place. The
        # first path is another name's, so the first raise makes a copy.)
        self._own = False
        self.track = track
        # (Empty when not tracking: nothing reads it then.)
        shape = np.shape(value) if track else (0,)
        self.code: np.ndarray = np.full(shape, TERM[term], dtype=np.int8)

    def raise_all(self, path: Any, term: str | tuple[str, Any, str, Any]) -> None:
        """``max(makespan, path)`` on every candidate, naming ``term`` where the path is longer.

        ``term`` may be ``(name_x, x, name_y, y)`` for a path ``max(x, y) + ...``: where it
        raises the makespan the name is ``name_x`` where ``x > y``, else ``name_y``.
        """
        if self.track:
            hit = path > self.value
            if hit.any():
                if isinstance(term, str):
                    code: Any = np.int8(TERM[term])
                else:
                    # (Per candidate: name_x where x > y, else name_y.)
                    name_x, x, name_y, y = term
                    step = np.int8(TERM[name_x] - TERM[name_y])
                    code = (x > y).view(np.int8) * step + np.int8(TERM[name_y])
                # ``code`` where the path is longer, as int8 arithmetic (code - old) x hit + old:
                # a masked store (np.putmask) branches per element and costs several times more.
                change = np.subtract(code, self.code, dtype=np.int8)
                change *= hit.view(np.int8)
                self.code += change
        if self._own:
            np.maximum(self.value, path, out=self.value)
        else:
            self.value = np.maximum(self.value, path)
            self._own = True

    def raise_at(self, idx: np.ndarray, path: Any, term: str) -> None:
        """``max(makespan, path)`` on the candidates ``idx`` (``path`` given on those only)."""
        if not self._own:
            # (The value may be a scalar, a broadcast or an array another name still holds.)
            self.value = np.array(np.broadcast_to(self.value, np.shape(self.value)), np.float64)
            self._own = True
        # (``take``: about two thirds of the instructions of indexing with an index array.)
        cur = gather(self.value, idx) if _takes(self.value, idx) else self.value[idx]
        if self.track:
            self.code[idx[path > cur]] = TERM[term]
        self.value[idx] = np.maximum(cur, path)


def _takes(x: np.ndarray, idx: np.ndarray) -> bool:
    # ``x.take(idx)`` is ``x[idx]``: a 1-D array at integer indices.
    return x.ndim == 1 and idx.dtype.kind in "iu"


def clip_binding(
    code: np.ndarray, makespan: Any, busy: list[Any], floor: Any, busiest: Any, sequential: Any
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
        sequential: Where the sum of all work (at least the HBM floor) is below
            ``max(makespan, busiest)``.

    Returns:
        The binding codes.
    """
    out = np.array(code, dtype=np.int8)
    idx = np.flatnonzero(np.broadcast_to(busiest > makespan, out.shape))
    if idx.size:
        # (``take`` where a busy total is an array of the candidates: see _takes.)
        res = [
            gather(x, idx) if isinstance(x, np.ndarray) and x.shape == out.shape and _takes(x, idx)
            else np.broadcast_to(x, out.shape)[idx]
            for x in (*busy, floor)
        ]  # fmt: skip
        best = res[0]
        which = np.zeros(idx.size, dtype=np.int8)
        for i, r in enumerate(res[1:], start=1):
            which[r > best] = i
            best = np.maximum(best, r)
        out[idx] = len(TERM_NAMES) + which
    out[np.broadcast_to(sequential, out.shape)] = TERM["sequential"]
    return out
