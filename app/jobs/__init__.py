"""Batch tuning jobs: many shapes tuned by worker processes that share one database.

* :mod:`app.jobs.store` - the queries: submit, read, cancel, and the workers' claim protocol
  (lease, heartbeat, finish), on SQLite (``BEGIN IMMEDIATE``) and PostgreSQL
  (``FOR UPDATE SKIP LOCKED``);
* :mod:`app.jobs.service` - what the routes call: validation, idempotency, the job resource
  and its Server-Sent Events;
* :mod:`app.jobs.worker` - ``tiler worker``: claim, tune through the shared cache, record;
* :mod:`app.jobs.embedded` - the same workers inside ``tiler serve`` (``--job-workers N``).
"""

from app.jobs.service import JobService, prepare_job
from app.jobs.worker import Worker, WorkerStats

__all__ = ["JobService", "Worker", "WorkerStats", "prepare_job"]
