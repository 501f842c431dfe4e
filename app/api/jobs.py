"""``/v1/tuning-jobs``: batch tuning jobs - submit, read, list, results, events (SSE), cancel.

Workers (``tiler worker``) do the tuning; these routes only read and write job rows, so they
answer in milliseconds whatever the size of the job.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, Body, Header, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from app.api.pagination import decode_cursor, encode_cursor
from app.api.schemas import BUDGET_SCHEMA_MAX, SEED_MAX, Sampler
from app.jobs.service import JobService, job_summary, prepare_job, result_entry_json
from app.problem_json import problem_responses
from app.settings import Settings
from simcore.tiling.problem import Problem

router = APIRouter(prefix="/v1", tags=["tuning-jobs"])

#: Largest ``problems`` list the schema admits; the server's ``TILER_JOB_MAX_PROBLEMS`` (10,000
#: by default) is the limit that applies.
PROBLEMS_SCHEMA_MAX = 100_000
_MAX_PAGE = 1000

JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
JobIdPath = Annotated[
    str, Path(description="Id of a tuning job (32 hex digits).", pattern=r"^[0-9a-f]{32}$")
]


class JobBody(BaseModel):
    """A batch of problems to tune with one search setting."""

    model_config = ConfigDict(extra="forbid")

    problems: list[Problem] = Field(
        min_length=1,
        max_length=PROBLEMS_SCHEMA_MAX,
        description="The Matmul problems (each as in `tilings:tune`). At most "
        "TILER_JOB_MAX_PROBLEMS (10,000 by default).",
    )
    budget: int | None = Field(
        default=None,
        ge=0,
        le=BUDGET_SCHEMA_MAX,
        strict=True,
        description="Simulator trials per shape after screening (0: screening and baselines "
        "only). Default and maximum as for `tilings:tune`.",
    )
    sampler: Sampler = Field(default="tpe", description="Optuna sampler of the trials.")
    seed: int = Field(default=0, ge=0, le=SEED_MAX, strict=True, description="Search seed.")


JOB_EXAMPLES: dict[str, Any] = {
    "llm-layer": {
        "summary": "The four GEMMs of a Llama-7B layer at 2048 tokens (910B2, fp16)",
        "value": {
            "problems": [
                {"soc": "Ascend910B2", "m": 2048, "n": 12288, "k": 4096, "dtype": "fp16"},
                {"soc": "Ascend910B2", "m": 2048, "n": 4096, "k": 4096, "dtype": "fp16"},
                {"soc": "Ascend910B2", "m": 2048, "n": 22016, "k": 4096, "dtype": "fp16"},
                {"soc": "Ascend910B2", "m": 2048, "n": 4096, "k": 11008, "dtype": "fp16"},
            ],
            "budget": 16,
        },
    },
    "decode": {
        "summary": "Decode GEMVs (M = 1), screening only",
        "value": {
            "problems": [
                {"m": 1, "n": 4096, "k": 4096},
                {"m": 1, "n": 11008, "k": 4096},
            ],
            "budget": 0,
        },
    },
}


class JobProgress(BaseModel):
    """Counts of a job's shapes."""

    total: int
    done: int = Field(description="Shapes answered (from the cache or by a search).")
    failed: int = Field(description="Shapes finished with an error.")
    cancelled: int = Field(description="Shapes not run because the job was cancelled.")
    remaining: int = Field(description="Shapes queued or running.")


class JobSummary(BaseModel):
    """A tuning job without its results."""

    id: str
    status: JobStatus = Field(
        description="`queued`, `running`, `succeeded` (every shape answered), `failed` (every "
        "shape finished, at least one with an error) or `cancelled`."
    )
    progress: JobProgress
    budget: int | None = Field(description="Trials per shape; null: the tuner's default.")
    sampler: str
    seed: int
    created_at: str
    started_at: str | None
    finished_at: str | None


class JobResult(BaseModel):
    """One finished shape: the tuned result's keys (as `tilings:tune` answers), or an error."""

    model_config = ConfigDict(extra="allow")

    position: int = Field(description="Index of the shape in the submitted `problems`.")
    problem: dict[str, Any] = Field(description="The problem with every default filled in.")
    status: Literal["done", "failed"]
    id: str | None = Field(default=None, description="Id of the result (`/v1/tilings/{id}`).")
    cached: bool | None = Field(
        default=None, description="True when the answer was in the cache (it cost nothing)."
    )
    model_version: str | None = None
    tiling: dict[str, int] | None = None
    estimate: dict[str, Any] | None = None
    error: dict[str, Any] | None = Field(
        default=None, description="A problem document (type, title, detail, ...) when failed."
    )


class JobResource(JobSummary):
    """A tuning job with the shapes finished so far, by position."""

    results: list[JobResult] | None = Field(
        default=None, description="Finished shapes by position (left out with results=false)."
    )


class JobPage(BaseModel):
    """A page of tuning jobs, newest first."""

    items: list[JobSummary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null on the last page."
    )


class JobResultsPage(BaseModel):
    """A page of a job's finished shapes, by position."""

    items: list[JobResult]
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null when no more shapes have "
        "finished yet."
    )


def get_job_service(request: Request) -> JobService:
    """The app's job service (over the tuning service's database)."""
    service: JobService | None = getattr(request.app.state, "jobs", None)
    if service is None:
        settings: Settings = request.app.state.settings
        service = JobService(request.app.state.service.db, settings)
        request.app.state.jobs = service
    return service


_CursorQuery = Annotated[
    str | None, Query(max_length=64, description="`next_cursor` of the previous page.")
]


