"""The block replay as a term: where it applies and what it is given."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords
from simcore.estimate.replay import ReplayRows, replay_paths, replay_rows
from simcore.pipeline.mmad import mmad_cycles

if TYPE_CHECKING:
    pass


#: The block replay (:mod:`simcore.estimate.replay`) runs where the K loop has at most this many
#: steps (its cost is a numpy pass per step and played block) and the copies' legs take this share
#: of the path so far (below it the copy chains do not set the period).
_REPLAY_MAX_STEPS = 64
_REPLAY_SHARE = 0.7


class ReplayQueue:
    """Block replays asked for by several blocks of candidates, played in one loop.

    The replay's cost is nearly all a fixed loop of numpy calls per call
    (:func:`simcore.estimate.replay.replay_paths`), so the estimator queues each block's
    request and plays them together before it reads the makespans. The term is the last one
    that can raise the makespan where it applies (the step handoff, after it, applies only
    where it does not), so raising it later gives the same makespan and binding term.
    """

    def __init__(self) -> None:
        self._asks: list[tuple[Makespan, np.ndarray, ReplayRows, bool]] = []
        #: Candidates queued.
        self.size = 0

    def add(self, mk: Makespan, idx: np.ndarray, rows: ReplayRows, fix: bool) -> None:
        """Queues the replay of the candidates ``idx`` of ``mk`` (``rows``: their inputs)."""
        self._asks.append((mk, idx, rows, fix))
        self.size += int(idx.size)

    def flush(self) -> None:
        """Plays the queued replays and raises each makespan where its path is longer."""
        for fix in (False, True):
            asks = [a for a in self._asks if a[3] is fix]
            if asks:
                paths = replay_paths([a[2] for a in asks], fix=fix)
                for (mk, idx, _, _), path in zip(asks, paths, strict=True):
                    mk.raise_at(idx, path, "block_replay")
        self._asks = []
        self.size = 0


def block_replay_term(r: CoreRecords, mk: Makespan, queue: ReplayQueue | None = None) -> None:
    """Both operands reloaded every block (or staged with FixPipe): the block replay's path.

    Every block repeats the same copies, so the first blocks are replayed in program order with
    the simulator's queue, slot, L0 and UB staging rules
    (:func:`simcore.estimate.replay.replay_rows`)
    and the rest run at the last played block's period. Priced where the K loop is short and the
    copies take a large share of the path so far. With a ``queue`` the replay is queued (and
    the makespan raised when the queue is flushed).
    """
    g, bt, avg, ch, cp, lg, c, f, fix = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.c, r.f, r.fix
    floor = r.floor
    p = r.c.preset
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    bias_cyc, ga, gb, ua, ub, va, vb = cp.bias_cyc, cp.ga, cp.gb, cp.ua, cp.ub, cp.va, cp.vb
    via_a, via_b = cp.via_a, cp.via_b
    blocks, k_iter = g.blocks, g.k_iter
    dr_last, drain_total, m3_out = bt.dr_last, bt.drain_total, bt.m3_out
    has_b, kc_a, kc_b, passes_a, passes_b = ch.has_b, ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    slots_a, slots_b, step_ka, step_kb = ch.slots_a, ch.slots_b, ch.step_ka, ch.step_kb
    la, la_kt, lb, lb_kt = avg.la, avg.la_kt, avg.lb, avg.lb_kt
    replay: np.ndarray | None = None
    resident: tuple[Any, Any] = (False, False)
    if not fix and not floor:
        # Both operands reloaded in every block: every block repeats the same copies, so a
        # replay of the first blocks gives the period their chains across the queues settle
        # into (see simcore.estimate.replay.replay_rows). (Priced on the candidates where it
        # applies.)
        replay = np.flatnonzero(
            (passes_a > blocks - 0.5)
            & (passes_b > blocks - 0.5)
            & (blocks >= 4)
            & has_b
            & (k_iter <= _REPLAY_MAX_STEPS)
            & (ga + va + ua + gb + vb + ub > _REPLAY_SHARE * mk.value)
        )
    elif fix and (via_a or via_b) and not floor:
        # With FixPipe (310B1), an operand staged through UB and each operand either reloaded
        # in every block or resident over a pass of blocks: the blocks repeat the same copies,
        # so the replay's period holds too, with the drain on FixPipe's own queue and a
        # resident operand's copies left out (blocks that reload it are no shorter: leaving
        # instructions out of in-order queues only moves the rest earlier), see
        # simcore.estimate.replay.replay_rows.
        resident = (passes_a < blocks - 0.5, passes_b < blocks - 0.5)
        replay = np.flatnonzero(
            ~(resident[0] & resident[1]) & (blocks >= 4) & has_b & (k_iter <= _REPLAY_MAX_STEPS)
        )
    if replay is not None and replay.size:
        blocks_r = g.blocks_n  # (``max(blocks, 1)``)
        rows = replay_rows(
            replay,
            (k_iter, kc_a, kc_b, step_ka, step_kb, slots_a, slots_b, blocks),
            (a_full, a_last, b_full, b_last),
            # (With FixPipe m3_out is 0: no UB->GM leg.)
            (la, lb, avg.mm, la_kt, lb_kt, mmad_cycles(p.mmad_overhead_cycles, c.fractal_cycles,
             avg.fr_1, avg.fc_1, g.fk_t),
             drain_total / blocks_r, m3_out / blocks_r, dr_last, bias_cyc),
            (f["dbL0A"], f["dbL0B"], f["dbL0C"]),
            resident,
        )  # fmt: skip
        if queue is not None:
            queue.add(mk, replay, rows, fix)
        else:
            mk.raise_at(replay, replay_paths([rows], fix=fix)[0], "block_replay")
