"""What the job routes call: submit (validated, idempotent), read, list, cancel, results, events.

A submission is validated in full before anything is stored: every problem is already simcore's
``Problem`` (the body model), and becomes the tuner's request and its cache key here
(:func:`app.tuning.prepare_tune`), so a bad field anywhere in a 10,000-shape job is a 422 naming
``problems.<i>.<field>`` and the workers only ever see requests that parse. Rules that make a
parsed problem unanswerable (no legal tiling, a dtype the chip lacks) are the shape's result (an
``error``), not a rejection of the job.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from sqlalchemy.exc import IntegrityError

from app.db.base import utc_now
from app.db.engine import Database
from app.feedback.profiles import ProfileChoice
from app.job_records import JobResource, JobResult, JobSummary
from app.jobs import store
from app.jobs.store import EventRow, IdempotencyConflictError, NewItem
from app.problem_json import ProblemError, input_error_problem, unknown_soc_problem
from app.schemas import JobBody, TuneBody
from app.settings import Settings
from app.tuning import canonical_json, check_search_options, prepare_tune
from simcore.errors import InputError, UnknownSocError

#: Most bad fields one 422 lists (a job of 10,000 bad shapes would otherwise answer megabytes).
MAX_REPORTED_ERRORS = 100


#: Reads of a job and its results before the resource is returned as it stands (a shape that
#: finishes between the two reads is counted but not yet listed; see JobService.resource).
_CONSISTENT_READS = 5


@dataclass(frozen=True)
class PreparedJob:
    """A validated submission: one queued item per shape and the request's hash."""

    items: list[NewItem]
    budget: int | None
    sampler: str
    seed: int
    request_hash: str
    calibration: str = "default"


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
    body: JobBody, settings: Settings, profiles: Mapping[str, ProfileChoice] | None = None
) -> PreparedJob:
    """Validates a submission against the server's limits and builds its items.

    Args:
        body: The submission (every problem already a checked ``Problem``).
        settings: The server's limits (``job_max_problems``, ``max_budget``) and default budget
            (a job without a budget searches each shape as ``tilings:tune`` without one does).
        profiles: Per SoC, the calibration profile its shapes are priced with
            (:func:`app.feedback.profiles.job_profiles`); a SoC without one takes the packaged
            constants.

    Returns:
        The items and the hash of the normalized request (what ``Idempotency-Key`` compares).

    Raises:
        ProblemError: 422 ``validation-error`` listing every bad field (up to
            :data:`MAX_REPORTED_ERRORS`), or the job is too large, its budget too high or its
            sampler not installed here.
    """
    problems = body.problems
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
    budget = settings.default_budget if body.budget is None else body.budget
    try:
        check_search_options(budget, body.sampler, settings.max_budget)
    except InputError as exc:
        # The same for every shape: reported once, for the job.
        raise input_error_problem(exc) from exc
    items: list[NewItem] = []
    canonicals: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    bad = 0
    for position, problem in enumerate(problems):
        shape = TuneBody(problem=problem, sampler=body.sampler, seed=body.seed)
        request = shape.tuner_request(budget)
        profile = (profiles or {}).get(problem.soc)
        try:
            prepared = prepare_tune(request, problem, None if profile is None else profile.preset)
        except (InputError, UnknownSocError) as exc:
            bad += 1
            if len(errors) < MAX_REPORTED_ERRORS:
                errors.append(_field_error(position, exc))
            continue
        cal_id = None if profile is None else profile.calibration_id
        # The hash of a default shape is as before profiles existed (idempotency keys hold).
        canonicals.append(
            prepared.canonical if cal_id is None else {**prepared.canonical, "calibration": cal_id}
        )
        # The request (every problem default filled) is what the worker runs: it prepares it
        # again with its own tuner, whose cache key may differ when the worker runs a newer
        # model than the server that queued the shape.
        items.append(
            NewItem(
                canonical_json(request.model_dump(exclude_unset=True)), prepared.cache_key, cal_id
            )
        )
    if errors:
        listed = "" if bad <= len(errors) else f" (the first {len(errors)} are listed)"
        raise ProblemError(
            422,
            "validation-error",
            f"{bad} of {len(problems)} problems are invalid{listed}",
            errors=errors,
        )
    request_hash = hashlib.sha256(canonical_json(canonicals).encode()).hexdigest()
    return PreparedJob(items, budget, body.sampler, body.seed, request_hash, body.calibration)


