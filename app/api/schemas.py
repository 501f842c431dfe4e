"""Request and response models of the /v1 API, with the OpenAPI examples.

Request models forbid unknown keys, so a misspelt field is a 422 naming it, never ignored. They
describe the shape (types, ranges, enums) so that Swagger UI shows it and every bad field is
reported at once; the domain rules (the chip's dtypes, the legality of a tiling, pins the space
cannot honour) are then checked by simcore and tiler, which name the field or the rule.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.problem_json import ViolationDetail
from simcore.tiling.problem import INT32_MAX, Problem
from simcore.tiling.tcube import INT32_MIN
from tiler.tune import MAX_BUDGET

_REQUIRED = Field(ge=INT32_MIN, le=INT32_MAX, strict=True)
_OPTIONAL = Field(default=None, ge=INT32_MIN, le=INT32_MAX, strict=True)

#: Largest ``budget`` the schema admits (the tuner's); the server's ``TILER_MAX_BUDGET`` may be
#: lower.
BUDGET_SCHEMA_MAX = MAX_BUDGET
#: Optuna seeds are numpy ``RandomState`` seeds: unsigned 32-bit.
SEED_MAX = 2**32 - 1


class TilingIn(BaseModel):
    """A TCubeTiling by struct field names.

    The twelve fields the search chooses are required. The others may be left out (or null):
    ``M, N, Ka, Kb, singleCoreK, isBias`` then come from the problem, ``iterateOrder`` is 0,
    ``dbL0A``/``dbL0B`` 2, ``dbL0C`` 1, ``transLength``, ``shareL1Size``, ``shareL0CSize`` and
    ``shareUbSize`` are derived as the struct documents them, and every other field is 0.
    """

    model_config = ConfigDict(extra="forbid")

    usedCoreNum: int = _REQUIRED
    M: int | None = _OPTIONAL
    N: int | None = _OPTIONAL
    Ka: int | None = _OPTIONAL
    Kb: int | None = _OPTIONAL
    singleCoreM: int = _REQUIRED
    singleCoreN: int = _REQUIRED
    singleCoreK: int | None = _OPTIONAL
    baseM: int = _REQUIRED
    baseN: int = _REQUIRED
    baseK: int = _REQUIRED
    depthA1: int = _REQUIRED
    depthB1: int = _REQUIRED
    stepM: int = _REQUIRED
    stepN: int = _REQUIRED
    isBias: int | None = _OPTIONAL
    transLength: int | None = _OPTIONAL
    iterateOrder: int | None = _OPTIONAL
    shareMode: int | None = _OPTIONAL
    shareL1Size: int | None = _OPTIONAL
    shareL0CSize: int | None = _OPTIONAL
    shareUbSize: int | None = _OPTIONAL
    batchM: int | None = _OPTIONAL
    batchN: int | None = _OPTIONAL
    singleBatchM: int | None = _OPTIONAL
    singleBatchN: int | None = _OPTIONAL
    stepKa: int = _REQUIRED
    stepKb: int = _REQUIRED
    depthAL1CacheUB: int | None = _OPTIONAL
    depthBL1CacheUB: int | None = _OPTIONAL
    dbL0A: int | None = _OPTIONAL
    dbL0B: int | None = _OPTIONAL
    dbL0C: int | None = _OPTIONAL
    ALayoutInfoB: int | None = _OPTIONAL
    ALayoutInfoS: int | None = _OPTIONAL
    ALayoutInfoN: int | None = _OPTIONAL
    ALayoutInfoG: int | None = _OPTIONAL
    ALayoutInfoD: int | None = _OPTIONAL
    BLayoutInfoB: int | None = _OPTIONAL
    BLayoutInfoS: int | None = _OPTIONAL
    BLayoutInfoN: int | None = _OPTIONAL
    BLayoutInfoG: int | None = _OPTIONAL
    BLayoutInfoD: int | None = _OPTIONAL
    CLayoutInfoB: int | None = _OPTIONAL
    CLayoutInfoS1: int | None = _OPTIONAL
    CLayoutInfoN: int | None = _OPTIONAL
    CLayoutInfoG: int | None = _OPTIONAL
    CLayoutInfoS2: int | None = _OPTIONAL
    BatchNum: int | None = _OPTIONAL
    mxTypePara: int | None = _OPTIONAL

    def fields(self) -> dict[str, int]:
        """The fields that were given (None means left out)."""
        return self.model_dump(exclude_none=True)


Sampler = Literal["tpe", "cmaes", "random", "gp"]


class TuneBody(BaseModel):
    """A ``tilings:tune`` request: the same object as one line of ``tiler tune --jsonl``."""

    model_config = ConfigDict(extra="forbid")

    problem: Problem = Field(description="The Matmul problem (keys as `tiler evaluate` takes).")
    fixed: dict[str, int] = Field(
        default_factory=dict,
        description='TCubeTiling fields to pin, by struct name (e.g. `{"baseK": 64}`).',
    )
    baseline: TilingIn | None = Field(
        default=None,
        description="A tiling to compare with (e.g. the one CANN produced); an illegal one is "
        "reported with its violations.",
    )
    budget: int | None = Field(
        default=None,
        ge=0,
        le=BUDGET_SCHEMA_MAX,
        strict=True,
        description="Simulator trials after screening (0: screening and baselines only). "
        "Left out: the server's TILER_DEFAULT_BUDGET, else the tuner's default (16 trials, "
        "stopped early on large kernels). At most TILER_MAX_BUDGET.",
    )
    sampler: Sampler = Field(default="tpe", description="Optuna sampler of the trials.")
    seed: int = Field(default=0, ge=0, le=SEED_MAX, strict=True, description="Search seed.")

    def to_request(self, default_budget: int | None) -> dict[str, Any]:
        """The request as ``tiler.tune.parse_tune_request`` takes it.

        Args:
            default_budget: The server's budget for a request without one; None leaves the
                budget out, so the tuner's own default applies (it stops early on large
                kernels, which an explicit budget does not).
        """
        data: dict[str, Any] = {
            "problem": self.problem.model_dump(mode="json"),
            "fixed": dict(self.fixed),
            "sampler": self.sampler,
            "seed": self.seed,
        }
        budget = default_budget if self.budget is None else self.budget
        if budget is not None:
            data["budget"] = budget
        if self.baseline is not None:
            data["baseline"] = self.baseline.fields()
        return data


class TilingCheckBody(BaseModel):
    """A ``tilings:validate`` / ``tilings:evaluate`` request: a problem and a TCubeTiling."""

    model_config = ConfigDict(extra="forbid")

    problem: Problem
    tiling: TilingIn

    def to_request(self) -> dict[str, Any]:
        """The request as ``simcore.evaluate.parse_request`` takes it."""
        return {"problem": self.problem.model_dump(mode="json"), "tiling": self.tiling.fields()}


class TuneResponse(BaseModel):
    """A tuned tiling: the keys ``tiler tune`` prints plus ``id``, ``cached``, ``model_version``."""

    id: str = Field(description="Id of the stored result (`GET /v1/tilings/{id}`).")
    cached: bool = Field(description="True when the answer was in the cache on arrival.")
    model_version: str = Field(description="Version of the performance model.")
    tiling: dict[str, int] = Field(description="Every TCubeTiling field, in struct order.")
    estimate: dict[str, Any] = Field(description="Predicted time, bottleneck, bounds, roofline.")
    baselines: list[dict[str, Any]] = Field(
        description="Seed 002's recommended tiling and the caller's baseline, with speedups."
    )
    certificate: dict[str, Any] = Field(
        description="Whether the legal space was scored exhaustively, its size, the pruning."
    )
    explanation: dict[str, Any] = Field(
        description="Bottleneck pipe, binding constraints, runner-up and margin, roofline gap."
    )
    search: dict[str, Any] = Field(description="Strategy, trials and seconds of the search.")


class TilingRecord(TuneResponse):
    """A stored tuning result (``cached`` is always true here)."""

    request: dict[str, Any] = Field(description="The normalized request that produced it.")
    preset_digest: str = Field(description="SHA-256 of the hardware preset used.")
    created_at: dt.datetime


class TilingSummary(BaseModel):
    """One stored result in a listing."""

    id: str
    soc: str
    dtype: str
    m: int
    n: int
    k: int
    model_version: str
    created_at: dt.datetime
    time_us: float | None = Field(description="Predicted kernel time of the tuned tiling.")
    tiling: dict[str, int]


class TilingPage(BaseModel):
    """A page of stored results, newest first."""

    items: list[TilingSummary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null on the last page."
    )


class ValidateResponse(BaseModel):
    """Legality of a tiling: every violated rule and every warning."""

    valid: bool
    violations: list[ViolationDetail]
    warnings: list[ViolationDetail]


class EvaluateResponse(ValidateResponse):
    """A legal tiling's prediction and its explanation."""

    estimate: dict[str, Any] = Field(
        description="time_us, tflops, bottleneck, sequential_bound_us, resource_bound_us, "
        "simulated, per-pipe busy time and utilization, GM traffic, roofline."
    )
    explanation: dict[str, Any] | None = Field(
        default=None, description="Bottleneck, binding constraints and roofline gap."
    )


