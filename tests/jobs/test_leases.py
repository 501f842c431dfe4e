"""The claim protocol on a real database (SQLite file or PostgreSQL schema), without processes:
expired leases are claimed again, a worker that lost its lease cannot record a result, and a
shape whose workers keep dying fails instead of blocking its job.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.db.engine import Database
from app.jobs import store
from app.jobs.service import JobService, prepare_job
from app.schemas import JobBody
from app.settings import Settings
from tests.app._server import BACKENDS, migrated_database


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with migrated_database(request.param, tmp_path) as database:
        yield database


def _submit(db: Database, count: int) -> str:
    settings = Settings(database_url="sqlite://")
    body = JobBody.model_validate(
        {"problems": [{"m": i + 1, "n": 16, "k": 16} for i in range(count)], "budget": 0}
    )
    prepared = prepare_job(body, settings)
    job, created = JobService(db, settings).submit(prepared, None)
    assert created
    return job.id


def test_expired_lease_is_claimed_again_and_the_old_owner_cannot_record(db: Database) -> None:
    job_id = _submit(db, 2)
    first = store.claim_items(db, "a", lease_s=0.2, limit=1, max_attempts=3)
    assert [(c.position, c.attempts) for c in first] == [(0, 1)]
    # While "a" holds shape 0 under a live lease, "b" gets the next shape, not shape 0.
    other = store.claim_items(db, "b", lease_s=30, limit=1, max_attempts=3)
    assert [c.position for c in other] == [1]

    time.sleep(0.3)  # "a" stopped renewing (it died)
    taken = store.claim_items(db, "b", lease_s=30, limit=1, max_attempts=3)
    assert [(c.position, c.attempts) for c in taken] == [(0, 2)]
    # "a" comes back late: its result is refused, so the shape is recorded once.
    assert not store.finish_item(db, first[0], "a", result_id="x" * 24, cached=False)
    assert store.finish_item(db, taken[0], "b", result_id="y" * 24, cached=False)
    assert store.finish_item(db, other[0], "b", result_id="z" * 24, cached=True)

    job = store.find_job(db, job_id)
    assert job is not None
    assert (job.status, job.progress.done, job.progress.failed) == ("succeeded", 2, 0)
    results = store.finished_items(db, job_id, after_position=-1, limit=None)
    assert [(r.position, r.id) for r in results] == [(0, "y" * 24), (1, "z" * 24)]


def test_heartbeat_keeps_a_lease(db: Database) -> None:
    _submit(db, 1)
    held = store.claim_items(db, "a", lease_s=0.3, limit=1, max_attempts=3)
    for _ in range(4):
        time.sleep(0.1)
        assert store.renew_leases(db, "a", 0.3) == 1
    assert store.claim_items(db, "b", lease_s=30, limit=1, max_attempts=3) == []
    assert store.finish_item(db, held[0], "a", result_id="x" * 24, cached=False)


def test_a_shape_that_keeps_losing_its_worker_fails_and_the_job_ends(db: Database) -> None:
    job_id = _submit(db, 1)
    for attempt in (1, 2):
        claimed = store.claim_items(db, f"w{attempt}", lease_s=0.05, limit=1, max_attempts=2)
        assert [c.attempts for c in claimed] == [attempt]
        time.sleep(0.1)
    assert store.claim_items(db, "w3", lease_s=30, limit=1, max_attempts=2) == []
    job = store.find_job(db, job_id)
    assert job is not None
    assert (job.status, job.progress.done, job.progress.failed) == ("failed", 0, 1)
    (result,) = store.finished_items(db, job_id, after_position=-1, limit=None)
    assert result.error is not None
    assert "worker lost" in result.error.detail
    events = store.events_after(db, job_id, 0)
    assert [e.type for e in events] == ["queued", "started", "progress", "finished"]


def test_a_job_read_as_finished_lists_every_shape(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker records the last shape just after the service has listed the results and just
    # before it reads the job: the job reads "succeeded", so its last shape must be listed too
    # (a client polling until the status is final read an empty list).
    job_id = _submit(db, 1)
    (claimed,) = store.claim_items(db, "a", lease_s=30, limit=1, max_attempts=3)
    listed = store.finished_items
    lists: list[int] = []

    def a_shape_finishes_after_listing(*args: Any, **kwargs: Any) -> Any:
        rows = listed(*args, **kwargs)
        if not lists:
            assert store.finish_item(db, claimed, "a", result_id="y" * 24, cached=False)
        lists.append(len(rows))
        return rows

    monkeypatch.setattr(store, "finished_items", a_shape_finishes_after_listing)
    resource = JobService(db, Settings(database_url="sqlite://")).resource(
        job_id, with_results=True
    )
    assert resource.status == "succeeded"
    assert resource.results is not None
    assert [r.position for r in resource.results] == [0]
    assert lists == [0, 1]  # listed again once the job counted the shape
