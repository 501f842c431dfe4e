"""The fast estimator: the simulator's schedule in closed form, vectorized over tilings.

It prices the same kernel as :mod:`simcore.pipeline.simulator` with the same cost formulas
(:mod:`simcore.pipeline.costs`, :mod:`simcore.pipeline.transfer`, :mod:`simcore.pipeline.mmad`)
and the same chunk reuse (:func:`simcore.pipeline.traffic.operand_traffic`), but instead of
playing every instruction it composes named terms. A term is one mechanism (the step chain with
its stalls, a slot cycle, the MTE2 gap of a one-slot operand, a UB staging chain, a drain chain,
the first block, the block replay, ...): a chain of precedences the simulator also obeys, so
adding one only moves the estimate towards it. ``_core`` builds the shared records (block grid,
block types, step times, chunking, copies, chunk legs), calls the terms in order and keeps the
longest path and the term that set it (:mod:`simcore.estimate.binding`).

The estimate of the slowest core is ``min(max(start-up + makespan, busiest pipe or HBM floor),
sum of work) + launch``, the start-up the cycles before the scalar unit issues the first
instruction (:func:`simcore.pipeline.scalar.startup_cycles`, 0 unless it runs serial);
:func:`estimate_arrays` returns with it the binding term per candidate (a term, a pipe or HBM
floor, or ``sequential``). On UB-path chips each tiling is priced on the path its UB plan takes
(:func:`simcore.pipeline.costs.vector_path_array`).

Inputs are numpy arrays of struct fields (one entry per candidate); the problem and chip are
scalars. Long inputs are evaluated in blocks of :data:`_BLOCK` candidates so the intermediate
arrays stay in the CPU caches (on UB-path chips each block holds the candidates of one data
path); throughput per chip is in docs/benchmarks.md.

docs/estimator.md has the table of terms, how they compose and how to add one; CHANGELOG.md has
the model's history.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from simcore.estimate.arrays import gather, gathered
from simcore.estimate.binding import BINDING_NAMES, TERM, Makespan, clip_binding
from simcore.estimate.block_replay import ReplayQueue, block_replay_term
from simcore.estimate.blocks import blocks_by_data_path
from simcore.estimate.compute import compute_chain
from simcore.estimate.dealt import (
    Seam,
    dealt_rounds,
    next_tile_seam,
    price_tails,
    tail_extents,
    tail_floor,
    with_tails,
)
from simcore.estimate.drains import (
    c1_pass_start,
    corner_drain,
)
from simcore.estimate.first_block import first_block, first_line
from simcore.estimate.grid import BlockCounts
from simcore.estimate.handoff import mmad_restart_busy, step_handoff
from simcore.estimate.lines import (
    line_stay,
)
from simcore.estimate.mte2_gap import (
    mte2_behind_slot_waiting_b,
    mte2_gap_terms,
)
from simcore.estimate.mte2_linked import linked_pair_gaps, linked_pairs, mte2_bias_between_staged
from simcore.estimate.paths import copy_and_drain_paths
from simcore.estimate.phases import phase_terms
from simcore.estimate.queues import queue_paths
from simcore.estimate.records import core_records
from simcore.estimate.slot_a import a_hops, a_offset_gains, a_one_slot_holds
from simcore.estimate.slot_a_pass import a_pass_cycles, a_streamed_chain
from simcore.estimate.slot_b import b_chain, b_chain_at_a_pass_start, b_hops
from simcore.estimate.staged_blocks import (
    b_chain_behind_a_staging,
    staged_a_block,
    staged_b_block,
)
from simcore.estimate.staged_cycles import staged_block_cycle, staged_first_chunk
from simcore.estimate.staged_passes import staged_pass
from simcore.estimate.staging import (
    staged_one_a_slot,
    staged_one_slot_chains,
    staging_links,
)
from simcore.estimate.stalls import chunk_stalls
from simcore.hardware.dtypes import bits, c0_elements
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import Costs, ceil_div, vector_path_array
from simcore.pipeline.drain import unit_flag_db_l0c
from simcore.pipeline.scalar import after_startup, scalar_cycles, startup_cycles
from simcore.pipeline.traffic import (
    c_gm_bytes_per_element,
    call_refetch,
    chip_bandwidth_cap,
    core_share_of,
    hbm_floor_cycles,
    k_chunking,
    kernel_times,
    kernel_us,
    l2_share_most,
    l2_share_of,
    largest_core_extent,
    operand_chip_traffic,
    reuse_working_set,
    slots,
    tiles_per_core,
    traffic_coefficients,
)
from simcore.tiling.problem import Format, Problem
from simcore.tiling.tcube import TCubeTiling

#: The arrays :func:`estimate_arrays` needs, by struct name.
ESTIMATOR_FIELDS: tuple[str, ...] = (
    "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK", "depthA1", "depthB1",
    "stepM", "stepN", "stepKa", "stepKb", "iterateOrder", "dbL0A", "dbL0B", "dbL0C",
)  # fmt: skip

PIPE_NAMES: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3", "SCALAR")
#: Candidates per pass of :func:`estimate_arrays` (see :func:`_estimate_blocks`).
_BLOCK = 16384
#: Blocks whose block replays are played together (:class:`ReplayQueue`); their outputs are
#: kept until then.
_REPLAY_BLOCKS = 8


def _core(
    c: Costs,
    problem: Problem,
    f: dict[str, Any],
    rows: Any,
    cols: Any,
    cap: Any,
    traffic: tuple[Any, ...] | None = None,
    floor: bool = False,
    queue: ReplayQueue | None = None,
    write_cap: Any = None,
    rounds: Any = None,
    counts: BlockCounts | None = None,
) -> dict[str, Any]:
    """Closed-form schedule of one core with a rows x cols share (arrays): the terms composed.

    Builds the shared records (the block grid, each block type's K loop and drain, the typical
    and the average block's step times, the chunking, the copies and the chunk legs), then calls
    the terms in order; each raises the makespan where its path is longer and :class:`Makespan`
    keeps which term set it. Some terms read the makespan so far (they are priced only where
    they may exceed it), so the order is part of the model (docs/estimator.md).

    ``traffic`` passes the (loads, elements) of A and B from :func:`operand_traffic` when the
    caller already has them for this shape, optionally followed by each operand's groups and
    passes over its full and its tail groups (:func:`operand_chip_traffic`'s ``shape``). With
    ``floor`` the makespan returned is a lower bound over every dbL0A / dbL0B / dbL0C (see
    :func:`makespan_floor_arrays`; the caller passes the three flags as 2) and no binding term
    is kept. With a ``queue`` the block replay is queued
    (:class:`simcore.estimate.block_replay.ReplayQueue`): the makespan and the binding
    (``out["mk"]``) are final once it is flushed. ``cap`` caps the reads, ``write_cap`` the
    writes (C's drains; ``cap`` where None). ``rounds`` (a dealt split's tiles per core,
    :mod:`simcore.estimate.dealt`) asks for the inputs of the ``dealt_rounds`` term. ``counts``
    passes the blocks, K steps, slots, K chunks and cores the caller has already formed.
    """
    r = core_records(c, problem, f, rows, cols, (cap, write_cap), traffic, floor, counts)
    fix, g, bt, avg, ch, cp = c.has_fixpipe, r.g, r.bt, r.avg, r.ch, r.cp
    kf, km_a, km_b = g.kf, ch.km_a, ch.km_b

    # The step chain with its stalls, the MTE2 and drain queues, V / MTE3 and the UB staging.
    st = chunk_stalls(r, km_a, km_b)
    cm = compute_chain(r, st)
    qp = copy_and_drain_paths(r, st, cm, kf, km_a, km_b)
    if floor:
        # The compute path is not monotone in the L0 flags (its start-up share shrinks as the
        # period grows): left out of the floor (the group bound prices it per L0 class).
        mk = Makespan(qp.copy_path, "copy", track=False)
    else:
        mk = Makespan(cm.compute_path, "compute")
        mk.raise_all(qp.copy_path, "copy")
    mk.raise_all(qp.drain_path, "drain")
    if not fix and not floor and qp.idx_c1.size:
        mk.raise_at(qp.idx_c1, qp.c1_path[qp.idx_c1], "c1_drain_chain")
    uq = queue_paths(r, mk)

    # Slot cycles and the paths that repeat per block (priced with the block averaged over the
    # core's blocks, r.avg, and each chunk's own legs, r.lg).
    # (Each term checks where it applies; the guards here only skip the calls of terms that
    # cannot apply to this chip and data path: without FixPipe, with UB staging, in the floors.)
    staged, drains = cp.via_a or cp.via_b, not fix and not floor
    sl = staging_links(r, mk)
    if cp.via_a != cp.via_b:
        linked_pairs(r, qp, uq, mk)
        linked_pair_gaps(r, qp, uq, mk)
    ah = a_hops(r, km_a)
    a_offset_gains(r, ah)
    ao = a_one_slot_holds(r, ah)
    apc = a_pass_cycles(r, ah, ao, km_a, km_b)
    bh = b_hops(r, ah)
    ac = a_streamed_chain(r, sl, ah, ao, apc, bh.rel_bl)
    bc = b_chain(r, ah, ac, bh, mk)
    if drains:
        b_chain_at_a_pass_start(r, bc, mk)
        line_stay(r, ah, apc, bh, mk)
        corner_drain(r, ac, bc, mk)
    phase_terms(r, st, cm, qp, ac, bc, mk)
    gap_path = mte2_gap_terms(r, qp, ah, mk)
    if staged and not fix:
        # (Also in the floors.)
        staged_block_cycle(r, st, cm, sl, ah, bh, mk)
    if staged and not floor:
        staged_first_chunk(r, cm, mk)
        staged_b_block(r, mk)
        staged_a_block(r, mk)
        b_chain_behind_a_staging(r, bc, mk)
        staged_one_slot_chains(r, ah, bh, mk)
        staged_one_a_slot(r, mk)
    mte2_behind_slot_waiting_b(r, mk)
    if drains:
        staged_pass(r, cm, ah, bh, mk)
        c1_pass_start(r, st, qp, mk)
    if staged and not floor:
        mte2_bias_between_staged(r, uq, mk)
    fb = first_block(r, mk)
    if drains:
        first_line(r, st, fb, mk)
    if not floor and (drains or staged):
        block_replay_term(r, mk, queue)
    if fix and not staged:
        step_handoff(r, mk)

    busy = {
        "MTE2": cp.mte2,
        "MTE1": bt.mte1,
        "M": bt.cube + mmad_restart_busy(r),
        "FIX": bt.drain_total if fix else 0.0 * bt.drain_total,
        "V": cp.vec,
        "MTE3": cp.mte3,
        "SCALAR": scalar_cycles(
            c.preset, problem, g.blocks * g.k_iter, cp.dma_copies[0] + cp.dma_copies[1]
        ),
    }
    out: dict[str, Any] = {"mk": mk, "busy": busy}
    if rounds is not None:
        # The dealt_rounds term's inputs (applied once the block replay is final): what of a
        # tile overlaps the next, and the scalar pipe's work of R tiles.
        copies = cp.dma_copies[0] + cp.dma_copies[1]
        out["dealt"] = (
            *next_tile_seam(r, cm, qp, gap_path),
            scalar_cycles(c.preset, problem, rounds * g.blocks * g.k_iter, rounds * copies),
        )
        # (One tile's K steps and copies: a core of tiles of several shapes sums them.)
        out["tile_work"] = (g.blocks * g.k_iter, copies)
    if floor:
        # Per-operand floors (operand_floor_arrays): each chain alone, and the work of the
        # pipes that does not depend on the other operand (its copies are >= 0).
        # (The scalar pipe's work with the operand's own copies only: the estimate is at least
        # it, and its sum of work includes it.)
        steps = g.blocks * g.k_iter
        scalar_a = scalar_cycles(c.preset, problem, steps, cp.dma_copies[0])
        scalar_b = scalar_cycles(c.preset, problem, steps, cp.dma_copies[1])
        fixed_work = bt.mte1 + bt.cube + bt.drain_total
        # (The chain and the scalar pipe apart: the chain follows the start-up, which the
        # scalar pipe's total holds; operand_floor_arrays combines them.)
        out["own_a"] = ac.own_a + avg.mm + bt.dr_last
        out["own_b"] = bh.own_b + avg.mm + bt.dr_last
        out["scalar_a"] = scalar_a
        out["scalar_b"] = scalar_b
        out["seq_a"] = fixed_work + cp.ga + scalar_a
        out["seq_b"] = fixed_work + cp.gb + scalar_b
    return out


def estimate_arrays(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any]
) -> dict[str, Any]:
    """Estimates many tilings of one problem at once.

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields (:data:`ESTIMATOR_FIELDS`) as equal-length integer arrays.

    Returns:
        A dict of arrays: ``cycles`` and ``time_us`` (kernel, with launch overhead),
        ``core_cycles`` (slowest core), ``path_cycles`` (its pipeline path before the clip to
        [busiest pipe, sum of work]; breaks ties between equal estimates), per-pipe
        ``busy_<PIPE>`` cycles of the slowest core,
        ``sequential_cycles``, ``resource_cycles``, ``cap_bytes_per_cycle``, ``read_bytes``,
        ``hbm_bytes``.
    """
    problem = problem.model_view()  # a DN operand is the ND layout of its transpose
    # The fields are held as float64: nearly every term mixes them with float cycles, and an
    # int64 operand is cast again at each such operation (about 5 % of the estimator's time).
    # Every field and every product of fields the formulas form stays far below 2**53, where
    # float64 holds integers exactly, so sums, products, comparisons and floor divisions give
    # the same values as in int64 (checked bit for bit on random tilings of five chips).
    # (Converted block by block in _estimate_blocks: the whole input converted at once wrote
    # 15 arrays of fresh memory, one page fault per 4 KiB, about 5 % of the time on 910B2.)
    f = {name: _exact_array(fields[name]) for name in ESTIMATOR_FIELDS}
    if "usedCoreNum" in fields:
        # Read only for a dealt split (more tiles than cores: the dealt_rounds term).
        f["usedCoreNum"] = _exact_array(fields["usedCoreNum"])
    return _estimate_blocks(problem, preset, f, False, np.float64)


def _exact_array(x: Any) -> np.ndarray:
    """``x`` as an int64 array where it holds integers, else as float64 (without a copy if so)."""
    a = np.asarray(x)
    return (
        a.astype(np.int64, copy=False)
        if a.dtype.kind in "biu"
        else a.astype(np.float64, copy=False)
    )


def makespan_floor_arrays(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any]
) -> dict[str, Any]:
    """A lower bound of :func:`estimate_arrays` over dbL0A, dbL0B and dbL0C, per L1 choice.

    For each entry (core split, base block, steps, L1 depths, iterateOrder; the three L0 flags
    are ignored) the returned ``time_us`` is at most the estimated time of the tiling with any
    dbL0A, dbL0B, dbL0C in {1, 2}. It runs the estimator's own code (:func:`_core` with
    ``floor``) with the flags at 2, which gives the busy totals exactly (no busy total depends
    on an L0 flag) and a makespan no longer than the estimator's for any flags, because

    * every K-step period ``max(mm + wa*la + wb*lb, la + lb)`` is smallest with wa = wb = 0
      (dbL0A = dbL0B = 2), and so are the steady periods of :func:`_step_chain`, the sums of
      periods and the restart reads of :func:`_restart_reads` (built from ``+`` and ``max``
      of terms that only grow when a flag is 1);
    * the chunk-chain hops, the slot cycles, the MTE2 gap path, the copy, drain and first-
      block paths and the UB paths are built from those by ``+``, ``max`` and non-negative
      weights, so they are non-decreasing in them; a chunk's stay behind the drain chain
      ``(others - dbL0C) x drain`` is smallest with dbL0C = 2;
    * the terms that are not monotone in the flags -- the compute path (its start-up share
      ``start - (per - mm)`` falls as the period grows) and the chain gains (differences of
      read times, also the one the one-slot A hop subtracts from its MTE2 term), all
      non-negative or one argument of a ``max`` -- are left out;
    * the hops that price passes apart are weighted sums, weights >= 0 and independent of the
      flags, of ``max``es of read times, so they are non-decreasing in them too;

    and the estimate is ``min(max(start-up + makespan, busiest), sum of busy) + launch``,
    non-decreasing in the makespan (the start-up depends on the problem only). A dealt split's
    tail tiles count their MMADs and K steps (``dealt.tail_floor``, at most their figures).

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields (:data:`ESTIMATOR_FIELDS`; dbL0A / dbL0B / dbL0C may be absent).

    Returns:
        ``cycles`` and ``time_us``: the floor of each entry (launch overhead included).
    """
    problem = problem.model_view()  # a DN operand is the ND layout of its transpose
    f = {
        name: np.asarray(fields[name], dtype=np.int64)
        for name in ESTIMATOR_FIELDS
        if not name.startswith("dbL0")
    }
    two = np.full(f["baseM"].shape, 2, dtype=np.int64)
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        f[name] = two
    if "usedCoreNum" in fields:
        # A dealt split's rounds (the dealt_rounds term), as estimate_arrays reads them.
        f["usedCoreNum"] = np.asarray(fields["usedCoreNum"], dtype=np.int64)
    out = _estimate_blocks(problem, preset, f, True)
    return {"cycles": out["cycles"], "time_us": out["time_us"]}


def operand_floor_arrays(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any]
) -> dict[str, Any] | None:
    """Lower bounds of :func:`estimate_arrays` that depend on one operand's L1 choice only.

    For each entry, ``time_a_us`` bounds the estimated time of every tiling with the same core
    split, base block, iterateOrder and A choice (stepM, stepKa, depthA1), whatever its B
    choice (stepN, stepKb, depthB1) and L0 flags; ``time_b_us`` the same for B. A search can
    so rule out all pairs of an A choice with one evaluation (cost #A + #B instead of #A x #B).

    Why each is a bound: it runs :func:`makespan_floor_arrays`'s code (a floor over the L0
    flags), with two changes that only lower it:

    * the bandwidth cap is the largest any tiling of the core split can get, the L2 share with
      every reload hitting (:func:`simcore.pipeline.traffic.chip_bandwidth_cap` with hit = 1; the
      miss slowdown is >= 1); every copy and drain cost is ``bytes / min(peak, cap)``, so
      non-increasing in the cap, and the makespan terms are sums and maxes of them;
    * of the makespan it keeps A's slot-cycle chain (B's for ``time_b_us``) without the terms
      the other operand adds (all >= 0; see ``own_a`` / ``own_b`` in :func:`_core`), and of
      the total work the cube, MTE1, drain and the operand's own copies (the other's >= 0);

    and the estimate is ``min(max(start-up + makespan, busiest), total work) + launch``, at
    least ``min(max(start-up + chain, own scalar work), own work) + launch``
    (:func:`simcore.pipeline.scalar.after_startup`; the own work holds the scalar pipe's, which
    holds the start-up). The A terms use no B field (stepN, stepKb, depthB1 only
    enter B's traffic, B's chain and the chip traffic, i.e. the cap, which is replaced), and
    conversely.

    Returns None on chips with a UB path (the data path there depends on both operands'
    buffers), where a caller falls back to :func:`makespan_floor_arrays`.

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields (:data:`ESTIMATOR_FIELDS`; dbL0A / dbL0B / dbL0C may be absent).

    Returns:
        ``time_a_us`` and ``time_b_us`` per entry, or None (see above).
    """
    problem = problem.model_view()  # a DN operand is the ND layout of its transpose
    f = {
        name: np.asarray(fields[name], dtype=np.int64)
        for name in ESTIMATOR_FIELDS
        if not name.startswith("dbL0")
    }
    if vector_path_array(problem, f, preset) is not None:
        return None
    two = np.full(f["baseM"].shape, 2, dtype=np.int64)
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        f[name] = two
    c = Costs(problem, preset)
    if problem.unit_flag:
        f = {**f, "dbL0C": unit_flag_db_l0c(f["dbL0C"])}
    m, n, k = problem.m, problem.n, problem.k
    sm, sn = f["singleCoreM"], f["singleCoreN"]
    cores = ceil_div(m, sm) * ceil_div(n, sn)
    cap = np.minimum(
        preset.l2_bytes_per_cycle * l2_share_most(problem, preset) / np.maximum(cores, 1),
        preset.l2_core_port,
    ).astype(np.float64)
    bm, bn = f["baseM"], f["baseN"]
    order0 = f["iterateOrder"] == 0
    slots_a = slots(f["depthA1"], f["stepM"], f["stepKa"])
    slots_b = slots(f["depthB1"], f["stepN"], f["stepKb"])
    chunk_a = k_chunking(k, f["baseK"], f["stepKa"], c.c0)
    chunk_b = k_chunking(k, f["baseK"], f["stepKb"], c.c0)
    rows_c, cols_c = largest_core_extent(m, sm), largest_core_extent(n, sn)
    a_full = traffic_coefficients(
        rows_c, bm, f["stepM"], k, f["baseK"], f["stepKa"], slots_a, order0, c.c0, chunk_a
    )
    b_full = traffic_coefficients(
        cols_c, bn, f["stepN"], k, f["baseK"], f["stepKb"], slots_b, ~order0, c.c0, chunk_b
    )
    m_iter_f, n_iter_f = ceil_div(rows_c, bm), ceil_div(cols_c, bn)
    # The slowest core (the largest rows x cols share) is the one the estimator prices.
    first_traffic = (
        a_full[0] + a_full[1] * n_iter_f,
        a_full[2] + a_full[3] * n_iter_f,
        b_full[0] + b_full[1] * m_iter_f,
        b_full[2] + b_full[3] * m_iter_f,
    )
    res = _core(c, problem, f, rows_c, cols_c, cap, first_traffic, True)
    out = {}
    startup = startup_cycles(preset, problem)
    for op in ("a", "b"):
        # The operand's chain after the start-up, its scalar pipe, its sum of work.
        cycles = after_startup(res[f"own_{op}"], res[f"scalar_{op}"], res[f"seq_{op}"], startup)
        time_us = kernel_us(preset, cycles / preset.clock_mhz)
        out[f"time_{op}_us"] = np.broadcast_to(time_us, sm.shape)
    return out


def _estimate_blocks(
    problem: Problem,
    preset: HardwarePreset,
    f: dict[str, np.ndarray],
    floor: bool,
    dtype: type[np.generic] | None = None,
) -> dict[str, Any]:
    """:func:`_estimate_block` over long inputs, block by block (the fields cast to ``dtype``)."""
    size = f["baseM"].size
    queue = ReplayQueue()
    if f["baseM"].ndim != 1 or size <= _BLOCK:
        if dtype is not None:
            f = {name: a.astype(dtype, copy=False) for name, a in f.items()}
        finish = _estimate_block(problem, preset, f, floor, queue)
        queue.flush()
        return finish()
    # Long inputs go through in blocks: the estimator keeps ~100 intermediate arrays alive, and
    # at this size they stay in the CPU caches instead of streaming through memory (about 1.5x
    # the throughput of one pass over a million candidates). Smaller blocks pay the fixed cost
    # of the ~2,600 numpy calls of a block more often: going from 8192 to 16384 took 12 % of the
    # instructions per candidate on 910B2 and 28 % on 310P3 / 910A (valgrind, 2026-11-21), and
    # measured 5 % (910B2) to 30 % (310P3) faster; 32768 was no faster on 910B2 or 310P3.
    # The block replays of several blocks are played together (its cost is per call, not per
    # candidate: see ReplayQueue), up to _REPLAY_BLOCKS blocks at a time.
    out: dict[str, np.ndarray] = {}

    def write(at: slice | np.ndarray, part: dict[str, Any]) -> None:
        if not out:
            # Written in place block by block: concatenating the parts at the end cost ~4 % of
            # the estimator's time.
            out.update({key: np.empty(size, dtype=np.result_type(v)) for key, v in part.items()})
        for key, v in part.items():
            out[key][at] = v

    blocks = blocks_by_data_path(problem, preset, f, _BLOCK)
    pending: list[tuple[slice | np.ndarray, Callable[[], dict[str, Any]]]] = []
    for n, (at, path) in enumerate(blocks):
        queued = queue.size
        sub = {name: a[at] if isinstance(at, slice) else gather(a, at) for name, a in f.items()}
        if dtype is not None:
            sub = {name: a.astype(dtype, copy=False) for name, a in sub.items()}
        finish = _estimate_block(problem, preset, sub, floor, queue, path)
        if queue.size == queued:
            write(at, finish())  # no replay queued: done now (its arrays are freed sooner)
        else:
            pending.append((at, finish))
        if pending and (len(pending) == _REPLAY_BLOCKS or n == len(blocks) - 1):
            queue.flush()
            for where, fin in pending:
                write(where, fin())
            pending = []
    return out


def _estimate_block(
    problem: Problem,
    preset: HardwarePreset,
    f: dict[str, np.ndarray],
    floor: bool,
    queue: ReplayQueue,
    path: bool | None = None,
) -> Callable[[], dict[str, Any]]:
    """:func:`estimate_arrays` on one block of candidates (integer field arrays).

    With ``floor`` the makespan is :func:`_core`'s floor (:func:`makespan_floor_arrays`).
    Returns the function that gives the block's outputs once ``queue`` is flushed (its block
    replays are queued there). ``path`` is the UB path of every candidate of the block where
    the caller knows it is one (:func:`simcore.estimate.blocks.blocks_by_data_path`), else None.
    """
    c = Costs(problem, preset)
    if problem.unit_flag:
        f = {**f, "dbL0C": unit_flag_db_l0c(f["dbL0C"])}
    m, n, k = problem.m, problem.n, problem.k
    sm, sn = f["singleCoreM"], f["singleCoreN"]
    m_cores = ceil_div(m, sm)
    n_cores = ceil_div(n, sn)
    # Cores with the full singleCoreM (singleCoreN); the last one gets the tail.
    full_m_cores = m_cores - 1
    full_n_cores = n_cores - 1
    tail_m = m - full_m_cores * sm
    tail_n = n - full_n_cores * sn
    # The largest core's rows and columns: singleCoreM (N) unless it exceeds M (N), where the
    # one core along that dimension gets M (N) (a GEMV's N = 1 under singleCoreN = 16).
    rows_c, cols_c = largest_core_extent(m, sm), largest_core_extent(n, sn)
    in_b = bits(problem.dtype) / 8.0
    bm, bn = f["baseM"], f["baseN"]
    order0 = f["iterateOrder"] == 0
    slots_a = slots(f["depthA1"], f["stepM"], f["stepKa"])
    slots_b = slots(f["depthB1"], f["stepN"], f["stepKb"])
    # Chip traffic first (it sets the per-core bandwidth cap), from the closed-form reuse. Core
    # shapes are (full or tail rows) x (full or tail cols): A's traffic is summed over the row
    # shapes x the columns' blocks, B's over the column shapes x the rows' blocks.
    m_iter_f, m_iter_t = ceil_div(rows_c, bm), ceil_div(tail_m, bm)
    n_iter_f, n_iter_t = ceil_div(cols_c, bn), ceil_div(tail_n, bn)
    # Row blocks summed over the cores along M (column blocks over the cores along N).
    m_blocks = full_m_cores * m_iter_f + m_iter_t
    n_blocks = full_n_cores * n_iter_f + n_iter_t
    group_m = bm * f["stepM"]
    group_n = bn * f["stepN"]
    k_iter = ceil_div(k, f["baseK"])
    chunk_a = k_chunking(k, f["baseK"], f["stepKa"], c.c0, k_iter)
    chunk_b = k_chunking(k, f["baseK"], f["stepKb"], c.c0, k_iter)
    loads_a, el_a, chip_el_a, shape_a = operand_chip_traffic(
        (rows_c, tail_m), (m_iter_f, m_iter_t), group_m, f["stepM"], slots_a, order0,
        chunk_a, full_m_cores, n_cores, n_iter_f, n_blocks,
    )  # fmt: skip
    loads_b, el_b, chip_el_b, shape_b = operand_chip_traffic(
        (cols_c, tail_n), (n_iter_f, n_iter_t), group_n, f["stepN"], slots_b, ~order0,
        chunk_b, full_n_cores, m_cores, m_iter_f, m_blocks,
    )  # fmt: skip
    # (What the records form again otherwise: blocks, K steps, slots, K chunks and cores.)
    counts = BlockCounts(
        m_iter_f, n_iter_f, k_iter, slots_a, slots_b, chunk_a[0], chunk_b[0], m_cores, n_cores
    )
    read = (chip_el_a + chip_el_b) * in_b
    if problem.bias:
        # One bias slice per output block: baseN values per row block, fewer in the tail
        # column, i.e. N values per row block of the grid.
        read = read + m_blocks * n * (bits(problem.bias_type) / 8.0)
    # (With each operand's groups and passes of the full core, for the chunk shapes.)
    first_traffic = (loads_a, el_a, loads_b, el_b, *shape_a, *shape_b)
    write = m * n * c_gm_bytes_per_element(problem)
    unique = (m + n) * k * in_b + write
    # A dealt split (more tiles than usedCoreNum, where the caller gives it): its tiles walk
    # row-major on usedCoreNum cores, the slowest core R of them (simcore.estimate.dealt).
    used, rounds = f.get("usedCoreNum"), None
    active = m_cores * n_cores
    if used is not None and (active > used).any():
        rounds, active = tiles_per_core(m, n, sm, sn, used), np.minimum(active, used)
    working = reuse_working_set(
        m, n, k, sm, sn, group_m, group_n, f["iterateOrder"], in_b, problem.l2_rounds, used,
        (m_cores, n_cores),
    )  # fmt: skip
    share = l2_share_of(
        problem.format_a is Format.ND, problem.format_b is Format.ND, chip_el_a * in_b,
        chip_el_b * in_b, preset,
    )  # fmt: skip
    cap, write_cap, hbm = chip_bandwidth_cap(
        read, write, unique, working, active, preset, share,
        refetch=call_refetch(problem, preset),
    )  # fmt: skip

    # The slowest core is the one with the largest share (rows_c x cols_c, singleCoreM x
    # singleCoreN where they fit in M x N): every cost grows with the rows and columns, so the
    # tail cores never take longer; only it is priced.
    vp = vector_path_array(problem, f, preset) if path is None else None
    # A dealt split with tail tiles prices each core by its tiles' own shapes (the tail rows
    # and columns, simcore.estimate.dealt.dealt_programs_term): those shapes' tiles here.
    tails = None
    if rounds is not None:
        extents = (rows_c, cols_c), (tail_m, tail_n)
        tails = tail_extents(m, n, f, rounds, extents, problem.l2_rounds)

    def tiles(c: Costs, at: Any) -> list[tuple[int, Any, dict[str, Any], slice]]:
        def one(idx: Any, rows: Any, cols: Any) -> dict[str, Any]:
            sub = {name: gather(a, idx) for name, a in f.items()}
            if floor:
                return tail_floor(c, k, sub, rows, cols)
            return _core(
                c, problem, sub, rows, cols, gather(cap, idx), None, floor, queue,
                gather(write_cap, idx), gather(np.asarray(rounds), idx),
            )  # fmt: skip

        return price_tails(tails, at, one)

    if path is not None or vp is None or vp.all() or not vp.any():
        one = path if path is not None else vp is None or bool(vp.all())
        c = Costs(problem, preset, one)
        res = _core(
            c, problem, f, rows_c, cols_c, cap, first_traffic, floor, queue, write_cap, rounds,
            counts,
        )  # fmt: skip
        res["tails"] = tiles(c, None)
        parts: list[tuple[Any, dict[str, Any]]] = [(None, res)]
    else:
        # Tilings whose reorder halves do not fit in UB take the column-DMA path: price the two
        # groups with their own costs and put the results back in place.
        parts = []
        for on in (True, False):
            idx = np.flatnonzero(vp == on)
            # ``take`` gathers in ~15 % fewer instructions than indexing with an index array.
            sub = {name: gather(a, idx) for name, a in f.items()}
            res = _core(
                Costs(problem, preset, on), problem, sub, gather(rows_c, idx),
                gather(cols_c, idx), gather(cap, idx),
                tuple(gather(x, idx) for x in first_traffic), floor, queue,
                gather(write_cap, idx), None if rounds is None else gather(rounds, idx),
            )  # fmt: skip
            res["tails"] = tiles(Costs(problem, preset, on), idx)
            parts.append((idx, res))

    # (The cores' mean share of the work from the cores and tails above.)
    share = core_share_of(
        (m_cores, n_cores), (ceil_div(sm, bm), ceil_div(sn, bn)), (m_iter_t, n_iter_t)
    )
    if rounds is not None:
        # Dealt: the tiles' blocks over usedCoreNum cores of R largest tiles each.
        share = share * m_cores * n_cores / (active * rounds)

    # The pipes idle until the scalar start-up has issued the first instruction: every path
    # starts there (simcore.pipeline.scalar.startup_cycles, 0 where the preset overlaps it;
    # the simulator frees its pipes then).
    startup = startup_cycles(preset, problem)

    def finish() -> dict[str, Any]:
        programs = None if tails is None else (tails[0], tails[2])
        return _finish_block(
            preset, f, parts, (cap, hbm, read, share), startup, rounds, programs, problem
        )

    return finish


def _finish_block(
    preset: HardwarePreset,
    f: dict[str, np.ndarray],
    parts: list[tuple[Any, dict[str, Any]]],
    chip: tuple[Any, Any, Any, Any],
    startup: float,
    rounds: Any = None,
    programs: Any = None,
    problem: Problem | None = None,
) -> dict[str, Any]:
    """The outputs of one block from its cores' makespans and busy totals (``parts``).

    ``parts`` has one (None, result) of :func:`_core` for the whole block, or one (indices,
    result) per data path; ``chip`` is the bandwidth cap, the HBM bytes, the bytes read and
    the cores' mean share of the work (:func:`simcore.pipeline.traffic.core_share`);
    ``startup`` the scalar start-up every path of :func:`_core` follows; ``rounds`` a dealt
    split's tiles per core (the ``dealt_rounds`` term, applied here, after the block replay);
    ``programs`` the candidates with tail tiles and their core programs
    (:func:`simcore.estimate.dealt.with_tails`) with the ``problem``.
    """
    cap, hbm, read, share = chip
    # HBM's time is a chip-wide floor on the kernel (see
    # simcore.pipeline.traffic.chip_bandwidth_cap).
    hbm_floor = hbm_floor_cycles(hbm, preset)
    sm = f["singleCoreM"]
    if parts[0][0] is None:
        res = parts[0][1]
        busy = {p: np.broadcast_to(res["busy"][p], sm.shape) for p in PIPE_NAMES}
        makespan = res["mk"].value
        code = res["mk"].code if res["mk"].track else None
    else:
        makespan = np.empty(sm.shape)
        code = None if not parts[0][1]["mk"].track else np.empty(sm.shape, dtype=np.int8)
        busy = {p: np.empty(sm.shape) for p in PIPE_NAMES}
        for idx, res in parts:
            makespan[idx] = res["mk"].value
            if code is not None:
                code[idx] = res["mk"].code
            for p in PIPE_NAMES:
                busy[p][idx] = res["busy"][p]
    if rounds is not None:
        overlap, copy_end, scalar = gathered(parts, "dealt", sm.shape)
        seam = Seam(overlap, copy_end)
        if code is not None:
            code = np.array(code)
        one_tile = makespan, busy
        if programs is not None:
            # (The candidates with tail tiles: by their programs, with_tails.)
            rounds = np.array(np.broadcast_to(rounds, sm.shape))
            rounds[programs[0]] = 1
        makespan, busy = dealt_rounds(
            np.asarray(makespan, dtype=np.float64), code, busy, seam, scalar, rounds
        )
        if programs is not None and problem is not None:
            work = gathered(parts, "tile_work", sm.shape)
            makespan, busy = with_tails(
                one_tile, (makespan, busy, (seam, scalar), work), parts, programs,
                (partial(scalar_cycles, preset, problem), hbm_floor, startup),
            )  # fmt: skip
            if code is not None:
                code[programs[0]] = TERM["dealt_rounds"]
    # _core's paths start when the first instruction issues, after the scalar start-up.
    makespan = makespan + startup
    seq = np.maximum(sum(busy[p] for p in PIPE_NAMES), hbm_floor)
    # Pairwise maxima: np.maximum.reduce over a list first stacks the arrays into a new one
    # (~4x the instructions).
    rb = busy[PIPE_NAMES[0]]
    for p in PIPE_NAMES[1:]:
        rb = np.maximum(rb, busy[p])
    rb = np.maximum(rb, hbm_floor)
    # The simulated makespan always lies between the busiest pipe and the sum of all work.
    peak = np.maximum(makespan, rb)
    span = np.minimum(peak, seq)
    binding = None
    if code is not None:
        busy_list = [busy[p] for p in PIPE_NAMES]
        binding = clip_binding(code, makespan, busy_list, hbm_floor, rb, seq < peak)
    worst = {"span": span, "seq": seq, "res": rb, "busy": busy}
    launch = preset.launch_overhead_us * preset.clock_mhz
    cycles = worst["span"] + launch
    times = kernel_times(preset, worst["span"], share)
    out: dict[str, Any] = {
        "cycles": cycles,
        "time_us": times.time_us,
        "device_time_us": times.device_time_us,
        "end_to_end_us": times.end_to_end_us,
        "core_time_avg_us": times.core_time_avg_us,
        "core_share": times.core_share,
        "core_cycles": worst["span"],
        # The pipeline path before the clip to [busiest pipe, sum of work]: among tilings
        # whose estimate is the same resource floor (HBM, a saturated pipe) the one with the
        # shorter path has slack the floor hides, which a search uses to break such ties.
        "path_cycles": np.broadcast_to(makespan, span.shape),
        "sequential_cycles": worst["seq"] + launch,
        "resource_cycles": worst["res"] + launch,
        "cap_bytes_per_cycle": cap,
        "read_bytes": read,
        "hbm_bytes": hbm,
    }
    for p in PIPE_NAMES:
        out[f"busy_{p}"] = worst["busy"][p]
    if binding is not None:
        out["binding_term"] = binding
    return out


def estimate_one(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> dict[str, Any]:
    """Estimates a single tiling.

    Returns:
        The keys of :func:`estimate_arrays` as floats, and ``binding_term`` as its name
        (:data:`simcore.estimate.binding.BINDING_NAMES`).
    """
    problem = problem.model_view()  # a DN operand is the ND layout of its transpose
    fields = {name: np.asarray([getattr(t, name)]) for name in (*ESTIMATOR_FIELDS, "usedCoreNum")}
    res = estimate_arrays(problem, preset, fields)
    out: dict[str, Any] = {
        key: float(np.asarray(v).reshape(-1)[0]) for key, v in res.items() if key != "binding_term"
    }
    out["binding_term"] = BINDING_NAMES[int(res["binding_term"][0])]
    return out


del c0_elements  # imported for symmetry with kernel; C0 comes from Costs
