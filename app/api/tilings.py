"""``/v1/tilings``: tune (cached), evaluate, validate, look up, list and export tilings."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Body, Path, Query, Request, Response

from app.api.deps import JSON_BODY, ServiceDep, ShapeRangeDep
from app.api.examples import CHECK_EXAMPLES, TUNE_EXAMPLES
from app.api.pagination import decode_cursor, encode_cursor
from app.api.replay import CACHED_STATE_KEY
from app.db import repository as repo
from app.db.repository import ResultFilter
from app.export import EXTENSIONS, MEDIA_TYPES, ExportFormat, export_tiling
from app.feedback import answers as measured_answers
from app.feedback.answers import SourceChoice
from app.feedback.profiles import chosen_preset
from app.problem_json import ProblemError, problem_responses
from app.schemas import (
    AnswerCalibration,
    EvaluateResponse,
    TilingCheckBody,
    TilingPage,
    TilingRecord,
    TuneBody,
    TuneResponse,
    ValidateResponse,
)
from app.search_jobs import timeline_job
from app.tuning import TuningService, validate_pair

router = APIRouter(prefix="/v1", tags=["tilings"])

#: Public ids are 24 lowercase hex digits.
_ID_PATTERN = r"^[0-9a-f]{24}$"
IdPath = Annotated[str, Path(description="Id of a stored result.", pattern=_ID_PATTERN)]
_MAX_PAGE = 200
#: The errors of an operation with a JSON body.
_BODY_ERRORS = problem_responses(400, 401, 413, 415, 422)
# The routes answer stored documents: keys an answer does not have (a 910B estimate's UB
# section) are left out rather than sent as null (response_model_exclude_unset).


async def _stored(service: TuningService, result_id: str) -> TilingRecord:
    stored = await anyio.to_thread.run_sync(repo.find_by_id, service.db, result_id)
    if stored is None:
        raise ProblemError(404, "not-found", f"no stored tiling has id {result_id!r}")
    return stored


@router.post(
    "/tilings:tune",
    summary="Tune a TCubeTiling (cached)",
    responses=_BODY_ERRORS,
    dependencies=JSON_BODY,
    response_model_exclude_unset=True,
)
async def tune_tiling(
    body: Annotated[TuneBody, Body(openapi_examples=TUNE_EXAMPLES)],
    service: ServiceDep,
    request: Request,
) -> TuneResponse:
    """Finds the fastest legal TCubeTiling for a Matmul problem under the model.

    The body is one line of `tiler tune --jsonl`. A repeat of the same normalized request (same
    problem after defaults, pins, baseline, budget, sampler and seed, on the same preset and model
    version) is answered from the cache with `cached: true` and otherwise the same answer. Many
    identical requests at once run one search.
    """
    preset, calibration = await chosen_preset(service, body.problem)
    answer = await service.tune(body, preset)
    if answer.cached:
        # Repeats of these exact bytes may be replayed while no measurement or profile changes
        # the answer (app.api.replay).
        setattr(request.state, CACHED_STATE_KEY, True)
    answer = answer.model_copy(
        update={"calibration": AnswerCalibration.model_validate(calibration)}
    )
    return await measured_answers.resolve(
        service, answer, body.problem, body.fixed, body.source, preset
    )


@router.post(
    "/tilings:evaluate",
    summary="Predict a tiling's time (legality first)",
    responses=_BODY_ERRORS,
    dependencies=JSON_BODY,
    response_model_exclude_unset=True,
)
async def evaluate_tiling(
    body: Annotated[TilingCheckBody, Body(openapi_examples=CHECK_EXAMPLES)], service: ServiceDep
) -> EvaluateResponse:
    """Checks a tiling and predicts its time with the simulator, as `tiler evaluate` does.

    An illegal tiling is a 422 `illegal-tiling` problem listing each violated rule's id, value
    and limit. A legal one gets the estimate and its explanation.
    """
    preset, calibration = await chosen_preset(service, body.problem)
    answer = await service.evaluate(body, explain=True, preset=preset)
    return answer.model_copy(update={"calibration": AnswerCalibration.model_validate(calibration)})


@router.post(
    "/tilings:validate",
    summary="Check a tiling's legality",
    responses=_BODY_ERRORS,
    dependencies=JSON_BODY,
    response_model_exclude_unset=True,
)
def validate_tiling(
    body: Annotated[TilingCheckBody, Body(openapi_examples=CHECK_EXAMPLES)],
) -> ValidateResponse:
    """Checks a tiling against every rule of seed 002, as `tiler validate` does.

    The answer lists every violation (rule id, message, value, limit, fields) and warning;
    `valid` is false when any rule is broken.
    """
    return validate_pair(body)


@router.get(
    "/tilings/{id}",
    summary="A stored tuning result",
    responses=problem_responses(404, 422),
    response_model_exclude_unset=True,
)
async def get_tiling(
    id: IdPath,
    service: ServiceDep,
    source: Annotated[
        SourceChoice | None,
        Query(description="`model`: the model's answer even when a faster kernel was measured."),
    ] = None,
) -> TilingRecord:
    """The stored answer of a `tilings:tune` request, with the request that produced it.

    The fastest measured kernel of its exact problem instead, unless `source=model`.
    """
    stored = await _stored(service, id)
    request = stored.request
    return await measured_answers.resolve(service, stored, request.problem, request.fixed, source)


@router.get(
    "/tilings",
    summary="List stored tuning results",
    responses=problem_responses(422),
)
async def list_tilings(
    service: ServiceDep,
    shape: ShapeRangeDep,
    soc: Annotated[str | None, Query(max_length=64, description="SoC, e.g. Ascend910B2.")] = None,
    dtype: Annotated[str | None, Query(max_length=16, description="Input dtype.")] = None,
    model_version: Annotated[str | None, Query(max_length=32)] = None,
    limit: Annotated[int, Query(ge=1, le=_MAX_PAGE, description="Page size.")] = 50,
    cursor: Annotated[
        str | None, Query(max_length=64, description="`next_cursor` of the previous page.")
    ] = None,
) -> TilingPage:
    """Stored results, newest first, filtered by SoC, dtype, model version and M/N/K ranges.

    Pages are keyset-paginated: pass `next_cursor` as `cursor` for the next page. Results stored
    while paging never shift or repeat items.
    """
    where = ResultFilter(soc=soc, dtype=dtype, model_version=model_version, **asdict(shape))
    before = None if cursor is None else decode_cursor(cursor)
    items, next_seq = await anyio.to_thread.run_sync(
        lambda: repo.list_results(service.db, where, before_seq=before, limit=limit)
    )
    next_cursor = None if next_seq is None else encode_cursor(next_seq)
    return TilingPage(items=items, next_cursor=next_cursor)


@router.get(
    "/tilings/{id}/export",
    summary="Export a stored tiling as JSON, C++ or the binary struct",
    responses={
        200: {
            "description": "The tiling in the requested format.",
            "content": {
                "application/json": {"schema": {"type": "object"}},
                "text/x-c++src": {"schema": {"type": "string"}},
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            },
        },
        **problem_responses(404, 422),
    },
    response_class=Response,
)
async def export_tiling_route(
    id: IdPath,
    service: ServiceDep,
    format: Annotated[
        ExportFormat, Query(description="`json`, `cpp` or `bin`.")
    ] = ExportFormat.JSON,
    source: Annotated[
        SourceChoice | None,
        Query(description="`model`: the model's tiling even when a faster kernel was measured."),
    ] = None,
) -> Response:
    """The tuned TCubeTiling, every field of `optiling::TCubeTiling` in declaration order.

    The fastest measured kernel of the exact problem when a board measured one (as
    `GET /v1/tilings/{id}` answers), unless `source=model`; the header comment says which.

    * `json`: `{"usedCoreNum": ..., ...}`;
    * `cpp`: a header with `SetTCubeTiling(optiling::TCubeTiling&)` calling each `set_<field>()`
      (host) and, under `__CCE_AICORE__`, `SetTCubeTiling(TCubeTiling&)` assigning each member
      (kernel);
    * `bin`: 50 little-endian int32 values (200 bytes).

    Field order: usedCoreNum, M, N, Ka, Kb, singleCoreM, ..., BatchNum, mxTypePara (the full
    list is in the README and `simcore.tiling.tcube.FIELD_ORDER`).
    """
    stored = await _stored(service, id)
    problem = stored.request.problem
    answer = await measured_answers.resolve(service, stored, problem, stored.request.fixed, source)
    comment = (
        f"id {stored.id}; {problem.soc} {problem.dtype.value} "
        f"M={problem.m} N={problem.n} K={problem.k}; model {stored.model_version}"
    )
    if answer.measurement is not None:
        comment += f"; measured kernel {answer.measurement.id}"
    content = export_tiling(answer.tiling, format, comment)
    headers = {}
    if format is not ExportFormat.JSON:
        filename = f"tcubetiling-{stored.id}.{EXTENSIONS[format]}"
        headers["content-disposition"] = f'attachment; filename="{filename}"'
    return Response(content, media_type=MEDIA_TYPES[format], headers=headers)


@router.get(
    "/tilings/{id}/timeline.svg",
    summary="The simulated pipeline timeline of a stored tiling",
    responses={
        200: {"description": "SVG picture.", "content": {"image/svg+xml": {}}},
        **problem_responses(404, 422),
    },
    response_class=Response,
)
async def timeline(id: IdPath, service: ServiceDep) -> Response:
    """A Gantt chart of the slowest core's pipes (MTE2, MTE1, M, FIX, ...) for the tuned tiling.

    Kernels of more than `app.views.svg.MAX_TIMELINE_INSTRUCTIONS` instructions per core are refused
    (422): simulating them takes seconds and the picture would be mostly omission.
    """
    stored = await _stored(service, id)
    outcome = await service.pool.call(timeline_job, stored.request.problem, stored.tiling)
    if outcome[0] == "too_large":
        raise ProblemError(422, "timeline-too-large", outcome[1])
    return Response(outcome[1], media_type="image/svg+xml")
