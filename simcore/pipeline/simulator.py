"""The reference model: a discrete-event simulation of the Matmul kernel on the AI Core.

Each pipe (MTE2, MTE1, M, FIX, and V / MTE3 on chips that stage through UB) is an in-order queue
(seed 004). Instructions are issued in program order; an instruction starts when its pipe is free
and every flag it waits on has been set (seed 004's events), and holds its pipe for its cost
(:mod:`simcore.pipeline.costs`); where the preset runs the scalar start-up serial, no pipe is
free before it, the first issue waits for it (:func:`simcore.pipeline.scalar.startup_cycles`).
The flags are the buffer hand-offs of the Matmul, each a function of
:mod:`simcore.pipeline.precedence` (the estimator's block replay calls the same ones):

* an L1 chunk copy waits for its slot: the last MTE1 read of the chunk it replaces (depthA1 /
  depthB1 give one or two slots per operand);
* MTE1 into L0A/L0B waits for the chunk to arrive and for its L0 slot: the MMAD that used the slot
  ``dbL0A`` (``dbL0B``) steps earlier;
* the first MMAD of a block waits for its L0C slot: the drain ``dbL0C`` blocks earlier;
* the drain of a block (FixPipe, or L0C->UB by V then UB->GM by MTE3) waits for its last MMAD;
* with a bias, each block's bias slice is fetched by MTE2 before the block's copies.

Because every flag points at an instruction issued earlier, one pass in program order computes the
exact as-soon-as-possible schedule of the in-order queues. Cores with the same share of C behave
identically, so each distinct core shape is simulated once, and the blocks that several cores'
programs begin with alike are played once for all of them (each program plays on from a copy of
the core's state there, :mod:`simcore.pipeline.core_state`: the same schedule to the bit); the
slowest core sets the kernel time, which is never below the time HBM needs for the chip's
traffic. On UB-path chips the tiling's UB plan picks the data path
(:func:`simcore.pipeline.costs.takes_vector_path`).
The bounds of seed 003 come along: the sequential time (sum of all work on a core) and the
resource bound (its busiest pipe); the makespan lies between them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.core_state import ChunkState, CoreState
from simcore.pipeline.costs import Costs, ceil_div, takes_vector_path
from simcore.pipeline.drain import unit_flag_db_l0c, unit_flag_drain_end, unit_flag_drain_start
from simcore.pipeline.precedence import (
    chunk_of_step,
    drain_ready,
    handoff_copy_ready,
    handoff_read_ready,
    k_step,
    l0c_buffer_free,
    l1_slot_free,
    l1_slot_release,
    queue_start,
    staged_copy,
)
from simcore.pipeline.restart import restart_at_step
from simcore.pipeline.scalar import scalar_cycles, startup_cycles
from simcore.pipeline.traffic import (
    CoreShape,
    chip_traffic,
    core_programs,
    hbm_floor_cycles,
    kernel_times,
    slots,
)
from simcore.pipeline.transfer import copy_pieces, norm_step_handoff, operand_contention
from simcore.tiling.problem import Problem, Template
from simcore.tiling.tcube import TCubeTiling

PIPES: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3", "SCALAR")
_P = {name: i for i, name in enumerate(PIPES)}

#: Instruction kinds (the timeline colours them).
KINDS: tuple[str, ...] = (
    "load_a",
    "load_b",
    "load_bias",
    "nd2nz_a",
    "nd2nz_b",
    "ub_to_l1_a",
    "ub_to_l1_b",
    "l0a",
    "l0b",
    "mmad",
    "fixpipe",
    "l0c_to_ub",
    "ub_to_gm",
)
_K = {name: i for i, name in enumerate(KINDS)}


@dataclass
class CoreResult:
    """The schedule of one core shape."""

    shape: CoreShape
    makespan_cycles: float
    busy_cycles: dict[str, float]
    sequential_cycles: float
    instructions: int
    # Per instruction: pipe index, kind index, start and end cycle, block index.
    pipe: np.ndarray = field(repr=False)
    kind: np.ndarray = field(repr=False)
    start: np.ndarray = field(repr=False)
    end: np.ndarray = field(repr=False)
    block: np.ndarray = field(repr=False)


@dataclass
class SimResult:
    """Simulated kernel time and per-pipe figures of the slowest core."""

    cycles: float
    #: The kernel per call, launch included (:func:`simcore.pipeline.traffic.kernel_us`).
    time_us: float
    #: The slowest core plus the device start-up (the profiler's Task Duration).
    device_time_us: float
    #: Per back-to-back call, at least the host's dispatch floor.
    end_to_end_us: float
    #: The cores' mean time (the profiler's aicore_time).
    core_time_avg_us: float
    launch_overhead_us: float
    busy_cycles: dict[str, float]
    sequential_cycles: float
    resource_cycles: float
    slowest: CoreResult
    cores: list[CoreResult]
    cap_bytes_per_cycle: float
    read_bytes: float
    write_bytes: float
    hbm_bytes: float


#: One K step of a block as the core plays it: whether it is the block's first, the A and B
#: chunks it reads (their indices along K), and its cycles, as a triple and one by one.
_Step = tuple[bool, int, int, tuple[float, float, float], float, float, float]
#: One block of a core's program (:func:`_program_blocks`): its rows and columns, its A and B
#: chunks' rows and columns, and their row groups' keys.
_Block = tuple[int, int, int, int, int, int]


class _Chunks:
    """One operand's chunk layout in L1 and its copies' costs per chunk extent.

    The same for every core of the kernel; what a core has copied so far is its
    :class:`simcore.pipeline.core_state.ChunkState`.
    """

    def __init__(self, is_a: bool, n_slots: int, via_ub: bool, k: int, chunk_k: int) -> None:
        self.n_slots = n_slots
        self.is_a = is_a
        self.via_ub = via_ub
        #: The chunks' K extents along K (``stepK`` base blocks each, the last one less).
        self.lengths = [min(chunk_k, k - i * chunk_k) for i in range(ceil_div(k, chunk_k))]
        self.costs: dict[int, list[tuple[float, float, float, int]]] = {}
        # The log codes (pipe | kind << 3) of the copy's legs: GM->L1 or GM->UB, reorder, UB->L1.
        legs = ("load", "nd2nz", "ub_to_l1")
        kinds = [f"{leg}_{'a' if is_a else 'b'}" for leg in legs]
        pipes = ("MTE2", "V", "MTE3")
        self.codes = tuple(_P[p] | _K[kind] << 3 for p, kind in zip(pipes, kinds, strict=True))

    def costs_of(self, rows: int, durations: _Durations) -> list[tuple[float, float, float, int]]:
        """The copy costs of the ``rows``-row chunks along K (:meth:`_Durations.copy`).

        Kept per ``rows``: the blocks of a core look them up once each, not once per copy.
        """
        known = self.costs.get(rows)
        if known is None:
            known = self.costs[rows] = [durations.copy(self.is_a, rows, kk) for kk in self.lengths]
        return known


class _Durations:
    """Cycles of the cores' instructions per shape, cached (chunk and block shapes repeat).

    Every cost comes from :class:`Costs` (the estimator prices the same shapes with the same
    calls); the direct copies carry the template's copy pieces and the same-address factor of
    the kernel's core split (:mod:`simcore.pipeline.transfer`).
    """

    def __init__(
        self, c: Costs, problem: Problem, t: TCubeTiling, cap_bpc: float, write_cap: float | None
    ) -> None:
        self.c = c
        # The reads' and the writes' (C's drains) bandwidth caps, the reads' where None
        # (simcore.pipeline.traffic.chip_bandwidth_cap).
        self.cap = cap_bpc
        self.write_cap = cap_bpc if write_cap is None else write_cap
        self.t = t
        self.norm = problem.template is Template.NORM
        factor_a, factor_b = operand_contention(c, t.singleCoreM, t.singleCoreN, t.usedCoreNum)
        self.factor_a, self.factor_b = float(factor_a), float(factor_b)
        self.copies_of: dict[tuple[bool, int, int], tuple[float, float, float, int]] = {}
        self.steps: dict[tuple[int, int, int], tuple[float, float, float]] = {}
        self.drains: dict[tuple[int, int], tuple[float, float]] = {}
        self.fixes: dict[tuple[int, int], float] = {}
        self.k = problem.k
        self.plans: dict[tuple[int, int], list[_Step]] = {}
        #: FixPipe cycles of one UnitFlag grain at the writes' cap.
        self.grain = float(c.fix_grain_cycles(self.write_cap)) if c.has_fixpipe else 0.0

    def copy(self, is_a: bool, rows: int, kk: int) -> tuple[float, float, float, int]:
        """One ``rows`` x ``kk`` chunk copy: its legs' (MTE2, V, MTE3) cycles and DMA copies.

        A direct copy (GM->L1) is one MTE2 leg of the template's copy pieces; the UB path's
        (GM->UB, the ND->NZ reorder of the vector model, UB->L1) is one DMA copy.
        """
        key = (is_a, rows, kk)
        known = self.copies_of.get(key)
        if known is None:
            c, t = self.c, self.t
            if not (c.a_via_ub if is_a else c.b_via_ub):
                base = t.baseM if is_a else t.baseN
                pieces = copy_pieces(self.norm, rows, base, kk, t.baseK)
                factor = self.factor_a if is_a else self.factor_b
                dur = float(c.direct_load_cycles(is_a, rows, kk, self.cap, pieces, factor))
                known = (dur, 0.0, 0.0, int(pieces[0] * pieces[1]))
            else:
                nbytes = float(c.l1_tile_bytes(rows, kk))
                known = (
                    float(c.gm_to_ub_cycles(nbytes, c.a_eff if is_a else c.b_eff, self.cap)),
                    float(c.nd2nz_a_cycles(rows, kk) if is_a else c.nd2nz_b_cycles(rows, kk)),
                    float(c.ub_to_l1_cycles(nbytes)),
                    1,
                )
            self.copies_of[key] = known
        return known

    def step(self, rows: int, cols: int, kk: int) -> tuple[float, float, float]:
        """(L0A load, L0B load, MMAD) cycles of one K step of a ``rows`` x ``cols`` block."""
        key = (rows, cols, kk)
        durs = self.steps.get(key)
        if durs is None:
            c = self.c
            durs = (
                float(c.la_cycles(rows, kk)),
                float(c.lb_cycles(cols, kk)),
                float(c.mmad_cycles(rows, cols, kk)),
            )
            self.steps[key] = durs
        return durs

    def plan(self, rows: int, cols: int, handoff: bool) -> list[_Step]:
        """The K steps of a ``rows`` x ``cols`` block: their chunks and cycles, in K order.

        Kept per block shape (the K tail's cycles differ): one lookup a block. ``handoff``:
        the Norm step hand-off (:func:`simcore.pipeline.transfer.norm_step_handoff`).
        """
        plan = self.plans.get((rows, cols))
        if plan is not None:
            return plan
        t, k, plan = self.t, self.k, []
        for s in range(ceil_div(k, t.baseK)):
            la, lb, mm = self.step(rows, cols, min(t.baseK, k - s * t.baseK))
            if restart_at_step(handoff, s, t.stepKa):
                mm += self.c.mmad_restart_cycles  # an idle cube restarts (pipeline/restart.py)
            ka, kb = chunk_of_step(s, t.stepKa), chunk_of_step(s, t.stepKb)
            # -1: the step reads the chunk the step before read (still in L1, no copy between).
            if s and ka == chunk_of_step(s - 1, t.stepKa):
                ka = -1
            if s and kb == chunk_of_step(s - 1, t.stepKb):
                kb = -1
            plan.append((s == 0, ka, kb, (la, lb, mm), la, lb, mm))
        self.plans[(rows, cols)] = plan
        return plan

    def fix(self, rows: int, cols: int) -> float:
        """FixPipe cycles of a ``rows`` x ``cols`` block's drain at the writes' cap."""
        dur = self.fixes.get((rows, cols))
        if dur is None:
            dur = self.fixes[(rows, cols)] = float(self.c.fix_cycles(rows, cols, self.write_cap))
        return dur

    def drain(self, rows: int, cols: int) -> tuple[float, float]:
        """(L0C->UB, UB->GM) cycles of a block's drain on chips without FixPipe."""
        legs = self.drains.get((rows, cols))
        if legs is None:
            c = self.c
            legs = (
                float(c.c_to_ub_cycles(rows, cols)),
                float(c.c_ub_to_gm_cycles(rows, cols, self.write_cap)),
            )
            self.drains[(rows, cols)] = legs
        return legs


def _l0_buffers(problem: Problem, t: TCubeTiling) -> tuple[int, int, int]:
    """dbL0A, dbL0B and dbL0C as the core plays them (UnitFlag hands L0C over as two buffers).

    Raises:
        ValueError: dbL0A or dbL0B is not 1 or 2 (the struct allows no other value).
    """
    db_l0a, db_l0b, db_l0c = t.dbL0A, t.dbL0B, t.dbL0C
    if problem.unit_flag:
        db_l0c = int(unit_flag_db_l0c(db_l0c))
    if db_l0a not in (1, 2) or db_l0b not in (1, 2):
        raise ValueError(f"dbL0A, dbL0B must be 1 or 2, got {db_l0a}, {db_l0b}")
    return db_l0a, db_l0b, db_l0c


class _Kernel:
    """What every core of a kernel plays with: its costs, L0 buffers, chunk layouts, start-up.

    Raises:
        ValueError: dbL0A or dbL0B is not 1 or 2 (the struct allows no other value).
    """

    def __init__(
        self,
        problem: Problem,
        t: TCubeTiling,
        preset: HardwarePreset,
        cap_bpc: float,
        costs: Costs | None,
        write_cap_bpc: float | None,
    ) -> None:
        self.problem, self.t, self.preset, self.cap = problem, t, preset, cap_bpc
        self.c = c = costs or Costs(problem, preset, takes_vector_path(problem, t, preset))
        self.db_l0 = _l0_buffers(problem, t)
        self.k_iter = ceil_div(problem.k, t.baseK)
        self.a_chunks, self.b_chunks = _operand_chunks(c, t, problem.k)
        self.durations = _Durations(c, problem, t, cap_bpc, write_cap_bpc)
        self.handoff = norm_step_handoff(
            problem, c, self.a_chunks.n_slots, self.b_chunks.n_slots, t.stepKa, t.stepKb,
            self.k_iter,
        )  # fmt: skip
        # No pipe starts before the scalar unit has done its start-up and issued the first
        # instruction (seed 004's in-order issue; simcore.pipeline.scalar.startup_cycles, 0
        # where the preset overlaps the start-up).
        self.startup = startup_cycles(preset, problem)

    def start(self) -> CoreState:
        """A core before its first block."""
        return CoreState(len(PIPES), self.startup, self.db_l0[2])

    def result(self, st: CoreState, shape: CoreShape) -> CoreResult:
        """The schedule of a core whose program ``shape`` ``st`` has played to its end.

        ``st`` is left as it is (other programs may play on from it).
        """
        busy = st.busy.copy()
        steps = st.blocks * self.k_iter
        busy[_P["SCALAR"]] = float(scalar_cycles(self.preset, self.problem, steps, st.copies))
        return _core_result(shape, busy, st.log_code, st.log_times)


def _play(kernel: _Kernel, st: CoreState, blocks: list[_Block], stop: int) -> None:
    """Plays ``blocks[st.blocks:stop]`` of a core's program on from ``st``, in place."""
    problem, c, durations = kernel.problem, kernel.c, kernel.durations
    cap_bpc, handoff, fixpipe = kernel.cap, kernel.handoff, kernel.preset.has_fixpipe
    db_l0a, db_l0b, db_l0c = kernel.db_l0

    # Instruction log, appended in program order. Pipe, kind and block are packed into one code
    # (pipe | kind << 3 | block << 7; a K step's three instructions in one, _core_result), and
    # each instruction's start and end go to one list side by side, because the 8192^3 schedule
    # logs ~100k instructions and the appends are a large share of the simulator's time; they
    # are unpacked once at the end.
    log_code, log_times = st.log_code, st.log_times
    free, busy = st.free, st.busy

    def record(pipe: int, code: int, start: float, end: float, dur: float) -> float:
        # ``code``: the instruction's pipe | kind << 3 | block << 7.
        free[pipe] = end
        busy[pipe] += dur
        log_code.append(code)
        log_times.append(start)
        log_times.append(end)
        return end

    def run(pipe: int, kind: int, ready: float, dur: float, blk: int) -> float:
        start = queue_start(free[pipe], ready)
        return record(pipe, pipe | kind << 3 | blk << 7, start, start + dur, dur)

    mte2, mte1, mcube, fix, vec, mte3 = (_P[p] for p in PIPES[:6])
    # UB staging of the ND->NZ path: one source and one transposed half (UB >= 2 x transLength),
    # so a GM->UB copy waits for the previous reorder and a reorder for the previous UB->L1.
    ub_src_free, ub_dst_free, c_ub_free = st.ub_src_free, st.ub_dst_free, st.c_ub_free

    def loader(
        chunks: _Chunks, held: ChunkState
    ) -> Callable[[int, tuple[float, float, float, int], int], int]:
        # The copy of one operand's chunks, its state in the closure (read once per copy).
        n_slots, via_ub, index, keys = chunks.n_slots, chunks.via_ub, held.index, held.keys
        ready, reads, (code_mte2, code_vec, code_mte3) = held.ready, held.reads, chunks.codes

        def load_chunk(key: int, cost: tuple[float, float, float, int], blk_code: int) -> int:
            # Copies a chunk into L1 (cost: _Durations.copy); returns its number in ``held``.
            nonlocal ub_src_free, ub_dst_free
            slot_free = l1_slot_free(reads, n_slots)
            if handoff:
                slot_free = handoff_copy_ready(slot_free, free_mte1)
            st.copies += cost[3]
            if not via_ub:
                # (record written out: this runs once per copy.)
                start = queue_start(free[mte2], slot_free)
                dur = cost[0]
                end = free[mte2] = start + dur
                busy[mte2] += dur
                log_code.append(code_mte2 | blk_code)
                log_times.extend((start, end))
            else:
                legs = cost[:3]
                (s1, e1), (s2, e2), (s3, end) = staged_copy(
                    (free[mte2], free[vec], free[mte3]), (ub_src_free, ub_dst_free), slot_free, legs
                )
                record(mte2, code_mte2 | blk_code, s1, e1, legs[0])
                record(vec, code_vec | blk_code, s2, e2, legs[1])
                record(mte3, code_mte3 | blk_code, s3, end, legs[2])
                ub_src_free, ub_dst_free = e2, end
            # Into L1, in the slot of the oldest chunk (``n_slots`` copies back) when all are taken.
            number = len(reads)
            if number >= n_slots:
                del index[keys[number - n_slots]]
            keys.append(key)
            index[key] = number
            ready.append(end)
            reads.append(end)
            return number

        return load_chunk

    a_chunks, b_chunks = kernel.a_chunks, kernel.b_chunks
    chunks_a, chunks_b = len(a_chunks.lengths), len(b_chunks.lengths)
    drain_end = st.drain_end
    a_index, a_ready, a_reads = st.a.index, st.a.ready, st.a.reads
    b_index, b_ready, b_reads = st.b.index, st.b.ready, st.b.reads
    load_a, load_b = loader(a_chunks, st.a), loader(b_chunks, st.b)
    # MTE1 and the cube only run the step loop below, so their queue state lives in locals
    # there (written back after the loop); mm_end1 / mm_end2 are the last two MMADs' ends, the
    # L0A / L0B buffer hand-offs.
    free_mte1, free_m = free[mte1], free[mcube]
    busy_mte1, busy_m = busy[mte1], busy[mcube]
    mm_end1, mm_end2 = st.mm_end1, st.mm_end2
    single_l0 = (db_l0a == 1, db_l0b == 1)
    append_code, extend_times = log_code.append, log_times.extend
    step_rule = k_step  # (local names: looked up once per K step)
    slot_release = l1_slot_release

    for b, (rows, cols, rows_a, rows_b, ga, gb) in enumerate(blocks[st.blocks : stop], st.blocks):
        # A chunk's key: its row group (of the core's program) and its index along K.
        key_a0, key_b0 = ga * chunks_a, gb * chunks_b
        costs_a = a_chunks.costs_of(rows_a, durations)
        costs_b = b_chunks.costs_of(rows_b, durations)
        blk_code = b << 7
        # A K step logs an L0A load, an L0B load and an MMAD: their six times in one extend,
        # and one code, ~block, that _core_result expands into the three.
        step_code = ~b
        if problem.bias:
            # The kernel fetches the bias slice of every output block (one L1 bias slot).
            run(mte2, _K["load_bias"], 0.0, float(c.bias_load_cycles(cols, cap_bpc)), b)
        last_mmad = sm = 0.0
        c_free = l0c_buffer_free(drain_end, db_l0c)
        for first, ka, kb, durs, la, lb, mm in durations.plan(rows, cols, handoff):
            # The chunks' numbers (ja, jb): looked up where a step starts a chunk, copied into
            # L1 where it is not there (-1).
            if ka >= 0:
                key_a = key_a0 + ka
                ja = a_index.get(key_a, -1)
                if ja < 0:
                    ja = load_a(key_a, costs_a[ka], blk_code)
            if kb >= 0:
                key_b = key_b0 + kb
                jb = b_index.get(key_b, -1)
                if jb < 0:
                    jb = load_b(key_b, costs_b[kb], blk_code)
            ready_a = a_ready[ja]
            if handoff:
                ready_a = handoff_read_ready(ready_a, b_ready[jb])
            times = step_rule(
                free_mte1, free_m, ready_a, b_ready[jb], mm_end1, mm_end2, single_l0,
                c_free if first else None, durs,
            )  # fmt: skip
            _, _, _, eb, sm, last_mmad = times
            # A chunk's slot is released after the MMAD of its last step starts (the
            # kernel frees it after that MMAD in program order: precedence.l1_slot_release).
            a_reads[ja] = b_reads[jb] = slot_release(eb, sm)
            free_mte1, free_m = eb, last_mmad
            busy_mte1 += la
            busy_mte1 += lb
            busy_m += mm
            append_code(step_code)
            extend_times(times)
            mm_end2 = mm_end1
            mm_end1 = last_mmad
        if fixpipe:
            fix_cycles = durations.fix(rows, cols)
            if c.unit_flag_overlap:
                # UnitFlag: FixPipe drains each fractal the last MMAD finishes
                # (simcore.pipeline.drain.unit_flag_drain_end).
                start = queue_start(free[fix], unit_flag_drain_start(sm))
                end = unit_flag_drain_end(start, fix_cycles, last_mmad, durations.grain)
                code = fix | _K["fixpipe"] << 3 | blk_code
                drained = record(fix, code, start, float(end), fix_cycles)
            else:
                drained = run(fix, _K["fixpipe"], drain_ready(last_mmad, 0.0), fix_cycles, b)
        else:
            # L0C -> UB (vector) frees the L0C slot; UB -> GM (MTE3) frees the UB staging.
            legs = durations.drain(rows, cols)
            drained = run(vec, _K["l0c_to_ub"], drain_ready(last_mmad, c_ub_free), legs[0], b)
            c_ub_free = run(mte3, _K["ub_to_gm"], drained, legs[1], b)
        drain_end.append(drained)
    free[mte1], free[mcube] = free_mte1, free_m
    busy[mte1], busy[mcube] = busy_mte1, busy_m
    st.mm_end1, st.mm_end2 = mm_end1, mm_end2
    st.ub_src_free, st.ub_dst_free, st.c_ub_free = ub_src_free, ub_dst_free, c_ub_free
    st.blocks = stop


def simulate_core(
    problem: Problem,
    t: TCubeTiling,
    preset: HardwarePreset,
    shape: CoreShape,
    cap_bpc: float,
    costs: Costs | None = None,
    write_cap_bpc: float | None = None,
) -> CoreResult:
    """Plays one core's share of the kernel alone; its schedule (caps: :class:`_Durations`).

    Raises:
        ValueError: dbL0A or dbL0B is not 1 or 2 (the struct allows no other value).
    """
    kernel = _Kernel(problem, t, preset, cap_bpc, costs, write_cap_bpc)
    return _play_programs(kernel, [shape])[0]


def simulate_programs(
    problem: Problem,
    t: TCubeTiling,
    preset: HardwarePreset,
    shapes: list[CoreShape],
    cap_bpc: float,
    costs: Costs | None = None,
    write_cap_bpc: float | None = None,
) -> list[CoreResult]:
    """The schedules of core programs, in order, each the one :func:`simulate_core` gives.

    A run of blocks that several programs begin with (a dealt split's cores with the same
    first tiles, or the first blocks of a full tile and its tail) is played once, and each
    program plays on from a copy of the core's state at its end
    (:class:`simcore.pipeline.core_state.CoreState`).

    Raises:
        ValueError: dbL0A or dbL0B is not 1 or 2 (the struct allows no other value).
    """
    kernel = _Kernel(problem, t, preset, cap_bpc, costs, write_cap_bpc)
    return _play_programs(kernel, shapes)


def _play_programs(kernel: _Kernel, shapes: list[CoreShape]) -> list[CoreResult]:
    """Plays the programs ``shapes`` with their common beginnings played once."""
    programs = [_program_blocks(s, kernel.t) for s in shapes]
    # In the order of their tiles, programs with a common beginning sit side by side, and the
    # blocks a run of programs all begin with are the fewest any two neighbours share.
    order = sorted(range(len(shapes)), key=lambda i: shapes[i].program)
    shared = [_common_length(programs[i], programs[j]) for i, j in pairwise(order)]
    results: dict[int, CoreResult] = {}

    def play(st: CoreState, lo: int, hi: int) -> None:
        # Plays order[lo:hi], all of which begin with the blocks ``st`` has played.
        if hi - lo == 1:
            blocks = programs[order[lo]]
            _play(kernel, st, blocks, len(blocks))
            results[order[lo]] = kernel.result(st, shapes[order[lo]])
            return
        common = min(shared[lo : hi - 1])
        _play(kernel, st, programs[order[lo]], common)
        # The runs of neighbours that share more than ``common`` blocks.
        cuts = [lo] + [j + 1 for j in range(lo, hi - 1) if shared[j] == common] + [hi]
        for sub_lo, sub_hi in pairwise(cuts):
            # A program that ends here leaves the state as it is; the last run takes it over.
            ends = sub_hi - sub_lo == 1 and len(programs[order[sub_lo]]) == common
            play(st if ends or sub_hi == hi else st.copy(), sub_lo, sub_hi)

    play(kernel.start(), 0, len(shapes))
    return [results[i] for i in range(len(shapes))]


def _common_length(a: list[_Block], b: list[_Block]) -> int:
    """How many blocks programs ``a`` and ``b`` begin with alike (a bisection on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _operand_chunks(c: Costs, t: TCubeTiling, k: int) -> tuple[_Chunks, _Chunks]:
    """The A and B chunks of a core: their L1 slots (:func:`slots`), paths and K extents."""
    return (
        _Chunks(True, int(slots(t.depthA1, t.stepM, t.stepKa)), c.a_via_ub, k, t.stepKa * t.baseK),
        _Chunks(False, int(slots(t.depthB1, t.stepN, t.stepKb)), c.b_via_ub, k, t.stepKb * t.baseK),
    )


def _program_blocks(shape: CoreShape, t: TCubeTiling) -> list[_Block]:
    """The blocks of a core's program in order: its tiles back to back, each in base blocks.

    One tile, or a dealt split's rounds, each walked in the iterate order. Per block: its rows
    and columns, the rows of the A chunks and the columns of the B chunks it reads (``stepM``
    and ``stepN`` blocks' worth, less at the tile's edge), and their row groups' keys, counted
    over the program (the tiles read different rows of A and columns of B, so no chunk of one
    tile is reused by the next).
    """
    base_m, base_n = t.baseM, t.baseN
    grp_a, grp_b = t.stepM * base_m, t.stepN * base_n
    blocks: list[_Block] = []
    first_ga = first_gb = 0
    for rows_total, cols_total in shape.program:
        m_iter = ceil_div(rows_total, base_m)
        n_iter = ceil_div(cols_total, base_n)
        if t.iterateOrder == 0:
            order = [(mi, ni) for ni in range(n_iter) for mi in range(m_iter)]
        else:
            order = [(mi, ni) for mi in range(m_iter) for ni in range(n_iter)]
        for mi, ni in order:
            ga, gb = mi // t.stepM, ni // t.stepN
            blocks.append(
                (
                    min(base_m, rows_total - mi * base_m),
                    min(base_n, cols_total - ni * base_n),
                    min(grp_a, rows_total - ga * grp_a),
                    min(grp_b, cols_total - gb * grp_b),
                    first_ga + ga,
                    first_gb + gb,
                )
            )
        first_ga += ceil_div(m_iter, t.stepM)
        first_gb += ceil_div(n_iter, t.stepN)
    return blocks


#: The codes (pipe | kind << 3) of a K step's instructions: L0A load, L0B load, MMAD.
_STEP_CODES = np.array([_P["MTE1"] | _K["l0a"] << 3, _P["MTE1"] | _K["l0b"] << 3,
                        _P["M"] | _K["mmad"] << 3], dtype=np.int64)  # fmt: skip


def _unpack_steps(code: np.ndarray) -> np.ndarray:
    """The log's codes with each K step's one code (``~block``, negative) made its three."""
    steps = code < 0
    counts = np.where(steps, 3, 1)
    out = np.repeat(code, counts)
    first = (np.cumsum(counts) - counts)[steps]
    blocks = ~code[steps] << 7
    for i, step_code in enumerate(_STEP_CODES):
        out[first + i] = step_code | blocks
    return out


def _core_result(
    shape: CoreShape, busy: list[float], log_code: list[int], log_times: list[float]
) -> CoreResult:
    """The schedule of one core from its busy totals and its packed instruction log."""
    # (fromiter: a third cheaper than asarray, which first discovers the lists' types.)
    times = np.fromiter(log_times, np.float64, len(log_times)).reshape(-1, 2)
    start = np.ascontiguousarray(times[:, 0])
    end = np.ascontiguousarray(times[:, 1])
    code = _unpack_steps(np.fromiter(log_code, np.int64, len(log_code)))
    # The scalar pipe issues every instruction: the core does not end before it does.
    makespan = max(float(end.max()) if len(end) else 0.0, busy[_P["SCALAR"]])
    return CoreResult(
        shape=shape,
        makespan_cycles=makespan,
        busy_cycles={p: busy[i] for i, p in enumerate(PIPES)},
        sequential_cycles=float(sum(busy)),
        instructions=len(code),
        pipe=(code & 7).astype(np.int8),
        kind=((code >> 3) & 15).astype(np.int8),
        start=start,
        end=end,
        block=(code >> 7).astype(np.int32),
    )


def simulate(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> SimResult:
    """Simulates the whole kernel: every distinct core shape, the slowest sets the time.

    The tiling must be legal (see :func:`simcore.tiling.legality.check_tiling`); an illegal one may
    give a meaningless schedule.
    """
    problem = problem.model_view()  # a DN operand is the ND layout of its transpose
    traffic = chip_traffic(problem, t, preset)
    # The UB plan decides the data path on UB-path chips (vector reorders or 32 B column DMA).
    costs = Costs(problem, preset, takes_vector_path(problem, t, preset))
    cores = simulate_programs(
        problem,
        t,
        preset,
        core_programs(problem, t),
        traffic.cap_bytes_per_cycle,
        costs,
        traffic.write_cap_bytes_per_cycle,
    )
    slowest = max(cores, key=lambda r: r.makespan_cycles)
    launch_cycles = preset.launch_overhead_us * preset.clock_mhz
    # The chip cannot finish before HBM has served its bytes: a floor on the makespan, on the
    # resource bound (HBM is a resource) and so on the sequential bound too.
    floor = float(hbm_floor_cycles(traffic.hbm_bytes, preset))
    core_cycles = max(slowest.makespan_cycles, floor)
    cycles = core_cycles + launch_cycles
    resource = max(max(max(r.busy_cycles.values()) for r in cores), floor) + launch_cycles
    sequential = max(max(r.sequential_cycles for r in cores), floor) + launch_cycles
    # The cores' mean time over the slowest's (the profiler's aicore_time against its Task
    # Duration), from the simulated cores themselves.
    total = sum(r.shape.cores for r in cores)
    mean = sum(max(r.makespan_cycles, floor) * r.shape.cores for r in cores) / total
    times = kernel_times(preset, core_cycles, mean / core_cycles if core_cycles else 1.0)
    return SimResult(
        cycles=cycles,
        time_us=float(times.time_us),
        device_time_us=float(times.device_time_us),
        end_to_end_us=float(times.end_to_end_us),
        core_time_avg_us=float(times.core_time_avg_us),
        launch_overhead_us=preset.launch_overhead_us,
        busy_cycles=slowest.busy_cycles,
        sequential_cycles=sequential,
        resource_cycles=resource,
        slowest=slowest,
        cores=cores,
        cap_bytes_per_cycle=traffic.cap_bytes_per_cycle,
        read_bytes=traffic.read_bytes,
        write_bytes=traffic.write_bytes,
        hbm_bytes=traffic.hbm_bytes,
    )
