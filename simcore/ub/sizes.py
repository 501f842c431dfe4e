"""The UB data path's sizes over numpy arrays of candidate tilings.

The array form of :func:`simcore.ub.path.ub_plan`'s sizes, for the estimator, the simulator and
the search's bounds: the staged row pitch, ``transLength`` (the vector reorders' half),
``shareUbSize`` (the workspace the kernel always needs), each operand's UB tile, and the path a
tiling takes with its reorders' cycles per repeat (:func:`ub_path_arrays`). The layout they
follow, and why, is :mod:`simcore.ub.path`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.hardware.dtypes import FRACTAL_ROW_BYTES, FRACTAL_ROWS, DType, bits
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.arith import ceil_div, integer_array
from simcore.tiling import footprints
from simcore.tiling.problem import Format, Problem
from simcore.ub.banks import BLOCK_BYTES
from simcore.ub.reorder import nd2nz_reorder_cycles, nz2nd_reorder_cycles, strided_repeat_cycles

#: A staged ND row of exactly this many 32 B blocks gets one pad block (CANN's kernel pads only
#: rows with ``blocks * 32 % 512 == 0 and blocks < 32``, i.e. 16 blocks).
KERNEL_PAD_ROW_BLOCKS = 16


def align_up(value: Any, to: int) -> Any:
    """``value`` rounded up to a multiple of ``to`` (scalars or integer arrays)."""
    return -(-value // to) * to


def staging_pitch_bytes(row_bytes: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Row pitch of an ND chunk as it lands in UB: compact rows, 512 B rows padded by 32 B.

    Args:
        row_bytes: Bytes of one row (scalar or array).

    Returns:
        The pitch in bytes (an array shaped like ``row_bytes``: int64, or float64 for float64
        row bytes, the estimator's, whose ceilings by 32 B are exact in float64).
    """
    aligned = ceil_div(integer_array(row_bytes), BLOCK_BYTES) * BLOCK_BYTES
    padded = aligned == KERNEL_PAD_ROW_BLOCKS * BLOCK_BYTES
    out: npt.NDArray[np.int64] = aligned + padded * BLOCK_BYTES
    return out


def _nbytes(dtype: DType, elements: Any) -> Any:
    # simcore.hardware.dtypes.nbytes over arrays (int4 packs two per byte).
    total = elements * bits(dtype) + 7
    if _is_integer(total):
        # (A shift: floor division by 8 for integers of either sign, about a third of the cost
        # of numpy's int64 division by a scalar; vector_path_array runs this on every input.)
        return total >> 3
    return total // 8


def _is_integer(x: Any) -> bool:
    """Whether ``x`` is an int, a numpy integer or an integer array (``>>`` and ``&`` apply)."""
    return isinstance(x, int | np.integer) or (isinstance(x, np.ndarray) and x.dtype.kind in "iu")


def _remainder(x: Any, to: int) -> Any:
    """``x % to`` for a power of two ``to`` (on integers an ``and``: the same values, cheaper)."""
    if _is_integer(x):
        return x & (to - 1)
    return x % to


def _field(fields: Mapping[str, npt.ArrayLike], name: str) -> npt.NDArray[np.int64]:
    return np.asarray(fields[name], dtype=np.int64)


def _ub_tile_bytes_array(dtype: DType, rows: Any, cols: Any) -> Any:
    # footprints._ub_tile_bytes over arrays: CANN's bank pad of one 16-element column per row.
    size = _nbytes(dtype, rows * cols)
    return size + (_remainder(cols, 256) == 0) * _nbytes(dtype, rows * FRACTAL_ROWS)


def trans_length_array(
    problem: Problem, fields: Mapping[str, npt.ArrayLike], preset: HardwarePreset
) -> npt.NDArray[np.int64]:
    """:func:`simcore.tiling.footprints.trans_length` over arrays of tiling fields.

    Args:
        problem: The problem.
        fields: ``baseM, baseN, baseK, stepM, stepN, stepKa, stepKb`` as integer arrays.
        preset: The chip.

    Returns:
        transLength per tiling (0 on chips that need no UB staging).
    """
    bm, bn, bk = _field(fields, "baseM"), _field(fields, "baseN"), _field(fields, "baseK")
    zero = np.zeros(np.broadcast(bm, bn, bk).shape, dtype=np.int64)
    if not footprints.computes_ub_sizes(preset):
        return zero
    a1 = zero + operand_ub_tile_bytes_array(problem, fields, True)
    b1 = zero + operand_ub_tile_bytes_array(problem, fields, False)
    c1 = _nbytes(problem.c_dtype, bm * bn)
    bias = _nbytes(problem.bias_type, bn) if problem.bias else zero
    # (Pairwise maxima, ``a1`` of the full shape: np.maximum.reduce over a list stacks the
    # arrays into a new one first, and each ``+ zero`` is a copy. The same int64 values.)
    out: npt.NDArray[np.int64] = np.maximum(np.maximum(np.maximum(a1, b1), c1), bias)
    return out