@router.post(
    "/tuning-jobs",
    summary="Submit a batch tuning job",
    status_code=202,
    response_model=JobResource,
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
        **problem_responses(400, 401, 413, 422),
    },
)
async def submit_job(
    request: Request,
    body: Annotated[JobBody, Body(openapi_examples=JOB_EXAMPLES)],
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
) -> Response:
    """Queues one shape per problem; `tiler worker` processes tune them.

    Every problem is validated first (a bad field anywhere is a 422 naming
    `problems.<i>.<field>`). Shapes already in the tuning cache cost nothing. Follow the
    `Location` header, or stream `/events`. With `Idempotency-Key`, a retry of the same request
    returns the same job.
    """
    service = get_job_service(request)
    settings = service.settings
    budget = settings.default_budget if body.budget is None else body.budget
    problems = [p.model_dump(mode="json") for p in body.problems]

    def _submit() -> bytes:
        prepared = prepare_job(
            problems, budget=budget, sampler=body.sampler, seed=body.seed, settings=settings
        )
        job, created = service.submit(prepared, idempotency_key)
        headers["Location"] = f"/v1/tuning-jobs/{job.id}"
        if not created:
            headers["Idempotent-Replayed"] = "true"
        return service.resource(job.id, with_results=True)

    headers: dict[str, str] = {}
    content = await anyio.to_thread.run_sync(_submit)
    return Response(content, status_code=202, media_type="application/json", headers=headers)


@router.get(
    "/tuning-jobs/{id}",
    summary="A tuning job: status, progress and results",
    response_model=JobResource,
    responses=problem_responses(404, 422),
)
async def get_job(
    request: Request,
    id: JobIdPath,
    results: Annotated[
        bool, Query(description="Include the finished shapes' results (false: counts only).")
    ] = True,
) -> Response:
    """The job's status, its progress counts, and every finished shape's result or error.

    For a large job, page through `/results` instead of reading everything at once.
    """
    service = get_job_service(request)
    content = await anyio.to_thread.run_sync(lambda: service.resource(id, with_results=results))
    return Response(content, media_type="application/json")


@router.get(
    "/tuning-jobs",
    summary="List tuning jobs",
    response_model=JobPage,
    responses=problem_responses(422),
)
async def list_jobs(
    request: Request,
    status: Annotated[
        list[JobStatus] | None, Query(description="Only jobs in these statuses.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Page size.")] = 50,
    cursor: _CursorQuery = None,
) -> JobPage:
    """Jobs newest first, optionally of some statuses; pass `next_cursor` for the next page."""
    from app.jobs import store

    service = get_job_service(request)
    before = None if cursor is None else decode_cursor(cursor, 1)
    rows = await anyio.to_thread.run_sync(
        lambda: store.list_jobs(
            service.db, statuses=status or [], before_seq=before, limit=limit + 1
        )
    )
    items = [JobSummary.model_validate(job_summary(job)) for job in rows[:limit]]
    next_cursor = encode_cursor(rows[limit - 1].seq) if len(rows) > limit else None
    return JobPage(items=items, next_cursor=next_cursor)


@router.get(
    "/tuning-jobs/{id}/results",
    summary="A page of a job's results",
    response_model=JobResultsPage,
    responses=problem_responses(404, 422),
)
async def job_results(
    request: Request,
    id: JobIdPath,
    limit: Annotated[int, Query(ge=1, le=_MAX_PAGE, description="Page size.")] = 100,
    cursor: _CursorQuery = None,
) -> Response:
    """Finished shapes by position.

    On a running job a page can end before the last shape; `next_cursor` then still leads on,
    and the same cursor later returns the shapes that finished since. It is null only when the
    job is final and nothing follows.
    """
    service = get_job_service(request)
    start = 0 if cursor is None else decode_cursor(cursor, 0)

    def _page() -> bytes:
        # Final first: a job that is final before the read has nothing left to finish after it.
        final = service.get(id).is_final
        items, more = service.results_page(id, after_position=start - 1, limit=limit)
        resume = items[-1].position + 1 if items else start
        next_cursor = f'"{encode_cursor(resume)}"' if more or not final else "null"
        body = ",".join(result_entry_json(item) for item in items)
        return f'{{"items":[{body}],"next_cursor":{next_cursor}}}'.encode()

    content = await anyio.to_thread.run_sync(_page)
    return Response(content, media_type="application/json")


@router.get(
    "/tuning-jobs/{id}/events",
    summary="A job's progress as Server-Sent Events",
    responses={
        200: {
            "description": "An event stream: `queued`, `started`, one `progress` per finished "
            "shape, then `finished` or `cancelled`, after which the stream ends. Each message's "
            "`id` is its number in the job's log; reconnect with `Last-Event-ID` to resume "
            "after it.",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **problem_responses(404, 422),
    },
    response_class=StreamingResponse,
)
async def job_events(
    request: Request,
    id: JobIdPath,
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
) -> StreamingResponse:
    """Streams the job's events in order: every event after the resume point, then new ones."""
    service = get_job_service(request)
    await anyio.to_thread.run_sync(service.get, id)  # 404 before the stream starts
    start = int(last_event_id) if last_event_id is not None else (after or 0)
    return StreamingResponse(
        service.events(id, start),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post(
    "/tuning-jobs/{id}:cancel",
    summary="Cancel a tuning job",
    response_model=JobSummary,
    responses=problem_responses(401, 404, 422),
)
async def cancel_job(request: Request, id: JobIdPath) -> dict[str, Any]:
    """Stops the job: no further shape starts, and the job no longer changes.

    A shape a worker is running finishes there (its answer still lands in the cache) but is not
    recorded in the job. Cancelling a finished job changes nothing.
    """
    service = get_job_service(request)
    job = await anyio.to_thread.run_sync(service.cancel, id)
    return job_summary(job)
