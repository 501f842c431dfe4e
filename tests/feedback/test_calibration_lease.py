"""A calibration whose process dies is reported as interrupted, not ``running`` forever.

The server runs a calibration as a background job. Killed mid-fit (``kill -9``, the OOM killer,
a restart), it used to leave the job ``running`` for good: a client polling it waited forever.
Now the job holds a lease its process renews, and a reader sees a job whose lease ran out as
``failed`` with an ``interrupted`` error. A fit that runs longer than its lease is not touched.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.db import feedback_repository as frepo
from app.db.engine import Database
from app.feedback.csv_import import parse_csv
from app.feedback.measurements import prepare_batch
from app.feedback.profiles import JobLease, run_calibration
from tests.app._server import BACKENDS, migrated_database, start_server, wait_until
from tests.feedback.test_feedback_api import SHARED_CSV, import_shared_csv

SOC = "Ascend910B1"
#: Short enough that a test waits a few seconds for an expiry; renewed five times per lease.
LEASE = JobLease(lease_s=1.0, heartbeat_s=0.2)


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with migrated_database(request.param, tmp_path) as database:
        yield database


def _import_shared(db: Database) -> None:
    # The importer's steps as the API and CLI take them.
    rows, _ = parse_csv(SHARED_CSV.read_text(encoding="utf-8-sig"), SHARED_CSV.name)
    kind, data = prepare_batch([(r.measurement, r.source, r.options) for r in rows])
    assert kind == "ok", data
    frepo.insert_measurements(db, data[0])


def test_a_fit_longer_than_its_lease_keeps_running_and_finishes(db: Database) -> None:
    _import_shared(db)
    request = {"soc": SOC, "constants": None, "folds": 2, "seed": 0}
    cal_id = frepo.create_calibration(db, SOC, request, "test", LEASE.lease_s)
    release = threading.Event()

    def slow_runner(fn: Any, *args: Any) -> Any:
        # The real fit, held back until the lease has run out three times over.
        release.wait(30)
        return fn(*args)

    job = threading.Thread(target=run_calibration, args=(db, cal_id, request, slow_runner, LEASE))
    job.start()
    try:

        def started() -> bool:
            cal = frepo.get_calibration(db, cal_id)
            return cal is not None and cal["status"] == "running"

        wait_until(started, 30)
        deadline = time.monotonic() + 3 * LEASE.lease_s
        while time.monotonic() < deadline:
            frepo.expire_calibrations(db)  # what every reader does
            cal = frepo.get_calibration(db, cal_id)
            assert cal is not None and cal["status"] == "running", cal
            time.sleep(0.1)
    finally:
        release.set()
        job.join(60)
    cal = frepo.get_calibration(db, cal_id)
    assert cal is not None
    assert cal["status"] == "done", cal["error"]
    assert cal["profile"] is not None


def test_a_queued_job_nobody_runs_reads_as_interrupted(db: Database) -> None:
    request = {"soc": SOC, "constants": None, "folds": 2, "seed": 0}
    cal_id = frepo.create_calibration(db, SOC, request, "test", LEASE.lease_s)
    assert frepo.expire_calibrations(db) == 0
    time.sleep(LEASE.lease_s + 0.2)
    assert frepo.expire_calibrations(db) == 1
    cal = frepo.get_calibration(db, cal_id)
    assert cal is not None
    assert cal["status"] == "failed"
    assert cal["error"].startswith("interrupted")
    # A process that wakes up late does not run it, and cannot overwrite the outcome.
    run_calibration(db, cal_id, request, lambda fn, *a: pytest.fail("ran"), LEASE)
    assert not frepo.finish_calibration(
        db, cal_id, profile=None, digest=None, report=None, activatable=None, error="late"
    )
    cal = frepo.get_calibration(db, cal_id)
    assert cal is not None and cal["error"].startswith("interrupted")


def test_server_killed_mid_fit_leaves_an_interrupted_job(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tiler.db'}"
    env = {"TILER_DATABASE_URL": url, "TILER_SEARCH_WORKERS": "1"}
    first = start_server(tmp_path, env, name="first")
    try:
        with first.client() as client:
            import_shared_csv(client)
            # Twenty folds: a fit of tens of seconds, to be killed in.
            cal_id = client.post("/v1/calibrations", json={"soc": SOC, "folds": 20}).json()["id"]

            def running() -> bool:
                return bool(client.get(f"/v1/calibrations/{cal_id}").json()["status"] == "running")

            wait_until(running, 60)
        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait(timeout=10)
    finally:
        first.stop()
    second = start_server(tmp_path, env, name="second")
    try:
        with second.client() as client:
            # The default lease (TILER_JOB_LEASE_S, 6 s) has run out well within 20 s.
            def finished() -> bool:
                cal = client.get(f"/v1/calibrations/{cal_id}").json()
                return bool(cal["status"] != "running")

            wait_until(finished, 20, poll_s=0.5)
            cal = client.get(f"/v1/calibrations/{cal_id}").json()
            listed = client.get("/v1/calibrations", params={"soc": SOC}).json()
    finally:
        second.stop()
    assert cal["status"] == "failed"
    assert cal["error"].startswith("interrupted"), cal["error"]
    assert cal["finished_at"] is not None
    assert [c["status"] for c in listed if c["id"] == cal_id] == ["failed"]