class HardwareSummary(BaseModel):
    """A hardware preset in the listing."""

    soc: str
    digest: str = Field(description="SHA-256 of the preset's values (part of the cache key).")
    cube_core_count: int
    clock_mhz: float
    dtypes: list[str]


class HardwareDetail(BaseModel):
    """A hardware preset with the source of every value."""

    soc: str
    digest: str
    values: dict[str, Any]
    sources: dict[str, str]


#: A UB address, stride, repeat or mask word: a non-negative integer or its text (``"0x1FE00"``).
UbNumber = (
    Annotated[int, Field(ge=0, strict=True)]
    | Annotated[
        str, Field(pattern=r"^\s*(0[xX][0-9a-fA-F]+|[0-9]+)\s*$", max_length=24, strict=True)
    ]
)


class UbAnalyzeBody(BaseModel):
    """A vector instruction on UB operands (the keys of ``tiler ub-analyze``).

    Addresses are UB byte offsets (integers or hex strings such as ``"0x1FE00"``), strides are in
    32 B blocks, ``mask`` is a lane count (continuous mode) or two 64-bit words (bit mode).
    """

    model_config = ConfigDict(extra="forbid")

    soc: str = Field(default="Ascend910B2", min_length=1, max_length=64)
    op: str = Field(min_length=1, max_length=32, description="Vector op, e.g. `add`, `exp`.")
    dtype: str = Field(default="fp16", min_length=1, max_length=16)
    dst: UbNumber
    src0: UbNumber
    src1: UbNumber | None = None
    repeat: UbNumber = 1
    dst_blk_stride: UbNumber = 1
    src0_blk_stride: UbNumber = 1
    src1_blk_stride: UbNumber = 1
    dst_rep_stride: UbNumber = 8
    src0_rep_stride: UbNumber = 8
    src1_rep_stride: UbNumber = 8
    mask: UbNumber | list[UbNumber] | None = None

    def to_request(self) -> dict[str, Any]:
        """The instruction as ``simcore.ub.vector.parse_vector_instruction`` takes it."""
        return self.model_dump(exclude_none=True)


