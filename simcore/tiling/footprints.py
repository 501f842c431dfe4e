"""Buffer footprints a tiling implies, and completing a partial JSON tiling.

The derived struct fields follow the struct's own definitions (seed 002 tables 1 and 2) and the
way CANN fills them (ascend-notes.md §1.8). Each formula below reproduces every row of
``tests/data/reference/cann_default_tilings.csv`` (2,579 rows: 1,722 Ascend910B2, 857
Ascend310P3); ``tests/simcore/tiling/test_footprints.py`` checks that.

* ``shareL1Size`` = depthA1 x baseM x baseK x sizeof(A) + depthB1 x baseN x baseK x sizeof(B),
  plus baseN x sizeof(bias) when the bias is staged in L1 for a BiasTable (910B, 310B), plus for
  MX types the e8m0 scales of each block (one byte per 32 K elements, times mxTypePara's factor;
  docs/ascend950.md).
* ``shareL0CSize`` = baseM x baseN x sizeof(accumulator).
* ``transLength`` = max(A1Length, B1Length, C1Length, BiasLength), the UB scratch each operand
  needs on chips that convert formats through UB (910A, 310P, 310B); 0 on 910B-class chips.
* ``shareUbSize`` = the ND tail-padding buffer plus, on chips without FixPipe, the C staging
  block; 0 on 910B-class chips.
"""

from __future__ import annotations

from typing import Any

from simcore.hardware.dtypes import (
    ACCUMULATOR_BYTES,
    FRACTAL_ROW_BYTES,
    FRACTAL_ROWS,
    DType,
    is_mx,
    l1_bytes,
    nbytes,
)
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.problem import INT32_MAX, Format, Problem
from simcore.tiling.tcube import TCubeTiling, build_tiling, parse_tiling_fields

#: A UB tile whose rows hold a multiple of this many elements gets one extra 16-element column
#: per row against bank conflicts (ascend-notes §1.8 "bank-conflict pad"). CANN tests the element
#: count, not the byte width: fp32 rows of 384 elements (1,536 B) get no pad while fp16 rows of
#: 768 elements (1,536 B) do; counting elements reproduces all 857 Ascend310P3 rows of the CSV.
_BANK_PAD_ROW_ELEMENTS = 256

#: mxTypePara with scale factors A, B, M, N of 1 each (bits 0, 8, 16, 24): the value CANN's MX
#: tilings fall back to (docs/ascend950.md).
MX_TYPE_PARA_DEFAULT = 0x01010101

#: The derived fields :func:`derived_sizes` computes, in struct order.
DERIVED_SIZE_FIELDS: tuple[str, ...] = ("transLength", "shareL1Size", "shareL0CSize", "shareUbSize")


def mx_scale_factors(t: TCubeTiling) -> tuple[int, int]:
    """Scale factors A and B of mxTypePara (bits 0-7 and 8-15), at least 1 each."""
    return max(t.mxTypePara & 0xFF, 1), max((t.mxTypePara >> 8) & 0xFF, 1)


def a_l1_bytes(problem: Problem, t: TCubeTiling) -> int:
    """Bytes of L1 the A buffers take: depthA1 blocks of baseM x baseK (with MX scales)."""
    return t.depthA1 * l1_bytes(problem.dtype, t.baseM * t.baseK, mx_scale_factors(t)[0])


def b_l1_bytes(problem: Problem, t: TCubeTiling) -> int:
    """Bytes of L1 the B buffers take: depthB1 blocks of baseN x baseK (with MX scales)."""
    return t.depthB1 * l1_bytes(problem.b_dtype, t.baseN * t.baseK, mx_scale_factors(t)[1])


