"""The chip's traffic at least: the HBM floor and the largest bandwidth share a core can get.

The estimator clips its makespan to at least the HBM floor (the chip's HBM bytes over its
bandwidth, :func:`simcore.pipeline.traffic.hbm_floor_cycles`) and moves every copy at the core's
share of the L2 bandwidth, capped by the per-core rate slowed by the L2 misses
(:func:`simcore.pipeline.traffic.chip_bandwidth_cap`). Both depend on the chip's reads, which the
steps and L1 depths decide; here they are bounded over every tiling of a group: the reads at
least (every core reads its rows once, or once per block of the other operand in the reuse case
where it is not held), the misses at least (the smallest working set of the iterate order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.hardware.dtypes import FRACTAL_ROWS, bits, c0_elements
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.arith import align_up
from simcore.pipeline.costs import ceil_div
from simcore.pipeline.traffic import (
    c_gm_bytes_per_element,
    call_refetch,
    l2_share_most,
    refetched_read_cap,
)
from simcore.tiling.problem import Problem

__all__ = [
    "CaseReads",
    "OrderTraffic",
    "case_reads",
    "case_traffic",
    "order_traffic",
    "padded_extents",
    "refetch_floor",
    "refetched_reads_cycles",
]


def padded_extents(problem: Problem, g: dict[str, Any]) -> tuple[Any, Any, Any]:
    """A's rows over the cores along M, B's columns over those along N, and K, as L1 holds them.

    The estimator counts a core's reads as the elements its chunk copies move into L1
    (:func:`simcore.pipeline.traffic.operand_chip_traffic`): a pass over a core's ``e`` rows
    moves its full row groups (``stepM x baseM`` rows, a multiple of 16) and the last group
    aligned to 16, ``align(e, 16)`` rows whatever the steps (a streamed operand moves at least
    that per block of the other), each over ``align(K, C0)`` elements (the full K chunks are
    multiples of baseK, a multiple of C0, and the last is aligned to C0). At M = 1 a GEMV's
    cores each read 16 rows of A: 910A fp16 1 x 4096 x 14336 on 24 cores reads 11 MB of A
    where its unique A is 28 KB, which the HBM floor pays at the miss rate.

    Returns:
        (the sum of ``align(rows, 16)`` over the cores along M, likewise B's columns along N,
        ``align(K, C0)``).
    """
    rows, cols = g["singleCoreM"], g["singleCoreN"]
    sums = []
    for total, single in ((problem.m, rows), (problem.n, cols)):
        cores = ceil_div(total, single)
        tail = total - (cores - 1) * single
        # (The full cores have ``single`` rows; singleCoreM above M leaves one core with M.)
        sums.append((cores - 1) * align_up(single, FRACTAL_ROWS) + align_up(tail, FRACTAL_ROWS))
    return sums[0], sums[1], align_up(problem.k, c0_elements(problem.dtype))


@dataclass(frozen=True, slots=True)
class OrderTraffic:
    """The chip's traffic at least over the tilings of a group with one iterate order.

    Attributes:
        unique: The bytes every tiling moves: A and B once, C written once.
        write: C's bytes.
        miss: The L2 miss rate at least (the order's smallest working set, the usable L2).
        cap: The largest bytes per cycle a core's copies move (its share of L2 and the per-core
            rate, both slowed by the least misses).
        rate_no_miss: A core's rate before the miss slowdown: the smaller of its share of the
            chip's L2 rate and its L2 port (:func:`case_traffic` slows it by the case's mix).
        hbm_floor: The HBM floor's cycles at least (the least reads, every core's rows once).
        active: The cores with work.
        first_touch: The refetch term's first-touch bytes (0 where nothing is refetched).
    """

    unique: Any
    write: Any
    miss: Any
    cap: Any
    hbm_floor: Any
    active: Any
    rate_no_miss: Any
    first_touch: float = 0.0


def order_traffic(
    problem: Problem, p: HardwarePreset, g: dict[str, Any], order: int
) -> OrderTraffic:
    """The least chip traffic of a group's tilings with iterate order ``order``.

    Every core reads its rows of A and columns of B over all of K at least once; the HBM
    serves the unique bytes plus the reloads that miss L2, and a miss is at least
    ``1 - usable L2 / working set`` with the working set at its smallest for the order
    (:func:`simcore.pipeline.traffic.reuse_working_set` with steps of 1; the usable L2 is
    ``l2_bytes x l2_usable_fraction`` as there). The hit ratio ``1 - miss x (1 - unique /
    traffic)`` is largest at the least traffic, and the estimator slows both the chip's share
    per core and the core's port by the same mix ``hit + (1 - hit) / l2_miss_slowdown``
    (increasing in the hit ratio), so the copy rate
    (:func:`simcore.pipeline.traffic.chip_bandwidth_cap`) is at most the one it gives.
    """
    k = problem.k
    rows, cols = g["singleCoreM"], g["singleCoreN"]
    bm, bn = g["baseM"], g["baseN"]
    in_b = bits(problem.dtype) / 8.0
    m_cores = ceil_div(problem.m, rows)
    n_cores = ceil_div(problem.n, cols)
    active = m_cores * n_cores
    write = problem.m * problem.n * c_gm_bytes_per_element(problem)
    unique = (problem.m + problem.n) * k * in_b + write
    # Every core reads its rows of A and columns of B once at least, as L1 stores them (rows
    # aligned to 16, K to C0: :func:`padded_extents`).
    a_rows, b_cols, k_elems = padded_extents(problem, g)
    once_read = (n_cores * a_rows + m_cores * b_cols) * k_elems * in_b
    total_min = once_read + write
    # Smallest working set of this order (simcore.pipeline.traffic.reuse_working_set with step 1).
    # (A kernel walking each core's M in l2_rounds rounds holds one round's rows of A.)
    round_rows = ceil_div(rows, problem.l2_rounds)
    if order == 0:
        working = (m_cores * np.minimum(round_rows, problem.m) + n_cores * bn) * k * in_b
    else:
        working = (n_cores * np.minimum(cols, problem.n) + m_cores * bm) * k * in_b
    usable = p.l2_bytes * p.l2_usable_fraction
    miss = np.clip(1.0 - usable / np.maximum(working, 1.0), 0.0, 1.0)
    reload_frac = np.maximum(1.0 - unique / np.maximum(total_min, 1.0), 0.0)
    hit_max = 1.0 - reload_frac * miss
    # (The ND->NZ share of the chip's L2 rate: simcore.pipeline.traffic.l2_share_most.)
    chip = p.l2_bytes_per_cycle * l2_share_most(problem, p)
    rate_no_miss = np.minimum(chip / np.maximum(active, 1), p.l2_core_port)
    cap = rate_no_miss * (hit_max + (1.0 - hit_max) / p.l2_miss_slowdown)
    hbm_floor = (unique + np.maximum(total_min - unique, 0.0) * miss) / p.hbm_bytes_per_cycle
    first_touch = call_refetch(problem, p).first_touch_bytes
    hbm_floor = np.maximum(
        hbm_floor, refetch_floor(total_min - write, first_touch, active, rate_no_miss, p)
    )
    return OrderTraffic(
        unique=unique, write=write, miss=miss, cap=cap, hbm_floor=hbm_floor, active=active,
        rate_no_miss=rate_no_miss, first_touch=first_touch,
    )  # fmt: skip


def refetch_floor(
    reads: Any, first_touch: float, active: Any, rate_no_miss: Any, p: HardwarePreset
) -> Any:
    """Cycles of the largest core's reads at least, with the refetch term's first touches.

    The largest core (the one priced) reads at least the chip's ``reads`` over the active
    cores: :func:`refetched_reads_cycles` of ``reads / active`` at a mix of 1 (no fewer cycles
    than at any smaller mix), a floor on its MTE2 busy time, the busiest pipe and the sum of
    work: ``(R + (s - 1) F) / (active x rate_no_miss)`` for ``R`` reads, ``F`` first touches,
    ``s`` the miss slowdown. It grows with R: the least reads give a floor for every tiling.
    0 where nothing is refetched.
    """
    if not first_touch:
        return 0.0
    core_reads = reads / np.maximum(active, 1)
    return refetched_reads_cycles(core_reads, first_touch, active, rate_no_miss, 1.0, p)


def refetched_reads_cycles(
    core_reads: Any, first_touch: float, active: Any, rate_no_miss: Any, mix: Any, p: HardwarePreset
) -> Any:
    """Cycles the priced core's copies move its reads in at least, under the refetch term.

    :func:`simcore.pipeline.traffic.chip_bandwidth_cap` gives every read of a tiling the cap
    :func:`simcore.pipeline.traffic.refetched_read_cap` ``(W, R, F', mix)``: ``W <= mix x
    rate_no_miss`` the writes' cap, ``R`` the chip's reads, ``F' >= F`` the refetched bytes (the
    first touches ``F`` at least: the reloads that miss are at most ``R - F``). A core's copies
    take at least their bytes ``r`` over it, ``r (R - F' + s mix F') / (W R)``; with ``r >= R
    / active`` (the priced core reads the most) that is at least ``r / (rate x mix) + (s - 1 /
    mix) F / (active x rate)``, which is the cap's rule at ``R = active x r``, ``F' = F`` and
    ``W = rate x mix``: what is returned. It grows with ``r`` and, as ``r >= F / active`` (every
    byte of A and B is read by some core; ``core_reads`` is raised to it), falls as ``mix``
    grows: a core's reads at least (``core_reads``) and its mix at most (``mix``) give a floor
    for every tiling. Valid without a bias (whose reads are the chip's too).
    """
    spread = np.maximum(active, 1)
    least = np.maximum(core_reads, first_touch / spread)
    cap = refetched_read_cap(rate_no_miss * mix, spread * least, first_touch, mix, p)
    return least / cap


@dataclass(frozen=True, slots=True)
class CaseReads:
    """What the chip's reads of each reuse case are made of (see :func:`case_reads`).

    Attributes:
        a_rows_k: A's bytes read by the cores with the largest core's rows, once each.
        b_cols_k: B's likewise by columns.
        a_tail_k: A's bytes of the tail-row cores (0 where they have the full rows).
        b_tail_k: B's likewise.
        a_col_blocks: The column blocks of the whole chip (A's loads when reloaded per block).
        b_row_blocks: The row blocks likewise (B's).
        a_tail_alike: Whether the tail-row cores reuse A as the largest core does.
        b_tail_alike: Likewise for B.
        m_cores: Cores along M; ``n_cores`` along N.
        n_cores: See ``m_cores``.
    """

    a_rows_k: Any
    b_cols_k: Any
    a_tail_k: Any
    b_tail_k: Any
    a_col_blocks: Any
    b_row_blocks: Any
    a_tail_alike: Any
    b_tail_alike: Any
    m_cores: Any
    n_cores: Any


def case_reads(problem: Problem, g: dict[str, Any], order: int) -> CaseReads:
    """The parts of the chip's reads per reuse case (:func:`case_traffic` combines them).

    Whether an operand is loaded once depends on its L1 slots (shared by all cores) and on the
    core's row groups, so every core with the largest core's rows loads A as it does (once, or
    at least once per block of its columns); the tail-row cores, with fewer rows, at least once,
    and as the largest core does when they reuse A alike
    (:func:`simcore.pipeline.traffic.operand_passes`): A outer (iterateOrder 1), whose reuse does
    not depend on its block count, or as many row blocks as the largest core. Likewise B by
    columns.
    """
    rows, cols = g["singleCoreM"], g["singleCoreN"]
    bm, bn = g["baseM"], g["baseN"]
    m_iter, n_iter = g["m_iter"], g["n_iter"]
    in_b = bits(problem.dtype) / 8.0
    # (Rows aligned to 16 and K to C0, as L1 holds them: padded_extents.)
    k = align_up(problem.k, c0_elements(problem.dtype))
    m_cores = ceil_div(problem.m, rows)
    n_cores = ceil_div(problem.n, cols)
    tail_m = problem.m - (m_cores - 1) * rows
    tail_n = problem.n - (n_cores - 1) * cols
    full_m = (m_cores - 1) + (tail_m == rows)
    full_n = (n_cores - 1) + (tail_n == cols)
    return CaseReads(
        a_rows_k=align_up(rows, FRACTAL_ROWS) * k * in_b * full_m,
        b_cols_k=align_up(cols, FRACTAL_ROWS) * k * in_b * full_n,
        a_tail_k=(tail_m != rows) * align_up(tail_m, FRACTAL_ROWS) * k * in_b,
        b_tail_k=(tail_n != cols) * align_up(tail_n, FRACTAL_ROWS) * k * in_b,
        a_col_blocks=(n_cores - 1) * n_iter + ceil_div(tail_n, bn),
        b_row_blocks=(m_cores - 1) * m_iter + ceil_div(tail_m, bm),
        a_tail_alike=(order == 1) | (ceil_div(tail_m, bm) == m_iter),
        b_tail_alike=(order == 0) | (ceil_div(tail_n, bn) == n_iter),
        m_cores=m_cores,
        n_cores=n_cores,
    )


def case_traffic(
    p: HardwarePreset, t: OrderTraffic, r: CaseReads, a_once: bool, b_once: bool
) -> tuple[Any, Any, Any]:
    """The HBM floor and the copy rate cap of one reuse case (A, B loaded once or per block).

    The chip's reads of the case are at least :class:`CaseReads` combined for it; the HBM floor
    is increasing in the reads (at the least miss rate), and the core rate decreasing: the hit
    ratio ``1 - miss x (1 - unique / traffic)`` falls as the reloads grow
    (:func:`simcore.pipeline.traffic.chip_bandwidth_cap`), so the case's least traffic and the
    order's least miss rate give its largest rate.

    Returns:
        (HBM floor cycles at least, bytes per cycle at most of a core's copies, the case's hit
        mix at most: the copies' rate is at most ``rate_no_miss`` times it).
    """
    a_reads = r.n_cores if a_once else r.a_col_blocks
    a_tail = r.n_cores if a_once else np.where(r.a_tail_alike, r.a_col_blocks, r.n_cores)
    b_reads = r.m_cores if b_once else r.b_row_blocks
    b_tail = r.m_cores if b_once else np.where(r.b_tail_alike, r.b_row_blocks, r.m_cores)
    read = r.a_rows_k * a_reads + r.a_tail_k * a_tail + r.b_cols_k * b_reads + r.b_tail_k * b_tail
    unique, write, miss = t.unique, t.write, t.miss
    hbm = (unique + np.maximum(read + write - unique, 0.0) * miss) / p.hbm_bytes_per_cycle
    hbm = np.maximum(hbm, t.hbm_floor)
    if t.first_touch:
        # The case's least reads through the refetch term (refetch_floor: a floor on MTE2 too).
        hbm = np.maximum(hbm, refetch_floor(read, t.first_touch, t.active, t.rate_no_miss, p))
    traffic = np.maximum(read + write, 1.0)
    hit_case = 1.0 - np.maximum(traffic - unique, 0.0) * miss / traffic
    mix_case = hit_case + (1.0 - hit_case) / p.l2_miss_slowdown
    return hbm, np.minimum(t.cap, t.rate_no_miss * mix_case), mix_case
