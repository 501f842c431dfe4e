"""``/v1/measurements``: measured kernels, one by one, as a list, or as a profiler CSV.

Every measurement is checked (its tiling must be legal: 422 with the violations otherwise) and
answered with the model's prediction beside it; a batch or a file is stored in one transaction,
so a bad row stores nothing of it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, Field

from app.api.deps import JSON_BODY, ServiceDep, ShapeRangeDep
from app.api.pagination import decode_cursor, encode_cursor
from app.api.replay import answers_changed
from app.db import feedback_repository as frepo
from app.db import repository as repo
from app.feedback.csv_import import CsvError, parse_csv
from app.feedback.measurements import (
    MeasurementIn,
    measurement_doc,
    predict_rows,
    prepare_batch,
)
from app.problem_json import ProblemError, problem_responses, violations_problem
from app.tuning import TuningService
from tiler.measured import problem_key

router = APIRouter(prefix="/v1", tags=["measurements"])

_MAX_PAGE = 200
#: Rows one request may store at once.
MAX_BATCH = 5000


class StoredMeasurement(BaseModel):
    """A stored measurement's id and the model's prediction beside it."""

    id: str
    source: str
    prediction: dict[str, Any] = Field(
        description="`kind`, `predicted_us`, `measured_us`, `error` ((predicted - measured) / "
        "measured), `model_version`, `preset_digest`, and `warning` when more than 5x apart."
    )


class MeasurementRecord(BaseModel):
    """A stored measurement with the current model's prediction beside it."""

    id: str
    problem: dict[str, Any] = Field(description="The canonical problem.")
    tiling: dict[str, int] = Field(description="The complete TCubeTiling.")
    options: dict[str, Any] | None = Field(description="Kernel options beyond the problem.")
    measured: dict[str, Any] = Field(
        description="`device_time_us` / `time_us`, `core_time_avg_us`, `pipe_busy_us`."
    )
    device: dict[str, Any] = Field(description="`soc`, `cann_version`, `clock_mhz`.")
    note: str | None
    source: str = Field(description="`api`, `explorer` or `csv:<file>:<case>`.")
    created_at: str
    prediction: dict[str, Any] | None = Field(
        description="The current model's prediction (as in the POST answer); null when the "
        "current model cannot price it."
    )


class MeasurementPage(BaseModel):
    """A page of measurements, newest first."""

    items: list[MeasurementRecord]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")


class StoredBatch(BaseModel):
    """What a POST stored."""

    items: list[StoredMeasurement]
    warnings: list[str]
    skipped: list[dict[str, Any]] = Field(
        default_factory=list, description="CSV rows not imported, each with its reason."
    )


async def store_batch(
    service: TuningService,
    items: list[tuple[MeasurementIn, str, dict[str, Any] | None]],
    skipped: list[dict[str, Any]] | None = None,
) -> StoredBatch:
    """Checks, predicts and stores a batch (all or nothing).

    Raises:
        ProblemError: 422 ``illegal-tiling`` naming the item and its violations, or
            ``invalid-input`` for a field the chip or the problem refuses.
    """
    if len(items) > MAX_BATCH:
        raise ProblemError(
            422,
            "validation-error",
            f"at most {MAX_BATCH} measurements per request, not {len(items)}",
        )
    outcome = await service.pool.call(prepare_batch, items)
    kind, data = outcome
    if kind == "illegal":
        index, source, violations = data
        ids = ", ".join(v["id"] for v in violations)
        raise violations_problem(
            "illegal-tiling", f"measurement {index} ({source}): the tiling breaks {ids}", violations
        )
    if kind == "input":
        index, source, err = data
        raise ProblemError(
            422,
            "validation-error",
            f"measurement {index} ({source}): {err['message']}",
            errors=[err],
        )
    rows, predictions = data
    await anyio.to_thread.run_sync(frepo.insert_measurements, service.db, rows)
    stored = [
        StoredMeasurement(id=row["id"], source=row["source"], prediction=p)
        for row, p in zip(rows, predictions, strict=True)
    ]
    warnings = [f"{s.id} ({s.source}): {s.prediction['warning']}" for s in stored
                if "warning" in s.prediction]  # fmt: skip
    return StoredBatch(items=stored, warnings=warnings, skipped=skipped or [])


