"""What the job routes call: submit (validated, idempotent), read, list, cancel, results, events.

A submission is validated in full before anything is stored: every problem goes through the
tuner's own parser (:func:`app.tuning.prepare_tune`), which also gives its cache key, so a bad
field anywhere in a 10,000-shape job is a 422 naming ``problems.<i>.<field>`` and the workers
only ever see requests that parse. Rules that make a parsed problem unanswerable (no legal tiling,
a dtype the chip lacks) are the shape's result (an ``error``), not a rejection of the job.

The job resource is assembled from stored JSON text without re-encoding the answers (they can
be megabytes for a large job), like ``tilings:tune`` splices its cached answer.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from sqlalchemy.exc import IntegrityError

from app.db.engine import Database
from app.jobs import store
from app.jobs.store import FinishedItem, IdempotencyConflictError, JobRow, NewItem
from app.problem_json import ProblemError, input_error_problem, unknown_soc_problem
from app.settings import Settings
from app.tuning import canonical_json, prepare_tune
from simcore.errors import InputError, UnknownSocError

#: Most bad fields one 422 lists (a job of 10,000 bad shapes would otherwise answer megabytes).
MAX_REPORTED_ERRORS = 100


@dataclass(frozen=True)
class PreparedJob:
    """A validated submission: one queued item per shape and the request's hash."""

    items: list[NewItem]
    budget: int | None
    sampler: str
    seed: int
    request_hash: str


def _field_error(position: int, exc: Exception) -> dict[str, Any]:
    """One bad field of shape ``position`` as a problem+json ``errors`` entry."""
    if isinstance(exc, InputError):
        err = input_error_problem(exc).extensions["errors"][0]
    else:
        assert isinstance(exc, UnknownSocError)
        err = unknown_soc_problem(exc).extensions["errors"][0]
    field = str(err["field"])
    # The tuner names fields of one request (``problem.m``); here that request is problems[i].
    if field.startswith("problem."):
        field = field[len("problem.") :]
    whole = field in ("problem", "request")
    name = f"problems.{position}" if whole else f"problems.{position}.{field}"
    return {**err, "field": name, "message": f"problems.{position}: {err['message']}"}


def prepare_job(
    problems: Sequence[dict[str, Any]],
    *,
    budget: int | None,
    sampler: str,
    seed: int,
    settings: Settings,
) -> PreparedJob:
    """Validates a submission and builds its items.

    Args:
        problems: The problems (dicts as ``tilings:tune`` takes them).
        budget: Search budget of every shape; None leaves it out, so the tuner's default
            applies (as for ``tilings:tune`` without a budget).
        sampler: Optuna sampler.
        seed: Search seed.
        settings: The server's limits (``job_max_problems``, ``max_budget``).

    Returns:
        The items and the hash of the normalized request (what ``Idempotency-Key`` compares).

    Raises:
        ProblemError: 422 ``validation-error`` listing every bad field (up to
            :data:`MAX_REPORTED_ERRORS`), or the job is too large or its budget too high.
    """
    if len(problems) > settings.job_max_problems:
        raise ProblemError(
            422,
            "validation-error",
            f"a job holds at most {settings.job_max_problems} problems, this one has "
            f"{len(problems)}; split it (TILER_JOB_MAX_PROBLEMS)",
            errors=[
                {
                    "field": "problems",
                    "rule": "max_problems",
                    "message": f"problems: at most {settings.job_max_problems} items",
                    "value": len(problems),
                    "limit": settings.job_max_problems,
                }
            ],
        )
    items: list[NewItem] = []
    canonicals: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    bad = 0
    for position, problem in enumerate(problems):
        request: dict[str, Any] = {"problem": problem, "sampler": sampler, "seed": seed}
        if budget is not None:
            request["budget"] = budget
        try:
            prepared = prepare_tune(request, settings.max_budget)
        except (InputError, UnknownSocError) as exc:
            bad += 1
            if len(errors) < MAX_REPORTED_ERRORS:
                if isinstance(exc, InputError) and exc.field == "budget":
                    # The same for every shape: report it once, for the job.
                    raise input_error_problem(exc) from exc
                errors.append(_field_error(position, exc))
            continue
        canonicals.append(prepared.canonical)
        # The request as given (every problem default already filled by the API model) is what
        # the worker runs: it parses it again with its own tuner, whose cache key may differ
        # when the worker runs a newer model than the server that queued the shape.
        items.append(NewItem(canonical_json(request), prepared.cache_key))
    if errors:
        listed = "" if bad <= len(errors) else f" (the first {len(errors)} are listed)"
        raise ProblemError(
            422,
            "validation-error",
            f"{bad} of {len(problems)} problems are invalid{listed}",
            errors=errors,
        )
    request_hash = hashlib.sha256(canonical_json(canonicals).encode()).hexdigest()
    return PreparedJob(items, budget, sampler, seed, request_hash)


