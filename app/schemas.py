"""The service's typed models: what a request says, and what the service stores and answers.

**Requests.** The Matmul problem is simcore's own :class:`simcore.tiling.problem.Problem`, through
:class:`ProblemIn`, which only narrows what a request may say (input dtypes only) and names the
field of every dtype error. A tiling comes as :class:`TilingIn` (the struct's field names; the
twelve the search chooses are required, the rest may be left out) and becomes simcore's complete
:class:`simcore.tiling.tcube.TCubeTiling` once, at the boundary (:meth:`TilingIn.complete`). Request
models forbid unknown keys, so a misspelt field is a 422 naming it, never ignored. The server's
limits (budget, problems per job) are its settings, checked by the service and written into the
OpenAPI document (:func:`app.problem_json.apply_limits`), so that one number is said everywhere.

**Records.** A stored tuning answer (:class:`TilingRecord`, :class:`TilingSummary`) is built once
from a database row (``from_row``) and returned by the routes as it is (a job's records:
:mod:`app.job_records`). Answer sections keep keys a newer
tuner may add (``extra="allow"``); their schemas say nothing about such keys, which JSON Schema
allows by default, so that Swagger UI shows the documented keys only.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from app.problem_json import ViolationDetail
from simcore.hardware.dtypes import (
    BIAS_DTYPES,
    DTYPE_ALIASES,
    INPUT_DTYPES,
    OUTPUT_DTYPES,
    DType,
)
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import INT32_MIN, TCubeTiling
from tiler.limits import DEFAULT_BUDGET
from tiler.tune import TuneRequest

INT32_MAX = 2**31 - 1
_REQUIRED = Field(ge=INT32_MIN, le=INT32_MAX, strict=True)
_OPTIONAL = Field(default=None, ge=INT32_MIN, le=INT32_MAX, strict=True)

#: Optuna seeds are numpy ``RandomState`` seeds: unsigned 32-bit.
SEED_MAX = 2**32 - 1

Sampler = Literal["tpe", "cmaes", "random", "gp"]


def _open_schema(schema: dict[str, Any]) -> None:
    # ``additionalProperties: true`` is JSON Schema's default; said explicitly, it makes Swagger
    # UI invent ``additionalProp1`` keys in every example.
    schema.pop("additionalProperties", None)


class OpenSection(BaseModel):
    """An answer section: its documented keys, and any key a newer tuner adds, kept as is."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_open_schema)


# --- requests ----------------------------------------------------------------------------------

_INPUT_VALUES = [d.value for d in INPUT_DTYPES]


def _input_dtype(value: Any) -> Any:
    """Refuses a dtype that is not an input dtype (``int32`` is an output and bias type only).

    The MX short names (``mxfp4``, ``mxfp8``) resolve to their OCP default element types.
    """
    if isinstance(value, str) and value in DTYPE_ALIASES:
        return DTYPE_ALIASES[value]
    if value not in _INPUT_VALUES:
        raise PydanticCustomError(
            "enum",
            "Input should be one of {expected} (input dtypes)",
            {"expected": ", ".join(_INPUT_VALUES), "limit": _INPUT_VALUES},
        )
    return value


#: An input dtype: simcore's :class:`DType`, of the values a Matmul input can have.
InputDType = Annotated[
    DType,
    BeforeValidator(_input_dtype),
    WithJsonSchema({"type": "string", "enum": _INPUT_VALUES}),
]


def _allowed_with(
    value: DType | None, info: ValidationInfo, allowed: dict[DType, tuple[DType, ...]], what: str
) -> DType | None:
    dtype = info.data.get("dtype")
    if value is None or dtype is None or value in allowed[dtype]:
        return value
    plain = [d.value for d in allowed[dtype]]
    raise PydanticCustomError(
        "dtype_combination",
        "{value} is not {what} with dtype {dtype}; use one of {expected}",
        {
            "value": value.value,
            "what": what,
            "dtype": dtype.value,
            "expected": ", ".join(plain),
            "limit": plain,
        },
    )