@router.post(
    "/measurements",
    summary="Store measured kernels (one object or a list)",
    status_code=201,
    responses=problem_responses(400, 401, 413, 415, 422),
    dependencies=JSON_BODY,
)
async def post_measurements(
    body: Annotated[MeasurementIn | list[MeasurementIn], Body()],
    service: ServiceDep,
    request: Request,
) -> StoredBatch:
    """Stores measured kernels.

    What a board measured for kernels: `{"problem", "tiling", "measured":
    {"device_time_us" | "time_us", "pipe_busy_us"?}, "device"?: {"soc", "cann_version",
    "clock_mhz"}, "note"?}`, or a list of them. Answers 201 with each id and the model's
    prediction beside it; an illegal tiling is a 422 listing its violations and stores nothing.
    """
    items = body if isinstance(body, list) else [body]
    stored = await store_batch(service, [(m, "api", None) for m in items])
    answers_changed(request)
    return stored


@router.post(
    "/measurements:import",
    summary="Import a profiler CSV (text/csv)",
    status_code=201,
    responses=problem_responses(400, 401, 413, 415, 422),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"text/csv": {"schema": {"type": "string"}}},
        }
    },
)
async def import_measurements(
    request: Request,
    service: ServiceDep,
    filename: Annotated[
        str, Query(max_length=200, description="Name recorded in each row's source.")
    ] = "upload.csv",
) -> StoredBatch:
    """Imports a profiler CSV.

    A CSV in the layout of `measured_msprof_910b1_8192.csv` (problem keys, tiling
    fields, profiler columns). A malformed value is a 422 naming the row and the column and
    stores nothing. A row with empty cells is imported when the template's defaults give them,
    otherwise skipped with its reason (`skipped`).
    """
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("text/csv"):
        raise ProblemError(
            415,
            "unsupported-media-type",
            f"the body must be CSV: send 'Content-Type: text/csv' (got {content_type!r})",
            headers={"Accept-Post": "text/csv"},
        )
    raw = await request.body()
    try:
        text = raw.decode("utf-8-sig")
        rows, skipped = parse_csv(text, filename)
    except UnicodeDecodeError as exc:
        raise ProblemError(400, "validation-error", f"the CSV is not UTF-8: {exc}") from exc
    except CsvError as exc:
        raise ProblemError(422, "validation-error", str(exc), errors=[exc.to_dict()]) from exc
    stored = await store_batch(
        service, [(r.measurement, r.source, r.options) for r in rows], skipped
    )
    answers_changed(request)
    return stored


@router.get(
    "/measurements",
    summary="List measurements with the current model's prediction beside each",
    responses=problem_responses(404, 422),
)
async def list_measurements(
    service: ServiceDep,
    shape: ShapeRangeDep,
    soc: Annotated[str | None, Query(max_length=64)] = None,
    tiling_id: Annotated[
        str | None,
        Query(
            pattern=r"^[0-9a-f]{24}$",
            description="A stored tune result: the measurements of its exact problem.",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=_MAX_PAGE)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
) -> MeasurementPage:
    """Measurements, newest first, with the current model's prediction.

    Filtered by SoC, M/N/K ranges or a tune result's problem, keyset-paginated
    (`next_cursor`), each with the current model's prediction and error.
    """
    key = None
    if tiling_id is not None:
        stored = await anyio.to_thread.run_sync(repo.find_by_id, service.db, tiling_id)
        if stored is None:
            raise ProblemError(404, "not-found", f"no stored tiling has id {tiling_id!r}")
        key = problem_key(stored.request.problem)
    where = frepo.MeasurementFilter(soc=soc, problem_key=key, **asdict(shape))
    before = None if cursor is None else decode_cursor(cursor)
    rows, next_seq = await anyio.to_thread.run_sync(
        lambda: frepo.list_measurements(service.db, where, before_seq=before, limit=limit)
    )
    predictions = await service.pool.call(predict_rows, rows)
    items = [measurement_doc(r, p) for r, p in zip(rows, predictions, strict=True)]
    next_cursor = None if next_seq is None else encode_cursor(next_seq)
    return MeasurementPage.model_validate({"items": items, "next_cursor": next_cursor})
