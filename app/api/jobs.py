"""``/v1/tuning-jobs``: batch tuning jobs - submit, read, list, results, events (SSE), cancel.

Job workers (the server's own, ``tiler serve --job-workers N``, and any ``tiler worker``) do the
tuning; these routes only read and write job rows, so they answer in milliseconds whatever the
size of the job.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Depends, Header, HTTPException, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import TypeAdapter, ValidationError

from app.api.deps import JSON_BODY, JobServiceDep
from app.api.examples import JOB_EXAMPLES
from app.api.pagination import decode_cursor, encode_cursor
from app.feedback.profiles import ProfileError, job_profiles, profile_problem
from app.job_records import JobPage, JobResource, JobResultsPage, JobStatus, JobSummary
from app.jobs.service import prepare_job
from app.problem_json import problem_responses
from app.schemas import JobBody, ProblemIn

router = APIRouter(prefix="/v1", tags=["tuning-jobs"])


def parse_job_body(raw: bytes) -> JobBody:
    """Parses and validates a job's body, as the framework would, on the calling thread.

    A job of 10,000 shapes takes most of a second to validate; on the event loop that second
    stalled every other request (``/healthz`` answered in 827 ms). The route calls this from a
    worker thread instead.

    Raises:
        RequestValidationError: Not JSON, or not a valid job (every bad field, located under
            ``body`` as the framework locates them).
        HTTPException: 400, a body the JSON parser cannot take at all (nesting too deep).
    """
    if not raw:
        missing = {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
        raise RequestValidationError([missing])
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        error = {
            "type": "json_invalid",
            "loc": ("body", exc.pos),
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": exc.msg},
        }
        raise RequestValidationError([error]) from None
    except (ValueError, RecursionError) as exc:
        # Bytes that are not UTF-8, numbers beyond the parser's digit limit, deep nesting.
        raise HTTPException(400, "There was an error parsing the body") from exc
    problems = data.get("problems") if isinstance(data, dict) else None
    if not isinstance(problems, list) or len(problems) <= _VALIDATED_AT_ONCE:
        try:
            return JobBody.model_validate(data)
        except ValidationError as exc:
            raise RequestValidationError(_under_body(exc.errors())) from None
    # pydantic validates a list without ever letting go of the GIL: 10,000 problems in one call
    # held it (and the event loop) for a third of a second even from a worker thread. In slices,
    # with the GIL let go between them, the loop runs every few milliseconds.
    checked: list[ProblemIn] = []
    errors: list[Any] = []
    for start in range(0, len(problems), _VALIDATED_AT_ONCE):
        time.sleep(0)  # lets go of the GIL: a waiting event loop takes its turn here
        try:
            checked += _PROBLEM_LIST.validate_python(problems[start : start + _VALIDATED_AT_ONCE])
        except ValidationError as exc:
            for e in exc.errors():
                index, *rest = e["loc"]
                errors.append({**e, "loc": ("problems", int(index) + start, *rest)})
    try:
        # The other members, with one problem standing in for the list checked above.
        body = JobBody.model_validate({**data, "problems": problems[:1]})
    except ValidationError as exc:
        errors += [e for e in exc.errors() if e["loc"][:1] != ("problems",)]
        body = None
    if errors or body is None:
        raise RequestValidationError(_under_body(errors))
    return body.model_copy(update={"problems": checked})


#: Problems validated per call when a job's body is large (a few milliseconds each).
_VALIDATED_AT_ONCE = 200
_PROBLEM_LIST = TypeAdapter(list[ProblemIn])


def _under_body(errors: Any) -> list[Any]:
    """Validation errors located under ``body``, as the framework locates a body's errors."""
    return [{**e, "loc": ("body", *e["loc"])} for e in errors]


_MAX_PAGE = 1000
#: Reconnection delay (ms) the browser's EventSource uses after a dropped connection.
_RETRY_MS = 1000

JobIdPath = Annotated[
    str, Path(description="Id of a tuning job (32 hex digits).", pattern=r"^[0-9a-f]{32}$")
]
_CursorQuery = Annotated[
    str | None, Query(max_length=64, description="`next_cursor` of the previous page.")
]


@router.post(
    "/tuning-jobs",
    summary="Submit a batch tuning job",
    status_code=202,
    responses={
        202: {
            "description": "Accepted: the job is queued for the workers.",
            "headers": {
                "Location": {
                    "description": "URL of the job resource.",
                    "schema": {"type": "string"},
                }
            },
        },
        **problem_responses(400, 401, 413, 415, 422),
    },
    dependencies=JSON_BODY,
    response_model_exclude_unset=True,
    # The body is parsed by the route, off the event loop (parse_job_body); the document
    # describes it as the framework would (app.main adds JobBody to the components).
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"$ref": "#/components/schemas/JobBody"},
                    "examples": JOB_EXAMPLES,
                }
            },
        }
    },
)
async def submit_job(
    request: Request,
    service: JobServiceDep,
    response: Response,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            min_length=1,
            max_length=255,
            description="Makes a retried submission return the same job (the same key with "
            "another body is a 422).",
        ),
    ] = None,
) -> JobResource:
    """Queues one shape per problem; the server's job workers (or `tiler worker`) tune them.

    Every problem is validated first (a bad field anywhere is a 422 naming
    `problems.<i>.<field>`). Shapes already in the tuning cache cost nothing. Follow the
    `Location` header, or stream `/events`. With `Idempotency-Key`, a retry of the same request
    returns the same job. With `calibration`, every shape is priced with a calibration profile
    (`active`: each SoC's active profile at submission); each result names its `calibration_id`.
    """
    raw = await request.body()

    def _submit() -> JobResource:
        body = parse_job_body(raw)
        try:
            profiles = job_profiles(service.db, body.calibration, (p.soc for p in body.problems))
        except ProfileError as exc:
            raise profile_problem(exc, "calibration") from exc
        prepared = prepare_job(body, service.settings, profiles)
        job, created = service.submit(prepared, idempotency_key)
        response.headers["Location"] = f"/v1/tuning-jobs/{job.id}"
        if not created:
            response.headers["Idempotent-Replayed"] = "true"
        return service.resource(job.id, with_results=True)

    return await anyio.to_thread.run_sync(_submit)