def operand_ub_tile_bytes_array(
    problem: Problem, fields: Mapping[str, npt.ArrayLike], is_a: bool
) -> Any:
    """One operand's UB tile (bytes) of :func:`trans_length_array`, 0 where it has none.

    Reads only that operand's fields (A: ``baseM, baseK, stepM, stepKa``; B: ``baseN, baseK,
    stepN, stepKb``): transLength is the largest of the A, B, C and bias tiles, so a tiling
    takes the vector path exactly where shareUbSize and twice each of these fit UB.
    """
    dt = problem.dtype
    bk = _field(fields, "baseK")
    if is_a:
        m_ext = _field(fields, "baseM") * _field(fields, "stepM")
        ka_ext = bk * _field(fields, "stepKa")
        if problem.format_a is not Format.ND:
            return 0 * (m_ext + ka_ext)
        if problem.trans_a:
            return _ub_tile_bytes_array(dt, ka_ext, m_ext)
        return _ub_tile_bytes_array(dt, m_ext, ka_ext)
    n_ext = _field(fields, "baseN") * _field(fields, "stepN")
    kb_ext = bk * _field(fields, "stepKb")
    int8_nz_b = problem.format_b is Format.NZ and dt is DType.INT8 and not problem.trans_b
    if problem.format_b is not Format.ND and not int8_nz_b:
        return 0 * (n_ext + kb_ext)
    if problem.trans_b:
        return _ub_tile_bytes_array(dt, n_ext, kb_ext)
    return _ub_tile_bytes_array(dt, kb_ext, n_ext)


def share_ub_size_array(
    problem: Problem, fields: Mapping[str, npt.ArrayLike], preset: HardwarePreset
) -> npt.NDArray[np.int64]:
    """:func:`simcore.tiling.footprints.share_ub_size` over arrays of tiling fields.

    Args:
        problem: The problem.
        fields: ``baseM, baseN, baseK, singleCoreM, singleCoreN`` (and ``singleCoreK``, default
            K) as integer arrays.
        preset: The chip.

    Returns:
        shareUbSize per tiling (0 on 910B-class chips).
    """
    bm, bn, bk = _field(fields, "baseM"), _field(fields, "baseN"), _field(fields, "baseK")
    sm, sn = _field(fields, "singleCoreM"), _field(fields, "singleCoreN")
    sk = _field(fields, "singleCoreK") if "singleCoreK" in fields else np.int64(problem.k)
    zero = np.zeros(np.broadcast(bm, bn, bk, sm, sn).shape, dtype=np.int64)
    if not footprints.computes_ub_sizes(preset):
        return zero
    dt = problem.dtype

    def misaligned(elements: Any) -> Any:
        return _remainder(_nbytes(dt, elements), FRACTAL_ROW_BYTES) != 0

    pads = [zero]
    if problem.format_a is Format.ND:
        if problem.trans_a:
            pads.append(misaligned(sm) * bk * FRACTAL_ROW_BYTES)
        else:
            pads.append(misaligned(sk) * bm * FRACTAL_ROW_BYTES)
    if problem.format_b is Format.ND:
        if problem.trans_b:
            pads.append(misaligned(sk) * bn * FRACTAL_ROW_BYTES)
        else:
            pads.append(misaligned(sn) * bk * FRACTAL_ROW_BYTES)
    # (Pairwise from ``zero``, of the full shape: the same values as a reduce over the list.)
    size = zero
    for pad in pads[1:]:
        size = np.maximum(size, pad)
    if not preset.has_fixpipe:
        c_misaligned = _remainder(_nbytes(problem.c_dtype, sn), FRACTAL_ROW_BYTES) != 0
        size = size + _nbytes(problem.c_dtype, bm * bn) + c_misaligned * FRACTAL_ROW_BYTES
    out: npt.NDArray[np.int64] = size.astype(np.int64)
    return out


