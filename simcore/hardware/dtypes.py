"""Data types of the cube unit: sizes, fractal C0 and accumulator types.

Sources:
    Arch 3510 (Ascend 950) types: ../shared/reference/ascend950.md "Data types" (fp8 e4m3/e5m2 and
    HiF8 through Mmad to fp32; MmadMx for MX fp8/fp4 with one e8m0 scale per 32 K elements) and
    its per-dtype cube shapes (fp8/HiF8/int8 16x32x16, fp4 16x64x16 = C0 32 and 64 below).
    C0 = 32 B / sizeof(dtype) and the per-dtype fractal shapes: seed 002 table 2 (C0_size 16 for
    half/bfloat16, 8 for float, 32 for int8, 64 for int4) and ascend_soc_params.md ([DtypeMKN]).
    The accumulator (L0C) type is fp32 for float inputs and int32 for integer inputs: seed 002,
    table 1 (``l0c_dtype`` is int32_t or float).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

import numpy as np
import numpy.typing as npt

#: An element count: one int, or an array of them (the search sizes many blocks at once).
Count = TypeVar("Count", int, npt.NDArray[np.int64])


class DType(StrEnum):
    """Element types a Matmul input, output or bias can have."""

    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"
    HF32 = "hf32"
    INT8 = "int8"
    INT4 = "int4"
    INT32 = "int32"
    # Arch 3510 (Ascend 950) only: ascend950.md "Data types" (Mmad and MmadMx pages).
    FP8_E4M3 = "fp8_e4m3"
    FP8_E5M2 = "fp8_e5m2"
    HIF8 = "hif8"
    #: MX (microscaling) inputs for MmadMx: the element type plus one e8m0 scale per 32 K.
    MXFP8_E4M3 = "mxfp8_e4m3"
    MXFP8_E5M2 = "mxfp8_e5m2"
    MXFP4_E2M1 = "mxfp4_e2m1"
    MXFP4_E1M2 = "mxfp4_e1m2"


_BITS: dict[DType, int] = {
    DType.FP16: 16,
    DType.BF16: 16,
    DType.FP32: 32,
    # HF32 is fp32 in memory; only the cube computes with a shorter mantissa.
    DType.HF32: 32,
    DType.INT8: 8,
    DType.INT4: 4,
    DType.INT32: 32,
    DType.FP8_E4M3: 8,
    DType.FP8_E5M2: 8,
    DType.HIF8: 8,
    DType.MXFP8_E4M3: 8,
    DType.MXFP8_E5M2: 8,
    DType.MXFP4_E2M1: 4,
    DType.MXFP4_E1M2: 4,
}

#: Short names a request may use for the MX types: the OCP MX defaults (E4M3 for MXFP8, E2M1
#: for MXFP4), as the issue's ``--compare-dtypes bf16,fp8_e4m3,mxfp4`` writes them.
DTYPE_ALIASES: dict[str, DType] = {"mxfp8": DType.MXFP8_E4M3, "mxfp4": DType.MXFP4_E2M1}

#: The fp8 element types (plain Mmad), and the MX types by element width.
FP8_DTYPES: tuple[DType, ...] = (DType.FP8_E4M3, DType.FP8_E5M2)
MX_DTYPES: tuple[DType, ...] = (
    DType.MXFP8_E4M3,
    DType.MXFP8_E5M2,
    DType.MXFP4_E2M1,
    DType.MXFP4_E1M2,
)
#: Dtypes only arch 3510 (Ascend 950) computes: ascend950.md "Data types".
ARCH_3510_DTYPES: tuple[DType, ...] = (*FP8_DTYPES, DType.HIF8, *MX_DTYPES)

#: K elements that share one e8m0 scale in MX mode (ascend950.md: "one e8m0 scale per 32
#: elements of K for each operand").
MX_SCALE_K_ELEMENTS = 32
#: Bytes of one MX scale (e8m0).
MX_SCALE_BYTES = 1
#: Alignment of an MX operand block in L0 (ascend950.md: "fp4 operands are 512 B-aligned, fp8
#: operands 1024 B-aligned").
MX_OPERAND_ALIGN_BYTES: dict[int, int] = {4: 512, 8: 1024}

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
    *ARCH_3510_DTYPES,
)

#: Output dtypes a FixPipe (or the vector path) can write for each input dtype.
OUTPUT_DTYPES: dict[DType, tuple[DType, ...]] = {
    DType.FP16: (DType.FP16, DType.BF16, DType.FP32),
    DType.BF16: (DType.BF16, DType.FP16, DType.FP32),
    DType.FP32: (DType.FP32, DType.FP16, DType.BF16),
    DType.HF32: (DType.FP32, DType.FP16, DType.BF16),
    DType.INT8: (DType.INT32, DType.FP16, DType.BF16, DType.INT8),
    DType.INT4: (DType.INT32, DType.FP16),
    # Mmad accumulates fp8 / HiF8 / MX products in fp32 (ascend950.md); FixPipe converts the fp32
    # accumulator to fp32, bf16 or fp16 on the way out, as for the 16-bit floats.
    **{d: (DType.BF16, DType.FP16, DType.FP32) for d in ARCH_3510_DTYPES},
}

#: Bias dtypes accepted for each input dtype (bias is added in the accumulator type).
BIAS_DTYPES: dict[DType, tuple[DType, ...]] = {
    DType.FP16: (DType.FP32, DType.FP16),
    DType.BF16: (DType.FP32, DType.BF16),
    DType.FP32: (DType.FP32,),
    DType.HF32: (DType.FP32,),
    DType.INT8: (DType.INT32,),
    DType.INT4: (DType.INT32,),
    # The bias is added in the fp32 accumulator (BiasTable holds fp32 values).
    **{d: (DType.FP32,) for d in ARCH_3510_DTYPES},
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


def is_mx(dtype: DType) -> bool:
    """True for the MX (MmadMx) input types, which carry e8m0 scales along K."""
    return dtype in MX_DTYPES


def mx_operand_align_bytes(dtype: DType) -> int:
    """L0 alignment of an MX operand block (512 B fp4, 1024 B fp8); 0 for non-MX dtypes."""
    return MX_OPERAND_ALIGN_BYTES[_BITS[dtype]] if is_mx(dtype) else 0


def mx_scale_bytes(rows: int, k: int) -> int:
    """Bytes of the e8m0 scales of a ``rows`` x ``k`` MX operand block (one per 32 K elements)."""
    return rows * -(-k // MX_SCALE_K_ELEMENTS) * MX_SCALE_BYTES


def l1_bytes(dtype: DType, elements: Count, scale_factor: int = 1) -> Count:
    """L1 bytes of an operand block of ``elements`` values: the data and, for MX, its scales.

    An MX block of ``rows`` x ``k`` holds ``rows x k / 32`` e8m0 scales next to its data in L1
    (they go on to their own L0 MX buffers); ``scale_factor`` K windows of them when mxTypePara
    asks for more than one. ``elements`` of an MX block is a whole number of 32-element K groups
    (baseK is a multiple of C0 >= 32).
    """
    data: Count = (elements * _BITS[dtype] + 7) // 8
    if not is_mx(dtype):
        return data
    scales: Count = elements // MX_SCALE_K_ELEMENTS * MX_SCALE_BYTES * scale_factor
    return data + scales


def scale_bytes_per_element(dtype: DType) -> float:
    """Scale bytes an MX operand moves with each element (1/32), 0.0 for the other dtypes."""
    return MX_SCALE_BYTES / MX_SCALE_K_ELEMENTS if is_mx(dtype) else 0.0


def same_family(a: DType, b: DType) -> bool:
    """True when A and B may differ in a mixed pair: both fp8 (Mmad), both MXFP8 or both MXFP4."""
    if a == b:
        return True
    families = (FP8_DTYPES, MX_DTYPES[:2], MX_DTYPES[2:])
    return any(a in fam and b in fam for fam in families)


def parse_dtype(value: str) -> DType:
    """Returns the dtype a name denotes, accepting the aliases ``mxfp8`` and ``mxfp4``.

    Raises:
        ValueError: No dtype has that name.
    """
    alias = DTYPE_ALIASES.get(value)
    return alias if alias is not None else DType(value)


def accumulator_dtype(dtype: DType) -> DType:
    """Returns the L0C accumulator dtype for an input dtype (int32 for integers, else fp32)."""
    return DType.INT32 if dtype in (DType.INT8, DType.INT4) else DType.FP32