class UbAnalyzeResponse(BaseModel):
    """Blocks, bank conflicts and cycles of a vector instruction."""

    instruction: dict[str, Any] = Field(description="The instruction with defaults filled in.")
    blocks: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    cycles_per_repeat: float
    cycles: float


_GEMM_4096 = {"problem": {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"}}

#: The named examples of ``tilings:tune`` in Swagger UI.
TUNE_EXAMPLES: dict[str, dict[str, Any]] = {
    "gemm_910b2_fp16_4096": {
        "summary": "910B2 fp16 4096^3 GEMM",
        "value": {**_GEMM_4096, "budget": 16},
    },
    "decode_gemv_m1": {
        "summary": "Decode GEMV, M = 1 (LLaMA-7B up projection)",
        "value": {
            "problem": {"soc": "Ascend910B2", "m": 1, "n": 11008, "k": 4096, "dtype": "fp16"},
            "budget": 16,
        },
    },
    "bf16_transposed_b": {
        "summary": "bf16 with transposed B",
        "value": {
            "problem": {
                "soc": "Ascend910B2",
                "m": 2048,
                "n": 5120,
                "k": 5120,
                "dtype": "bf16",
                "trans_b": True,
            },
            "budget": 16,
        },
    },
    "int8_310p3": {
        "summary": "310P3 int8",
        "value": {
            "problem": {"soc": "Ascend310P3", "m": 1024, "n": 2048, "k": 1024, "dtype": "int8"},
            "budget": 16,
        },
    },
}

_GOOD_TILING = {
    "usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128, "baseN": 256,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
}  # fmt: skip

#: The named examples of ``tilings:evaluate`` and ``tilings:validate``.
CHECK_EXAMPLES: dict[str, dict[str, Any]] = {
    "legal_910b2_fp16_4096": {
        "summary": "A legal tiling of the 910B2 fp16 4096^3 GEMM",
        "value": {**_GEMM_4096, "tiling": _GOOD_TILING},
    },
    "l0a_overflow": {
        "summary": "An illegal tiling: baseM 512 overflows L0A",
        "value": {**_GEMM_4096, "tiling": {**_GOOD_TILING, "baseM": 512}},
    },
}

#: The named examples of ``ub:analyze``.
UB_EXAMPLES: dict[str, dict[str, Any]] = {
    "add_conflict_free": {
        "summary": "fp16 add, operands in different bank groups",
        "value": {"op": "add", "dtype": "fp16", "dst": 0, "src0": "0x8000", "src1": "0x10000"},
    },
    "add_same_bank": {
        "summary": "fp16 add, all operands in one bank group (conflicts)",
        "value": {"op": "add", "dtype": "fp16", "dst": 0, "src0": 0, "src1": 256, "repeat": 4},
    },
}
