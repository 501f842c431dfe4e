"""The Matmul problem: C[M, N] = A[M, K] @ B[K, N] (+ bias) on one SoC.

Field names are the CLI/HTTP contract: ``soc, m, n, k, dtype, out_dtype, format_a, format_b,
format_c, trans_a, trans_b, bias, bias_dtype, template``. Ka = Kb = K.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from simcore.errors import InputError, UnsupportedError, input_error_from
from simcore.hardware.dtypes import (
    ARCH_3510_DTYPES,
    BIAS_DTYPES,
    DTYPE_ALIASES,
    INPUT_DTYPES,
    OUTPUT_DTYPES,
    DType,
    nbytes,
    same_family,
)
from simcore.hardware.presets import HardwarePreset

#: TCubeTiling fields are int32 (matmul_tilingdata.h), so no dimension can exceed this.
INT32_MAX = 2**31 - 1
#: ND inputs: the GM->L1 copy addresses rows with a 16-bit stride (seed 002 table 1).
ND_MAX_STRIDE_ELEMENTS = 65535


class Format(StrEnum):
    """Layout of a matrix in global memory."""

    ND = "ND"
    NZ = "NZ"
    #: Column-major (CubeFormat::COLUMN_MAJOR), arch 3510 only (ascend950.md): the matrix lies
    #: as the transpose of an ND one, and the model treats it so (:meth:`Problem.model_view`).
    DN = "DN"


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
    if dtype in ARCH_3510_DTYPES:
        # fp8 / HiF8 / MX matmuls accumulate in fp32; bf16 is the output their quantized
        # matmuls hand to the next layer (assumption, docs/ascend950.md).
        return DType.BF16
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
    #: B's dtype when it differs from A's: a mixed fp8 pair (e4m3 x e5m2), or a mixed MX pair of
    #: one element width (ascend950.md "every pair of fp8 e4m3 / e5m2", "any mix"). None = dtype.
    dtype_b: DType | None = None
    out_dtype: DType | None = None
    format_a: Format = Format.ND
    format_b: Format = Format.ND
    format_c: Format = Format.ND
    trans_a: bool = Field(default=False, strict=True)
    trans_b: bool = Field(default=False, strict=True)
    bias: bool = Field(default=False, strict=True)
    bias_dtype: DType | None = None
    template: Template = Template.NORM
    #: "dense", or "4:2" structured sparsity (refused: gone on 950, not modeled elsewhere).
    sparsity: Literal["dense", "4:2"] = "dense"
    #: The kernel's MatmulConfig.intrinsicsCheck: lets ND rows exceed 65535 elements (the GM->L1
    #: copy then goes row by row). ascend-notes.md §1.9; CANN's own tilings rely on it for
    #: N = 128256 (cann_default_tilings.csv).
    intrinsics_check: bool = Field(default=False, strict=True)
    #: Kernel options the profiler-measured kernels vary (measured_msprof_910b1_8192.csv): each
    #: core walks its ``singleCoreM`` rows in ``l2_rounds`` rounds (all cores one round at a
    #: time) to keep the chip's working set in L2; a compile-time
    #: constant tiling (less scalar work); UnitFlag (FixPipe drains at 512 B grain while the
    #: MMADs run). The defaults are the plain kernel. A dealt split (more tiles than cores)
    #: walks its tiles in ``l2_rounds`` groups of tile columns instead
    #: (:func:`simcore.pipeline.dealing.dealt_groups`, MatMulV3's L2 tiles along N).
    l2_rounds: int = Field(default=1, ge=1, le=64, strict=True)
    constant_tiling: bool = Field(default=False, strict=True)
    unit_flag: bool = Field(default=False, strict=True)
    #: Where the Matmul API leaves C: "GM" (FixPipe L0C -> GM), or "UB" (C_TYPE in
    #: VECIN / VECCALC / VECOUT for a fused vector epilogue): on arch 3510 FixPipe writes the
    #: block L0C -> UB directly (ascend950.md, Per core: L0C to UB 128 B per cycle; the Matmul
    #: API's CopyCubeOut when IsSupportL0CToUB). The epilogue after it is the user's code.
    c_position: Literal["GM", "UB"] = "GM"

    @field_validator("dtype", "dtype_b", mode="before")
    @classmethod
    def _resolve_alias(cls, value: object) -> object:
        # "mxfp4" / "mxfp8" name the OCP MX defaults (e2m1 / e4m3).
        if isinstance(value, str) and value in DTYPE_ALIASES:
            return DTYPE_ALIASES[value]
        return value

    @model_validator(mode="after")
    def _fill_and_check_dtypes(self) -> Problem:
        if self.dtype not in INPUT_DTYPES:
            raise ValueError(
                f"dtype {self.dtype} is not an input dtype; use one of {list(INPUT_DTYPES)}"
            )
        if self.dtype_b is None:
            object.__setattr__(self, "dtype_b", self.dtype)
        elif not same_family(self.dtype, self.dtype_b):
            raise ValueError(
                f"dtype_b {self.dtype_b} cannot pair with dtype {self.dtype}: A and B may differ "
                "only within fp8 (e4m3 / e5m2), MXFP8 or MXFP4 (ascend950.md)"
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
    def b_dtype(self) -> DType:
        """B's dtype (never None after validation; equals ``dtype`` unless a mixed pair)."""
        assert self.dtype_b is not None
        return self.dtype_b

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
        """Returns the problem with every default filled in, as JSON-ready values (a cache key).

        ``dtype_b`` appears only for a mixed pair, so problems of one dtype keep the keys they had
        before mixed pairs existed (their stored answers stay reachable).
        """
        out = self.model_dump(mode="json")
        if self.dtype_b == self.dtype:
            out.pop("dtype_b")
        if self.sparsity == "dense":
            out.pop("sparsity")
        return out

    def model_view(self) -> Problem:
        """The problem as the model sees it: a DN operand as an ND one with its transpose flipped.

        DN lays A (M x K) out column-major, which is the ND layout of A transposed; the on-the-fly
        DN2NZ copy of arch 3510 (ascend950.md) is then the ND2NZ copy of that transposed matrix.
        """
        if Format.DN not in (self.format_a, self.format_b, self.format_c):
            return self
        update: dict[str, Any] = {}
        if self.format_a is Format.DN:
            update |= {"format_a": Format.ND, "trans_a": not self.trans_a}
        if self.format_b is Format.DN:
            update |= {"format_b": Format.ND, "trans_b": not self.trans_b}
        if self.format_c is Format.DN:
            # FixPipe's NZ2DN writes C column-major at the NZ2ND rate (ascend950.md FixPipe row).
            update |= {"format_c": Format.ND}
        return self.model_copy(update=update)


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


