"""Batch tuning jobs over real processes: a ``tiler serve`` server and ``tiler worker`` workers
sharing one database - a SQLite file, or a fresh schema of the test PostgreSQL (skipped when it
is absent, mandatory when ``TILER_REQUIRE_POSTGRES=1``).

Shapes are tiny and the budget is 0 (screening and baselines), so a 200-shape job takes seconds;
leases are 2 s so that a killed worker's shape is claimed again quickly.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from app.db.engine import make_engine
from tests.app._server import BACKENDS, REPO, Server, database_url, running_server

LEASE_S = 2.0
JOB_ENV = {
    # The server runs no job worker of its own: these tests count what `tiler worker`s do.
    "TILER_JOB_WORKERS": "0",
    "TILER_SEARCH_EXECUTOR": "thread",
    "TILER_DEFAULT_BUDGET": "0",
    "TILER_JOB_LEASE_S": str(LEASE_S),
    "TILER_JOB_HEARTBEAT_S": "0.4",
    "TILER_JOB_POLL_S": "0.05",
    "TILER_JOB_EVENTS_POLL_S": "0.05",
    "TILER_JOB_MAX_PROBLEMS": "250",
    "TILER_CLAIM_POLL_S": "0.02",
}


@dataclass
class Deployment:
    """A server and the database URL its workers use."""

    server: Server
    db_url: str
    tmp: Path

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            **JOB_ENV,
            "TILER_DATABASE_URL": self.db_url,
            "OMP_NUM_THREADS": "1",
        }

    def start_worker(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = self.tmp / f"worker-{name}-{time.monotonic_ns()}.log"
        with log.open("wb") as out:
            return subprocess.Popen(
                [sys.executable, "-m", "app.cli", "worker", "--poll-s", "0.05", *args],
                cwd=REPO,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def sql(self, query: str, **params: Any) -> list[Any]:
        engine = make_engine(self.db_url)
        try:
            with engine.connect() as conn:
                return list(conn.execute(text(query), params).all())
        finally:
            engine.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp(f"jobs-{request.param}")
    with database_url(request.param, tmp) as url:
        env = {**JOB_ENV, "TILER_DATABASE_URL": url}
        with running_server(tmp, env) as server:
            yield Deployment(server, url, tmp)


def _stop(*procs: subprocess.Popen[bytes]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _shapes(count: int, k: int) -> list[dict[str, Any]]:
    """``count`` distinct tiny problems (K tells the tests' shapes apart): ~40 ms each."""
    return [{"m": i + 1, "n": 16, "k": k} for i in range(count)]


def _wait_for(
    client: httpx.Client,
    job_id: str,
    done: int,
    timeout_s: float,
    workers: tuple[subprocess.Popen[bytes], ...] = (),
) -> dict[str, Any]:
    """Polls the job until ``done`` shapes finished or it is final; returns the summary.

    Fails at once when every one of ``workers`` has exited (nothing would ever finish).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        if workers and all(w.poll() is not None for w in workers):
            pytest.fail(f"every worker exited: {[w.returncode for w in workers]} (see logs)")
        job = client.get(f"/v1/tuning-jobs/{job_id}", params={"results": "false"}).json()
        progress = job["progress"]
        finished = progress["done"] + progress["failed"]
        if finished >= done or job["status"] in ("succeeded", "failed", "cancelled"):
            return job
        assert time.monotonic() < deadline, f"job stuck at {job}"
        time.sleep(0.05)


def _running_item_of(deployment: Deployment, pid: int) -> int | None:
    rows = deployment.sql(
        "SELECT id FROM job_items WHERE status = 'running' AND lease_owner LIKE :owner",
        owner=f"%:{pid}:%",
    )
    return int(rows[0][0]) if rows else None


def test_200_shapes_two_workers_one_killed_each_shape_exactly_once(
    deployment: Deployment,
) -> None:
    shapes = _shapes(200, k=16)
    with deployment.server.client() as client:
        submitted = client.post("/v1/tuning-jobs", json={"problems": shapes, "budget": 0})
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        assert submitted.headers["location"] == f"/v1/tuning-jobs/{job_id}"
        assert submitted.json()["status"] == "queued"
        assert submitted.json()["progress"]["total"] == 200

        victim = deployment.start_worker("victim")
        survivor = deployment.start_worker("survivor")
        try:
            _wait_for(client, job_id, done=30, timeout_s=90, workers=(victim, survivor))
            # Freeze the victim so that the shape it holds cannot finish, then kill it there:
            # it dies mid-shape, holding a lease that nobody renews.
            held = None
            for _ in range(200):
                os.kill(victim.pid, signal.SIGSTOP)
                held = _running_item_of(deployment, victim.pid)
                if held is not None:
                    break
                os.kill(victim.pid, signal.SIGCONT)
                time.sleep(0.01)
            assert held is not None, "the victim never held a shape"
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(timeout=10)
            killed_at = time.monotonic()

            final = _wait_for(client, job_id, done=200, timeout_s=120, workers=(survivor,))
            assert final["status"] == "succeeded", final
            assert final["progress"] == {
                "total": 200, "done": 200, "failed": 0, "cancelled": 0, "remaining": 0,
            }  # fmt: skip
            # The held shape went to the survivor only after the lease ran out.
            (attempts,) = deployment.sql("SELECT attempts FROM job_items WHERE id = :id", id=held)
            assert attempts[0] == 2
            assert time.monotonic() - killed_at >= LEASE_S * 0.5

            job = client.get(f"/v1/tuning-jobs/{job_id}").json()
            results = job["results"]
            # Exactly one result per shape, in submission order, for the shape submitted.
            assert [r["position"] for r in results] == list(range(200))
            for shape, result in zip(shapes, results, strict=True):
                assert result["status"] == "done"
                assert {k: result["problem"][k] for k in ("m", "n", "k")} == shape
                assert result["tiling"]["M"] == shape["m"]
                assert result["tiling"]["Ka"] == shape["k"]
                assert len(result["id"]) == 24
            # Each shape was recorded once: one progress event per shape, no double count.
            progress_events = deployment.sql(
                "SELECT count(*) FROM job_events WHERE job_id = :job AND type = 'progress'",
                job=job_id,
            )
            assert progress_events[0][0] == 200

            # The results are the synchronous API's cache: the same request through
            # tilings:tune is a hit with the same id, and a new job of known shapes costs no
            # search.
            direct = client.post("/v1/tilings:tune", json={"problem": shapes[7], "budget": 0})
            assert direct.json()["cached"] is True
            assert direct.json()["id"] == results[7]["id"]
            again = client.post("/v1/tuning-jobs", json={"problems": shapes[:5], "budget": 0})
            again_id = again.json()["id"]
            repeat = _wait_for(client, again_id, done=5, timeout_s=30, workers=(survivor,))
            assert repeat["status"] == "succeeded"
            repeated = client.get(f"/v1/tuning-jobs/{again_id}").json()["results"]
            assert [r["cached"] for r in repeated] == [True] * 5
            assert [r["id"] for r in repeated] == [r["id"] for r in results[:5]]
        finally:
            _stop(victim, survivor)


def test_cancel_stops_further_shapes(deployment: Deployment) -> None:
    shapes = _shapes(120, k=32)
    with deployment.server.client() as client:
        job_id = client.post("/v1/tuning-jobs", json={"problems": shapes}).json()["id"]
        worker = deployment.start_worker("cancel")
        try:
            _wait_for(client, job_id, done=5, timeout_s=60, workers=(worker,))
            cancelled = client.post(f"/v1/tuning-jobs/{job_id}:cancel")
            assert cancelled.status_code == 200, cancelled.text
            at_cancel = cancelled.json()
            assert at_cancel["status"] == "cancelled"
            progress = at_cancel["progress"]
            assert progress["done"] >= 5
            assert progress["cancelled"] > 0
            assert progress["done"] + progress["cancelled"] == 120
            assert progress["remaining"] == 0

            # The worker keeps running but takes no further shape of the job.
            time.sleep(1.0)
            later = client.get(f"/v1/tuning-jobs/{job_id}").json()
            assert later["progress"] == progress
            assert len(later["results"]) == progress["done"]
            running = deployment.sql(
                "SELECT count(*) FROM job_items WHERE job_id = :job AND status IN "
                "('queued', 'running')",
                job=job_id,
            )
            assert running[0][0] == 0
            # Cancelling again changes nothing.
            assert client.post(f"/v1/tuning-jobs/{job_id}:cancel").json() == at_cancel
            assert client.post(f"/v1/tuning-jobs/{'0' * 32}:cancel").status_code == 404
        finally:
            _stop(worker)


def _read_events(response: httpx.Response, stop_after: int | None) -> list[dict[str, Any]]:
    """Parses SSE messages until ``stop_after`` messages (None: until the stream ends)."""
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line in response.iter_lines():
        if line == "":
            if "data" in current:
                events.append(current)
                if stop_after is not None and len(events) >= stop_after:
                    return events
            current = {}
        elif line.startswith(":") or line.startswith("retry:"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.strip()
            current[name] = json.loads(value) if name == "data" else value
    return events


def test_events_arrive_in_order_and_resume_after_reconnect(deployment: Deployment) -> None:
    # Eleven shapes and one that no tiling can serve (K > 65535 with a non-transposed ND A).
    shapes = [*_shapes(11, k=48), {"m": 16, "n": 16, "k": 70_000}]
    with deployment.server.client() as client:
        job_id = client.post("/v1/tuning-jobs", json={"problems": shapes}).json()["id"]
        url = f"/v1/tuning-jobs/{job_id}/events"
        worker = deployment.start_worker("events")
        try:
            with client.stream("GET", url) as first:
                assert first.status_code == 200
                assert first.headers["content-type"].startswith("text/event-stream")
                # queued, started and three progress events; then the connection drops.
                head = _read_events(first, stop_after=5)
            last_id = head[-1]["id"]
            with client.stream("GET", url, headers={"Last-Event-ID": last_id}) as resumed:
                tail = _read_events(resumed, stop_after=None)
        finally:
            _stop(worker)
        events = head + tail
        assert [int(e["id"]) for e in events] == list(range(1, len(events) + 1))
        assert int(tail[0]["id"]) == int(last_id) + 1
        types = [e["event"] for e in events]
        assert types == ["queued", "started", *["progress"] * 12, "finished"]
        finished_counts = [e["data"]["done"] + e["data"]["failed"] for e in events[2:-1]]
        assert finished_counts == list(range(1, 13))
        assert sorted(e["data"]["position"] for e in events[2:-1]) == list(range(12))
        assert events[-1]["data"]["status"] == "failed"
        assert events[-1]["data"]["failed"] == 1

        job = client.get(f"/v1/tuning-jobs/{job_id}").json()
        assert job["status"] == "failed"
        bad = job["results"][11]
        assert bad["status"] == "failed"
        assert bad["error"]["type"] == "/problems/infeasible-problem"
        assert "ND_A_KA_RANGE" in {v["id"] for v in bad["error"]["violations"]}
        # A finished job's stream replays its log and ends.
        with client.stream("GET", url, params={"after": len(events) - 1}) as replay:
            assert [e["event"] for e in _read_events(replay, None)] == ["finished"]


def test_idempotent_retry_returns_the_same_job(deployment: Deployment) -> None:
    body = {"problems": _shapes(3, k=64), "budget": 0, "seed": 3}
    # The same request spelled out: defaults written, keys in another order.
    spelled = {
        "seed": 3,
        "budget": 0,
        "sampler": "tpe",
        "problems": [{**p, "dtype": "fp16", "soc": "Ascend910B2"} for p in body["problems"]],
    }
    with deployment.server.client() as client:
        key = {"Idempotency-Key": f"build-{time.monotonic_ns()}"}
        first = client.post("/v1/tuning-jobs", json=body, headers=key)
        retry = client.post("/v1/tuning-jobs", json=spelled, headers=key)
        other = client.post("/v1/tuning-jobs", json={**body, "seed": 4}, headers=key)
        unkeyed = client.post("/v1/tuning-jobs", json=body)

        # Concurrent first submissions with one new key make one job.
        race_key = {"Idempotency-Key": f"race-{time.monotonic_ns()}"}
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            raced = list(
                pool.map(
                    lambda _: client.post("/v1/tuning-jobs", json=body, headers=race_key),
                    range(6),
                )
            )
        bad = client.post(
            "/v1/tuning-jobs", json={"problems": [*body["problems"], {"m": 0, "n": 1, "k": 1}]}
        )
        too_many = client.post("/v1/tuning-jobs", json={"problems": _shapes(251, k=96)})
        listed = client.get("/v1/tuning-jobs", params={"status": "queued", "limit": 1}).json()
        next_page = client.get(
            "/v1/tuning-jobs", params={"status": "queued", "limit": 1,
                                       "cursor": listed["next_cursor"]},
        ).json()  # fmt: skip

    assert first.status_code == 202, first.text
    assert retry.status_code == 202
    assert retry.json()["id"] == first.json()["id"]
    assert retry.headers["location"] == first.headers["location"]
    assert retry.headers["idempotent-replayed"] == "true"
    assert other.status_code == 422
    assert other.headers["content-type"] == "application/problem+json"
    assert other.json()["errors"][0]["field"] == "Idempotency-Key"
    assert first.json()["id"] in other.json()["detail"]
    assert unkeyed.json()["id"] != first.json()["id"]
    assert {r.status_code for r in raced} == {202}
    assert len({r.json()["id"] for r in raced}) == 1

    assert bad.status_code == 422
    assert bad.headers["content-type"] == "application/problem+json"
    assert [e["field"] for e in bad.json()["errors"]] == ["problems.3.m"]
    assert too_many.status_code == 422
    assert too_many.json()["errors"][0]["rule"] == "max_problems"
    assert too_many.json()["errors"][0]["limit"] == 250

    # Newest first, one per page, following the cursor.
    assert len(listed["items"]) == 1
    assert listed["items"][0]["id"] == raced[0].json()["id"]
    assert next_page["items"][0]["id"] == unkeyed.json()["id"]
