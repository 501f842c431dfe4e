"""The layout reorders of the UB path: ND->NZ for inputs, NZ->ND for the output.

Chips without on-the-fly ND->NZ (310P, 910A) stage an ND operand through UB, where the vector unit
reorders it into NZ (fractal) order before the UB->L1 copy; chips without FixPipe move each output
block L0C->UB in NZ order and the vector unit writes it out as ND rows for the UB->GM copy. Both
are the same strided-row kernel: one ``copy`` per group of 8 rows, 8 blocks of one 32 B column per
repeat, the strided port's blocks ``pitch / 32`` blocks apart. Their cost is the repeats times the
cycles of one repeat with its bank conflicts (:func:`strided_repeat_cycles`, from
:func:`simcore.ub.banks.repeat_cycles`) plus the issue overhead per instruction.

Sources: seed 001 (repeats of 8 blocks of 32 B, at most 255 per instruction, uint8 repeat
strides), seed 000 (bank conflicts, tables 2 and 4); the instruction model is
:mod:`simcore.ub.vector`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from simcore.errors import InputError
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.arith import ceil_div, integer_array
from simcore.ub.banks import (
    BLOCK_BYTES,
    BLOCKS_PER_REPEAT,
    base_repeat_cycles,
    repeat_blocks,
    repeat_cycles,
)
from simcore.ub.vector import MAX_REPEAT, REPEAT_BYTES, UINT8_MAX

__all__ = [
    "nd2nz_reorder_cycles",
    "nd2nz_reorder_shapes",
    "nz2nd_reorder_cycles",
    "nz2nd_reorder_table",
    "strided_repeat_cycles",
]


def strided_repeat_cycles(pitch_bytes: npt.ArrayLike, preset: HardwarePreset) -> Any:
    """Cycles of one reorder repeat whose 8 blocks on one port sit ``pitch_bytes`` apart.

    This is the repeat of both layout reorders of the UB path: ND->NZ reads 8 rows of one 32 B
    column (strided read, contiguous write) and NZ->ND writes them back (contiguous read, strided
    write). The figure comes from :func:`simcore.ub.banks.repeat_cycles` on the blocks of such a
    repeat, not from a table of its own: the 8 strided blocks fall in ``groups / gcd(stride,
    groups)`` bank groups, so a pitch that is a multiple of 512 B costs 8 cycles (seed 000
    tables 2 and 4, block stride 16), of 256 B 4 cycles (block stride 8), of 128 B 2, and any
    other multiple of 32 B 1. The contiguous port is taken to sit in another bank, as a layout
    from :func:`simcore.ub.banks.place_buffers` puts it, so it adds no read-write conflict.

    Args:
        pitch_bytes: Distance between the strided blocks (a multiple of 32 B; scalar or array).
        preset: The chip (bank groups, vector width).

    Returns:
        Cycles per repeat, an array shaped like ``pitch_bytes``: float64 for float64 pitches
        (the estimator's, see :func:`simcore.pipeline.arith.integer_array`), else int64.
    """
    table: npt.NDArray[Any] = _strided_repeat_table(preset)
    p = integer_array(pitch_bytes)
    if p.dtype == np.int64:
        stride_blocks = p // BLOCK_BYTES
    else:
        # (The block stride as an index: float64 pitches scale exactly by 1 / 32 and truncate
        # to the same integers; the cycles come back as float64, like the pitches.)
        stride_blocks = (p * (1.0 / BLOCK_BYTES)).astype(np.int64)
        table = _float_table(table)
    groups = preset.ub_bank_groups
    # (A power of two of groups takes the remainder as a mask, several times cheaper than an
    # int64 modulo; ``take`` gathers faster than indexing. The same values.)
    where = stride_blocks & (groups - 1) if groups & (groups - 1) == 0 else stride_blocks % groups
    return table.take(where, mode="wrap")


def _float_table(table: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """``table`` as float64 (cached beside it: one per bank geometry)."""
    pair = _STRIDED_FLOAT_TABLES.get(id(table))
    if pair is None or pair[0] is not table:
        pair = (table, table.astype(np.float64))
        _STRIDED_FLOAT_TABLES[id(table)] = pair
    return pair[1]


#: The tables of :func:`_strided_repeat_table` as float64, by the int table's id (with it).
_STRIDED_FLOAT_TABLES: dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}


#: Per-repeat cycles by block stride modulo the bank groups, per bank geometry (see below).
_STRIDED_TABLES: dict[tuple[int | float, ...], npt.NDArray[np.int64]] = {}


def _strided_repeat_table(preset: HardwarePreset) -> npt.NDArray[np.int64]:
    # Bank groups repeat every ``groups`` blocks, so strides modulo ``groups`` cover every case.
    # The table depends on the bank geometry only; it is cached because the simulator asks for
    # it once per chunk copy.
    key = (
        preset.ub_bank_groups,
        preset.ub_banks_per_group,
        preset.ub_block_bytes,
        preset.bank_stride_bytes,
        preset.ub_bytes,
        preset.vector_bytes_per_cycle,
    )
    table = _STRIDED_TABLES.get(key)
    if table is not None:
        return table
    groups = preset.ub_bank_groups
    # The strided port reads from 0 and the contiguous port writes one bank further on (another
    # bank of every group), the layout the reorders assume.
    other = preset.bank_stride_bytes
    separate = preset.ub_banks_per_group > 1 and other + REPEAT_BYTES <= preset.ub_bytes
    table = np.empty(groups, dtype=np.int64)
    for stride in range(groups):
        if separate:
            blocks = repeat_blocks(preset, dst=other, src0=0, src0_blk_stride=stride)
            table[stride] = repeat_cycles(blocks, preset)
        else:
            # One bank per group: no layout keeps the ports apart; price the strided port alone.
            crowd = Counter((j * stride) % groups for j in range(BLOCKS_PER_REPEAT))
            table[stride] = max(base_repeat_cycles(preset), max(crowd.values()))
    _STRIDED_TABLES[key] = table
    return table


def _reorder_cycles(
    rows: npt.ArrayLike,
    row_bytes: npt.ArrayLike,
    pitch_bytes: npt.ArrayLike,
    preset: HardwarePreset,
    rule: str,
) -> float | npt.NDArray[np.float64]:
    """Cycles of a strided-row reorder (ND->NZ or NZ->ND): the kernel both reorders share."""
    scalar = all(np.ndim(x) == 0 for x in (rows, row_bytes, pitch_bytes))
    cycles = _reorder_of(
        _reorder_rows(rows, rule), _reorder_columns(row_bytes, pitch_bytes, preset, rule), preset
    )
    if scalar:
        return float(cycles)
    return cycles


def _reorder_rows(rows: npt.ArrayLike, rule: str) -> tuple[Any, Any]:
    """What a reorder's cost takes from its rows alone: (at most 255 rows, groups of 8 rows).

    Float64 rows (the estimator's) stay float64 (:func:`simcore.pipeline.arith.integer_array`).
    """
    r = integer_array(rows)
    # (The checks as reductions without temporaries where they can be: the estimator calls this
    # on every candidate's chunk shapes, a few hundred times per block of 16,384.)
    if r.size and r.min() < 1:
        raise InputError("rows", f"{rule}_rows", "rows must be at least 1", rows, 1)
    # (The NZ side's repeat stride is ``rows`` blocks, a uint8: see _reorder_of. True where
    # every tile is that short, as the estimator's nearly always are: no select then.)
    short = True if r.size and r.max() <= UINT8_MAX else r <= UINT8_MAX
    return short, ceil_div(r, BLOCKS_PER_REPEAT)


def _reorder_columns(
    row_bytes: npt.ArrayLike, pitch_bytes: npt.ArrayLike, preset: HardwarePreset, rule: str
) -> tuple[Any, Any, Any]:
    """What a reorder's cost takes from its row bytes and pitch alone.

    Returns:
        (32 B columns, cycles per repeat, instructions per group of 8 rows at most 255 rows);
        float64 for float64 row bytes and pitches (the estimator's:
        :func:`simcore.pipeline.arith.integer_array`).
    """
    rb, p = integer_array(row_bytes), integer_array(pitch_bytes)
    if rb.size and rb.min() < 1:
        raise InputError(
            "row_bytes", f"{rule}_row_bytes", "row_bytes must be at least 1", row_bytes, 1
        )
    if (p.size and p.min() < 1) or np.any(ceil_div(p, BLOCK_BYTES) * BLOCK_BYTES != p):
        raise InputError(
            "pitch_bytes",
            "ub_alignment",
            "pitch_bytes must be a positive multiple of 32 B (UB rows start on a block)",
            pitch_bytes,
            BLOCK_BYTES,
        )
    columns = ceil_div(rb, BLOCK_BYTES)
    if np.any(columns * BLOCK_BYTES > p):
        raise InputError(
            "pitch_bytes", f"{rule}_pitch", "pitch_bytes must be at least row_bytes", pitch_bytes
        )
    return columns, strided_repeat_cycles(p, preset), ceil_div(columns, MAX_REPEAT)


def _reorder_of(
    rows: tuple[Any, Any], columns: tuple[Any, Any, Any], preset: HardwarePreset
) -> npt.NDArray[np.float64]:
    """A reorder's cycles from its rows' part (:func:`_reorder_rows`) and its columns'."""
    short, row_groups = rows
    cols, per_repeat, col_issues = columns
    repeats = row_groups * cols
    # The NZ side's repeat stride is ``rows`` blocks, a uint8: beyond 255 rows each column is
    # its own instruction.
    issues = (
        row_groups * col_issues
        if short is True
        else np.where(short, row_groups * col_issues, repeats)
    )
    # (Float64 parts, the estimator's, are exact integers: no cast, no copy.)
    cycles: npt.NDArray[np.float64] = (
        repeats * per_repeat + issues * preset.vector_issue_overhead_cycles
    ).astype(np.float64, copy=False)
    return cycles


def nd2nz_reorder_shapes(
    preset: HardwarePreset,
) -> Callable[[Any, Any, Callable[[Any], tuple[Any, Any]]], npt.NDArray[np.float64]]:
    """:func:`nd2nz_reorder_cycles` of tiles whose rows and row layout come from shared objects.

    The returned function takes ``(rows_key, bytes_key, layout)``: the tile's ND rows are (a
    function of) the object ``rows_key`` and its row bytes and pitch ``layout(bytes_key)``. The
    rows' and the layout's shares of the work are computed once per object (kept alive here):
    an operand's chunk shapes pair two row counts with two K sizes.
    """
    rows_parts: dict[int, tuple[Any, tuple[Any, Any]]] = {}
    cols_parts: dict[int, tuple[Any, tuple[Any, Any, Any]]] = {}

    def cycles(
        rows_key: Any, bytes_key: Any, layout: Callable[[Any], tuple[Any, Any]]
    ) -> npt.NDArray[np.float64]:
        hit_r = rows_parts.get(id(rows_key))
        if hit_r is None:
            hit_r = (rows_key, _reorder_rows(rows_key, "nd2nz"))
            rows_parts[id(rows_key)] = hit_r
        hit_c = cols_parts.get(id(bytes_key))
        if hit_c is None:
            hit_c = (bytes_key, _reorder_columns(*layout(bytes_key), preset, "nd2nz"))
            cols_parts[id(bytes_key)] = hit_c
        return _reorder_of(hit_r[1], hit_c[1], preset)

    return cycles


def nz2nd_reorder_table(
    rows: Sequence[Any],
    row_bytes: Sequence[Any],
    pitch_bytes: Sequence[Any],
    preset: HardwarePreset,
) -> dict[tuple[int, int], npt.NDArray[np.float64]]:
    """:func:`nz2nd_reorder_cycles` of every pair ``(rows[i], (row_bytes[j], pitch_bytes[j]))``.

    Keyed ``(i, j)``; each rows' and each row bytes' share of the work is computed once (the
    estimator's block types pair two of each). Arrays.
    """
    parts_r = [_reorder_rows(r, "nz2nd") for r in rows]
    parts_c = [
        _reorder_columns(rb, p, preset, "nz2nd")
        for rb, p in zip(row_bytes, pitch_bytes, strict=True)
    ]
    return {
        (i, j): _reorder_of(pr, pc, preset)
        for j, pc in enumerate(parts_c)
        for i, pr in enumerate(parts_r)
    }


@overload
def nd2nz_reorder_cycles(
    rows: int, row_bytes: int, pitch_bytes: int, preset: HardwarePreset
) -> float: ...


@overload
def nd2nz_reorder_cycles(
    rows: npt.ArrayLike,
    row_bytes: npt.ArrayLike,
    pitch_bytes: npt.ArrayLike,
    preset: HardwarePreset,
) -> npt.NDArray[np.float64]: ...


def nd2nz_reorder_cycles(
    rows: npt.ArrayLike,
    row_bytes: npt.ArrayLike,
    pitch_bytes: npt.ArrayLike,
    preset: HardwarePreset,
) -> float | npt.NDArray[np.float64]:
    """Vector cycles to reorder an ND tile in UB into NZ (fractal) order.

    Assumed kernel (the path of chips without on-the-fly ND2NZ): the tile is ``rows`` rows of
    ``row_bytes`` (a multiple of 32 B, the C0 column width) stored ``pitch_bytes`` apart. NZ keeps
    each 32 B column of the tile contiguous, so one ``copy`` per group of 8 rows reads one column
    block of 8 rows per repeat (``src0_blk_stride = pitch / 32``, ``src0_rep_stride = 1`` to move
    to the next column) and writes 8 consecutive NZ blocks (``dst_blk_stride = 1``,
    ``dst_rep_stride = rows``); repeats run over the ``row_bytes / 32`` columns, in chunks of 255.

    Bank conflicts (seed 000): the 8 source blocks of a repeat sit ``pitch / 32`` blocks apart
    (:func:`strided_repeat_cycles`): a pitch that is a multiple of 512 B puts all 8 in one group
    (8 cycles per repeat, table 4), a multiple of 256 B in two (4 cycles), of 128 B in four
    (2 cycles). Padding each row by 32 B (pitch = K * sizeof + 32) spreads them over 8 groups
    (1 cycle). The NZ destination is contiguous (no write conflict) and is assumed to be placed
    so that no lane reads and writes one bank (:func:`simcore.ub.banks.place_buffers`). Masked
    rows of a last partial group still cost a full repeat (the mask does not change the blocks
    addressed).

    Args:
        rows: Rows of the tile (scalar or array).
        row_bytes: Bytes of one row that are copied (rounded up to 32 B).
        pitch_bytes: Distance between consecutive rows in the ND buffer, a multiple of 32 B.
        preset: The chip.

    Returns:
        Cycles (float for scalar inputs, an array broadcast over array inputs), including
        ``vector_issue_overhead_cycles`` per instruction.

    Raises:
        InputError: ``rows`` is below 1, ``row_bytes`` below 1, ``pitch_bytes`` not a positive
            multiple of 32 B or smaller than the row.
    """
    return _reorder_cycles(rows, row_bytes, pitch_bytes, preset, "nd2nz")


@overload
def nz2nd_reorder_cycles(
    rows: int, row_bytes: int, pitch_bytes: int, preset: HardwarePreset
) -> float: ...


@overload
def nz2nd_reorder_cycles(
    rows: npt.ArrayLike,
    row_bytes: npt.ArrayLike,
    pitch_bytes: npt.ArrayLike,
    preset: HardwarePreset,
) -> npt.NDArray[np.float64]: ...


def nz2nd_reorder_cycles(
    rows: npt.ArrayLike,
    row_bytes: npt.ArrayLike,
    pitch_bytes: npt.ArrayLike,
    preset: HardwarePreset,
) -> float | npt.NDArray[np.float64]:
    """Vector cycles to reorder an NZ block in UB into ND rows ``pitch_bytes`` apart.

    The output path of chips without FixPipe: L0C->UB leaves the block in NZ order (each 32 B
    column of the block contiguous over its rows) and the vector unit writes it out as ND rows
    for the UB->GM copy. Assumed kernel, the mirror of :func:`nd2nz_reorder_cycles` and seed
    000's "contiguous read, strided write": one ``copy`` per group of 8 rows reads 8 consecutive
    NZ blocks per repeat (``src0_blk_stride = 1``, ``src0_rep_stride = rows``) and writes them to
    8 ND rows (``dst_blk_stride = pitch / 32``, ``dst_rep_stride = 1`` to move to the next
    column); repeats run over the ``row_bytes / 32`` columns, in chunks of 255.

    Bank conflicts (seed 000): the 8 destination blocks of a repeat sit ``pitch / 32`` blocks
    apart, a write-write conflict when several share a bank group (:func:`strided_repeat_cycles`:
    8 cycles per repeat at a multiple of 512 B as in seed 000 table 2 at block stride 16, 4 at a
    multiple of 256 B as at block stride 8, 2 at 128 B, else 1). The NZ source is contiguous and
    assumed placed in another bank than the rows it writes.

    Args:
        rows: Rows of the block (scalar or array).
        row_bytes: Bytes of one ND row that are written (rounded up to 32 B).
        pitch_bytes: Distance between consecutive ND rows in UB, a multiple of 32 B.
        preset: The chip.

    Returns:
        Cycles (float for scalar inputs, an array broadcast over array inputs), including
        ``vector_issue_overhead_cycles`` per instruction.

    Raises:
        InputError: ``rows`` is below 1, ``row_bytes`` below 1, ``pitch_bytes`` not a positive
            multiple of 32 B or smaller than the row.
    """
    return _reorder_cycles(rows, row_bytes, pitch_bytes, preset, "nz2nd")
