"""Data types of the cube unit: sizes, fractal C0 and accumulator types.

Sources:
    C0 = 32 B / sizeof(dtype) and the per-dtype fractal shapes: seed 002 table 2 (C0_size 16 for
    half/bfloat16, 8 for float, 32 for int8, 64 for int4) and ascend_soc_params.md ([DtypeMKN]).
    The accumulator (L0C) type is fp32 for float inputs and int32 for integer inputs: seed 002,
    table 1 (``l0c_dtype`` is int32_t or float).
"""

from __future__ import annotations

from enum import StrEnum


class DType(StrEnum):
    """Element types a Matmul input, output or bias can have."""

    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"
    HF32 = "hf32"
    INT8 = "int8"
    INT4 = "int4"
    INT32 = "int32"


_BITS: dict[DType, int] = {
    DType.FP16: 16,
    DType.BF16: 16,
    DType.FP32: 32,
    # HF32 is fp32 in memory; only the cube computes with a shorter mantissa.
    DType.HF32: 32,
    DType.INT8: 8,
    DType.INT4: 4,
    DType.INT32: 32,
}

#: The L0 fractal row is 32 bytes for every dtype (seed 002: C0_size = 32 B / sizeof).
FRACTAL_ROW_BYTES = 32
#: Rows of an L0A/L0B/L0C fractal and the alignment of baseM/baseN (seed 002 table 2).
FRACTAL_ROWS = 16
#: Bytes of one L0C accumulator element (fp32 or int32, seed 002 table 1).
ACCUMULATOR_BYTES = 4

INPUT_DTYPES: tuple[DType, ...] = (
    DType.FP16,
    DType.BF16,
    DType.FP32,
    DType.HF32,
    DType.INT8,
    DType.INT4,
)

#: Output dtypes a FixPipe (or the vector path) can write for each input dtype.
OUTPUT_DTYPES: dict[DType, tuple[DType, ...]] = {
    DType.FP16: (DType.FP16, DType.BF16, DType.FP32),
    DType.BF16: (DType.BF16, DType.FP16, DType.FP32),
    DType.FP32: (DType.FP32, DType.FP16, DType.BF16),
    DType.HF32: (DType.FP32, DType.FP16, DType.BF16),
    DType.INT8: (DType.INT32, DType.FP16, DType.BF16, DType.INT8),
    DType.INT4: (DType.INT32, DType.FP16),
}

#: Bias dtypes accepted for each input dtype (bias is added in the accumulator type).
BIAS_DTYPES: dict[DType, tuple[DType, ...]] = {
    DType.FP16: (DType.FP32, DType.FP16),
    DType.BF16: (DType.FP32, DType.BF16),
    DType.FP32: (DType.FP32,),
    DType.HF32: (DType.FP32,),
    DType.INT8: (DType.INT32,),
    DType.INT4: (DType.INT32,),
}


def bits(dtype: DType) -> int:
    """Returns the storage width of ``dtype`` in bits."""
    return _BITS[dtype]


def nbytes(dtype: DType, elements: int) -> int:
    """Returns the bytes that ``elements`` values of ``dtype`` occupy (int4 packs two per byte)."""
    return (elements * _BITS[dtype] + 7) // 8


def c0_elements(dtype: DType) -> int:
    """Returns C0, the elements of ``dtype`` in one 32-byte fractal row (16 for fp16)."""
    return FRACTAL_ROW_BYTES * 8 // _BITS[dtype]


def accumulator_dtype(dtype: DType) -> DType:
    """Returns the L0C accumulator dtype for an input dtype (int32 for integers, else fp32)."""
    return DType.INT32 if dtype in (DType.INT8, DType.INT4) else DType.FP32
