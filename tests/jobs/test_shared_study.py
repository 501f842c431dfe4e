"""One shape's search split across two ``tiler worker`` processes sharing one Optuna study.

PostgreSQL only (skipped when the test server is absent, mandatory with
``TILER_REQUIRE_POSTGRES=1``): the service's tables in one fresh schema, Optuna's in another.
A job of one shape with a budget above ``TILER_JOB_SHARED_MIN_BUDGET`` is claimed by one
worker (the lead); the other, idle, runs slices of the same study. The trials recorded in
Optuna's storage must come from both workers and total the budget, and the shape's result must
be written once and be the best trial of the study.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.trial import TrialState

from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.tiling.problem import parse_problem
from simcore.tiling.tcube import build_tiling
from tests.app._server import REPO, postgres_schema_url, running_server
from tests.jobs.test_jobs import JOB_ENV, Deployment, _stop

BUDGET = 64
# About 50 ms per simulated trial: 64 trials outlast the helper's start.
PROBLEM = {"m": 1024, "n": 2048, "k": 4096, "dtype": "fp16"}


def _start_worker(deployment: Deployment, study_url: str, name: str) -> subprocess.Popen[bytes]:
    log = deployment.tmp / f"worker-{name}.log"
    env = {
        **deployment.env,
        "TILER_JOB_SHARED_STUDY_URL": study_url,
        "TILER_JOB_SHARED_MIN_BUDGET": "32",
        "TILER_JOB_SHARED_WAIT_S": "60",
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker", "--poll-s", "0.05"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _pid(worker_id: str) -> int:
    return int(worker_id.split(":")[1])  # host:pid:random


@pytest.mark.postgres
def test_two_workers_share_one_study(tmp_path: Path) -> None:
    with postgres_schema_url() as db_url, postgres_schema_url() as study_url:
        env = {**JOB_ENV, "TILER_DATABASE_URL": db_url}
        with running_server(tmp_path, env) as server:
            deployment = Deployment(server, db_url, tmp_path)
            workers = [_start_worker(deployment, study_url, n) for n in ("a", "b")]
            try:
                with server.client() as client:
                    created = client.post(
                        "/v1/tuning-jobs",
                        json={"problems": [PROBLEM], "budget": BUDGET, "seed": 1},
                    )
                    assert created.status_code == 202, created.text
                    job = _wait_final(client, created.json()["id"], workers)
            finally:
                _stop(*workers)
            assert job["status"] == "succeeded", job
            (entry,) = job["results"]
            [(cache_key,)] = deployment.sql("SELECT cache_key FROM job_items")
            [(stored,)] = deployment.sql(
                "SELECT count(*) FROM tuning_results WHERE cache_key = :k", k=cache_key
            )
            assert stored == 1  # written once

            storage = optuna.storages.RDBStorage(study_url)
            try:
                study = optuna.load_study(study_name=f"tiler-job-{cache_key}", storage=storage)
                trials = study.get_trials(deepcopy=False)
            finally:
                storage.engine.dispose()  # no connection left open after the schema is dropped
            assert len(trials) == BUDGET
            assert all(t.state == TrialState.COMPLETE for t in trials)
            per_pid: dict[int, int] = {}
            for t in trials:
                pid = _pid(t.user_attrs["tiler_worker"])
                per_pid[pid] = per_pid.get(pid, 0) + 1
            # Both workers (these processes, not threads of one) ran trials.
            assert set(per_pid) == {w.pid for w in workers}, per_pid
            assert sum(per_pid.values()) == BUDGET

            _assert_answer_is_best_trial(entry, trials)


def _wait_final(client: Any, job_id: str, workers: list[subprocess.Popen[bytes]]) -> Any:
    deadline = time.monotonic() + 90
    while True:
        if all(w.poll() is not None for w in workers):
            pytest.fail(f"every worker exited: {[w.returncode for w in workers]} (see logs)")
        job = client.get(f"/v1/tuning-jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "cancelled"):
            return job
        assert time.monotonic() < deadline, f"job stuck at {job['progress']}"
        time.sleep(0.1)


def _assert_answer_is_best_trial(entry: dict[str, Any], trials: list[Any]) -> None:
    legal = [t for t in trials if t.user_attrs["tiler_legal"]]
    best = min(legal, key=lambda t: (t.value, sorted(t.user_attrs["tiler_fields"].items())))
    fields = best.user_attrs["tiler_fields"]
    answer = {k: entry["tiling"][k] for k in fields}
    source = entry["explanation"]["answer_source"]
    if source.startswith("baseline") or source.startswith("screening near-tie"):
        # A baseline or a re-ranked near-tie of the screening (simulated before the study,
        # not a trial) beat every trial: it must really be at least as fast as the best one.
        problem = parse_problem(PROBLEM)
        tiling = build_tiling(entry["tiling"])
        assert simulate(problem, tiling, load_preset(problem.soc)).time_us <= best.value
    else:
        assert answer == fields, json.dumps({"answer": answer, "best": fields})


def test_sqlite_study_url_is_refused(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TILER_DATABASE_URL": f"sqlite:///{tmp_path / 'tiler.db'}",
        "TILER_JOB_SHARED_STUDY_URL": f"sqlite:///{tmp_path / 'optuna.db'}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "worker", "--once", "--schema-wait-s", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "TILER_JOB_SHARED_STUDY_URL must be a PostgreSQL URL" in done.stderr
    assert "Traceback" not in done.stderr
