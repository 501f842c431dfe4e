"""``/v1/tilings``: tune (cached), evaluate, validate, look up, list and export tilings."""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Body, Path, Query, Response

from app.api.deps import ServiceDep
from app.api.pagination import decode_cursor, encode_cursor
from app.api.schemas import (
    CHECK_EXAMPLES,
    TUNE_EXAMPLES,
    EvaluateResponse,
    TilingCheckBody,
    TilingPage,
    TilingRecord,
    TilingSummary,
    TuneBody,
    TuneResponse,
    ValidateResponse,
)
from app.db import repository as repo
from app.db.repository import ResultFilter, StoredResult
from app.export import EXTENSIONS, MEDIA_TYPES, ExportFormat, export_tiling, tiling_from_answer
from app.problem_json import ProblemError, problem_responses
from app.tuning import response_json, timeline_job
from simcore.evaluate import parse_request, validate
from simcore.tiling.problem import INT32_MAX

router = APIRouter(prefix="/v1", tags=["tilings"])

#: Public ids are 24 lowercase hex digits.
_ID_PATTERN = r"^[0-9a-f]{24}$"
IdPath = Annotated[str, Path(description="Id of a stored result.", pattern=_ID_PATTERN)]
_MAX_PAGE = 200


def _not_found(result_id: str) -> ProblemError:
    return ProblemError(404, "not-found", f"no stored tiling has id {result_id!r}")


async def _stored(service: Any, result_id: str) -> StoredResult:
    stored = await anyio.to_thread.run_sync(repo.find_by_id, service.db, result_id)
    if stored is None:
        raise _not_found(result_id)
    return stored


@router.post(
    "/tilings:tune",
    summary="Tune a TCubeTiling (cached)",
    response_model=TuneResponse,
    responses=problem_responses(400, 401, 413, 422),
)
async def tune_tiling(
    body: Annotated[TuneBody, Body(openapi_examples=TUNE_EXAMPLES)], service: ServiceDep
) -> Response:
    """Finds the fastest legal TCubeTiling for a Matmul problem under the model.

    The body is one line of `tiler tune --jsonl`. A repeat of the same normalized request (same
    problem after defaults, pins, baseline, budget, sampler and seed, on the same preset and model
    version) is answered from the cache with `cached: true` and otherwise the same bytes. Many
    identical requests at once run one search.
    """
    stored, cached = await service.tune(body.to_request(service.settings.default_budget))
    return Response(response_json(stored, cached), media_type="application/json")


@router.post(
    "/tilings:evaluate",
    summary="Predict a tiling's time (legality first)",
    response_model=EvaluateResponse,
    responses=problem_responses(400, 401, 413, 422),
)
async def evaluate_tiling(
    body: Annotated[TilingCheckBody, Body(openapi_examples=CHECK_EXAMPLES)], service: ServiceDep
) -> dict[str, Any]:
    """Checks a tiling and predicts its time with the simulator, as `tiler evaluate` does.

    An illegal tiling is a 422 `illegal-tiling` problem listing each violated rule's id, value
    and limit. A legal one gets the estimate and its explanation.
    """
    return await service.evaluate(body.to_request(), explain=True)


@router.post(
    "/tilings:validate",
    summary="Check a tiling's legality",
    response_model=ValidateResponse,
    responses=problem_responses(400, 401, 413, 422),
)
def validate_tiling(
    body: Annotated[TilingCheckBody, Body(openapi_examples=CHECK_EXAMPLES)],
) -> dict[str, Any]:
    """Checks a tiling against every rule of seed 002, as `tiler validate` does.

    The answer lists every violation (rule id, message, value, limit, fields) and warning;
    `valid` is false when any rule is broken.
    """
    problem, tiling, preset = parse_request(body.to_request())
    return validate(problem, tiling, preset)


def _record(stored: StoredResult) -> dict[str, Any]:
    answer = json.loads(stored.answer_json)
    return {
        "id": stored.id,
        "cached": True,
        "model_version": stored.model_version,
        **answer,
        "request": json.loads(stored.request_json),
        "preset_digest": stored.preset_digest,
        "created_at": stored.created_at,
    }


