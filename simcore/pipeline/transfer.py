"""Cycles of the data transfers of an operand: MTE2 copies, UB staging legs, MTE1 loads.

The estimator prices whole passes of chunk copies and the legs of one chunk copy; the simulator
prices each copy with :class:`simcore.pipeline.costs.Costs`. Both go through the functions here,
so a transfer has one formula (each keeps the order of its floating-point operations: the two
fidelities agree bit for bit on the busy totals).

* A chunk copy is (GM->UB on MTE2, a vector reorder on V, UB->L1 on MTE3) on the UB path, one
  GM->L1 copy on MTE2 otherwise (one DMA per 32 B column on the column path).
* An L1->L0A / L0B load is ``latency + bytes / rate`` (MTE1).
* A bias slice is one GM->L1 copy per block (MTE2, before the block's chunk copies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.hardware.dtypes import FRACTAL_ROWS
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.arith import align_up, at_least, at_most, ceil_div
from simcore.pipeline.traffic import dealt_sharers, operand_passes
from simcore.tiling.problem import Problem, Template

if TYPE_CHECKING:
    from simcore.pipeline.costs import Costs


def l1_to_l0_cycles(preset: HardwarePreset, is_a: bool, rows: Any, k_bytes: Any) -> Any:
    """MTE1 cycles of one L1->L0A (``is_a``) or L1->L0B load: ``latency + rows x k_bytes / rate``.

    Args:
        preset: The chip.
        is_a: An A load (L0A), else B (L0B).
        rows: The block's rows (columns for B) as L1 holds them (aligned to 16).
        k_bytes: Bytes of one row over the step's K (K aligned to C0, times the input bytes).

    (Products of whole rows, whole C0 groups and an input size of 0.5, 1, 2 or 4 bytes are exact
    in float64 whichever way they are grouped.)
    """
    rate = preset.l1_to_l0a_bytes_per_cycle if is_a else preset.l1_to_l0b_bytes_per_cycle
    return preset.mte1_latency_cycles + rows * k_bytes / rate


def same_address_factor(preset: HardwarePreset, sharers: Any) -> Any:
    """How much longer a GM->L1 copy takes when ``sharers`` cores read the same GM rows at once.

    Cores that read the same addresses at the same time are served one after the other
    (measured_msprof_910b1_8192.csv: the 2 x 12 split's copies take longer than the 4 x 6
    split's): ``1 + c (s - 1)^2`` with ``s`` held at ``same_address_max_sharers`` (the largest
    ``s`` measured). For A the sharers are the cores along N (they read the same rows of A), for
    B the cores along M.
    """
    s = at_most(sharers, float(preset.same_address_max_sharers)) - 1.0
    return 1.0 + preset.same_address_coeff * s * s


def operand_contention(
    c: Costs,
    single_m: Any,
    single_n: Any,
    used: Any = None,
    cores: tuple[Any, Any] | None = None,
) -> tuple[Any, Any]:
    """The same-address factors of A's and B's direct copies for a core split.

    A's rows are read at once by the ``ceil(N / singleCoreN)`` cores along N, B's by the
    ``ceil(M / singleCoreM)`` cores along M (:func:`same_address_factor`); with ``used``
    (usedCoreNum) a dealt split's round of tiles (:func:`simcore.pipeline.traffic.dealt_sharers`).
    ``cores`` gives the cores along M and along N where the caller has them.
    """
    if cores is not None and used is None:
        along_m, along_n = cores
    elif used is None:
        along_n, along_m = ceil_div(c.n, single_n), ceil_div(c.m, single_m)
    else:
        along_n, along_m = dealt_sharers(c.m, c.n, single_m, single_n, used)
    return (
        same_address_factor(c.preset, along_n),
        same_address_factor(c.preset, along_m),
    )


def direct_copy_costs(
    c: Costs,
    is_a: bool,
    cap: Any,
    contention: Any,
    shapes: ChunkShapes,
    pieces: Callable[[Any, Any], tuple[Any, Any]],
) -> tuple[Any, Any, Any, tuple[Any, Any]]:
    """MTE2 cycles of all direct GM->L1 chunk copies of one operand, priced per chunk shape.

    ``shapes`` are the operand's chunk shapes (:func:`chunk_shapes`) and ``pieces`` their copy
    pieces (:func:`shape_pieces`). Each shape is priced as the simulator prices it
    (:meth:`Costs.direct_load_cycles` with the template's copy pieces and ``contention``): the
    on-the-fly ND->NZ copy is not linear in the bytes, so the legs of one full-K and one K-tail
    copy are averages over the shapes too, not the cost at the average rows.

    Returns:
        ``(total, per full-K chunk copy, per K-tail chunk copy, per pass)``: the last, one
        pass over the K chunks of a full group and of the tail group
        (:func:`shape_costs_by_group`).
    """
    tile = _shape_tile_bytes(c, shapes)

    def cost(rows: Any, kk: Any) -> Any:
        return c.direct_load_cycles(
            is_a, rows, kk, cap, pieces(rows, kk), contention, tile(rows, kk)
        )

    return shape_costs_by_group(cost, shapes)


def _shape_tile_bytes(c: Costs, shapes: ChunkShapes) -> Callable[[Any, Any], Any]:
    """:meth:`Costs.l1_tile_bytes` of each shape of ``shapes`` (rows, K) -> bytes.

    Each rows' and each K's alignment is computed once (the four shapes pair two of each),
    then multiplied in :meth:`Costs.l1_tile_bytes`' order.
    """
    rows_al = {id(rows): align_up(rows, FRACTAL_ROWS) for rows, _ in shapes.groups}
    ks_al = {id(kk): align_up(kk, c.c0) for kk in shapes.ks}

    def tile(rows: Any, kk: Any) -> Any:
        # (Keyed by the shapes' own objects, alive as long as ``shapes``.)
        return rows_al[id(rows)] * ks_al[id(kk)] * c.in_bytes

    return tile


def norm_step_handoff(
    problem: Problem,
    c: Costs,
    slots_a: Any,
    slots_b: Any,
    step_ka: Any,
    step_kb: Any,
    k_iter: Any,
) -> Any:
    """Whether the kernel hands L1 over once per chunk for both operands (the Norm step hand-off).

    The Norm template with one L1 slot per operand, both chunks turning over at the same K
    steps (``stepKa = stepKb``, at least two chunks) and both copied directly to L1: a chunk's
    reads wait for both operands' copies, and the next copies wait for every read before them,
    so MTE2 and MTE1 never overlap (measured_msprof_910b1_8192.csv cases 0-3: task time = MTE2
    + MTE1 busy within 2 %). Applied on chips with FixPipe (the measured family); the others keep
    the per-operand flags (no measurement). Works on scalars and arrays.
    """
    staged = c.a_via_ub or c.b_via_ub or c.a_by_column or c.b_by_column
    if problem.template is not Template.NORM or not c.has_fixpipe or staged:
        return False if not isinstance(slots_a, np.ndarray) else np.zeros(slots_a.shape, bool)
    return (slots_a == 1) & (slots_b == 1) & (step_ka == step_kb) & (k_iter > step_ka)


def copy_pieces(norm: bool, rows: Any, base_rows: Any, k: Any, base_k: Any) -> tuple[Any, Any]:
    """DMA copies of one chunk along its rows and along K: ``(rows, k)`` pieces.

    The Norm template moves one base block per GM->L1 copy (``ceil(rows / base) x ceil(k /
    baseK)`` copies of a chunk); MDL moves the chunk of ``stepM x stepKa`` blocks in one copy,
    the "large packet" (measured_msprof_910b1_8192.csv, the template column).
    """
    if not norm:
        return 1, 1
    return ceil_div(rows, base_rows), ceil_div(k, base_k)


def copy_totals(c: Costs, loads: Any, nbytes: Any, is_a: bool, cap: Any) -> tuple[Any, Any, Any]:
    """(MTE2, V, MTE3) cycles of all chunk copies of one operand, from their count and bytes.

    MTE2 is ``loads x latency + bytes / min(cap, peak)`` (:meth:`Costs.copy_rate`); on the UB path
    V is the reorders' issue overhead and bytes at the vector rate (callers replace it with
    :func:`shape_costs`' reorders, whose bank conflicts are not linear in the bytes) and MTE3
    ``loads x latency + bytes / UB->L1 rate``. On the column path one latency per 32 B column is
    added by :func:`column_latency_cycles`.
    """
    p = c.preset
    lat, peak = c.copy_rate(is_a)
    mte2 = loads * lat + nbytes / at_most(cap, peak)
    if not (c.a_via_ub if is_a else c.b_via_ub):
        return mte2, 0.0, 0.0
    vec = loads * p.vector_issue_overhead_cycles + nbytes / p.vector_bytes_per_cycle
    mte3 = loads * p.gm_to_ub_latency_cycles + nbytes / p.ub_to_l1_bytes_per_cycle
    return mte2, vec, mte3


def column_latency_cycles(c: Costs, instructions: Any, loads: Any) -> Any:
    """The column path's MTE2 latency beyond one per copy: a GM->L1 latency per extra DMA.

    ``instructions`` is the operand's DMA count over all its copies (:func:`chunk_cost_sum` of
    :meth:`Costs.load_instructions`), ``loads`` its copies.
    """
    return (instructions - loads) * (c.preset.gm_to_l1_latency_cycles)


def with_bias_slices(c: Costs, mte2: Any, blocks: Any, m_iter: Any, cols: Any, cap: Any) -> Any:
    """MTE2's total with a bias slice per block: a latency per block and ``baseN`` values each.

    Over a core of ``m_iter`` block rows the slices hold ``cols`` values per row.
    """
    p = c.preset
    return (
        mte2
        + blocks * p.gm_to_l1_latency_cycles
        + m_iter * cols * (c.bias_bytes / at_most(cap, p.gm_to_l1_peak_bytes_per_cycle))
    )


def chunk_cost_sum(cost: Callable[[Any, Any], Any], *args: Any) -> Any:
    """Sum of ``cost(rows, k)`` over every chunk copy of one operand.

    ``args`` are :func:`chunk_shapes`' (extent, base, step, slots, other blocks, inner, K,
    baseK, stepK). A chunk is (full group or the tail group) x (full K chunk or the K tail); the
    costs summed here (vector reorders with their bank conflicts, DMA instruction counts) are
    not linear in the bytes, so each shape is priced.
    """
    return shape_cost_sum(cost, chunk_shapes(*args))


@dataclass(frozen=True, slots=True)
class ChunkShapes:
    """An operand's chunk copies by shape: the groups' rows and passes, the chunks' K.

    Attributes:
        kc: K chunks per pass (the last one the K tail).
        ks: K of a full chunk and of the K-tail chunk.
        groups: ``(rows, passes)`` of the full groups and of the tail group.
    """

    kc: Any
    ks: tuple[Any, Any]
    groups: tuple[tuple[Any, Any], tuple[Any, Any]]


def chunk_shapes(
    extent: Any,
    base: Any,
    step: Any,
    n_slots: Any,
    other_blocks: Any,
    inner: Any,
    k: int,
    base_k: Any,
    step_k: Any,
    counts: tuple[Any, Any] | None = None,
    passes: tuple[Any, ...] | None = None,
) -> ChunkShapes:
    """An operand's chunk copies by shape (:class:`ChunkShapes`), for the sums over them.

    Built once per operand, they are shared by every cost summed over the same copies (the
    estimator sums three or four: cycles, DMA pieces, reorders, instructions). ``counts`` gives
    the K chunks per pass and the operand's blocks, ``ceil(ceil(k / base_k) / step_k)`` and
    ``ceil(extent / base)``, where the caller has them; ``passes`` the groups, ``ceil(blocks /
    step)``, and the passes over the full groups and over the tail group (those of
    :func:`operand_passes`, the same integers: the estimator has them from the chip traffic).
    """
    if counts is None:
        counts = (ceil_div(ceil_div(k, base_k), step_k), ceil_div(extent, base))
    kc, blocks = counts
    chunk_k = step_k * base_k
    k_last = k - (kc - 1) * chunk_k
    group_rows = step * base
    if passes is not None:
        groups, full, tail = passes
    else:
        groups = ceil_div(blocks, step)
        full, tail = operand_passes(
            extent, base, step, n_slots, kc, other_blocks, inner, (blocks, groups)
        )
    last_rows = extent - (groups - 1) * group_rows
    return ChunkShapes(kc, (chunk_k, k_last), ((group_rows, full), (last_rows, tail)))


def shape_cost_sum(cost: Callable[[Any, Any], Any], shapes: ChunkShapes) -> Any:
    """Sum of ``cost(rows, k)`` over every chunk copy of ``shapes`` (:func:`chunk_cost_sum`)."""
    kc, (chunk_k, k_last) = shapes.kc, shapes.ks
    total: Any = 0.0
    for rows, passes in shapes.groups:
        total = total + passes * ((kc - 1) * cost(rows, chunk_k) + cost(rows, k_last))
    return total


def shape_costs(cost: Callable[[Any, Any], Any], shapes: ChunkShapes) -> tuple[Any, Any, Any]:
    """:func:`shape_cost_sum` and the average cost of one full-K and of one K-tail chunk copy.

    The averages weigh the full groups and the tail group by their passes: a cost that is not
    linear in the rows (the reorders' bank conflicts) priced at the average rows can be far off
    both (128 rows, the average of 144 and 112, conflicts where neither does).

    Returns:
        ``(total, per full-K chunk, per K-tail chunk)``.
    """
    total, per_f, per_l, _ = shape_costs_by_group(cost, shapes)
    return total, per_f, per_l


def shape_costs_by_group(
    cost: Callable[[Any, Any], Any], shapes: ChunkShapes
) -> tuple[Any, Any, Any, tuple[Any, Any]]:
    """:func:`shape_costs` and the cost of one pass of each group: all its K chunks.

    Returns:
        ``(total, per full-K chunk, per K-tail chunk, (full group's pass, tail group's pass))``.
    """
    kc, (chunk_k, k_last) = shapes.kc, shapes.ks
    total: Any = 0.0
    sum_f: Any = 0.0
    sum_l: Any = 0.0
    per_pass = []
    for rows, passes in shapes.groups:
        c_f = cost(rows, chunk_k)
        c_l = cost(rows, k_last)
        one = (kc - 1) * c_f + c_l
        per_pass.append(one)
        total = total + passes * one
        sum_f = sum_f + passes * c_f
        sum_l = sum_l + passes * c_l
    n = at_least(shapes.groups[0][1] + shapes.groups[1][1], 1)
    return total, sum_f / n, sum_l / n, (per_pass[0], per_pass[1])


def shape_pieces(
    norm: bool, shapes: ChunkShapes, base: Any, base_k: Any
) -> Callable[[Any, Any], tuple[Any, Any]]:
    """:func:`copy_pieces` of each shape of ``shapes``, computed once (rows, K) -> pieces.

    The DMA count and the direct copies' cycles of an operand price the same pieces.
    """
    if not norm:
        return lambda rows, kk: copy_pieces(norm, rows, base, kk, base_k)
    # Each rows' pieces and each K's are computed once: the four shapes pair two of each.
    by_rows = {id(rows): ceil_div(rows, base) for rows, _ in shapes.groups}
    by_k = {id(kk): ceil_div(kk, base_k) for kk in shapes.ks}

    def pieces(rows: Any, kk: Any) -> tuple[Any, Any]:
        # (Keyed by the shapes' own objects, alive as long as ``shapes``.)
        return by_rows[id(rows)], by_k[id(kk)]

    return pieces


def first_last_legs(
    c: Costs,
    is_a: bool,
    rows: Any,
    k: int,
    base_k: Any,
    step_k: Any,
    kc: Any,
    cap: Any,
    reorders: tuple[Any, Any] | None = None,
) -> tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]]:
    """(MTE2, V, MTE3) cycles of one full chunk copy and of the last (K-tail) chunk copy.

    The formulas of the simulator's chunk copies; V and MTE3 are zero on the direct path.
    ``rows`` are the chunk's rows as L1 stores them (already aligned: an average over groups is
    not rounded up again). ``reorders`` gives the V legs (full-K and K-tail chunk, averaged over
    the groups' shapes by :func:`shape_costs`) instead of pricing the reorder at the average rows.
    """
    chunk_k = step_k * base_k
    last_k = k - (kc - 1) * chunk_k
    return chunk_legs(
        c, is_a, rows, (chunk_k, last_k), (align_up(chunk_k, c.c0), align_up(last_k, c.c0)), cap,
        reorders,
    )  # fmt: skip


def chunk_legs(
    c: Costs,
    is_a: bool,
    rows: Any,
    ks: tuple[Any, Any],
    ks_aligned: tuple[Any, Any],
    cap: Any,
    reorders: tuple[Any, Any] | None,
    bases: tuple[Any, Any] | None = None,
    contention: Any = 1.0,
    directs: tuple[Any, Any] | None = None,
) -> tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]]:
    """:func:`first_last_legs` from the chunks' K (full, last) and the same aligned to C0.

    A direct copy carries the template's copy pieces (``bases``: the operand's base rows and
    baseK; None prices one piece) and the same-address factor ``contention``; ``directs`` gives
    the direct copies' MTE2 legs (full-K and K-tail, averaged over the groups' shapes by
    :func:`direct_copy_costs`) instead.
    """
    p = c.preset
    via_ub = c.a_via_ub if is_a else c.b_via_ub
    by_column = c.a_by_column if is_a else c.b_by_column
    eff = c.a_eff if is_a else c.b_eff
    out = []
    for i, (kk, kk_al) in enumerate(zip(ks, ks_aligned, strict=True)):
        if not via_ub and directs is not None and not by_column:
            # (The direct copies' legs are given: no bytes to price.)
            out.append((directs[i], 0.0, 0.0))
            continue
        nbytes = rows * kk_al * c.in_bytes
        if by_column:
            g = c.load_instructions(is_a, rows, kk) * p.gm_to_l1_latency_cycles + nbytes / (
                at_most(cap, p.gm_to_l1_peak_bytes_per_cycle * eff)
            )
            out.append((g, 0.0, 0.0))
        elif not via_ub:
            pieces = (1, 1) if bases is None else copy_pieces(c.norm, rows, bases[0], kk, bases[1])
            g = c.direct_load_cycles(is_a, rows, kk, cap, pieces, contention, nbytes)
            out.append((g, 0.0, 0.0))
        else:
            if reorders is not None:
                reorder = reorders[i]
            else:
                reorder = c.nd2nz_a_cycles(rows, kk) if is_a else c.nd2nz_b_cycles(rows, kk)
            out.append((c.gm_to_ub_cycles(nbytes, eff, cap), reorder, c.ub_to_l1_cycles(nbytes)))
    return out[0], out[1]