def bias_l1_bytes(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """Bytes of L1 the bias block takes on chips with a BiasTable (staged L1 -> BT), else 0."""
    if not problem.bias or preset.bt_bytes == 0:
        return 0
    return nbytes(problem.bias_type, t.baseN)


def share_l1_size(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """The struct's shareL1Size: every L1 buffer the Matmul holds."""
    return a_l1_bytes(problem, t) + b_l1_bytes(problem, t) + bias_l1_bytes(problem, t, preset)


def share_l0c_size(t: TCubeTiling) -> int:
    """The struct's shareL0CSize: one baseM x baseN accumulator block."""
    return t.baseM * t.baseN * ACCUMULATOR_BYTES


def computes_ub_sizes(preset: HardwarePreset) -> bool:
    """True on chips whose Matmul sizes UB buffers: 910A, 310P, 310B (ascend-notes §1.8).

    Those are the chips without on-the-fly ND->NZ in MTE2 or without FixPipe; on 910B-class chips
    (both present) CANN leaves transLength and shareUbSize at 0.
    """
    return not (preset.nd2nz_on_the_fly and preset.has_fixpipe)


def uses_ub_path(problem: Problem, preset: HardwarePreset) -> bool:
    """True when the Matmul stages data through UB (no on-the-fly ND->NZ or no FixPipe)."""
    nd_input = problem.format_a is Format.ND or problem.format_b is Format.ND
    return (nd_input and not preset.nd2nz_on_the_fly) or not preset.has_fixpipe


def _ub_tile_bytes(dtype: DType, rows: int, cols: int) -> int:
    """UB bytes of an ND tile of ``rows`` x ``cols`` elements (cols contiguous), with bank pad."""
    size = nbytes(dtype, rows * cols)
    if cols % _BANK_PAD_ROW_ELEMENTS == 0:
        # One extra 16-element column per row shifts consecutive rows to different bank groups.
        size += nbytes(dtype, rows * FRACTAL_ROWS)
    return size


def _a_tile(t: TCubeTiling, trans_a: bool) -> tuple[int, int]:
    """(rows, contiguous cols) of the A block one L1 load holds, as A lies in GM."""
    m_extent, k_extent = t.baseM * t.stepM, t.baseK * t.stepKa
    return (k_extent, m_extent) if trans_a else (m_extent, k_extent)


def _b_tile(t: TCubeTiling, trans_b: bool) -> tuple[int, int]:
    """(rows, contiguous cols) of the B block one L1 load holds, as B lies in GM."""
    k_extent, n_extent = t.baseK * t.stepKb, t.baseN * t.stepN
    return (n_extent, k_extent) if trans_b else (k_extent, n_extent)


def trans_length(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """The struct's transLength: the largest UB scratch one operand needs.

    Per ascend-notes §1.8 (``GetTransLength``), on 910A/310P/310B:

    * A1 = the A block of one L1 load (baseM*stepM x baseK*stepKa) with the bank pad, for ND A;
    * B1 = likewise (baseK*stepKb x baseN*stepN), for ND B and for int8 NZ B not transposed;
    * C1 = baseM x baseN x sizeof(C) (the output always goes to GM here);
    * bias = baseN x sizeof(bias).

    CANN multiplies A1/B1 by the L1 steps (its default ``mmConfigType`` is the MDL one) even for
    tilings a Norm kernel uses; we do the same so that CANN's rows derive exactly. Reproduces
    857/857 Ascend310P3 rows; on 310B (no CSV rows) C1 follows the note but is unverified.

    Returns:
        The size in bytes, 0 on chips that need no UB staging (910B class).
    """
    if not computes_ub_sizes(preset):
        return 0
    a1 = 0
    if problem.format_a is Format.ND:
        a1 = _ub_tile_bytes(problem.dtype, *_a_tile(t, problem.trans_a))
    b1 = 0
    # int8 NZ B that is not transposed is still transposed through UB (ascend-notes §1.8).
    int8_nz_b = (
        problem.format_b is Format.NZ and problem.dtype is DType.INT8 and not problem.trans_b
    )
    if problem.format_b is Format.ND or int8_nz_b:
        b1 = _ub_tile_bytes(problem.dtype, *_b_tile(t, problem.trans_b))
    c1 = nbytes(problem.c_dtype, t.baseM * t.baseN)
    bias = nbytes(problem.bias_type, t.baseN) if problem.bias else 0
    return max(a1, b1, c1, bias)


def _misaligned(dtype: DType, elements: int) -> bool:
    """True when ``elements`` values of ``dtype`` are not a whole number of 32-byte blocks."""
    return nbytes(dtype, elements) % FRACTAL_ROW_BYTES != 0


def nd_tail_pad_bytes(problem: Problem, t: TCubeTiling) -> int:
    """UB buffer that pads the tail of an ND operand whose contiguous dim is not 32 B aligned.

    ascend-notes §1.8: baseM x 32 B or baseK x 32 B (one 32-byte block per row of the tile). Fitted
    on the CSV: the contiguous dim is the per-core one (singleCoreK for A, singleCoreN for B not
    transposed, singleCoreM for A transposed, singleCoreK for B transposed), one buffer serves both
    operands (the larger is kept), and the pad is 32 B per row whatever the dtype.
    """
    pads = [0]
    if problem.format_a is Format.ND:
        if problem.trans_a and _misaligned(problem.dtype, t.singleCoreM):
            pads.append(t.baseK * FRACTAL_ROW_BYTES)
        if not problem.trans_a and _misaligned(problem.dtype, t.singleCoreK):
            pads.append(t.baseM * FRACTAL_ROW_BYTES)
    if problem.format_b is Format.ND:
        if problem.trans_b and _misaligned(problem.dtype, t.singleCoreK):
            pads.append(t.baseN * FRACTAL_ROW_BYTES)
        if not problem.trans_b and _misaligned(problem.dtype, t.singleCoreN):
            pads.append(t.baseK * FRACTAL_ROW_BYTES)
    return max(pads)


def share_ub_size(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """The struct's shareUbSize: UB the Matmul keeps for itself (ascend-notes §1.8).

    The ND tail-padding buffer (:func:`nd_tail_pad_bytes`) on 910A/310P/310B, plus on chips
    without FixPipe the C staging block baseM x baseN x sizeof(C) and 32 B more when a C row of
    singleCoreN elements is not 32 B aligned. Reproduces 857/857 Ascend310P3 rows of the CSV.

    Returns:
        The size in bytes, 0 on 910B-class chips.
    """
    if not computes_ub_sizes(preset):
        return 0
    size = nd_tail_pad_bytes(problem, t)
    if not preset.has_fixpipe:
        size += nbytes(problem.c_dtype, t.baseM * t.baseN)
        if _misaligned(problem.c_dtype, t.singleCoreN):
            size += FRACTAL_ROW_BYTES
    return size


def derived_sizes(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> dict[str, int]:
    """Returns the four derived size fields (exact Python ints, possibly beyond int32)."""
    return {
        "transLength": trans_length(problem, t, preset),
        "shareL1Size": share_l1_size(problem, t, preset),
        "shareL0CSize": share_l0c_size(t),
        "shareUbSize": share_ub_size(problem, t, preset),
    }


def saturate_int32(value: int) -> int:
    """Clamps a size to the struct's int32 range (absurd tilings must still build)."""
    return max(-INT32_MAX - 1, min(INT32_MAX, value))


def complete_tiling(data: Any, problem: Problem, preset: HardwarePreset) -> TCubeTiling:
    """Validates a JSON tiling and fills every field it leaves out.

    Shape fields come from the problem, the rest take the documented defaults of
    :class:`~simcore.tiling.tcube.TCubeTiling`, and the derived sizes are computed (clamped to int32
    when an absurd tiling's sizes overflow it; :func:`simcore.tiling.legality.check_tiling` then
    reports the overflowing buffer).

    Raises:
        InputError: Unknown key, non-integer or out-of-int32 value, or a required field missing.
    """
    fields = parse_tiling_fields(data)
    defaults = {
        "M": problem.m,
        "N": problem.n,
        "Ka": problem.k,
        "Kb": problem.k,
        "singleCoreK": problem.k,
        "isBias": int(problem.bias),
    }
    if is_mx(problem.dtype):
        # One K window of scales per L1 load for A, B, M and N: CANN's default factors.
        defaults["mxTypePara"] = MX_TYPE_PARA_DEFAULT
    merged = {**defaults, **fields}
    partial = build_tiling(merged)
    for key, value in derived_sizes(problem, partial, preset).items():
        merged.setdefault(key, saturate_int32(value))
    return build_tiling(merged)
