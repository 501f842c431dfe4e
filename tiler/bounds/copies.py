"""What an operand's copies cost at least: MTE2, and through UB the reorder (V) and UB->L1 (MTE3).

The copy totals of the estimator (:class:`simcore.estimate.copies.Copies`, ``r.cp``: ``mte2``,
``vec``, ``mte3`` and one average copy's legs ``ga1``, ``va1``, ``ua1``, ``gb1``, ...) are sums
over an operand's chunk copies. Whatever the steps, a pass copies every K chunk of every row group
of the core once, so its bytes, reorder repeats and column DMAs are at least what tiling the
core's rows x K gives (:func:`pass_floor`); the copy count is at least the passes times the
operand's blocks over one chunk's (the caller's cases and splits), and each copy pays its latency
(:func:`copy_busy`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.pipeline.costs import Costs, ceil_div
from simcore.ub.banks import BLOCKS_PER_REPEAT
from simcore.ub.reorder import strided_repeat_cycles

__all__ = [
    "copy_busy",
    "copy_terms",
    "first_copy_latency",
    "first_copy_legs",
    "group_load_issues",
    "k_row_issues",
    "least_instructions",
    "pass_floor",
]


def first_copy_latency(c: Costs, is_a: bool) -> float:
    """Cycles one direct chunk copy of an operand takes at least (0 through UB or by column).

    A direct copy is one instruction, latency plus bytes (:meth:`simcore.pipeline.costs.Costs.
    gm_to_l1_cycles`); the other paths are left at 0.
    """
    p = c.preset
    if (c.a_via_ub if is_a else c.b_via_ub) or (c.a_by_column if is_a else c.b_by_column):
        return 0.0
    if c.a_nd if is_a else c.b_nd:
        return float(p.nd2nz_latency_cycles)
    return float(p.gm_to_l1_latency_cycles)


def first_copy_legs(
    c: Costs,
    k: int,
    least_rows: tuple[Any, Any],
    k_iter: Any,
    cap: Any,
    contention: tuple[Any, Any] = (1.0, 1.0),
    bases: tuple[Any, Any, Any] | None = None,
) -> tuple[Any, Any]:
    """Least average MTE2 leg of an A copy and of a B copy (the start-up of the compute path).

    Estimator formula (:func:`simcore.estimate.copies.copy_totals_of`, ``r.cp.ga1`` and
    ``r.cp.gb1``): ``ga1 = ga / loads_a``, ``ga = loads_a x lat + bytes / min(peak, cap)`` (plus the
    column path's extra DMA latencies, >= 0): at least the latency plus the bytes of the average
    copy, and a copy moves ``bytes / loads`` on average, where the passes move groups of at least
    the tail block's rows (16-aligned) over all of K, each in at most ``k_iter`` chunks. ``cap`` is
    at least the estimator's bandwidth share; ``least_rows`` are the tail block's rows and columns;
    ``contention`` A's and B's same-address factors (:func:`nd_row_floor`); ``bases`` the
    group's (baseM, baseN, baseK), which let the row floor take the row alignment factor (an
    average copy spans at most one base block, so each is one piece).
    """
    legs = []
    for is_a, rows, factor in (
        (True, least_rows[0], contention[0]),
        (False, least_rows[1], contention[1]),
    ):
        lat, peak = c.copy_rate(is_a)
        stream = c.l1_tile_bytes(rows, k) / np.minimum(peak, cap) / k_iter
        op_bases = None if bases is None else (bases[0] if is_a else bases[1], bases[2])
        rows_floor = nd_row_floor(c, is_a, rows, k / k_iter, op_bases, factor)
        legs.append(lat + np.maximum(stream, rows_floor))
    return legs[0], legs[1]


def nd_row_floor(
    c: Costs,
    is_a: bool,
    rows: Any,
    k: Any,
    bases: tuple[Any, Any] | None = None,
    contention: Any = 1.0,
) -> Any:
    """Least row-request cycles of on-the-fly ND->NZ copies of ``rows`` x ``k`` (issue 17).

    :meth:`simcore.pipeline.costs.Costs.nd_copy_cycles` is ``latency + max(ND rows x row
    cycles x contention, bytes / rate)``, every piece requesting its rows again: at least one
    piece (MDL), under Norm one per base block along the contiguous dimension (``bases``: the
    operand's base rows and baseK). ``contention`` is the operand's same-address factor
    (:func:`simcore.pipeline.transfer.operand_contention`), which the core split fixes, so one
    factor for every copy of a group (1 is always below it). Zero for the other copy paths.
    """
    if not (c.a_on_the_fly if is_a else c.b_on_the_fly):
        return 0.0
    k_rows = not c.trans_a if is_a else c.trans_b  # (K is the contiguous dimension)
    if c.norm and bases is not None:
        pieces = ceil_div(k, bases[1]) if k_rows else ceil_div(rows, bases[0])
    else:
        pieces = 1
    # The operand's GM row alignment stretches every row request (nd_copy_cycles), except in a
    # copy that takes whole rows (Costs.whole_row_factor). Under Norm a piece spans at most the
    # base block along the contiguous dimension, so no copy of the group does when that is
    # shorter than the matrix's; otherwise (or MDL, whose chunks the group does not fix) 1.
    row_factor: Any = 1.0
    if c.norm and bases is not None:
        extent = bases[1] if k_rows else bases[0]
        full = c.k if k_rows else (c.m if is_a else c.n)
        row_factor = np.where(extent < full, c.a_row_factor if is_a else c.b_row_factor, 1.0)
    return (rows if k_rows else k) * pieces * c.preset.nd2nz_row_cycles * contention * row_factor


def pass_floor(
    c: Costs, is_a: bool, rows: Any, base: Any, tail: Any, k: int, base_k: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """Least reorder repeat cycles, reorder issues and column DMAs of one pass of an operand.

    A pass copies every K chunk of every row group of the core's ``rows`` once. Whatever the
    steps (stepM / stepKa for A), the chunks tile ``rows`` x K, so:

    * a reorder (:func:`simcore.ub.reorder.nd2nz_reorder_cycles`) of a chunk of ``r`` ND rows of
      ``w`` bytes costs ``ceil(r / 8) x ceil(w / 32)`` repeats of at least the cheapest strided
      repeat (:func:`simcore.ub.reorder.strided_repeat_cycles`), and the sums of ceilings over the
      chunks are at least the ceilings of the sums: ``ceil(R / 8) x ceil(W / 32)`` repeats per
      pass, with (R, W) the operand's ND rows and row bytes (K x rows bytes or rows x K bytes
      by its transpose);
    * each group of 8 ND rows of a chunk is issued at least once (``ceil(R / 8)`` issues per
      pass), and a chunk of more than 255 ND rows issues every repeat on its own (the NZ side's
      uint8 repeat stride): when the ND rows are the operand's rows and ``base`` > 255, every
      row group but a lone tail block (``tail`` rows) has more than 255 rows; when they are
      K rows and baseK > 255, every K chunk but a lone K tail;
    * on the column path a chunk takes one DMA per 32 B column of its ND rows, and the chunks
      that share ND rows (the K chunks of one row group when the ND rows are the operand's
      rows, the row groups of one K chunk when they are K rows) tile one row of W bytes:
      ``ceil(W / 32)`` DMAs per row group (or K chunk), of which a pass has at least
      ``iters / step`` (``iters`` the blocks along that dimension, see :func:`copy_busy`); when
      the ND rows are the operand's rows, a row group whose K chunks do not all fit in its
      slots is swept again by every block of it (:func:`simcore.pipeline.traffic.operand_passes`).

    Returns:
        Per pass: repeat cycles, issues, column DMAs per row group (or K chunk), ``iters``,
        and the K blocks of one row group when the ND rows are the operand's rows (0 when
        they are K rows); arrays broadcast over the groups.
    """
    p = c.preset
    # K is the ND row dimension when A is transposed (A^T is K x M) or B is not (B is K x N).
    k_rows = c.trans_a if is_a else not c.trans_b
    k_t = k - (ceil_div(k, base_k) - 1) * base_k
    if k_rows:
        nd_rows, row_bytes = 0 * rows + k, rows * c.in_bytes
        big_base, big_tail = base_k, k_t
        iters = ceil_div(k, base_k)
        panel = 0 * rows
    else:
        nd_rows, row_bytes = rows, 0 * rows + k * c.in_bytes
        big_base, big_tail = base, tail
        iters = ceil_div(rows, base)
        panel = ceil_div(k, base_k) + 0 * rows
    blocks, max_repeat = 8, 255
    per_repeat = float(np.min(strided_repeat_cycles(np.arange(p.ub_bank_groups) * 32, p)))
    columns = np.ceil(row_bytes / 32.0)
    repeats = np.ceil(nd_rows / blocks) * columns
    # ND rows in chunks of more than 255 rows: all, or all but a lone tail of <= 255.
    big = np.where(
        big_base > max_repeat, np.where(big_tail > max_repeat, nd_rows, nd_rows - big_tail), 0
    )
    issues = np.maximum(np.ceil(nd_rows / blocks), np.ceil(big / blocks) * columns)
    return repeats * per_repeat, issues, columns, iters, panel


def copy_terms(
    c: Costs,
    is_a: bool,
    passes: Any,
    rows: Any,
    k: int,
    cap: Any,
    per_pass: tuple[Any, ...],
    bases: tuple[Any, Any] | None = None,
    contention: Any = 1.0,
) -> tuple[Any, ...]:
    """The parts of :func:`copy_busy` that do not depend on the copy count.

    ``passes`` loads of an operand's ``rows`` x K: bytes as L1 stores them (rows aligned to
    16, K to C0), moved at no more than ``min(peak, cap)``, or at least the ND row requests
    (:func:`nd_row_floor`, ``contention`` the operand's same-address factor); the vector
    reorder's repeats and least issues (:func:`pass_floor`) per pass; on the column path the
    column DMAs.

    Returns:
        (MTE2 latency per copy, MTE2 bytes time, V repeat cycles, least V issues, V issue
        cycles, MTE3 latency per copy, MTE3 bytes time, passes x column DMAs per chunk row,
        the block count those columns repeat over, the K blocks of a row group or 0: see
        :func:`pass_floor`); V and MTE3 terms are 0 for direct copies.
    """
    p = c.preset
    nbytes = passes * c.l1_tile_bytes(rows, k)
    via_ub = c.a_via_ub if is_a else c.b_via_ub
    eff = c.a_eff if is_a else c.b_eff
    rep_cycles, issues, columns, iters, panel = per_pass
    if via_ub:
        return (
            p.gm_to_ub_latency_cycles,
            nbytes / np.minimum(p.gm_to_ub_peak_bytes_per_cycle * eff, cap),
            passes * rep_cycles,
            passes * issues,
            p.vector_issue_overhead_cycles,
            p.gm_to_ub_latency_cycles,
            nbytes / p.ub_to_l1_bytes_per_cycle,
            0.0,
            1.0,
            0.0,
        )
    by_column = c.a_by_column if is_a else c.b_by_column
    lat, peak = c.copy_rate(is_a)
    least = passes * columns if by_column else 0.0
    # (Each pass requests every ND row at least once: nd_row_floor over the pass.)
    rows_floor = passes * nd_row_floor(c, is_a, rows, k, bases, contention)
    stream = np.maximum(nbytes / np.minimum(peak, cap), rows_floor)
    if c.norm and bases is not None and (c.a_on_the_fly if is_a else c.b_on_the_fly):
        # Norm copies each base block of an on-the-fly ND operand apart, each paying the copy
        # latency: a pass is at least its blocks' copies (issue 17; iters 1, panel 0 keep
        # least_instructions at this count).
        least = passes * ceil_div(rows, bases[0]) * ceil_div(k, bases[1])
        return (lat, stream, 0.0, 0.0, 0.0, 0.0, 0.0, least, 1.0, 0.0)
    return (lat, stream, 0.0, 0.0, 0.0, 0.0, 0.0, least, iters, panel)


def copy_busy(
    terms: tuple[Any, ...], loads: Any, least: Any, issues: Any = 0.0
) -> tuple[Any, Any, Any, Any]:
    """(MTE2, V, MTE3, instructions) at least of an operand's ``loads`` copies.

    Each copy pays the copy latency and the bytes move at their rate (:func:`copy_terms`).
    The vector reorder pays the repeats and issues of :func:`pass_floor` per pass, at
    least one issue per copy, and at least ``issues`` (the caller's floor of the reorder's
    issues, :func:`group_load_issues`). On the column path a chunk takes one DMA per 32 B
    column of its ND rows: the columns of one pass tile ``iters`` x the columns of
    :func:`pass_floor` (each row group, or each K chunk, spans the whole other dimension), and
    the operand holding at
    most ``share`` blocks of L1 cuts the ``iters`` blocks into at least ``iters / share``
    groups or K chunks. When the ND rows are the operand's rows, a row group of ``step``
    blocks whose ``panel`` K blocks do not all fit in its slots (``share < step x panel``) is
    streamed and swept again by each of its blocks (:func:`simcore.pipeline.traffic.operand_passes`:
    ``iters`` sweeps a pass, whatever the step); one that fits has ``step <= share / panel``,
    so a pass has at least ``iters / floor(share / panel)`` sweeps; each sweep of a row group
    moves all its K bytes, ``ceil(W / 32)`` DMAs at least (sum of ceilings >= ceiling of sum):
    ``least`` (:func:`least_instructions`).
    """
    g_lat, g_bytes, v_rep, v_issues, v_ovh, u_lat, u_bytes = terms[:7]
    instructions = np.maximum(loads, least)
    mte2 = instructions * g_lat + g_bytes
    vec = v_rep + np.maximum(np.maximum(loads, v_issues), issues) * v_ovh
    mte3 = loads * u_lat + u_bytes
    return mte2, vec, mte3, instructions


def least_instructions(terms: tuple[Any, ...], share: Any) -> Any:
    """Column DMAs at least of an operand holding ``share`` blocks (see :func:`copy_busy`)."""
    least, iters, panel = terms[7:]
    if np.isscalar(least) and least == 0.0:
        return 0.0
    share = np.maximum(share, 1.0)
    fit_step = np.floor(share / np.maximum(panel, 1))
    sweeps = np.where(
        panel > 0,
        np.where(fit_step >= 1, np.ceil(iters / np.maximum(fit_step, 1.0)), iters),
        np.ceil(iters / share),
    )
    return least * sweeps


def k_row_issues(c: Costs, is_a: bool, passes: Any, k: int) -> Any:
    """Reorder issues at least of each load of one row group of an operand whose ND rows are K.

    Through UB, an operand whose ND rows are K (A transposed, B not) is reordered chunk by
    chunk, each chunk taking at least one issue per group of 8 of its K rows
    (:func:`simcore.ub.reorder.nd2nz_reorder_cycles`), and the K chunks of one load of a row
    group tile K: ``ceil(K / 8)`` issues at least (sum of ceilings >= ceiling of the sum),
    ``passes`` times. 0 for any other operand (no floor).
    """
    via_ub = c.a_via_ub if is_a else c.b_via_ub
    k_rows = c.trans_a if is_a else not c.trans_b
    if not (via_ub and k_rows):
        return 0.0
    # (A repeat reads one 32 B block of each of BLOCKS_PER_REPEAT rows.)
    return passes * float(ceil_div(k, BLOCKS_PER_REPEAT))


def group_load_issues(per_load: Any, blocks: Any, k_iter: Any, share: Any) -> Any:
    """Reorder issues at least of an operand's row-group loads (``per_load``: :func:`k_row_issues`).

    A row group of ``step`` blocks is loaded once a pass only when all its K chunks fit in
    L1 at once (:func:`simcore.pipeline.traffic.pass_coefficients`: ``k_chunks <= n_slots``,
    so ``step x k_iter`` blocks at most the operand's ``share``); otherwise every block of it
    loads it again. Either way a pass loads row groups at least ``ceil(blocks /
    max(floor(share / k_iter), 1))`` times (``blocks`` the operand's row blocks on the core),
    each load paying ``per_load``.
    """
    if np.isscalar(per_load) and per_load == 0.0:
        return 0.0
    fit_step = np.maximum(np.floor(share / np.maximum(k_iter, 1)), 1.0)
    return per_load * np.ceil(blocks / fit_step)