def _time(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def job_summary(job: JobRow) -> dict[str, Any]:
    """The job resource without its results (also a row of the listing)."""
    return {
        "id": job.id,
        "status": job.status,
        "progress": {
            "total": job.total,
            "done": job.done,
            "failed": job.failed,
            "cancelled": job.cancelled,
            "remaining": job.total - job.done - job.failed - job.cancelled,
        },
        "budget": job.budget,
        "sampler": job.sampler,
        "seed": job.seed,
        "created_at": _time(job.created_at),
        "started_at": _time(job.started_at),
        "finished_at": _time(job.finished_at),
    }


def result_entry_json(item: FinishedItem) -> str:
    """One shape's entry of ``results`` as JSON text.

    Done: ``position``, ``problem``, ``status``, then the tuned result's keys (``id``,
    ``cached``, ``model_version``, ``tiling``, ``estimate``, ...), the answer's stored text
    spliced in as is. Failed: ``position``, ``problem``, ``status`` and ``error`` (a problem
    document).
    """
    problem = json.loads(item.request_json)["problem"]
    head: dict[str, Any] = {"position": item.position, "problem": problem, "status": item.status}
    if item.status == "done" and item.answer_json is not None:
        head.update(id=item.result_id, cached=bool(item.cached), model_version=item.model_version)
        rest = item.answer_json.strip()[1:]
        text = json.dumps(head, separators=(",", ":"))
        return text[:-1] + ("," + rest if rest.strip() != "}" else "}")
    error = json.loads(item.error_json) if item.error_json else {"detail": "no answer stored"}
    return json.dumps({**head, "error": error}, separators=(",", ":"))


def job_json(job: JobRow, items: Sequence[FinishedItem] | None) -> bytes:
    """The job resource as JSON bytes; ``results`` is left out when ``items`` is None."""
    text = json.dumps(job_summary(job), separators=(",", ":"))
    if items is None:
        return text.encode()
    results = ",".join(result_entry_json(item) for item in items)
    return (text[:-1] + ',"results":[' + results + "]}").encode()


def sse_frame(number: int, type_: str, data_json: str) -> bytes:
    """One Server-Sent Events message (``id``, ``event``, ``data``; data is one JSON line)."""
    return f"id: {number}\nevent: {type_}\ndata: {data_json}\n\n".encode()


class JobService:
    """Batch jobs over one database (the routes' side; workers are :mod:`app.jobs.worker`).

    Args:
        db: The database (the same as the tuning cache's).
        settings: The settings.
    """

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings

    def submit(self, prepared: PreparedJob, idempotency_key: str | None) -> tuple[JobRow, bool]:
        """Stores a validated job, or returns the job an earlier submission with the key made.

        Returns:
            The job and True when it was created by this call.

        Raises:
            ProblemError: 422 when the key was used with another request.
        """
        job_id = uuid.uuid4().hex
        for attempt in range(2):
            try:
                found_id, created = store.create_job(
                    self.db,
                    job_id=job_id,
                    items=prepared.items,
                    budget=prepared.budget,
                    sampler=prepared.sampler,
                    seed=prepared.seed,
                    request_hash=prepared.request_hash,
                    idempotency_key=idempotency_key,
                    idempotency_ttl_s=self.settings.job_idempotency_ttl_s,
                )
            except IdempotencyConflictError as exc:
                raise ProblemError(
                    422,
                    "validation-error",
                    f"Idempotency-Key {idempotency_key!r} was used for job {exc.job_id} with "
                    "another request; use a new key for a new request",
                    errors=[
                        {
                            "field": "Idempotency-Key",
                            "rule": "idempotency_key_reused",
                            "message": "Idempotency-Key: already used with a different body",
                            "value": idempotency_key,
                            "limit": None,
                        }
                    ],
                ) from exc
            except IntegrityError:
                # Two submissions with one key raced (PostgreSQL): the other committed first,
                # so the second attempt finds its job.
                if attempt or idempotency_key is None:
                    raise
                continue
            job = store.find_job(self.db, found_id)
            assert job is not None
            return job, created
        raise AssertionError("unreachable")

    def get(self, job_id: str) -> JobRow:
        """Returns a job.

        Raises:
            ProblemError: 404 when there is no such job.
        """
        job = store.find_job(self.db, job_id)
        if job is None:
            raise ProblemError(404, "not-found", f"no tuning job has id {job_id!r}")
        return job

    def resource(self, job_id: str, *, with_results: bool) -> bytes:
        """The job resource (``GET /v1/tuning-jobs/{id}``) as JSON bytes."""
        # Results first, then the job: a shape that finishes in between is counted but not yet
        # listed, never listed but not counted.
        items = (
            store.finished_items(self.db, job_id, after_position=-1, limit=None)
            if with_results
            else None
        )
        return job_json(self.get(job_id), items)

    def results_page(
        self, job_id: str, *, after_position: int, limit: int
    ) -> tuple[list[FinishedItem], bool]:
        """A page of a job's finished shapes by position, and whether more follow."""
        self.get(job_id)
        rows = store.finished_items(self.db, job_id, after_position=after_position, limit=limit + 1)
        return rows[:limit], len(rows) > limit

    def cancel(self, job_id: str) -> JobRow:
        """Cancels a job (no-op on a finished one).

        Raises:
            ProblemError: 404 when there is no such job.
        """
        job = store.cancel_job(self.db, job_id)
        if job is None:
            raise ProblemError(404, "not-found", f"no tuning job has id {job_id!r}")
        return job

    async def events(self, job_id: str, last_event_id: int) -> AsyncIterator[bytes]:
        """The job's events after ``last_event_id`` as SSE frames, then new ones as they come.

        The stream ends after the job's final event (``finished`` or ``cancelled``). While
        nothing happens, a comment line goes out every 15 s so that proxies keep it open.
        """
        poll_s = self.settings.job_events_poll_s
        after = last_event_id
        idle_s = 0.0
        # Reconnection delay the browser's EventSource uses after a dropped connection.
        yield b"retry: 1000\n\n"
        while True:
            rows = await anyio.to_thread.run_sync(store.events_after, self.db, job_id, after)
            for row in rows:
                yield sse_frame(row.number, row.type, row.data_json)
                after = row.number
                if row.type in ("finished", "cancelled"):
                    return
            if rows:
                idle_s = 0.0
                continue
            job = await anyio.to_thread.run_sync(store.find_job, self.db, job_id)
            if job is None or (job.is_final and job.event_count <= after):
                return
            await asyncio.sleep(poll_s)
            idle_s += poll_s
            if idle_s >= 15.0:
                idle_s = 0.0
                yield b": keep-alive\n\n"
