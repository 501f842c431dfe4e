"""The tables of batch tuning jobs: the job, one item per shape, the job's events, idempotency.

A job is both the user-facing resource and the work queue (no broker):

* ``jobs`` - one row per ``POST /v1/tuning-jobs``: status, the progress counters, and
  ``event_count``, the number of the job's last event. Progress and events are updated in the
  same transaction as the item that finished, so they never disagree.
* ``job_items`` - one row per shape. Workers claim items (``BEGIN IMMEDIATE`` on SQLite,
  ``FOR UPDATE SKIP LOCKED`` on PostgreSQL) under a lease that their heartbeat renews; an item
  whose lease expired is claimed again (its worker died). The answer itself is stored once, in the
  tuning cache (``tuning_results``), under the item's ``cache_key``; the item keeps the result's
  public id, or the error of a shape that has no answer.
* ``job_events`` - the job's progress as an ordered log, numbered per job from 1, the ids of the
  Server-Sent Events stream (a client resumes with ``Last-Event-ID``). The number is taken from
  ``jobs.event_count`` inside the writing transaction: that row lock orders the events of a job
  in commit order, which a global sequence would not on PostgreSQL (a reader could see 11 before
  10 commits, and skip 10 on resume).
* ``idempotency_keys`` - ``Idempotency-Key`` header -> the job it created and the hash of the
  normalized request, so a retried submission returns the same job.

JSON documents are text, as in :mod:`app.db.models` (same bytes from either database).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime

#: Autoincrementing keys: SQLite only autoincrements ``INTEGER PRIMARY KEY``.
_SeqType = BigInteger().with_variant(Integer(), "sqlite")

#: Job statuses; the last three are final.
JOB_STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")
#: Item statuses; ``done``, ``failed`` and ``cancelled`` are final.
ITEM_STATUSES = ("queued", "running", "done", "failed", "cancelled")


class Job(Base):
    """A batch tuning job.

    Attributes:
        seq: Insertion order; the cursor of ``GET /v1/tuning-jobs`` pages over it.
        id: The public id (32 hex digits, random).
        status: ``queued``, ``running``, ``succeeded`` (every shape answered), ``failed`` (every
            shape finished and at least one has an error) or ``cancelled``.
        total: Number of shapes.
        done: Shapes answered (from the cache or by a search).
        failed: Shapes finished with an error.
        cancelled: Shapes not run because the job was cancelled.
        event_count: Number of the job's last event (events are numbered from 1).
        budget: Search budget of every shape; None: the tuner's default (16 trials, stopped
            early on large kernels), as ``tilings:tune`` without a budget.
        sampler: Optuna sampler of every shape.
        seed: Search seed of every shape.
        request_hash: SHA-256 of the normalized request (idempotency compares it).
        created_at: Submission time.
        started_at: When a worker claimed the first shape.
        finished_at: When the last shape finished, or the job was cancelled.
        calibration: The calibration profile choice of every shape (``default``, ``active`` or
            a calibration id), as submitted.
    """

    __tablename__ = "jobs"

    seq: Mapped[int] = mapped_column(_SeqType, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(32), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    total: Mapped[int] = mapped_column(Integer)
    done: Mapped[int] = mapped_column(Integer)
    failed: Mapped[int] = mapped_column(Integer)
    cancelled: Mapped[int] = mapped_column(Integer)
    event_count: Mapped[int] = mapped_column(Integer)
    budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    sampler: Mapped[str] = mapped_column(String(16))
    seed: Mapped[int] = mapped_column(BigInteger)
    request_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
    started_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    calibration: Mapped[str] = mapped_column(String(32), server_default="default")

    __table_args__ = (Index("ix_jobs_status_seq", "status", "seq"),)


class JobItem(Base):
    """One shape of a job: a unit of work with a lease.

    Attributes:
        id: Global insertion order: workers claim the oldest claimable item first (FIFO over
            jobs).
        job_id: The job.
        position: Index of the shape in the submitted ``problems`` list.
        status: ``queued``, ``running`` (claimed), ``done``, ``failed`` or ``cancelled``.
        request_json: The canonical tune request of the shape (problem with defaults filled,
            budget, sampler, seed), as JSON text.
        cache_key: Its key in the tuning cache (``tuning_results.cache_key``).
        result_id: Public id of the cached answer (``GET /v1/tilings/{id}``) once done.
        cached: True when the answer was already in the cache when a worker reached the shape.
        error_json: The problem document of a failed shape (type, title, detail, ...).
        lease_owner: ``host:pid:random`` of the worker holding the claim.
        lease_expires_at: The lease; after it passes, another worker may claim the item.
        heartbeat_at: The holder's last heartbeat.
        attempts: How many times a worker claimed the item (more than one: a worker died).
        started_at: Last claim time.
        finished_at: When it reached a final status.
        calibration_id: The calibration profile the shape is priced with, resolved when the job
            was submitted (``active`` is the SoC's active profile then); None: the packaged
            constants.
    """

    __tablename__ = "job_items"

    id: Mapped[int] = mapped_column(_SeqType, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(String(32), ForeignKey("jobs.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    request_json: Mapped[str] = mapped_column(Text)
    cache_key: Mapped[str] = mapped_column(String(64))
    result_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    cached: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    error_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    lease_owner: Mapped[str | None] = mapped_column(String(128), nullable=True)
    lease_expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    calibration_id: Mapped[str | None] = mapped_column(String(24), nullable=True)

    __table_args__ = (
        Index("ix_job_items_job_id_position", "job_id", "position", unique=True),
        # The claim query: queued items, or running ones with an expired lease, oldest first.
        Index("ix_job_items_status_id", "status", "id"),
        Index("ix_job_items_lease_owner", "lease_owner"),
    )


class JobEvent(Base):
    """One event of a job (an SSE message).

    Attributes:
        job_id: The job.
        number: Position in the job's log, from 1 (the SSE ``id``).
        type: ``queued``, ``started``, ``progress``, ``cancelled`` or ``finished``.
        data_json: The event's data, JSON text (the SSE ``data``).
        created_at: When it was written.
    """

    __tablename__ = "job_events"

    job_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    type: Mapped[str] = mapped_column(String(16))
    data_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)


class IdempotencyKey(Base):
    """An ``Idempotency-Key`` of a job submission.

    Attributes:
        key: The header's value.
        request_hash: SHA-256 of the normalized request it came with.
        job_id: The job that submission created.
        created_at: When; keys older than ``TILER_JOB_IDEMPOTENCY_TTL_S`` are forgotten.
    """

    __tablename__ = "idempotency_keys"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    job_id: Mapped[str] = mapped_column(String(32), ForeignKey("jobs.id", ondelete="CASCADE"))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