@router.get(
    "/tuning-jobs/{id}",
    summary="A tuning job: status, progress and results",
    responses=problem_responses(404, 422),
    # Keys a record does not have (a done shape's error, an unfinished job's notice) are left
    # out rather than sent as null.
    response_model_exclude_unset=True,
)
async def get_job(
    id: JobIdPath,
    service: JobServiceDep,
    results: Annotated[
        bool, Query(description="Include the finished shapes' results (false: counts only).")
    ] = True,
) -> JobResource:
    """The job's status, its progress counts, and every finished shape's result or error.

    For a large job, page through `/results` instead of reading everything at once.
    """
    return await anyio.to_thread.run_sync(lambda: service.resource(id, with_results=results))


@router.get(
    "/tuning-jobs",
    summary="List tuning jobs",
    responses=problem_responses(422),
    response_model_exclude_unset=True,
)
async def list_jobs(
    service: JobServiceDep,
    status: Annotated[
        list[JobStatus] | None, Query(description="Only jobs in these statuses.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Page size.")] = 50,
    cursor: _CursorQuery = None,
) -> JobPage:
    """Jobs newest first, optionally of some statuses; pass `next_cursor` for the next page."""
    before = None if cursor is None else decode_cursor(cursor, 1)
    rows = await anyio.to_thread.run_sync(
        lambda: service.list_jobs(statuses=list(status or []), before_seq=before, limit=limit + 1)
    )
    next_cursor = encode_cursor(rows[limit - 1].seq) if len(rows) > limit else None
    return JobPage(items=rows[:limit], next_cursor=next_cursor)


@router.get(
    "/tuning-jobs/{id}/results",
    summary="A page of a job's results",
    responses=problem_responses(404, 422),
    response_model_exclude_unset=True,
)
async def job_results(
    id: JobIdPath,
    service: JobServiceDep,
    limit: Annotated[int, Query(ge=1, le=_MAX_PAGE, description="Page size.")] = 100,
    cursor: _CursorQuery = None,
) -> JobResultsPage:
    """Finished shapes by position.

    On a running job a page can end before the last shape; `next_cursor` then still leads on,
    and the same cursor later returns the shapes that finished since. It is null only when the
    job is final and nothing follows.
    """
    start = 0 if cursor is None else decode_cursor(cursor, 0)

    def _page() -> JobResultsPage:
        # Final first: a job that is final before the read has nothing left to finish after it.
        final = service.get(id).is_final
        items, more = service.results_page(id, after_position=start - 1, limit=limit)
        resume = items[-1].position + 1 if items else start
        next_cursor = encode_cursor(resume) if more or not final else None
        return JobResultsPage(items=items, next_cursor=next_cursor)

    return await anyio.to_thread.run_sync(_page)


async def _existing_job(id: JobIdPath, service: JobServiceDep) -> JobSummary:
    # A dependency: the 404 is answered before the event stream starts.
    return await anyio.to_thread.run_sync(service.get, id)


@router.get(
    "/tuning-jobs/{id}/events",
    summary="A job's progress as Server-Sent Events",
    response_class=EventSourceResponse,
    responses={
        200: {
            "description": "An event stream: `queued`, `started`, one `progress` per finished "
            "shape, then `finished` or `cancelled`, after which the stream ends. Each message's "
            "`id` is its number in the job's log; reconnect with `Last-Event-ID` to resume "
            "after it. A comment line (`: ping`) goes out after 15 s without an event, so that "
            "proxies and clients can tell a quiet job from a dead connection.",
        },
        **problem_responses(404, 422),
    },
)
async def job_events(
    job: Annotated[JobSummary, Depends(_existing_job)],
    service: JobServiceDep,
    last_event_id: Annotated[
        str | None,
        Header(
            alias="Last-Event-ID",
            pattern=r"^[0-9]{1,9}$",
            description="Resume after this event (sent by EventSource on reconnect).",
        ),
    ] = None,
    after: Annotated[
        int | None,
        Query(
            ge=0,
            le=999_999_999,
            description="Resume after this event (for clients that cannot set headers); "
            "Last-Event-ID wins when both are given.",
        ),
    ] = None,
) -> AsyncIterator[ServerSentEvent]:
    """Streams the job's events in order: every event after the resume point, then new ones."""
    start = int(last_event_id) if last_event_id is not None else (after or 0)
    yield ServerSentEvent(retry=_RETRY_MS)
    async for event in service.events(job.id, start):
        yield ServerSentEvent(raw_data=event.data_json, event=event.type, id=str(event.number))


@router.post(
    "/tuning-jobs/{id}:cancel",
    summary="Cancel a tuning job",
    responses=problem_responses(401, 404, 422),
    response_model_exclude_unset=True,
)
async def cancel_job(id: JobIdPath, service: JobServiceDep) -> JobSummary:
    """Stops the job: no further shape starts, and the job no longer changes.

    A shape a worker is running finishes there (its answer still lands in the cache) but is not
    recorded in the job. Cancelling a finished job changes nothing.
    """
    return await anyio.to_thread.run_sync(service.cancel, id)
