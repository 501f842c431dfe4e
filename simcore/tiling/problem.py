"""The Matmul problem: C[M, N] = A[M, K] @ B[K, N] (+ bias) on one SoC.

Field names are the CLI/HTTP contract: ``soc, m, n, k, dtype, out_dtype, format_a, format_b,
format_c, trans_a, trans_b, bias, bias_dtype, template``. Ka = Kb = K.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simcore.errors import InputError, UnsupportedError, input_error_from
from simcore.hardware.dtypes import BIAS_DTYPES, INPUT_DTYPES, OUTPUT_DTYPES, DType, nbytes
from simcore.hardware.presets import HardwarePreset

#: TCubeTiling fields are int32 (matmul_tilingdata.h), so no dimension can exceed this.
INT32_MAX = 2**31 - 1
#: ND inputs: the GM->L1 copy addresses rows with a 16-bit stride (seed 002 table 1).
ND_MAX_STRIDE_ELEMENTS = 65535


class Format(StrEnum):
    """Layout of a matrix in global memory."""

    ND = "ND"
    NZ = "NZ"


class Template(StrEnum):
    """The Matmul template (MatmulConfig) the kernel is compiled with."""

    NORM = "norm"
    MDL = "mdl"


def default_out_dtype(dtype: DType) -> DType:
    """Returns the default output dtype: the input dtype for floats (fp32 for hf32), fp16 for ints.

    CANN's tilings in cann_default_tilings.csv pair int8 inputs with fp16 outputs.
    """
    if dtype is DType.HF32:
        return DType.FP32
    if dtype in (DType.INT8, DType.INT4):
        return DType.FP16
    return dtype


class Problem(BaseModel):
    """One Matmul shape with its dtypes, formats, transposes, bias and template.

    Missing optional keys take these defaults: ``soc`` Ascend910B2, ``dtype`` fp16, ``out_dtype``
    the input dtype (fp32 for hf32, fp16 for int8/int4), formats ND, no transposes, no bias,
    ``bias_dtype`` fp32 (int32 for integer inputs), ``template`` norm, ``intrinsics_check`` false
    (ND rows longer than 65535 elements are then illegal, as seed 002 table 1 says).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    soc: str = Field(default="Ascend910B2", min_length=1, max_length=64)
    m: int = Field(ge=1, le=INT32_MAX, strict=True)
    n: int = Field(ge=1, le=INT32_MAX, strict=True)
    k: int = Field(ge=1, le=INT32_MAX, strict=True)
    dtype: DType = DType.FP16
    out_dtype: DType | None = None
    format_a: Format = Format.ND
    format_b: Format = Format.ND
    format_c: Format = Format.ND
    trans_a: bool = Field(default=False, strict=True)
    trans_b: bool = Field(default=False, strict=True)
    bias: bool = Field(default=False, strict=True)
    bias_dtype: DType | None = None
    template: Template = Template.NORM
    #: The kernel's MatmulConfig.intrinsicsCheck: lets ND rows exceed 65535 elements (the GM->L1
    #: copy then goes row by row). ascend-notes.md §1.9; CANN's own tilings rely on it for
    #: N = 128256 (cann_default_tilings.csv).
    intrinsics_check: bool = Field(default=False, strict=True)
    #: Kernel options the profiler-measured kernels vary (measured_msprof_910b1_8192.csv): each
    #: core walks its ``singleCoreM`` rows in ``l2_rounds`` rounds (all cores one round at a
    #: time) to keep the chip's working set in L2; a compile-time
    #: constant tiling (less scalar work); UnitFlag (FixPipe drains at 512 B grain while the
    #: MMADs run). The defaults are the plain kernel.
    l2_rounds: int = Field(default=1, ge=1, le=64, strict=True)
    constant_tiling: bool = Field(default=False, strict=True)
    unit_flag: bool = Field(default=False, strict=True)

    @model_validator(mode="after")
    def _fill_and_check_dtypes(self) -> Problem:
        if self.dtype not in INPUT_DTYPES:
            raise ValueError(
                f"dtype {self.dtype} is not an input dtype; use one of {list(INPUT_DTYPES)}"
            )
        if self.out_dtype is None:
            object.__setattr__(self, "out_dtype", default_out_dtype(self.dtype))
        elif self.out_dtype not in OUTPUT_DTYPES[self.dtype]:
            raise ValueError(
                f"out_dtype {self.out_dtype} cannot be produced from {self.dtype}; "
                f"allowed: {[d.value for d in OUTPUT_DTYPES[self.dtype]]}"
            )
        if self.bias_dtype is None:
            object.__setattr__(self, "bias_dtype", BIAS_DTYPES[self.dtype][0])
        elif self.bias_dtype not in BIAS_DTYPES[self.dtype]:
            raise ValueError(
                f"bias_dtype {self.bias_dtype} is not allowed with {self.dtype}; "
                f"allowed: {[d.value for d in BIAS_DTYPES[self.dtype]]}"
            )
        return self

    @property
    def c_dtype(self) -> DType:
        """The output dtype (never None after validation)."""
        assert self.out_dtype is not None
        return self.out_dtype

    @property
    def bias_type(self) -> DType:
        """The bias dtype (never None after validation)."""
        assert self.bias_dtype is not None
        return self.bias_dtype

    @property
    def flops(self) -> int:
        """Floating-point (or integer) operations: 2 x M x N x K."""
        return 2 * self.m * self.n * self.k

    def canonical(self) -> dict[str, Any]:
        """Returns the problem with every default filled in, as JSON-ready values (a cache key)."""
        return self.model_dump(mode="json")


def parse_problem(data: Any) -> Problem:
    """Validates a problem from JSON-like data.

    Raises:
        InputError: A key is unknown, missing, of the wrong type or out of range; the error names
            the field and the limit.
    """
    if not isinstance(data, dict):
        raise InputError("problem", "type", "problem must be a JSON object", type(data).__name__)
    try:
        return Problem.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, prefix="problem") from exc


def check_supported(problem: Problem, preset: HardwarePreset) -> None:
    """Raises :class:`UnsupportedError` when the chip cannot run the problem.

    Checks the cube dtype support of the chip, NZ output on chips without FixPipe, bias on chips
    without a BiasTable, and that each matrix fits the chip's device memory.
    """
    if problem.dtype not in preset.supported_dtypes:
        raise UnsupportedError(
            "problem.dtype",
            "dtype_unsupported",
            f"{preset.soc} has no {problem.dtype} cube; it supports "
            f"{', '.join(d.value for d in preset.supported_dtypes)} "
            f"(source: {preset.sources.get('supported_dtypes', 'preset')})",
            problem.dtype.value,
            [d.value for d in preset.supported_dtypes],
        )
    a_bytes = nbytes(problem.dtype, problem.m * problem.k)
    b_bytes = nbytes(problem.dtype, problem.k * problem.n)
    c_bytes = nbytes(problem.c_dtype, problem.m * problem.n)
    memory = preset.hbm_bytes or 64 * 2**30
    for name, size in (("A", a_bytes), ("B", b_bytes), ("C", c_bytes)):
        if size > memory:
            raise UnsupportedError(
                "problem",
                "exceeds_device_memory",
                f"matrix {name} needs {size} bytes, more than {preset.soc}'s "
                f"{memory} bytes of device memory",
                size,
                memory,
            )