def ub_path_arrays(
    problem: Problem, fields: Mapping[str, npt.ArrayLike], preset: HardwarePreset
) -> dict[str, npt.NDArray[Any]]:
    """Rows, row bytes, pitches and reorder cycles of the UB path, over arrays of tilings.

    The first full chunk of each operand (and the full C block) is described; for a narrower tail
    chunk call :func:`staging_pitch_bytes` and :func:`simcore.ub.reorder.nd2nz_reorder_cycles` with
    its own rows and row bytes.

    Args:
        problem: The problem.
        fields: ``baseM, baseN, baseK, stepM, stepN, stepKa, stepKb, singleCoreM, singleCoreN``
            as integer arrays of one length (or broadcastable).
        preset: The chip.

    Returns:
        ``a_rows, a_row_bytes, a_pitch_bytes, a_cycles_per_repeat, a_reorder_cycles`` (zeros when
        A does not go through UB), the same for ``b_`` and for ``c_`` (the NZ->ND reorder of one
        baseM x baseN block; zeros with FixPipe), ``trans_length_bytes``, ``share_ub_bytes``,
        ``vector_need_bytes`` (``max(shareUbSize, 2 x transLength)``), ``fits`` (shareUbSize <=
        UB, the legality rule) and ``vector_path`` (the vector reorders fit, so the kernel uses
        them).
    """
    bm, bn, bk = _field(fields, "baseM"), _field(fields, "baseN"), _field(fields, "baseK")
    sm, sn = _field(fields, "singleCoreM"), _field(fields, "singleCoreN")
    shape = np.broadcast(bm, bn, bk, sm, sn).shape
    zero = np.zeros(shape, dtype=np.int64)
    k = problem.k
    out: dict[str, npt.NDArray[Any]] = {}
    ub_nd = footprints.uses_ub_path(problem, preset) and not preset.nd2nz_on_the_fly
    dims = {
        "a": (
            problem.format_a is Format.ND and ub_nd,
            np.minimum(bm * _field(fields, "stepM"), sm),
            np.minimum(bk * _field(fields, "stepKa"), k),
            problem.trans_a,
        ),
        "b": (
            problem.format_b is Format.ND and ub_nd,
            np.minimum(bn * _field(fields, "stepN"), sn),
            np.minimum(bk * _field(fields, "stepKb"), k),
            not problem.trans_b,
        ),
    }
    for name, (active, mn_ext, k_ext, k_rows) in dims.items():
        if not active:
            for key in ("rows", "row_bytes", "pitch_bytes", "cycles_per_repeat"):
                out[f"{name}_{key}"] = zero
            out[f"{name}_reorder_cycles"] = zero.astype(np.float64)
            continue
        # A is M x K (K contiguous) unless transposed; B is K x N (N contiguous) unless transposed.
        rows = (k_ext if k_rows else mn_ext) + zero
        cols = (mn_ext if k_rows else k_ext) + zero
        row_bytes = _nbytes(problem.dtype, cols)
        pitch = staging_pitch_bytes(row_bytes)
        out[f"{name}_rows"] = rows
        out[f"{name}_row_bytes"] = row_bytes
        out[f"{name}_pitch_bytes"] = pitch
        out[f"{name}_cycles_per_repeat"] = strided_repeat_cycles(pitch, preset)
        out[f"{name}_reorder_cycles"] = nd2nz_reorder_cycles(rows, row_bytes, pitch, preset)
    if preset.has_fixpipe:
        for key in ("rows", "row_bytes", "pitch_bytes", "cycles_per_repeat"):
            out[f"c_{key}"] = zero
        out["c_reorder_cycles"] = zero.astype(np.float64)
    else:
        rows = np.minimum(bm, sm) + zero
        row_bytes = _nbytes(problem.c_dtype, np.minimum(bn, sn) + zero)
        pitch = align_up(row_bytes, BLOCK_BYTES)
        out["c_rows"] = rows
        out["c_row_bytes"] = row_bytes
        out["c_pitch_bytes"] = pitch
        out["c_cycles_per_repeat"] = strided_repeat_cycles(pitch, preset)
        out["c_reorder_cycles"] = nz2nd_reorder_cycles(rows, row_bytes, pitch, preset)
    trans = trans_length_array(problem, fields, preset) + zero
    share = share_ub_size_array(problem, fields, preset) + zero
    need = np.maximum(share, 2 * trans)
    out["trans_length_bytes"] = trans
    out["share_ub_bytes"] = share
    out["vector_need_bytes"] = need
    out["fits"] = share <= preset.ub_bytes
    out["vector_path"] = (need <= preset.ub_bytes) & footprints.uses_ub_path(problem, preset)
    return out