class ProblemIn(Problem):
    """A Matmul problem (simcore's :class:`~simcore.tiling.problem.Problem`) as a request gives it.

    Defaults: ``soc`` Ascend910B2, ``dtype`` fp16, ``out_dtype`` the input dtype (fp32 for
    hf32, fp16 for int8/int4), ``format_a``/``format_b``/``format_c`` ND, no transposes, no
    bias, ``bias_dtype`` fp32 (int32 for integer inputs), ``template`` norm,
    ``intrinsics_check`` false (ND rows longer than 65535 elements are then illegal).
    """

    model_config = ConfigDict(title="Problem")

    dtype: InputDType = DType.FP16

    @field_validator("out_dtype")
    @classmethod
    def _out_dtype_from_dtype(cls, value: DType | None, info: ValidationInfo) -> DType | None:
        return _allowed_with(value, info, OUTPUT_DTYPES, "an output dtype")

    @field_validator("bias_dtype")
    @classmethod
    def _bias_dtype_with_dtype(cls, value: DType | None, info: ValidationInfo) -> DType | None:
        return _allowed_with(value, info, BIAS_DTYPES, "a bias dtype")


#: ``default`` (the packaged preset), ``active`` (the SoC's active profile) or a calibration id.
CALIBRATION_PATTERN = r"^(default|active|[0-9a-f]{24})$"


