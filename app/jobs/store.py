"""The queries of batch jobs: submit, read, list, cancel, and the workers' claim protocol.

Every function runs one short transaction. Writes go through :meth:`Database.write`, which is
``BEGIN IMMEDIATE`` on SQLite (writers queue on the file lock, bounded by ``busy_timeout``); on
PostgreSQL the claim selects with ``FOR UPDATE SKIP LOCKED`` so that concurrent workers take
different shapes without waiting for each other.

Lock order, the same in every transaction that takes both (no deadlock on PostgreSQL): the
job's items first, then the job's row. The job row's ``event_count`` numbers the job's events,
so its row lock also orders them.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Connection, Table, and_, delete, func, insert, or_, select, update

from app.db.base import utc_now
from app.db.engine import Database
from app.db.job_models import IdempotencyKey, Job, JobEvent, JobItem
from app.db.models import SearchClaim, TuningResult
from app.job_records import FINAL_JOB_STATUSES, JobResult, JobSummary
from app.problem_json import problem_body

_JOBS = cast(Table, Job.__table__)
_ITEMS = cast(Table, JobItem.__table__)
_EVENTS = cast(Table, JobEvent.__table__)
_KEYS = cast(Table, IdempotencyKey.__table__)
_RESULTS = cast(Table, TuningResult.__table__)
_CLAIMS = cast(Table, SearchClaim.__table__)

#: Item statuses that still need (or are getting) work.
OPEN_ITEM_STATUSES = ("queued", "running")


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


#: The columns a job record is built from (:meth:`app.schemas.JobSummary.from_row`).
_JOB_COLUMNS = tuple(
    _JOBS.c[name]
    for name in (
        "seq", "id", "status", "total", "done", "failed", "cancelled", "event_count", "budget",
        "sampler", "seed", "created_at", "started_at", "finished_at", "calibration",
    )
)  # fmt: skip


@dataclass(frozen=True)
class NewItem:
    """A shape to queue: its canonical tune request, cache key and calibration profile."""

    request_json: str
    cache_key: str
    #: The profile the shape is priced with (None: the packaged constants).
    calibration_id: str | None = None


class IdempotencyConflictError(Exception):
    """An ``Idempotency-Key`` was used before with another request.

    Args:
        job_id: The job the key belongs to.
    """

    def __init__(self, job_id: str) -> None:
        super().__init__(job_id)
        self.job_id = job_id


def _add_event(conn: Connection, job_id: str, type_: str, data: dict[str, Any]) -> int:
    """Appends an event to a job's log and returns its number (takes the job row's lock)."""
    conn.execute(
        update(_JOBS).where(_JOBS.c.id == job_id).values(event_count=_JOBS.c.event_count + 1)
    )
    number = int(conn.execute(select(_JOBS.c.event_count).where(_JOBS.c.id == job_id)).scalar_one())
    conn.execute(
        insert(_EVENTS).values(
            job_id=job_id,
            number=number,
            type=type_,
            data_json=_json(data),
            created_at=utc_now(),
        )
    )
    return number


def create_job(
    db: Database,
    *,
    job_id: str,
    items: Sequence[NewItem],
    budget: int | None,
    sampler: str,
    seed: int,
    request_hash: str,
    idempotency_key: str | None,
    idempotency_ttl_s: float,
    calibration: str = "default",
) -> tuple[str, bool]:
    """Stores a job with its shapes, or finds the job an idempotency key already created.

    Args:
        db: The database.
        job_id: Id of the new job.
        items: The shapes, in submission order.
        budget: Search budget of every shape (None: the tuner's default).
        sampler: Sampler of every shape.
        seed: Seed of every shape.
        request_hash: SHA-256 of the normalized request.
        idempotency_key: The ``Idempotency-Key`` header, or None.
        idempotency_ttl_s: Age after which a key is forgotten.
        calibration: The job's calibration profile choice, as submitted.

    Returns:
        The job's id and True when it was created now (False: the key's earlier job).

    Raises:
        IdempotencyConflictError: The key was used with another request.
        sqlalchemy.exc.IntegrityError: Another submission with the same key committed first
            (PostgreSQL only; the caller retries and then finds that job).
    """
    now = utc_now()
    with db.write() as conn:
        if idempotency_key is not None:
            known = conn.execute(
                select(_KEYS.c.request_hash, _KEYS.c.job_id, _KEYS.c.created_at).where(
                    _KEYS.c.key == idempotency_key
                )
            ).first()
            if known is not None:
                expired = known.created_at < now - dt.timedelta(seconds=idempotency_ttl_s)
                if expired:
                    conn.execute(delete(_KEYS).where(_KEYS.c.key == idempotency_key))
                elif known.request_hash == request_hash:
                    return str(known.job_id), False
                else:
                    raise IdempotencyConflictError(str(known.job_id))
        conn.execute(
            insert(_JOBS).values(
                id=job_id,
                status="queued",
                total=len(items),
                done=0,
                failed=0,
                cancelled=0,
                event_count=0,
                budget=budget,
                sampler=sampler,
                seed=seed,
                request_hash=request_hash,
                created_at=now,
                calibration=calibration,
            )
        )
        conn.execute(
            insert(_ITEMS),
            [
                {
                    "job_id": job_id,
                    "position": position,
                    "status": "queued",
                    "request_json": item.request_json,
                    "cache_key": item.cache_key,
                    "calibration_id": item.calibration_id,
                    "attempts": 0,
                }
                for position, item in enumerate(items)
            ],
        )
        _add_event(conn, job_id, "queued", {"status": "queued", "total": len(items)})
        if idempotency_key is not None:
            conn.execute(
                insert(_KEYS).values(
                    key=idempotency_key, request_hash=request_hash, job_id=job_id, created_at=now
                )
            )
    return job_id, True


def find_job(db: Database, job_id: str) -> JobSummary | None:
    """Returns a job, or None."""
    with db.read() as conn:
        row = conn.execute(select(*_JOB_COLUMNS).where(_JOBS.c.id == job_id)).first()
    return None if row is None else JobSummary.from_row(row)


def list_jobs(
    db: Database, *, statuses: Sequence[str], before_seq: int | None, limit: int
) -> list[JobSummary]:
    """Returns up to ``limit`` jobs, newest first, older than a cursor, of the given statuses.

    Args:
        db: The database.
        statuses: Statuses to keep (empty: all).
        before_seq: Only jobs submitted before this one (the previous page's cursor).
        limit: Page size.
    """
    query = select(*_JOB_COLUMNS)
    if statuses:
        query = query.where(_JOBS.c.status.in_(list(statuses)))
    if before_seq is not None:
        query = query.where(_JOBS.c.seq < before_seq)
    query = query.order_by(_JOBS.c.seq.desc()).limit(limit)
    with db.read() as conn:
        return [JobSummary.from_row(row) for row in conn.execute(query)]


def finished_items(
    db: Database, job_id: str, *, after_position: int, limit: int | None
) -> list[JobResult]:
    """Returns a job's finished shapes (done or failed) by position, after a position.

    Args:
        db: The database.
        job_id: The job.
        after_position: Only shapes after this position (-1: from the start).
        limit: Most rows to return (None: all).
    """
    i, r = _ITEMS.c, _RESULTS.c
    query = (
        select(
            i.position,
            i.status,
            i.request_json,
            i.result_id,
            i.cached,
            i.error_json,
            i.calibration_id,
            r.model_version,
            r.answer_json,
        )
        .select_from(_ITEMS.outerjoin(_RESULTS, r.id == i.result_id))
        .where(
            i.job_id == job_id,
            i.status.in_(("done", "failed")),
            i.position > after_position,
        )
        .order_by(i.position)
    )
    if limit is not None:
        query = query.limit(limit)
    with db.read() as conn:
        return [JobResult.from_row(row) for row in conn.execute(query)]


@dataclass(frozen=True)
class EventRow:
    """One event of a job's log."""

    number: int
    type: str
    data_json: str


def events_after(db: Database, job_id: str, after: int, limit: int = 500) -> list[EventRow]:
    """Returns a job's events numbered above ``after``, in order."""
    with db.read() as conn:
        rows = conn.execute(
            select(_EVENTS.c.number, _EVENTS.c.type, _EVENTS.c.data_json)
            .where(_EVENTS.c.job_id == job_id, _EVENTS.c.number > after)
            .order_by(_EVENTS.c.number)
            .limit(limit)
        ).all()
    return [EventRow(row.number, row.type, row.data_json) for row in rows]


def _counts(job: Any) -> dict[str, int]:
    return {"total": job.total, "done": job.done, "failed": job.failed, "cancelled": job.cancelled}


def cancel_job(db: Database, job_id: str) -> JobSummary | None:
    """Cancels a job: its queued and running shapes become ``cancelled``, and nothing more runs.

    A shape a worker is running when the job is cancelled finishes in that worker and its answer
    lands in the cache, but the job does not record it: a cancelled job no longer changes.
    Cancelling a finished job changes nothing (the call is idempotent).

    Returns:
        The job after the call, or None when there is no such job.
    """
    now = utc_now()
    with db.write() as conn:
        job = conn.execute(select(*_JOB_COLUMNS).where(_JOBS.c.id == job_id)).first()
        if job is None:
            return None
        if job.status not in FINAL_JOB_STATUSES:
            stopped = conn.execute(
                update(_ITEMS)
                .where(_ITEMS.c.job_id == job_id, _ITEMS.c.status.in_(OPEN_ITEM_STATUSES))
                .values(
                    status="cancelled", lease_owner=None, lease_expires_at=None, finished_at=now
                )
            ).rowcount
            conn.execute(
                update(_JOBS)
                .where(_JOBS.c.id == job_id)
                .values(
                    status="cancelled",
                    cancelled=_JOBS.c.cancelled + stopped,
                    finished_at=now,
                )
            )
            job = conn.execute(select(*_JOB_COLUMNS).where(_JOBS.c.id == job_id)).one()
            _add_event(conn, job_id, "cancelled", {"status": "cancelled", **_counts(job)})
            job = conn.execute(select(*_JOB_COLUMNS).where(_JOBS.c.id == job_id)).one()
    return JobSummary.from_row(job)


# --- the workers' side ------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimedItem:
    """A shape a worker holds under its lease."""

    id: int
    job_id: str
    position: int
    attempts: int
    request_json: str
    cache_key: str
    #: The profile the shape is priced with (None: the packaged constants).
    calibration_id: str | None = None


def _claimable(now: dt.datetime) -> Any:
    return or_(
        _ITEMS.c.status == "queued",
        and_(_ITEMS.c.status == "running", _ITEMS.c.lease_expires_at < now),
    )


def has_claimable(db: Database) -> bool:
    """True when some shape is queued or has an expired lease (a cheap read before a claim)."""
    with db.read() as conn:
        found = conn.execute(select(_ITEMS.c.id).where(_claimable(utc_now())).limit(1)).first()
    return found is not None


def claim_items(
    db: Database, owner: str, *, lease_s: float, limit: int, max_attempts: int
) -> list[ClaimedItem]:
    """Claims up to ``limit`` shapes for ``owner``: queued ones, or ones whose lease expired.

    Oldest first over all jobs (FIFO). A shape already claimed ``max_attempts`` times whose lease
    expired again (its worker keeps dying on it) is not handed out again: it fails with an
    ``internal-error`` whose detail says the worker was lost.

    Returns:
        The claimed shapes, each leased to ``owner`` until ``lease_s`` from now.
    """
    now = utc_now()
    expires = now + dt.timedelta(seconds=lease_s)
    i = _ITEMS.c
    query = (
        select(
            i.id, i.job_id, i.position, i.attempts, i.request_json, i.cache_key, i.calibration_id
        )
        .where(_claimable(now))
        .order_by(i.id)
        .limit(limit)
    )
    if db.dialect == "postgresql":
        # Rows another worker is claiming right now are skipped, not waited for.
        query = query.with_for_update(skip_locked=True)
    claimed: list[ClaimedItem] = []
    with db.write() as conn:
        rows = conn.execute(query).all()
        for row in rows:
            if row.attempts >= max_attempts:
                error = problem_body(
                    500,
                    "internal-error",
                    f"worker lost: the worker running this shape stopped renewing its lease "
                    f"{row.attempts} times (killed, or out of memory); not retried again",
                    None,
                )
                _finish(conn, row.id, row.job_id, row.position, "failed", now, error=error)
                continue
            conn.execute(
                update(_ITEMS)
                .where(i.id == row.id)
                .values(
                    status="running",
                    lease_owner=owner,
                    lease_expires_at=expires,
                    heartbeat_at=now,
                    attempts=i.attempts + 1,
                    started_at=now,
                )
            )
            claimed.append(
                ClaimedItem(
                    id=row.id,
                    job_id=row.job_id,
                    position=row.position,
                    attempts=row.attempts + 1,
                    request_json=row.request_json,
                    cache_key=row.cache_key,
                    calibration_id=row.calibration_id,
                )
            )
        for job_id in sorted({c.job_id for c in claimed}):
            started = conn.execute(
                update(_JOBS)
                .where(_JOBS.c.id == job_id, _JOBS.c.status == "queued")
                .values(status="running", started_at=now)
            ).rowcount
            if started:
                _add_event(conn, job_id, "started", {"status": "running"})
    return claimed


def renew_leases(db: Database, owner: str, lease_s: float) -> int:
    """The heartbeat: extends the lease of every shape ``owner`` is running.

    Returns:
        How many leases were renewed (fewer than held: a job was cancelled, or a lease was lost).
    """
    now = utc_now()
    with db.write() as conn:
        return int(
            conn.execute(
                update(_ITEMS)
                .where(_ITEMS.c.lease_owner == owner, _ITEMS.c.status == "running")
                .values(lease_expires_at=now + dt.timedelta(seconds=lease_s), heartbeat_at=now)
            ).rowcount
        )


def release_item(db: Database, item_id: int, owner: str) -> bool:
    """Puts a claimed shape back in the queue (the worker stops, or hit an unexpected error).

    The attempt still counts, so a shape that always breaks its worker ends as a "worker lost"
    error.

    Returns:
        False when ``owner`` no longer held it.
    """
    with db.write() as conn:
        return (
            conn.execute(
                update(_ITEMS)
                .where(
                    _ITEMS.c.id == item_id,
                    _ITEMS.c.lease_owner == owner,
                    _ITEMS.c.status == "running",
                )
                .values(status="queued", lease_owner=None, lease_expires_at=None)
            ).rowcount
            == 1
        )


def _finish(
    conn: Connection,
    item_id: int,
    job_id: str,
    position: int,
    status: str,
    now: dt.datetime,
    *,
    result_id: str | None = None,
    cached: bool | None = None,
    error: dict[str, Any] | None = None,
) -> None:
    """Records a shape's outcome, counts it, logs its event, and finishes the job after the last."""
    conn.execute(
        update(_ITEMS)
        .where(_ITEMS.c.id == item_id)
        .values(
            status=status,
            result_id=result_id,
            cached=cached,
            error_json=None if error is None else _json(error),
            lease_owner=None,
            lease_expires_at=None,
            finished_at=now,
        )
    )
    counter = _JOBS.c.done if status == "done" else _JOBS.c.failed
    conn.execute(update(_JOBS).where(_JOBS.c.id == job_id).values({counter: counter + 1}))
    job = conn.execute(select(*_JOB_COLUMNS).where(_JOBS.c.id == job_id)).one()
    data: dict[str, Any] = {"position": position, "status": status}
    if status == "done":
        data.update(result_id=result_id, cached=cached)
    else:
        data["error"] = None if error is None else error.get("type")
    _add_event(conn, job_id, "progress", {**data, **_counts(job)})
    if job.done + job.failed + job.cancelled == job.total and job.status not in FINAL_JOB_STATUSES:
        final = "failed" if job.failed else "succeeded"
        conn.execute(
            update(_JOBS).where(_JOBS.c.id == job_id).values(status=final, finished_at=now)
        )
        _add_event(conn, job_id, "finished", {"status": final, **_counts(job)})


def finish_item(
    db: Database,
    item: ClaimedItem,
    owner: str,
    *,
    result_id: str | None = None,
    cached: bool | None = None,
    error: dict[str, Any] | None = None,
) -> bool:
    """Records the outcome of a shape ``owner`` holds: done (``result_id``) or failed (``error``).

    Returns:
        False when ``owner`` no longer holds the shape (its lease expired and another worker
        claimed it, or the job was cancelled): nothing is recorded, so a shape is never counted
        twice.
    """
    now = utc_now()
    status = "failed" if error is not None else "done"
    held_query = select(_ITEMS.c.id).where(
        _ITEMS.c.id == item.id, _ITEMS.c.lease_owner == owner, _ITEMS.c.status == "running"
    )
    if db.dialect == "postgresql":
        # Lock the row: a cancel (or a re-claim) committing between this check and the update
        # below would otherwise be overwritten.
        held_query = held_query.with_for_update()
    with db.write() as conn:
        held = conn.execute(held_query).first()
        if held is None:
            return False
        _finish(
            conn,
            item.id,
            item.job_id,
            item.position,
            status,
            now,
            result_id=result_id,
            cached=cached,
            error=error,
        )
    return True


def item_status_counts(db: Database, job_id: str) -> dict[str, int]:
    """How many of a job's shapes are in each status (``running`` is not counted on the job)."""
    with db.read() as conn:
        rows = conn.execute(
            select(_ITEMS.c.status, func.count())
            .where(_ITEMS.c.job_id == job_id)
            .group_by(_ITEMS.c.status)
        ).all()
    return {str(status): int(count) for status, count in rows}


# --- shared studies ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunningItem:
    """A shape some worker is running now (a candidate for helping in its shared study)."""

    request_json: str
    cache_key: str


def running_items(db: Database, limit: int) -> list[RunningItem]:
    """Shapes under a live lease, oldest first (what an idle worker may help with)."""
    query = (
        select(_ITEMS.c.request_json, _ITEMS.c.cache_key)
        .where(_ITEMS.c.status == "running", _ITEMS.c.lease_expires_at >= utc_now())
        .order_by(_ITEMS.c.id)
        .limit(limit)
    )
    with db.read() as conn:
        return [RunningItem(row.request_json, row.cache_key) for row in conn.execute(query)]


def owner_is_live(db: Database, owner: str) -> bool:
    """True while ``owner`` holds an unexpired search claim: its own search or a helper's claim.

    Both are renewed by the worker's heartbeat, so a worker that stops renewing (died) is
    reported dead after one lease.
    """
    with db.read() as conn:
        found = conn.execute(
            select(_CLAIMS.c.cache_key)
            .where(_CLAIMS.c.owner == owner, _CLAIMS.c.expires_at >= utc_now())
            .limit(1)
        ).first()
    return found is not None