class JobService:
    """Batch jobs over one database (the routes' side; workers are :mod:`app.jobs.worker`).

    Args:
        db: The database (the same as the tuning cache's).
        settings: The settings.
    """

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings

    def submit(self, prepared: PreparedJob, idempotency_key: str | None) -> tuple[JobSummary, bool]:
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
                    calibration=prepared.calibration,
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
            return self.get(found_id), created
        raise AssertionError("unreachable")

    def _with_notice(self, job: JobSummary) -> JobSummary:
        """The job, saying so when no worker has claimed any of its shapes for a while."""
        if job.status != "queued":
            return job
        waited_s = (utc_now() - job.created_at).total_seconds()
        if waited_s < self.settings.job_unclaimed_notice_s:
            return job
        notice = (
            f"no worker has claimed a shape of this job for {waited_s:.0f} s: is a worker "
            "running on this database? (`tiler serve` runs one unless started with "
            "--job-workers 0; otherwise start `tiler worker`)"
        )
        return job.model_copy(update={"notice": notice})

    def get(self, job_id: str) -> JobSummary:
        """Returns a job.

        Raises:
            ProblemError: 404 when there is no such job.
        """
        job = store.find_job(self.db, job_id)
        if job is None:
            raise ProblemError(404, "not-found", f"no tuning job has id {job_id!r}")
        return self._with_notice(job)

    def list_jobs(
        self, *, statuses: list[str], before_seq: int | None, limit: int
    ) -> list[JobSummary]:
        """Up to ``limit`` jobs, newest first, of some statuses (empty: all), before a cursor."""
        rows = store.list_jobs(self.db, statuses=statuses, before_seq=before_seq, limit=limit)
        return [self._with_notice(job) for job in rows]

    def resource(self, job_id: str, *, with_results: bool) -> JobResource:
        """The job resource (``GET /v1/tuning-jobs/{id}``)."""
        # Results first, then the job: a shape that finishes in between is counted but not yet
        # listed, never listed but not counted. Where that happened, read both again: the last
        # shape's finish also finishes the job, and a client that polls until the status is
        # final must get every shape with it. A few reads suffice: each one that falls short saw
        # another shape finish, and a store that never agrees must not hang the request.
        items = self._finished(job_id) if with_results else None
        job = self.get(job_id)
        for _ in range(_CONSISTENT_READS):
            if items is None or len(items) >= job.progress.done + job.progress.failed:
                break
            items = self._finished(job_id)
            job = self.get(job_id)
        values = {**job.model_dump(exclude_unset=True), "seq": job.seq,
                  "event_count": job.event_count}  # fmt: skip
        if items is not None:
            values["results"] = items
        return JobResource.model_validate(values)

    def _finished(self, job_id: str) -> list[JobResult]:
        """Every finished shape of a job, by position."""
        return store.finished_items(self.db, job_id, after_position=-1, limit=None)

    def results_page(
        self, job_id: str, *, after_position: int, limit: int
    ) -> tuple[list[JobResult], bool]:
        """A page of a job's finished shapes by position, and whether more follow."""
        self.get(job_id)
        rows = store.finished_items(self.db, job_id, after_position=after_position, limit=limit + 1)
        return rows[:limit], len(rows) > limit

    def cancel(self, job_id: str) -> JobSummary:
        """Cancels a job (no-op on a finished one).

        Raises:
            ProblemError: 404 when there is no such job.
        """
        job = store.cancel_job(self.db, job_id)
        if job is None:
            raise ProblemError(404, "not-found", f"no tuning job has id {job_id!r}")
        return job

    async def events(self, job_id: str, last_event_id: int) -> AsyncIterator[EventRow]:
        """The job's events after ``last_event_id``, then new ones as they come.

        The stream ends after the job's final event (``finished`` or ``cancelled``). Keep-alive
        comments while nothing happens are the framework's (``EventSourceResponse``).
        """
        poll_s = self.settings.job_events_poll_s
        after = last_event_id
        while True:
            rows = await anyio.to_thread.run_sync(store.events_after, self.db, job_id, after)
            for row in rows:
                yield row
                after = row.number
                if row.type in ("finished", "cancelled"):
                    return
            if rows:
                continue
            job = await anyio.to_thread.run_sync(store.find_job, self.db, job_id)
            if job is None or (job.is_final and job.event_count <= after):
                return
            await asyncio.sleep(poll_s)
