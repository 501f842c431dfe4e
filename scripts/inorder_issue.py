"""Experiment, not the model: seed 004's in-order scalar issue with finite per-pipe queues.

Seed 004 (the Da Vinci control unit) decodes every instruction in the scalar unit, in program
order, before the issue module sends it to its pipe's queue ("在进入指令发射模块之前，所有指令都
作为普通标量指令被逐条顺次处理"), and an instruction that cannot be issued holds the ones after
it ("由于指令是被顺序发射的"). The simulator has the pipes' in-order queues but no issue: an
instruction may start as soon as its pipe and its flags allow, however far the scalar unit is
behind. :func:`in_order_issue` adds the issue around the simulator's rules, for the duration of
a ``with`` block:

* the scalar unit does its fitted work (:mod:`simcore.pipeline.scalar`: the start-up before the
  first instruction, the per-step cycles before each K step's L0A load, the per-copy cycles
  before each GM->L1 or GM->UB copy, all times the constant-tiling factor) and then issues the
  instruction into its pipe's queue;
* a queue holds ``depth`` instructions waiting to start; the slot is freed when the instruction
  starts, so the ``i``-th instruction of a pipe is issued no earlier than the start of its
  ``i - depth``-th, and a full queue stalls the scalar (and so every later instruction);
* an instruction starts no earlier than its issue (and, as before, its pipe and its flags).

Flag waits do not block the scalar (they are queued on the pipes, seed 004's event module) and
take no queue slot here; only the simulator's instructions do. Nothing in :mod:`simcore` is
edited: the wrapped names are restored on exit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import simcore.pipeline.simulator as sim_mod
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.problem import Problem, Template

#: The pipes an instruction can be issued to (the simulator's, less SCALAR).
QUEUED: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")
#: A queue depth that never fills.
UNBOUNDED = 1 << 40


@dataclass
class CoreIssue:
    """The issue of one simulated core shape: what the experiment did to its instructions."""

    cores: int
    instructions: int = 0
    #: Instructions whose start the issue made later than the simulator's own schedule
    #: would have given at that point (given every earlier instruction's moved start).
    delayed: int = 0
    #: Per pipe, the instructions' issue cycles in program order.
    issue: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in QUEUED})


@dataclass
class _State:
    """The issue's running state while one core shape is simulated."""

    depth: dict[str, int]
    step_work: float = 0.0
    copy_work: float = 0.0
    cursor: float = 0.0
    starts: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in QUEUED})
    #: Pipes of the next ``queue_start`` calls, announced by the cost lookups before them.
    pending: list[tuple[str, float]] = field(default_factory=list)
    #: The core's state (its DMA copy count) and the count at the last copy's issue: a
    #: ``queue_start`` after the count grew is a direct chunk copy's (MTE2).
    core_state: Any = None
    copies_seen: int = 0
    after_step: bool = False
    fixpipe: bool = True
    core: CoreIssue = field(default_factory=lambda: CoreIssue(0))

    def reset(
        self, startup: float, step_work: float, copy_work: float, fixpipe: bool, cores: int
    ) -> None:
        """Starts a core shape: the scalar's start-up done, every queue empty."""
        self.cursor, self.step_work, self.copy_work = startup, step_work, copy_work
        self.fixpipe, self.after_step = fixpipe, False
        self.starts = {p: [] for p in QUEUED}
        self.pending = []
        self.copies_seen = 0
        self.core = CoreIssue(cores)

    def issue(self, pipe: str, work: float) -> float:
        """The issue cycle of the next instruction of ``pipe`` after ``work`` scalar cycles."""
        ready = self.cursor + work
        starts, depth = self.starts[pipe], self.depth[pipe]
        if len(starts) >= depth and starts[-depth] > ready:
            ready = starts[-depth]
        self.cursor = ready
        self.core.issue[pipe].append(ready)
        return ready

    def started(self, pipe: str, start: float, own: float) -> None:
        """Logs the start of the instruction just issued (``own``: the start without issue)."""
        self.starts[pipe].append(start)
        self.core.instructions += 1
        if start > own:
            self.core.delayed += 1