@router.get(
    "/tilings/{id}",
    summary="A stored tuning result",
    response_model=TilingRecord,
    responses=problem_responses(404, 422),
)
async def get_tiling(id: IdPath, service: ServiceDep) -> dict[str, Any]:
    """The stored answer of a `tilings:tune` request, with the request that produced it."""
    return _record(await _stored(service, id))


_Dim = Query(ge=1, le=INT32_MAX)


@router.get(
    "/tilings",
    summary="List stored tuning results",
    response_model=TilingPage,
    responses=problem_responses(422),
)
async def list_tilings(
    service: ServiceDep,
    soc: Annotated[str | None, Query(max_length=64, description="SoC, e.g. Ascend910B2.")] = None,
    dtype: Annotated[str | None, Query(max_length=16, description="Input dtype.")] = None,
    model_version: Annotated[str | None, Query(max_length=32)] = None,
    m_min: Annotated[int | None, _Dim] = None,
    m_max: Annotated[int | None, _Dim] = None,
    n_min: Annotated[int | None, _Dim] = None,
    n_max: Annotated[int | None, _Dim] = None,
    k_min: Annotated[int | None, _Dim] = None,
    k_max: Annotated[int | None, _Dim] = None,
    limit: Annotated[int, Query(ge=1, le=_MAX_PAGE, description="Page size.")] = 50,
    cursor: Annotated[
        str | None, Query(max_length=64, description="`next_cursor` of the previous page.")
    ] = None,
) -> TilingPage:
    """Stored results, newest first, filtered by SoC, dtype, model version and M/N/K ranges.

    Pages are keyset-paginated: pass `next_cursor` as `cursor` for the next page. Results stored
    while paging never shift or repeat items.
    """
    where = ResultFilter(soc, dtype, model_version, m_min, m_max, n_min, n_max, k_min, k_max)
    before = None if cursor is None else decode_cursor(cursor)
    rows = await anyio.to_thread.run_sync(
        lambda: repo.list_results(service.db, where, before_seq=before, limit=limit + 1)
    )
    items = []
    for row in rows[:limit]:
        answer = json.loads(row.answer_json)
        time_us = (answer.get("estimate") or {}).get("time_us")
        items.append(
            TilingSummary(
                id=row.id,
                soc=row.soc,
                dtype=row.dtype,
                m=row.m,
                n=row.n,
                k=row.k,
                model_version=row.model_version,
                created_at=row.created_at,
                time_us=time_us,
                tiling=answer.get("tiling") or {},
            )
        )
    more = len(rows) > limit
    next_cursor = encode_cursor(rows[limit - 1].seq) if more else None
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
) -> Response:
    """The tuned TCubeTiling, every field of `optiling::TCubeTiling` in declaration order.

    * `json`: `{"usedCoreNum": ..., ...}`;
    * `cpp`: a header with `SetTCubeTiling(optiling::TCubeTiling&)` calling each `set_<field>()`
      (host) and, under `__CCE_AICORE__`, `SetTCubeTiling(TCubeTiling&)` assigning each member
      (kernel);
    * `bin`: 50 little-endian int32 values (200 bytes).

    Field order: usedCoreNum, M, N, Ka, Kb, singleCoreM, ..., BatchNum, mxTypePara (the full
    list is in the README and `simcore.tiling.tcube.FIELD_ORDER`).
    """
    stored = await _stored(service, id)
    answer = json.loads(stored.answer_json)
    request = json.loads(stored.request_json)
    problem = request.get("problem", {})
    comment = (
        f"id {stored.id}; {problem.get('soc')} {problem.get('dtype')} "
        f"M={problem.get('m')} N={problem.get('n')} K={problem.get('k')}; "
        f"model {stored.model_version}"
    )
    content = export_tiling(tiling_from_answer(answer), format, comment)
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

    Kernels of more than `app.svg.MAX_TIMELINE_INSTRUCTIONS` instructions per core are refused
    (422): simulating them takes seconds and the picture would be mostly omission.
    """
    stored = await _stored(service, id)
    outcome = await service.pool.call(timeline_job, stored.request_json, stored.answer_json)
    if outcome[0] == "too_large":
        raise ProblemError(422, "timeline-too-large", outcome[1])
    return Response(outcome[1], media_type="image/svg+xml")