class ProfiledProblemIn(ProblemIn):
    """A problem of ``tilings:tune`` / ``evaluate`` / ``validate``: with the calibration profile.

    ``calibration`` is not part of the problem itself (its canonical form, its measurements):
    it picks the model constants the answer is computed with, and the profile's preset digest
    is part of the cache key and of every estimate.
    """

    model_config = ConfigDict(title="TuneProblem")

    calibration: str = Field(
        default="default",
        pattern=CALIBRATION_PATTERN,
        description="`default` (the packaged model constants), `active` (the SoC's active "
        "calibration profile, the default when none is active) or a calibration id.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_problem(cls, data: Any) -> Any:
        # A job's shapes are plain problems: they take the default constants.
        if isinstance(data, Problem) and not isinstance(data, cls):
            return data.model_dump()
        return data

    def canonical(self) -> dict[str, Any]:
        """The problem without the profile choice (the tuner's and the measurements' key)."""
        out = super().canonical()
        out.pop("calibration", None)
        return out


class TilingIn(BaseModel):
    """A TCubeTiling by struct field names, as a request gives it.

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

    def complete(self, problem: Problem, preset: HardwarePreset) -> TCubeTiling:
        """The complete struct: every left-out field filled from the problem or derived.

        Raises:
            simcore.errors.InputError: The fields contradict each other (named).
        """
        return complete_tiling(self.fields(), problem, preset)


_BUDGET_DESCRIPTION = (
    "Simulator trials after screening (0: screening and baselines only). Left out: the "
    f"server's TILER_DEFAULT_BUDGET, else the tuner's default ({DEFAULT_BUDGET} trials, stopped "
    "early on large kernels). At most the server's TILER_MAX_BUDGET (the schema's maximum)."
)


class TuneBody(BaseModel):
    """A ``tilings:tune`` request: the same object as one line of ``tiler tune --jsonl``."""

    model_config = ConfigDict(extra="forbid")

    problem: ProfiledProblemIn = Field(description="The Matmul problem.")
    fixed: dict[str, int] = Field(
        default_factory=dict,
        description='TCubeTiling fields to pin, by struct name (e.g. `{"baseK": 64}`).',
        examples=[{"baseK": 64}],
    )
    baseline: TilingIn | None = Field(
        default=None,
        description="A tiling to compare with (e.g. the one CANN produced); an illegal one is "
        "reported with its violations.",
    )
    budget: int | None = Field(default=None, ge=0, strict=True, description=_BUDGET_DESCRIPTION)
    sampler: Sampler = Field(
        default="tpe",
        description="Optuna sampler of the trials (`gp` needs the optional gp group).",
    )
    seed: int = Field(default=0, ge=0, le=SEED_MAX, strict=True, description="Search seed.")
    source: Literal["measured", "model"] | None = Field(
        default=None,
        description="`model`: the model's answer even when a board measured faster kernels of "
        "this exact problem (left out: the fastest measured kernel wins).",
    )

    def tuner_request(self, budget: int | None) -> TuneRequest:
        """The request as the search takes it (:class:`tiler.tune.TuneRequest`).

        Args:
            budget: The budget to search with; None leaves it out, so the tuner's own default
                applies (it stops early on large kernels, which an explicit budget does not).
        """
        values: dict[str, Any] = {
            "problem": self.problem.canonical(),
            "fixed": dict(self.fixed),
            "sampler": self.sampler,
            "seed": self.seed,
        }
        if budget is not None:
            values["budget"] = budget
        if self.baseline is not None:
            values["baseline"] = self.baseline.fields()
        return TuneRequest(**values)


class TilingCheckBody(BaseModel):
    """A ``tilings:validate`` / ``tilings:evaluate`` request: a problem and a TCubeTiling."""

    model_config = ConfigDict(extra="forbid")

    problem: ProfiledProblemIn
    tiling: TilingIn


class JobBody(BaseModel):
    """A batch of problems to tune with one search setting."""

    model_config = ConfigDict(extra="forbid")

    problems: list[ProblemIn] = Field(
        min_length=1,
        description="The Matmul problems (each as in `tilings:tune`). At most the server's "
        "TILER_JOB_MAX_PROBLEMS (the schema's maximum).",
    )
    budget: int | None = Field(default=None, ge=0, strict=True, description=_BUDGET_DESCRIPTION)
    sampler: Sampler = Field(default="tpe", description="Optuna sampler of the trials.")
    seed: int = Field(default=0, ge=0, le=SEED_MAX, strict=True, description="Search seed.")
    calibration: str = Field(
        default="default",
        pattern=CALIBRATION_PATTERN,
        description="The model constants of every shape: `default` (the packaged ones), "
        "`active` (each SoC's active calibration profile at submission, the default where none "
        "is active) or a calibration id (every shape must be of its SoC).",
    )


# --- the tuner's answer ------------------------------------------------------------------------


class PipeFigures(BaseModel):
    """One figure per pipe; null for a pipe the kernel does not use on this chip."""

    MTE2: float | None = None
    MTE1: float | None = None
    M: float | None = None
    FIX: float | None = None
    V: float | None = None
    MTE3: float | None = None
    SCALAR: float | None = None


class Roofline(OpenSection):
    """The roofline of the problem on the chip."""

    compute_bound_us: float
    memory_bound_us: float
    bound_us: float
    limited_by: str = Field(description="`compute` or `memory`.")
    peak_tflops: float
    hbm_gbps: float
    arithmetic_intensity_flops_per_byte: float


class Estimate(OpenSection):
    """A tiling's predicted time (the simulator's, or the estimator's on long kernels)."""

    time_us: float = Field(description="The kernel's time per call, launch included.")
    device_time_us: float | None = Field(
        default=None,
        description="The slowest core plus the kernel's start-up (the profiler's Task Duration).",
    )
    core_time_avg_us: float | None = Field(
        default=None, description="The cores' mean time (the profiler's aicore_time)."
    )
    end_to_end_us: float | None = Field(
        default=None,
        description="Per back-to-back call: time_us, at least the host's dispatch floor.",
    )
    tflops: float
    bottleneck: str = Field(description="The busiest pipe.")
    sequential_bound_us: float
    resource_bound_us: float
    simulated: bool = Field(description="True when the discrete-event simulator produced it.")
    estimator_time_us: float
    launch_overhead_us: float
    pipe_busy_us: PipeFigures
    pipe_utilization: PipeFigures
    gm_read_bytes: float
    hbm_bytes: float
    roofline: Roofline
    model_version: str
    preset_digest: str
    ub: dict[str, Any] | None = Field(
        default=None,
        description="Chips that stage through UB: its buffers, bank conflicts and cycles.",
        examples=[{"fits": True, "vector_path": True, "ub_bytes": 262144, "conflicts": []}],
    )
    explanation: list[str] | None = Field(
        default=None, description="Chips that stage through UB: one sentence per conflict."
    )


class Baseline(OpenSection):
    """A tiling the answer is compared with: seed 002's recommendation, CANN's, or the caller's."""

    name: str = Field(
        description="`seed002`, `cann950` (arch 3510), `aclnn_matmul_v3` (aclnn MatMulV3's "
        "dealt kernel on the 910B family, fp16 / bf16: never the answer, which is the "
        "certified optimum of a space holding its form where dealt splits are searched; a "
        "speedup below 1 means it beats it) or `user`."
    )
    tiling: TCubeTiling
    valid: bool
    estimate: Estimate | None
    speedup: float | None = Field(description="Baseline time / tuned time.")
    violations: list[ViolationDetail] | None = None


class Pruning(OpenSection):
    """What the screening ruled out, by reason."""

    capacity: int = 0
    oversized_base: int = 0
    cube_bound_groups: int = 0
    l1_floor_points: int = 0
    l1_choices_bounded: int = 0
    lower_bound_groups: int = 0


class Certificate(OpenSection):
    """What the screening proved: the optimum of the searched space (or the proven gap to it).

    The searched space (``scope``) is the legal tilings with one tile per core and, on the 910B
    family where no operand is staged through UB, with usedCoreNum free or every cube core, the
    dealt splits (more ``singleCoreM x singleCoreN`` tiles than ``usedCoreNum``, rule
    ``DEALT_SPLIT``, aclnn MatMulV3's kernel) whose tile is 1 or 2 base blocks along M and along
    N, on every core. Other dealt splits are legal and priced but not searched.
    """

    scope: str = Field(
        default="one tile per core",
        description="The space `exact` and `gap_bound` are about: `one tile per core`, or `one "
        "tile per core, or dealt to every core in tiles of 1 or 2 base blocks along M and N` "
        "where dealt splits are searched.",
    )
    exact: bool = Field(
        description="The optimum of the scope's legal space was proven (every point scored "
        "or ruled out by a lower bound)."
    )
    legal_points: int
    groups: int
    groups_scored: int
    pruned: Pruning
    bound_violations: int
    gap_bound: float | None = Field(description="Proven gap to the optimum (0 when exact).")
    model_version: str
    optimum_estimator_us: float | None = None


class RunnerUp(OpenSection):
    """The best screened point slower than the answer."""

    source: str
    ties_with_optimum: int
    time_us: float
    margin: float | None
    differs_in: dict[str, dict[str, int]] = Field(
        description="Field -> its value in the answer and in the runner-up.",
        examples=[{"baseK": {"best": 64, "runner_up": 32}}],
    )


class ExplainedRoofline(OpenSection):
    """How far the answer is from the roofline."""

    bound_us: float | None
    limited_by: str | None
    time_over_bound: float | None
    gap_us: float | None


class Caveat(BaseModel):
    """A known limit of the model that applies to the problem (docs/calibration.md)."""

    id: str = Field(examples=["meta_conflict_stride"])
    message: str
    source: str


class Explanation(OpenSection):
    """Why the tiling wins: the bottleneck, the full buffers, the limits on growing it."""

    bottleneck: str | None
    pipe_utilization: PipeFigures
    buffers: dict[str, dict[str, Any]] = Field(
        description="Each on-chip buffer's use.",
        examples=[{"L0A": {"used_bytes": 32768, "capacity_bytes": 65536, "full": False}}],
    )
    binding: list[str] = Field(description="The buffers that are full.")
    growth_limits: dict[str, str] = Field(
        description="Field -> what stops it from growing.",
        examples=[{"baseM": "L0A: 2 x baseM x baseK x 2 B would exceed 64 KiB"}],
    )
    roofline: ExplainedRoofline
    caveats: list[Caveat] = Field(
        default_factory=list,
        description="The model's known limits that apply to this problem (empty when none).",
    )
    runner_up: RunnerUp | None = None
    answer_source: str | None = None


class Search(OpenSection):
    """How the answer was searched."""

    strategy: str
    trials: int
    seconds: float
    screen_seconds: float
    study_seconds: float
    simulated_points: int


class AnswerMeasurement(OpenSection):
    """The measurement a measured answer comes from, as `GET /v1/measurements` lists it.

    Its `problem`, `tiling`, `options`, `measured`, `device`, `note` and the model's
    `prediction` come along as stored.
    """

    id: str = Field(description="Id of the measurement.")
    source: str | None = Field(default=None, description="Where it came from (`api`, `csv:...`).")
    created_at: str = Field(description="When it was stored (ISO 8601).")


class ModelAnswer(OpenSection):
    """The model's own answer beside a measured one."""

    tiling: TCubeTiling
    estimate: Estimate


class AnswerCalibration(OpenSection):
    """The calibration profile an answer was priced with (its preset digest is in the cache key)."""

    name: str = Field(description="As asked: `default`, `active` or an id.")
    id: str | None = Field(default=None, description="The profile's id; null: the defaults.")
    digest: str | None = Field(default=None, description="The profile's content digest.")


class TuneResponse(BaseModel):
    """A tuned tiling: the keys ``tiler tune`` prints plus ``id``, ``cached``, ``model_version``."""

    id: str = Field(description="Id of the stored result (`GET /v1/tilings/{id}`).")
    cached: bool = Field(description="True when the answer was in the cache on arrival.")
    model_version: str = Field(description="Version of the performance model.")
    tiling: TCubeTiling = Field(description="Every TCubeTiling field, in struct order.")
    estimate: Estimate
    baselines: list[Baseline] = Field(
        description="Seed 002's recommended tiling and the caller's baseline, with speedups."
    )
    certificate: Certificate
    explanation: Explanation
    search: Search
    source: Literal["measured", "model"] | None = Field(
        default=None,
        description="`measured`: the fastest kernel a board measured for this exact problem "
        "(`measurement` has it, `model_answer` the model's own); `model`: the model's answer.",
    )
    measurement: AnswerMeasurement | None = Field(
        default=None, description="The measurement of a measured answer."
    )
    model_answer: ModelAnswer | None = Field(
        default=None, description="The model's own `tiling` and `estimate` beside a measured one."
    )
    calibration: AnswerCalibration | None = Field(
        default=None, description="The calibration profile of the answer."
    )


class StoredRequest(BaseModel):
    """The normalized request a stored answer was searched for (its cache key's content)."""

    problem: Problem
    fixed: dict[str, int] = Field(examples=[{}])
    baseline: TCubeTiling | None
    budget: int
    study_instruction_cap: int | None = Field(
        description="Simulated instructions after which the default budget stops (null: the "
        "budget was explicit and runs in full)."
    )
    sampler: str
    seed: int


class TilingRecord(TuneResponse):
    """A stored tuning result (``cached`` is true here)."""

    request: StoredRequest = Field(description="The normalized request that produced it.")
    preset_digest: str = Field(description="SHA-256 of the hardware preset used.")
    created_at: dt.datetime

    @classmethod
    def from_row(cls, row: Any) -> TilingRecord:
        """The record of a ``tuning_results`` row (its JSON documents parsed once)."""
        return cls.model_validate(
            {
                "id": row.id,
                "cached": True,
                "model_version": row.model_version,
                **json.loads(row.answer_json),
                "request": json.loads(row.request_json),
                "preset_digest": row.preset_digest,
                "created_at": row.created_at,
            }
        )

    def answer(self, cached: bool) -> TuneResponse:
        """The ``tilings:tune`` answer: this record, with ``cached`` as it was on arrival."""
        return self.model_copy(update={"cached": cached})


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
    tiling: TCubeTiling

    @classmethod
    def from_row(cls, row: Any) -> TilingSummary:
        """The listing entry of a ``tuning_results`` row."""
        answer = json.loads(row.answer_json)
        return cls(
            id=row.id,
            soc=row.soc,
            dtype=row.dtype,
            m=row.m,
            n=row.n,
            k=row.k,
            model_version=row.model_version,
            created_at=row.created_at,
            time_us=(answer.get("estimate") or {}).get("time_us"),
            tiling=answer["tiling"],
        )


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

    estimate: Estimate
    explanation: Explanation | None = None
    calibration: dict[str, Any] | None = Field(
        default=None, description="The calibration profile of the prediction (see tune)."
    )