@contextmanager
def in_order_issue(
    depth: int | Mapping[str, int], log: list[CoreIssue] | None = None, scalar: bool = True
) -> Iterator[None]:
    """Simulates with in-order issue and ``depth`` queue entries per pipe (or per pipe name).

    Args:
        depth: Queue entries of every pipe, or a mapping pipe -> entries (absent: unbounded).
        log: Receives one :class:`CoreIssue` per simulated core shape, in simulation order.
        scalar: Whether the scalar's fitted work precedes the issue (False: only the queues
            bind; with unbounded queues the simulator's own schedule, a check of the wrapping).
    """
    if isinstance(depth, int):
        depths = dict.fromkeys(QUEUED, depth)
    else:
        depths = {p: int(depth.get(p, UNBOUNDED)) for p in QUEUED}
    state = _State(depths)
    names = ("simulate_core", "simulate_programs", "queue_start", "k_step", "staged_copy")
    saved = {name: getattr(sim_mod, name) for name in (*names, "_Durations", "CoreState")}
    orig_core, orig_queue, orig_step = saved["simulate_core"], saved["queue_start"], saved["k_step"]
    orig_staged, durations_cls = saved["staged_copy"], saved["_Durations"]
    state_cls = saved["CoreState"]

    def simulate_core(
        problem: Problem, t: Any, preset: HardwarePreset, shape: Any, *rest: Any
    ) -> Any:
        factor = preset.constant_tiling_scalar_factor if problem.constant_tiling else 1.0
        factor *= scalar
        per_copy = (
            preset.scalar_norm_copy_cycles
            if problem.template is Template.NORM
            else preset.scalar_mdl_copy_cycles
        )
        state.reset(
            preset.scalar_startup_cycles * factor,
            preset.scalar_step_cycles * factor,
            per_copy * factor,
            preset.has_fixpipe,
            shape.cores,
        )
        out = orig_core(problem, t, preset, shape, *rest)
        if log is not None:
            log.append(state.core)
        return out

    def simulate_programs(
        problem: Problem, t: Any, preset: HardwarePreset, shapes: Any, *rest: Any
    ) -> Any:
        # Each program alone, from the core's start: the issue's state is one core's, so the
        # blocks that programs begin with alike are not played once for all of them here.
        return [simulate_core(problem, t, preset, shape, *rest) for shape in shapes]

    class CoreState(state_cls):  # type: ignore[misc, valid-type]
        """Hands ``queue_start`` the core's DMA copy count (a chunk copy's call follows it)."""

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            state.core_state = self

    class Durations(durations_cls):  # type: ignore[misc, valid-type]
        """Announces a drain's two legs to the ``queue_start`` calls on chips without FixPipe."""

        def drain(self, rows: int, cols: int) -> tuple[float, float]:
            legs: tuple[float, float] = super().drain(rows, cols)
            state.pending.extend((("V", 0.0), ("MTE3", 0.0)))
            return legs

    def queue_start(pipe_free: Any, ready: Any, ready2: Any = None) -> Any:
        own = orig_queue(pipe_free, ready, ready2)
        copies = state.core_state.copies
        if state.pending:
            pipe, work = state.pending.pop(0)
        elif copies > state.copies_seen:
            # A direct chunk copy: the simulator counts its DMA copies before queueing it.
            pipe, work = "MTE2", (copies - state.copies_seen) * state.copy_work
            state.copies_seen = copies
        elif state.after_step and state.fixpipe:
            pipe, work = "FIX", 0.0
        else:
            pipe, work = "MTE2", 0.0  # a bias slice, before its block's copies
        state.after_step = False
        start = max(own, state.issue(pipe, work))
        state.started(pipe, start, own)
        return start

    def k_step(mte1_free: float, m_free: float, a_ready: float, b_ready: float, *rest: Any) -> Any:
        # The rule is played once per instruction issued, each time with one more issue cycle
        # folded into its inputs: an issue enters a start as one more term of its maximum (the
        # L0A load's through MTE1's queue end, the L0B load's through its chunk's arrival, the
        # MMAD's through M's queue end), so each play's start is the instruction's own without
        # its issue, then with it.
        own = orig_step(mte1_free, m_free, a_ready, b_ready, *rest)
        issue_a = state.issue("MTE1", state.step_work)
        mte1_free = max(mte1_free, issue_a)
        first = orig_step(mte1_free, m_free, a_ready, b_ready, *rest)
        state.started("MTE1", first[0], own[0])
        issue_b = state.issue("MTE1", 0.0)
        b_ready = max(b_ready, issue_b)
        mid = orig_step(mte1_free, m_free, a_ready, b_ready, *rest)
        state.started("MTE1", mid[2], first[2])
        issue_m = state.issue("M", 0.0)
        out = orig_step(mte1_free, max(m_free, issue_m), a_ready, b_ready, *rest)
        state.started("M", out[4], mid[4])
        state.after_step = True
        return out

    def staged_copy(queue_free: Any, halves_free: Any, slot_free: Any, legs: Any) -> Any:
        # As in k_step: one play per leg issued, each leg's issue through its queue's end.
        own = orig_staged(queue_free, halves_free, slot_free, legs)
        state.copies_seen = state.core_state.copies  # (its one DMA copy, issued below)
        mte2_free, vec_free, mte3_free = queue_free
        mte2_free = max(mte2_free, state.issue("MTE2", state.copy_work))
        first = orig_staged((mte2_free, vec_free, mte3_free), halves_free, slot_free, legs)
        state.started("MTE2", first[0][0], own[0][0])
        vec_free = max(vec_free, state.issue("V", 0.0))
        second = orig_staged((mte2_free, vec_free, mte3_free), halves_free, slot_free, legs)
        state.started("V", second[1][0], first[1][0])
        mte3_free = max(mte3_free, state.issue("MTE3", 0.0))
        out = orig_staged((mte2_free, vec_free, mte3_free), halves_free, slot_free, legs)
        state.started("MTE3", out[2][0], second[2][0])
        state.after_step = False
        return out

    wrapped = {
        "simulate_core": simulate_core,
        "simulate_programs": simulate_programs,
        "queue_start": queue_start,
        "k_step": k_step,
        "staged_copy": staged_copy,
        "_Durations": Durations,
        "CoreState": CoreState,
    }
    for name, fn in wrapped.items():
        setattr(sim_mod, name, fn)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(sim_mod, name, fn)


