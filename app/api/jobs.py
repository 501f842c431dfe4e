"""``/v1/tuning-jobs``: batch tuning jobs - submit, read, list, results, events (SSE), cancel.

Job workers (the server's own, ``tiler serve --job-workers N``, and any ``tiler worker``) do the
tuning; these routes only read and write job rows, so they answer in milliseconds whatever the
size of the job.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Body, Depends, Header, Path, Query, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent

from app.api.deps import JSON_BODY, JobServiceDep
from app.api.examples import JOB_EXAMPLES
from app.api.pagination import decode_cursor, encode_cursor
from app.jobs.service import prepare_job
from app.problem_json import problem_responses
from app.schemas import (
    JobBody,
    JobPage,
    JobResource,
    JobResultsPage,
    JobStatus,
    JobSummary,
)

router = APIRouter(prefix="/v1", tags=["tuning-jobs"])

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
)
async def submit_job(
    body: Annotated[JobBody, Body(openapi_examples=JOB_EXAMPLES)],
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
    returns the same job.
    """

    def _submit() -> JobResource:
        prepared = prepare_job(body, service.settings)
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