#: The arch of the Ascend 950 generation (ascend950.md title: "NPU arch 3510").
ARCH_3510 = 3510


def _check_dtype(problem: Problem, preset: HardwarePreset, dtype: DType, field: str) -> None:
    """Refuses an input dtype the chip's cube does not compute, naming the rule."""
    if dtype in preset.supported_dtypes:
        return
    supported = [d.value for d in preset.supported_dtypes]
    if dtype in ARCH_3510_DTYPES:
        rule = "DTYPE_NEEDS_ARCH_3510"
        why = (
            f"{dtype.value} is computed only by the arch-3510 cube (Ascend 950: Mmad / MmadMx, "
            f"ascend950.md); {preset.soc} is arch {preset.npu_arch}"
        )
    elif dtype is DType.INT4 and preset.npu_arch == ARCH_3510:
        rule = "INT4_REMOVED_ON_3510"
        why = f"int4 is gone on arch 3510: the cube has no s4 (ascend950.md); {preset.soc} is 950"
    else:
        rule = "dtype_unsupported"
        why = f"{preset.soc} has no {dtype.value} cube"
    raise UnsupportedError(
        field,
        rule,
        f"{why}; it supports {', '.join(supported)} "
        f"(source: {preset.sources.get('supported_dtypes', 'preset')})",
        dtype.value,
        supported,
    )


def check_supported(problem: Problem, preset: HardwarePreset) -> None:
    """Raises :class:`UnsupportedError` when the chip cannot run the problem.

    Checks the cube dtype support of the chip (rules ``DTYPE_NEEDS_ARCH_3510`` for the 950-only
    types on older chips, ``INT4_REMOVED_ON_3510`` for int4 on 950, ``dtype_unsupported`` else),
    4:2 sparsity (``SPARSITY_REMOVED_ON_3510`` on 950, ``sparsity_not_modeled`` elsewhere), the DN
    layout (``DN_NEEDS_ARCH_3510``), a C left in UB (``UB_OUTPUT_NEEDS_ARCH_3510``), and that
    each matrix fits the chip's device memory.
    """
    _check_dtype(problem, preset, problem.dtype, "problem.dtype")
    if problem.b_dtype != problem.dtype:
        _check_dtype(problem, preset, problem.b_dtype, "problem.dtype_b")
    if problem.sparsity != "dense":
        on_950 = preset.npu_arch == ARCH_3510
        raise UnsupportedError(
            "problem.sparsity",
            "SPARSITY_REMOVED_ON_3510" if on_950 else "sparsity_not_modeled",
            "4:2 structured sparsity is gone on arch 3510 (ascend950.md: 'structured sparsity: "
            "none', the ini and the change page)"
            if on_950
            else f"4:2 structured sparsity is not modeled; tune {preset.soc} dense matmuls",
            problem.sparsity,
            "dense",
        )
    formats = (
        ("format_a", problem.format_a),
        ("format_b", problem.format_b),
        ("format_c", problem.format_c),
    )
    for name, fmt in formats:
        if fmt is Format.DN and preset.npu_arch != ARCH_3510:
            raise UnsupportedError(
                f"problem.{name}",
                "DN_NEEDS_ARCH_3510",
                f"the DN layout (CubeFormat::COLUMN_MAJOR) is accepted by the Matmul API on arch "
                f"3510 only (ascend950.md); {preset.soc} is arch {preset.npu_arch}: give ND "
                "with the transpose flag flipped",
                fmt.value,
                [Format.ND.value, Format.NZ.value],
            )
    if problem.c_position == "UB" and preset.npu_arch != ARCH_3510:
        raise UnsupportedError(
            "problem.c_position",
            "UB_OUTPUT_NEEDS_ARCH_3510",
            "a C left in UB is written L0C -> UB by FixPipe on arch 3510 only (ascend950.md); "
            f"on {preset.soc} (arch {preset.npu_arch}) the Matmul API stages it through GM, "
            "which is not modelled: give GM",
            problem.c_position,
            "GM",
        )
    a_bytes = nbytes(problem.dtype, problem.m * problem.k)
    b_bytes = nbytes(problem.b_dtype, problem.k * problem.n)
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