@dataclass
class IssueRun:
    """One case simulated under the issue: its time and what the issue did."""

    time_us: float
    #: The MTE2 pipe's idle share of the core time, averaged over the cores (percent).
    mte2_idle_pct: float
    #: MTE1 busy time averaged over the cores (us): the instructions' cycles, which the issue
    #: does not change.
    mte1_us: float
    delayed: int
    instructions: int


def run_case(
    problem: Problem,
    tiling: Any,
    preset: HardwarePreset,
    depth: int | Mapping[str, int] | None,
    device: bool = True,
) -> IssueRun:
    """Simulates one case under in-order issue with ``depth`` queues (None: the model itself)."""
    log: list[CoreIssue] = []
    if depth is None:
        out = sim_mod.simulate(problem, tiling, preset)
    else:
        with in_order_issue(depth, log):
            out = sim_mod.simulate(problem, tiling, preset)
    total = sum(c.shape.cores for c in out.cores)
    mte2 = sum(c.busy_cycles["MTE2"] * c.shape.cores for c in out.cores) / total
    mte1 = sum(c.busy_cycles["MTE1"] * c.shape.cores for c in out.cores) / total
    mean = sum(c.makespan_cycles * c.shape.cores for c in out.cores) / total
    return IssueRun(
        time_us=out.device_time_us if device else out.end_to_end_us,
        mte2_idle_pct=(1.0 - mte2 / mean) * 100.0,
        mte1_us=mte1 / preset.clock_mhz,
        delayed=sum(c.delayed * c.cores for c in log),
        instructions=sum(c.instructions * c.cores for c in log),
    )
