"""The kernel a TCubeTiling describes: how the work splits over cores, blocks, chunks and steps.

Shared by the simulator and the estimator so both play the same kernel:

* Cores: a ``ceil(M / singleCoreM) x ceil(N / singleCoreN)`` grid; the last row and column of
  cores get the tail of M and N (:func:`core_shapes`). K is never split (seed 002).
* Blocks: each core walks its ``singleCoreM x singleCoreN`` in ``baseM x baseN`` blocks, M first
  then N when ``iterateOrder`` is 0, N first when it is 1 (seed 002 table 1). Each block runs
  ``ceil(K / baseK)`` K steps (MTE1 A and B into L0, one MMAD) and one output drain.
* Chunks: A reaches L1 in chunks of ``stepM`` blocks x ``stepKa`` K steps; ``depthA1 / (stepM x
  stepKa)`` chunks fit at once (1 or 2: the L1 double buffer). Likewise B with stepN, stepKb.
  A chunk stays in L1 until a newer chunk of the same operand needs its slot (first in, first out).
  Reuse across the iterate order follows from that: with K fully resident the outer operand is
  loaded once, the inner one once per outer step unless all its chunks fit at once.

:func:`operand_traffic` gives the closed form of the chunk loads that FIFO replacement produces;
:func:`chip_bandwidth_cap` turns the chip-wide traffic into a per-core bandwidth share (cores share
the L2 and HBM bandwidth).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.hardware.dtypes import FRACTAL_ROWS, bits, c0_elements
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.arith import align_up, at_least, at_most, ceil_div
from simcore.pipeline.dealing import dealt_walk
from simcore.tiling.problem import Format, Problem
from simcore.tiling.tcube import TCubeTiling


@dataclass(frozen=True)
class CoreShape:
    """A group of cores that get the same ``rows x cols`` share of C.

    A core of a dealt split (:func:`dealt_rounds` > 1) runs a program of several tiles,
    ``tiles`` in its order; ``rows x cols`` is then its first tile. Empty for one tile per core.
    """

    rows: int
    cols: int
    cores: int
    tiles: tuple[tuple[int, int], ...] = ()

    @property
    def program(self) -> tuple[tuple[int, int], ...]:
        """The ``(rows, cols)`` tiles the core runs back to back, in order (one or more)."""
        return self.tiles or ((self.rows, self.cols),)


def core_shapes(problem: Problem, t: TCubeTiling) -> list[CoreShape]:
    """Returns the distinct per-core shapes with how many cores have each (full ones first)."""
    m_cores = ceil_div(problem.m, t.singleCoreM)
    n_cores = ceil_div(problem.n, t.singleCoreN)
    tail_m = problem.m - (m_cores - 1) * t.singleCoreM
    tail_n = problem.n - (n_cores - 1) * t.singleCoreN
    counts: dict[tuple[int, int], int] = {}
    for rows, rc in ((t.singleCoreM, m_cores - 1), (tail_m, 1)):
        for cols, cc in ((t.singleCoreN, n_cores - 1), (tail_n, 1)):
            if rc * cc > 0:
                counts[(rows, cols)] = counts.get((rows, cols), 0) + rc * cc
    return [CoreShape(r, c, n) for (r, c), n in counts.items()]


def tiles_per_core(m: Any, n: Any, single_m: Any, single_n: Any, used: Any) -> Any:
    """Tiles the slowest core takes: 1 for one tile per core, else ``ceil(tiles / usedCoreNum)``.

    A dealt split (legality rule ``DEALT_SPLIT``, aclnn MatMulV3's base blocks) has more
    ``singleCoreM x singleCoreN`` tiles than cores; core i takes tiles i, i + usedCoreNum, ...
    Scalars or arrays (the estimator's candidates).
    """
    tiles = ceil_div(m, single_m) * ceil_div(n, single_n)
    return np.where(tiles > used, ceil_div(tiles, np.maximum(used, 1)), 1)


def dealt_rounds(problem: Problem, t: TCubeTiling) -> int:
    """:func:`tiles_per_core` of one tiling."""
    return int(tiles_per_core(problem.m, problem.n, t.singleCoreM, t.singleCoreN, t.usedCoreNum))


def dealt_sharers(m: Any, n: Any, single_m: Any, single_n: Any, used: Any) -> tuple[Any, Any]:
    """Cores reading the same rows of A and of B at once (the same-address factors' sharers).

    One tile per core: A's rows are read by the ``ceil(N / singleCoreN)`` cores along N, B's by
    the ``ceil(M / singleCoreM)`` along M. Dealt: a round's ``usedCoreNum`` consecutive tiles
    (row-major, N inner) read one tile row's A on up to ``min(N tiles, usedCoreNum)`` cores and
    one tile column's B on up to ``ceil(usedCoreNum / N tiles)`` (at most the M tiles).
    """
    along_m, along_n = ceil_div(m, single_m), ceil_div(n, single_n)
    dealt = along_m * along_n > used
    if not np.any(dealt):
        return along_n, along_m
    a_sharers: Any = np.where(dealt, np.minimum(along_n, used), along_n)
    b_sharers: Any = np.where(dealt, np.minimum(along_m, ceil_div(used, along_n)), along_m)
    if np.ndim(a_sharers) == 0:
        return int(a_sharers), int(b_sharers)
    return a_sharers, b_sharers


def core_programs(problem: Problem, t: TCubeTiling) -> list[CoreShape]:
    """The distinct core programs with how many cores run each (:func:`core_shapes` if not dealt).

    Dealt (more tiles than ``usedCoreNum``): the tiles go to core ``tile % usedCoreNum`` in the
    order of :func:`simcore.pipeline.dealing.dealt_walk` (the dealing rule, which the estimator's
    :func:`simcore.pipeline.dealing.dealt_programs` counts too); cores with the same sequence of
    tile shapes form one program.
    """
    m_tiles = ceil_div(problem.m, t.singleCoreM)
    n_tiles = ceil_div(problem.n, t.singleCoreN)
    used = t.usedCoreNum
    if m_tiles * n_tiles <= used:
        return core_shapes(problem, t)
    tail_m = problem.m - (m_tiles - 1) * t.singleCoreM
    tail_n = problem.n - (n_tiles - 1) * t.singleCoreN
    rows = [t.singleCoreM] * (m_tiles - 1) + [tail_m]
    cols = [t.singleCoreN] * (n_tiles - 1) + [tail_n]
    row_at, col_at = dealt_walk(m_tiles, n_tiles, problem.l2_rounds)
    at = zip(row_at.tolist(), col_at.tolist(), strict=True)
    walk = [(rows[row], cols[col]) for row, col in at]
    programs: dict[tuple[tuple[int, int], ...], int] = {}
    for core in range(used):
        seq = tuple(walk[core::used])
        programs[seq] = programs.get(seq, 0) + 1
    return [CoreShape(seq[0][0], seq[0][1], count, tiles=seq) for seq, count in programs.items()]


def largest_core_extent(total: Any, single: Any) -> Any:
    """Rows (or columns) of the largest core share along one dimension: ``min(single, total)``.

    A core gets ``single`` rows except the last, which gets the tail; where ``single`` exceeds
    the dimension (a GEMV's N = 1 under singleCoreN = 16) the one core gets the dimension itself,
    as in :func:`core_shapes`. The estimator prices this core, the simulator plays it.
    """
    return at_most(single, total)


def slots(depth: Any, step_blocks: Any, step_k: Any) -> Any:
    """L1 chunk slots of an operand: depth / (step x stepK), at least 1."""
    if isinstance(depth, np.ndarray) and depth.dtype == np.float64:
        # The estimator's float fields: numpy's float floor division (``//``) costs ~17x a
        # division and a ``floor`` (it computes a remainder and corrects the quotient), and
        # for these integer operands (below 2**26) both give the same values.
        return at_least(np.floor(depth / at_least(step_blocks * step_k, 1)), 1)
    return at_least(depth // at_least(step_blocks * step_k, 1), 1)


def pass_coefficients(
    extent: Any,
    base: Any,
    step: Any,
    n_slots: Any,
    k_chunks: Any,
    inner: Any,
    counts: tuple[Any, Any] | None = None,
) -> tuple[Any, Any, Any, Any]:
    """:func:`operand_passes` as affine functions of the other operand's block count.

    ``counts`` gives the operand's blocks and groups, ``ceil(extent / base)`` and
    ``ceil(blocks / step)``, where the caller has them.

    Returns:
        ``(full0, full1, tail0, tail1)`` with ``full = full0 + full1 x other_blocks`` and
        ``tail = tail0 + tail1 x other_blocks``: one evaluation serves every core shape.
    """
    if counts is None:
        blocks = ceil_div(extent, base)
        counts = (blocks, ceil_div(blocks, step))
    blocks, groups = counts
    last_blocks = blocks - (groups - 1) * step
    all_fit = k_chunks * groups <= n_slots
    k_fits = k_chunks <= n_slots
    # Streamed (K chunks do not fit): every block reloads its own group, full groups once per
    # block of theirs. Otherwise a group is loaded once, or once per outer step for an inner
    # operand whose groups do not all fit. (Products of masks instead of selects: the estimator
    # evaluates this on millions of candidates.)
    per_outer = np.logical_and(inner, np.logical_not(all_fit))
    once = np.logical_and(k_fits, np.logical_not(per_outer))
    streamed = np.logical_not(k_fits)
    full0 = once * (groups - 1)
    full1 = (per_outer & k_fits) * (groups - 1) + streamed * ((groups - 1) * step)
    tail0 = once * 1
    tail1 = (per_outer & k_fits) * 1 + streamed * last_blocks
    return full0, full1, tail0, tail1


def operand_passes(
    extent: Any,
    base: Any,
    step: Any,
    n_slots: Any,
    k_chunks: Any,
    other_blocks: Any,
    inner: Any,
    counts: tuple[Any, Any] | None = None,
) -> tuple[Any, Any]:
    """How many times the full row groups and the tail row group of an operand are loaded.

    A pass loads every K chunk of one group (``k_chunks`` copies). FIFO replacement gives: the
    outer operand's group stays while the inner loop runs when its K chunks fit; the inner operand
    is loaded once if all its chunks fit, once per outer step if one group's K chunks fit,
    otherwise once per block (so a group of ``step`` blocks is reloaded by each of them).

    Args:
        extent: Rows of this operand on the core (singleCoreM for A, singleCoreN for B).
        base: baseM (or baseN).
        step: stepM (or stepN).
        n_slots: Chunks of this operand L1 holds at once.
        k_chunks: K chunks per group, ceil(ceil(K / baseK) / stepK).
        other_blocks: Blocks of the other operand on the core (nIter for A, mIter for B).
        inner: True where this operand changes on every block (A when iterateOrder is 0).
        counts: The operand's blocks and groups where the caller has them
            (:func:`pass_coefficients`).

    Returns:
        (full_passes, tail_passes): passes over full groups (``step x base`` rows) and over the
        last group (the rest of ``extent``).
    """
    full0, full1, tail0, tail1 = pass_coefficients(
        extent, base, step, n_slots, k_chunks, inner, counts
    )
    return full0 + full1 * other_blocks, tail0 + tail1 * other_blocks


def k_chunking(k: Any, base_k: Any, step_k: Any, c0: int, k_iter: Any = None) -> tuple[Any, Any]:
    """K chunks per pass of an operand and the K elements a pass moves (last chunk C0-aligned).

    ``k_iter`` is ``ceil(k / base_k)`` where the caller has it.
    """
    if k_iter is None:
        k_iter = ceil_div(k, base_k)
    k_chunks = ceil_div(k_iter, step_k)
    full_chunks_k = (k_chunks - 1) * (step_k * base_k)
    k_elems = full_chunks_k + align_up(k - full_chunks_k, c0)
    return k_chunks, k_elems


def traffic_coefficients(
    extent: Any,
    base: Any,
    step: Any,
    k: Any,
    base_k: Any,
    step_k: Any,
    n_slots: Any,
    inner: Any,
    c0: int,
    chunking: tuple[Any, Any] | None = None,
) -> tuple[Any, Any, Any, Any]:
    """:func:`operand_traffic` as affine functions of the other operand's block count.

    Args:
        extent: Rows of this operand on the core (singleCoreM for A, singleCoreN for B).
        base: baseM (or baseN).
        step: stepM (or stepN).
        k: K.
        base_k: baseK.
        step_k: stepKa (or stepKb).
        n_slots: Chunks of this operand L1 holds at once.
        inner: True where this operand changes on every block (A when iterateOrder is 0).
        c0: Elements per 32 B fractal row.
        chunking: :func:`k_chunking` of (k, base_k, step_k, c0) when the caller already has it
            (it does not depend on the extent).

    Returns:
        ``(loads0, loads1, elements0, elements1)``: ``loads = loads0 + loads1 x other_blocks``,
        likewise the elements.
    """
    k_chunks, k_elems = chunking if chunking is not None else k_chunking(k, base_k, step_k, c0)
    group_rows = step * base
    groups = ceil_div(ceil_div(extent, base), step)
    last_rows = align_up(extent - (groups - 1) * group_rows, FRACTAL_ROWS)
    full0, full1, tail0, tail1 = pass_coefficients(extent, base, step, n_slots, k_chunks, inner)
    return (
        (full0 + tail0) * k_chunks,
        (full1 + tail1) * k_chunks,
        (full0 * group_rows + tail0 * last_rows) * k_elems,
        (full1 * group_rows + tail1 * last_rows) * k_elems,
    )


def operand_traffic(
    extent: Any,
    base: Any,
    step: Any,
    k: Any,
    base_k: Any,
    step_k: Any,
    n_slots: Any,
    other_blocks: Any,
    inner: Any,
    c0: int,
) -> tuple[Any, Any]:
    """Chunk loads and elements moved GM->L1 for one operand on one core (closed form).

    Args:
        extent: Rows of this operand on the core (singleCoreM for A, singleCoreN for B).
        base: baseM (or baseN).
        step: stepM (or stepN).
        k: K.
        base_k: baseK.
        step_k: stepKa (or stepKb).
        n_slots: Chunks of this operand L1 holds at once.
        other_blocks: Blocks of the other operand on the core (nIter for A, mIter for B).
        inner: True where this operand changes on every block (A when iterateOrder is 0).
        c0: Elements per 32 B fractal row.

    Returns:
        (loads, elements): the number of chunk copies and the elements they move, with rows
        aligned to 16 and K aligned to C0 as the NZ layout in L1 stores them.
    """
    l0, l1, e0, e1 = traffic_coefficients(extent, base, step, k, base_k, step_k, n_slots, inner, c0)
    return l0 + l1 * other_blocks, e0 + e1 * other_blocks


def operand_chip_traffic(
    extents: tuple[Any, Any],
    blocks: tuple[Any, Any],
    group_rows: Any,
    step: Any,
    n_slots: Any,
    inner: Any,
    chunking: tuple[Any, Any],
    full_cores: Any,
    other_cores: Any,
    other_blocks: Any,
    other_blocks_total: Any,
) -> tuple[Any, Any, Any, tuple[Any, Any, Any]]:
    """:func:`operand_traffic` of a full core and summed over every core, in one evaluation.

    The estimator's form: the cores along this operand's dimension are ``full_cores`` with the
    full extent and one with the tail; each meets ``other_cores`` cores along the other
    dimension, whose block counts sum to ``other_blocks_total``. Per core with ``O`` blocks of
    the other operand, :func:`operand_traffic` is, with ``G`` groups, ``P`` padded rows of a
    pass (full groups plus the 16-aligned last group) and ``Q`` the rows a streamed operand
    moves per other block (each block reloads its own group):

    * K chunks of a group do not fit (streamed): ``blocks x O`` passes of chunks, ``Q x O`` rows;
    * else the operand is loaded once per outer step (inner operand whose groups do not all
      fit): ``G x O`` loads and ``P x O`` rows, otherwise once: ``G`` loads and ``P`` rows;

    with ``k_chunks`` loads and ``k_elements`` elements per row-pass. Every term is an integer
    far below 2**53 (exact in float64), so regrouping the sums over the core shapes gives the
    same values as summing :func:`operand_traffic` of each shape. Takes arrays (float64 or
    int64 fields); the shared terms of the two extents and three results are computed once.
    The reuse rules are those of :func:`pass_coefficients` in another grouping:
    ``test_chip_traffic_equals_the_per_core_sum`` (tests/simcore/estimate/test_estimator.py) holds
    the estimator's chip traffic equal to :func:`chip_traffic`'s per-core sum, bit for bit.

    Args:
        extents: (full, tail) rows of this operand per core (singleCoreM and the M tail for A).
        blocks: (full, tail) blocks of this operand per core, ``ceil(extent / base)``.
        group_rows: Rows of a full group, ``step x base``.
        step: stepM (or stepN).
        n_slots: Chunks of this operand L1 holds at once.
        inner: True where this operand changes on every block (A when iterateOrder is 0).
        chunking: :func:`k_chunking` of the operand.
        full_cores: Cores with the full extent (``ceil(M / singleCoreM) - 1`` for A).
        other_cores: Cores along the other dimension.
        other_blocks: Blocks of the other operand on a full core (nIter for A).
        other_blocks_total: Blocks of the other operand summed over ``other_cores``.

    Returns:
        ``(loads, elements, chip_elements, shape)``: chunk loads and elements of the full x full
        core, the elements over all cores, and the full core's groups and its passes over the
        full groups and over the tail group (:func:`operand_passes`, the same integers: the
        estimator's chunk shapes take them instead of pricing the reuse again).
    """
    k_chunks, k_elems = chunking
    kept = k_chunks <= n_slots  # a group's K chunks fit: it stays in L1 across its blocks
    # The cases weigh the terms as 0/1 masks in the fields' dtype: a bool x float product costs
    # ~2.5x a float one, and each mask is used several times.
    kept_w = kept.astype(k_chunks.dtype)
    shapes = []
    for extent, n_blocks in zip(extents, blocks, strict=True):
        groups = ceil_div(n_blocks, step)
        groups_less = groups - 1
        full_group_rows = groups_less * group_rows
        last_rows = align_up(extent - full_group_rows, FRACTAL_ROWS)
        pass_rows = full_group_rows + last_rows
        full_blocks = groups_less * step
        last_blocks = n_blocks - full_blocks
        streamed_rows = full_group_rows * step + last_blocks * last_rows
        # A kept inner operand whose groups do not all fit is reloaded once per outer step.
        per_outer = (inner & kept & (k_chunks * groups > n_slots)).astype(k_chunks.dtype)
        shapes.append((groups, pass_rows, streamed_rows, per_outer, full_blocks, last_blocks))
    (groups_f, pass_f, stream_f, per_outer_f, full_blocks_f, last_blocks_f) = shapes[0]
    (_, pass_t, stream_t, per_outer_t, _, _) = shapes[1]
    # A full core: row passes of a kept operand (1, or O per outer step) and of a streamed one.
    streamed_w = 1 - kept_w
    passes = per_outer_f * (other_blocks - 1) + kept_w
    streamed_passes = streamed_w * other_blocks
    loads = (groups_f * passes + blocks[0] * streamed_passes) * k_chunks
    elements = (pass_f * passes + stream_f * streamed_passes) * k_elems
    # The full core's passes over its full groups and its tail group: a kept group once per
    # pass, a streamed one once per block of its own.
    full_passes = (groups_f - 1) * passes + full_blocks_f * streamed_passes
    tail_passes = passes + last_blocks_f * streamed_passes
    # All cores: the same passes summed over the two row shapes x the other dimension's cores.
    once = kept_w * other_cores
    extra_passes = other_blocks_total - other_cores
    chip_elements = (
        full_cores * pass_f * (per_outer_f * extra_passes + once)
        + pass_t * (per_outer_t * extra_passes + once)
        + (full_cores * stream_f + stream_t) * (streamed_w * other_blocks_total)
    ) * k_elems
    return loads, elements, chip_elements, (groups_f, full_passes, tail_passes)


@dataclass(frozen=True)
class CallRefetch:
    """Reads per call that HBM serves although L2 would hold them within the call (bytes).

    The refetch term of :func:`chip_bandwidth_cap` (:func:`call_refetch`): a problem's figure,
    the same for every tiling.
    """

    #: A and B once, where A + B + C exceed the usable L2 (0 where they fit).
    first_touch_bytes: float
    #: B again in every L2 round after the first, where one round's B + (A + C) / rounds
    #: exceeds the usable L2 (0 with one round).
    round_bytes: float


def call_refetch(problem: Problem, preset: HardwarePreset) -> CallRefetch:
    """The refetch term: the reads of one call of a back-to-back series that miss L2 anyway.

    The reload rule of :func:`chip_bandwidth_cap` counts every first touch as a hit: the
    measured benchmarks call a kernel back to back, and a call leaves its A, B and C in L2 for
    the next where they fit (torch.mm at N = 4096: 96 MiB within the usable 144). Where A + B +
    C exceed the usable L2 (``l2_bytes x l2_usable_fraction``) they cannot: under LRU a call's
    cyclic walk over more than L2 holds evicts every byte before its next use, so A and B come
    from HBM at every call. A kernel that walks each core's M in ``l2_rounds`` rounds
    (:attr:`Problem.l2_rounds`, MatMulV3's L2 split) reads all of B in every round, between two
    reads of a B byte the rest of B and one round's share of A and C: where that exceeds the
    usable L2, B comes from HBM once per round (measured_msprof_910b1_8192.csv cases 6-8: 128 +
    (128 + 128) / 2 = 256 MiB of 144). A closed form of the LRU walk over two calls with these
    footprints. Where the kernel leaves C in UB, C takes no L2. Nothing where the preset has
    ``l2_refetch`` off.
    """
    if not preset.l2_refetch:
        return CallRefetch(first_touch_bytes=0.0, round_bytes=0.0)
    in_b = bits(problem.dtype) / 8.0
    a_bytes = problem.m * problem.k * in_b
    b_bytes = problem.k * problem.n * in_b
    c_bytes = problem.m * problem.n * c_gm_bytes_per_element(problem)
    usable = preset.l2_bytes * preset.l2_usable_fraction
    rounds = problem.l2_rounds
    first = a_bytes + b_bytes if a_bytes + b_bytes + c_bytes > usable else 0.0
    round_set = b_bytes + (a_bytes + c_bytes) / rounds
    again = (rounds - 1) * b_bytes if round_set > usable else 0.0
    return CallRefetch(first_touch_bytes=float(first), round_bytes=float(again))


@dataclass(frozen=True)
class ChipTraffic:
    """Chip-wide GM traffic of a kernel and the bandwidth share each core gets."""

    read_bytes: float
    write_bytes: float
    unique_bytes: float
    hbm_bytes: float
    working_set_bytes: float
    #: The reads' rate cap per core (:func:`chip_bandwidth_cap`).
    cap_bytes_per_cycle: float
    #: The writes' rate cap per core (C's drains; the reads' cap without the refetch term).
    write_cap_bytes_per_cycle: float


def chip_bandwidth_cap(
    read_bytes: Any,
    write_bytes: Any,
    unique_bytes: Any,
    working_set_bytes: Any,
    active_cores: Any,
    preset: HardwarePreset,
    l2_share: Any = 1.0,
    *,
    refetch: CallRefetch,
) -> tuple[Any, Any, Any]:
    """Per-core transfer rate caps of reads and writes (bytes per cycle) and the bytes HBM serves.

    All GM traffic passes through L2 (ascend-notes.md §2.3). Data that the cores touch at the same
    time (the working set) stays in L2 if it fits; then HBM only sees each byte once. Otherwise
    the reloads miss in proportion to how much of the working set L2 cannot hold. Each core's
    transfers move no faster than its even share of the L2 bandwidth and its own L2 port (slowed
    by the misses). The HBM bandwidth is a chip-wide floor on the kernel time instead
    (:func:`hbm_floor_cycles`), not a rate cap: spread over every transfer, it made a kernel with
    fewer (L2-hit) reloads move each byte slower, so deeper L1 buffers could lose time, and it
    slowed sparse latency-bound transfers of kernels far longer than the chip's HBM time.

    ``l2_share`` is the fraction of the chip's L2 read bandwidth the kernel's copies get
    (:func:`l2_share_of`: on-the-fly ND->NZ copies draw less of it than plain ones); one core
    alone is bounded by its own L2 port (``preset.l2_core_port``).

    ``refetch`` (:func:`call_refetch`, the refetch term) adds the reads HBM serves although the
    reload rule above counts them as hits: the first touches of a call whose operands a
    back-to-back call cannot leave in L2, and the per-round re-reads of B of a kernel walking L2
    rounds. They move at the miss rate, so they slow the reads (not the writes: C's drains keep
    the reload rule's rate), and the round re-reads count in the HBM bytes (the first touches
    already do).

    Returns:
        (read_cap, write_cap, hbm_bytes): the reads' cap (GM->L1, GM->UB, bias) and the writes'
        (FixPipe, UB->GM), bytes per cycle; equal where nothing is refetched.
    """
    total = read_bytes + write_bytes
    usable = preset.l2_bytes * preset.l2_usable_fraction
    miss = np.clip(1.0 - usable / at_least(working_set_bytes, 1.0), 0.0, 1.0)
    reload_miss = at_least(total - unique_bytes, 0.0) * miss
    # The round re-reads are reloads: the share of them the capacity rule already misses is in
    # reload_miss (the rest would be counted twice).
    round_miss = refetch.round_bytes * (1.0 - miss) if refetch.round_bytes else 0.0
    hbm = unique_bytes + reload_miss + round_miss
    chip_rate = preset.l2_bytes_per_cycle * l2_share
    # A read that misses L2 is also slower for the core that issues it: msKPP's L2 model
    # (ascend-notes.md §3.1, mov_prof.py) gives an effective rate r*bw + (1-r)*bw/4.5 at hit ratio
    # r. The misses are the reloads beyond the usable L2 and the refetch term (first touches of
    # a call too large to stay in L2 between back-to-back calls, re-fetched rounds); where A + B
    # + C fit, the measured benchmark keeps its inputs L2-hot between calls and first touches
    # hit. The chip's aggregate share slows by the same mix: a read that misses is served from
    # HBM (measured_msprof_910b1_8192.csv: the kernels whose working set exceeds the usable L2,
    # cases 4 and 5, move their bytes slower than the L2-round cases 6-8 and than torch.mm at
    # N = 4096, whose inputs stay in L2).
    hit = 1.0 - reload_miss / at_least(total, 1.0)
    mix = hit + (1.0 - hit) / preset.l2_miss_slowdown
    core_rate = preset.l2_core_port * mix
    write_cap = np.minimum(chip_rate * mix / at_least(active_cores, 1), core_rate)
    # The refetched reads come from HBM: they move at msKPP's miss rate (hit ratio 0, 1/4.5 of
    # the hit rate), the other reads at the mix. The read cap gives the reads that time (each
    # refetched byte takes l2_miss_slowdown x mix times a byte at the mix): more reads that hit
    # never make the reads slower. (At most every read is refetched: the round re-reads are
    # taken from the kernel's reloads, which need not hold them all.)
    if not (refetch.first_touch_bytes or refetch.round_bytes):
        return write_cap, write_cap, hbm  # (most calls: the same figures, fewer passes)
    missed = np.minimum(reload_miss + refetch.first_touch_bytes + round_miss, read_bytes)
    refetched = missed - reload_miss
    return refetched_read_cap(write_cap, read_bytes, refetched, mix, preset), write_cap, hbm


def refetched_read_cap(
    write_cap: Any, read_bytes: Any, refetched_bytes: Any, mix: Any, preset: HardwarePreset
) -> Any:
    """The reads' rate cap per core where ``refetched_bytes`` of the reads come from HBM.

    The rule of :func:`chip_bandwidth_cap`'s refetch term, apart so the search's bounds
    (:mod:`tiler.bounds.traffic`) price the same rule: the refetched bytes move at msKPP's miss
    rate, each taking ``l2_miss_slowdown x mix`` times a byte at the mix (the reads' hit mix of
    the writes' cap ``write_cap``), the other reads at the mix; the cap gives the reads that
    time, ``write_cap x reads / (reads - refetched + refetched x l2_miss_slowdown x mix)``.
    """
    reads = at_least(read_bytes, 1.0)
    slower = reads - refetched_bytes + refetched_bytes * (preset.l2_miss_slowdown * mix)
    return write_cap * (reads / slower)


def l2_share_of(a_nd: bool, b_nd: bool, a_bytes: Any, b_bytes: Any, preset: HardwarePreset) -> Any:
    """Fraction of the chip's L2 read bandwidth a kernel's operand copies draw, by their bytes.

    On-the-fly ND->NZ copies (arch 2201) reach ``preset.nd2nz_l2_share`` of the plain copies'
    aggregate rate when many cores load at once (measured_msprof_910b1_8192.csv cases 4 and 5:
    ~77 B/cycle per core with 24 cores, against the ini's 110); plain (NZ) copies all of it.
    """
    if not preset.nd2nz_on_the_fly or not (a_nd or b_nd):
        return 1.0
    nd = a_bytes * a_nd + b_bytes * b_nd
    frac = nd / at_least(a_bytes + b_bytes, 1.0)
    return 1.0 - (1.0 - preset.nd2nz_l2_share) * frac


def l2_share_most(problem: Problem, preset: HardwarePreset) -> float:
    """The largest :func:`l2_share_of` any tiling of ``problem`` gets (for the search's bounds).

    Both operands ND (on the fly): ``nd2nz_l2_share`` whatever their bytes; otherwise up to 1.
    """
    both_nd = problem.format_a is Format.ND and problem.format_b is Format.ND
    return preset.nd2nz_l2_share if preset.nd2nz_on_the_fly and both_nd else 1.0


def hbm_floor_cycles(hbm_bytes: Any, preset: HardwarePreset) -> Any:
    """Cycles the chip needs at least to move ``hbm_bytes`` through HBM (a floor on the kernel)."""
    return hbm_bytes / preset.hbm_bytes_per_cycle


def reuse_working_set(
    m: Any,
    n: Any,
    k: Any,
    single_m: Any,
    single_n: Any,
    group_m: Any,
    group_n: Any,
    order: Any,
    in_bytes: float,
    rounds: int = 1,
    used: Any = None,
    cores: tuple[Any, Any] | None = None,
) -> Any:
    """Bytes the cores touch between two uses of the same data (what L2 must hold to hit).

    The inner operand (A when iterateOrder is 0) is walked end to end before any of it is used
    again, so all cores' slices of it must stay in L2; of the outer operand only the current
    group panel of each core is live. A kernel that walks each core's M in ``rounds`` rounds
    (``Problem.l2_rounds``) holds one round's rows of A at a time.

    A dealt split (more tiles than ``used``, the usedCoreNum; :func:`core_programs`) walks C's
    tiles row-major, N inner, whatever ``iterateOrder`` says inside a tile, in ``rounds`` groups
    of tile columns (:func:`simcore.pipeline.dealing.dealt_groups`): a tile column's B is used
    again one tile row later, after the group's B and the rows of A of the tile rows in flight
    (a round of ``used`` tiles spans up to ``ceil(used / the group's tile columns) + 1`` of them).

    ``cores``: the cores along M and along N (``ceil(m / single_m)``, ``ceil(n / single_n)``)
    where the caller has them.
    """
    m_cores, n_cores = (
        cores if cores is not None else (ceil_div(m, single_m), ceil_div(n, single_n))
    )
    a_inner = m_cores * at_most(ceil_div(single_m, rounds), m) + n_cores * group_n
    b_inner = n_cores * at_most(single_n, n) + m_cores * group_m
    elements = np.where(order == 0, a_inner, b_inner)
    if used is not None and np.any(m_cores * n_cores > used):
        group_cols = ceil_div(n_cores, rounds)
        in_flight = at_most(single_m * (ceil_div(used, group_cols) + 1), m)
        group = at_most(single_n * group_cols, n)
        elements = np.where(m_cores * n_cores > used, group + in_flight, elements)
    return elements * k * in_bytes


def c_gm_bytes_per_element(problem: Problem) -> float:
    """Bytes the kernel writes to GM per element of C: none when C is left in UB.

    With ``Problem.c_position`` "UB" (arch 3510) FixPipe drains each block into the vector
    cores' UB; what the fused epilogue then writes to GM is the user's code, not the matmul's.
    """
    return 0.0 if problem.c_position == "UB" else bits(problem.c_dtype) / 8.0


def chip_traffic(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> ChipTraffic:
    """Chip-wide traffic of the kernel (scalar version of the estimator's computation)."""
    in_b = bits(problem.dtype) / 8.0
    out_b = c_gm_bytes_per_element(problem)
    c0 = c0_elements(problem.dtype)
    read = read_a = read_b = 0.0
    active = 0
    for shape in core_shapes(problem, t):
        m_iter = ceil_div(shape.rows, t.baseM)
        n_iter = ceil_div(shape.cols, t.baseN)
        _, a_el = operand_traffic(
            shape.rows, t.baseM, t.stepM, problem.k, t.baseK, t.stepKa,
            slots(t.depthA1, t.stepM, t.stepKa), n_iter, t.iterateOrder == 0, c0,
        )  # fmt: skip
        _, b_el = operand_traffic(
            shape.cols, t.baseN, t.stepN, problem.k, t.baseK, t.stepKb,
            slots(t.depthB1, t.stepN, t.stepKb), m_iter, t.iterateOrder == 1, c0,
        )  # fmt: skip
        # One bias slice per output block (the simulator's program order): baseN values, fewer
        # in the tail column.
        bias = problem.bias * m_iter * shape.cols * bits(problem.bias_type) / 8.0
        read += shape.cores * (float(a_el + b_el) * in_b + bias)
        read_a += shape.cores * float(a_el) * in_b
        read_b += shape.cores * float(b_el) * in_b
        active += shape.cores
    # A dealt split reads every tile as one core would (the loop above, over the tiles), on at
    # most usedCoreNum cores at once.
    active = min(active, t.usedCoreNum)
    write = problem.m * problem.n * out_b
    unique = (problem.m + problem.n) * problem.k * in_b + write
    working = reuse_working_set(
        problem.m, problem.n, problem.k, t.singleCoreM, t.singleCoreN, t.baseM * t.stepM,
        t.baseN * t.stepN, t.iterateOrder, in_b, problem.l2_rounds, t.usedCoreNum,
    )  # fmt: skip
    share = l2_share_of(
        problem.format_a is Format.ND, problem.format_b is Format.ND, read_a, read_b, preset
    )
    cap, write_cap, hbm = chip_bandwidth_cap(
        read, write, unique, working, active, preset, share, refetch=call_refetch(problem, preset)
    )
    return ChipTraffic(read, write, unique, float(hbm), working, float(cap), float(write_cap))


def core_share(m: Any, n: Any, single_m: Any, single_n: Any, base_m: Any, base_n: Any) -> Any:
    """The average core's blocks over the largest core's (the cores' mean share of the work).

    The core shapes are (full or tail rows) x (full or tail columns), each with its blocks; the
    profiler's average core time and per-pipe busy times are means over the cores, the task
    time the slowest core's (measured_msprof_910b1_8192.csv: the 4 x 6 split's last column gets
    N = 512, so its average core time is 0.89 of the task time).
    """
    m_cores = ceil_div(m, single_m)
    n_cores = ceil_div(n, single_n)
    rows_t = m - (m_cores - 1) * single_m
    cols_t = n - (n_cores - 1) * single_n
    return core_share_of(
        (m_cores, n_cores),
        (ceil_div(single_m, base_m), ceil_div(single_n, base_n)),
        (ceil_div(rows_t, base_m), ceil_div(cols_t, base_n)),
    )


def core_share_of(cores: tuple[Any, Any], full: tuple[Any, Any], tail: tuple[Any, Any]) -> Any:
    """:func:`core_share` from the cores along M and N and a full and the tail core's blocks.

    ``full`` holds ``ceil(singleCoreM / baseM)`` and ``ceil(singleCoreN / baseN)``, ``tail`` the
    same of the last core's rows and columns (the estimator has the cores and the tails).
    """
    (m_cores, n_cores), (full_m, full_n), (tail_m, tail_n) = cores, full, tail
    blocks_m = (m_cores - 1) * full_m + tail_m
    blocks_n = (n_cores - 1) * full_n + tail_n
    return blocks_m * blocks_n / (m_cores * n_cores * full_m * full_n)


@dataclass(frozen=True)
class KernelTimes:
    """A kernel's times from its slowest core's cycles (scalars or arrays)."""

    #: The profiler's Task Duration: the slowest core plus the kernel's device start-up.
    device_time_us: Any
    #: The profiler's aicore_time: the cores' mean time (the slowest core's times the share).
    core_time_avg_us: Any
    #: The kernel's time per call as the search ranks it: the slowest core plus the launch
    #: overhead (:func:`kernel_us`).
    time_us: Any
    #: End to end per back-to-back call: ``time_us``, at least the host's dispatch floor
    #: (:func:`end_to_end_us`; measured_gemm_910b2_torch_mm.csv).
    end_to_end_us: Any
    #: The cores' mean share of the work (:func:`core_share`).
    core_share: Any


def kernel_times(preset: HardwarePreset, core_cycles: Any, share: Any) -> KernelTimes:
    """The device, average-core and end-to-end times of a kernel.

    ``core_cycles`` is the slowest core's time (the HBM floor included), ``share`` the cores'
    mean share of the work (:func:`core_share`).
    """
    core_us = core_cycles / preset.clock_mhz
    device = core_us + preset.device_startup_us
    return KernelTimes(
        device, core_us * share, kernel_us(preset, core_us), end_to_end_us(preset, core_us), share
    )


def kernel_us(preset: HardwarePreset, core_us: Any) -> Any:
    """The kernel's time per call: the slowest core plus the launch overhead.

    The launch overhead is the device's start-up; this is what the search ranks and bounds
    (monotone in ``core_us``).
    """
    return core_us + preset.launch_overhead_us


def end_to_end_us(preset: HardwarePreset, core_us: Any) -> Any:
    """End-to-end time per back-to-back call of a kernel whose slowest core takes ``core_us``.

    ``max(core + launch overhead, host dispatch floor)``: back-to-back calls are paced by the
    host's dispatch (measured_gemm_910b2_torch_mm.csv N = 1024: 21.9 us per call for a kernel
    of a few microseconds). Not what the search ranks: below the floor every tiling would tie.
    """
    return at_least(kernel_us(preset, core_us), preset.host_dispatch_floor_us)


def l2_rounds_to_fit(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """The fewest M rounds per core that keep the working set in the usable L2 (at most 64).

    aclnn's matmul kernel (MatMulV3) splits the cores' work for L2 when the operands exceed it
    (``matmul_v3_l2_cache.cpp``, ascend-notes.md §1.12): the rounds a kernel with that split
    would use, for :attr:`simcore.tiling.problem.Problem.l2_rounds` (for a dealt split, its
    groups of tile columns: :func:`simcore.pipeline.dealing.dealt_groups`).
    """
    in_b = bits(problem.dtype) / 8.0
    usable = preset.l2_bytes * preset.l2_usable_fraction
    rounds = 1
    while rounds < 64 and rounds < t.singleCoreM:
        working = reuse_working_set(
            problem.m, problem.n, problem.k, t.singleCoreM, t.singleCoreN, t.baseM * t.stepM,
            t.baseN * t.stepN, t.iterateOrder, in_b, rounds, t.usedCoreNum,
        )  # fmt: skip
        if working <= usable:
            break
        rounds += 1
    return rounds
