"""The smaller operator-facing rules, on a real server: an empty token is a start-up error, the
``Bearer`` scheme name is case-insensitive, and a pin no tiling can meet is refused before any
search (and is not counted as one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.app._server import REPO, Server, free_port, running_server

TOKEN = "Edge-Token"
GEMM = {"soc": "Ascend910A", "m": 4096, "n": 28672, "k": 8192, "dtype": "fp16"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"TILER_SEARCH_EXECUTOR": "thread", "TILER_JOB_WORKERS": "0", "TILER_API_TOKEN": TOKEN}
    with running_server(tmp_path_factory.mktemp("edges"), env) as srv:
        yield srv


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_token_is_refused_at_start(tmp_path: Path, value: str) -> None:
    env = {**os.environ, "TILER_DATA_DIR": str(tmp_path), "TILER_API_TOKEN": value}
    started = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(free_port())],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 2
    assert "TILER_API_TOKEN is set but empty" in started.stderr
    assert "unset it" in started.stderr
    assert "Traceback" not in started.stderr


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_scheme_name_is_case_insensitive(server: Server, scheme: str) -> None:
    body = {"problem": {"m": 64, "n": 64, "k": 64}, "tiling": {}}
    response = httpx.post(
        f"{server.url}/v1/tilings:validate",
        json=body,
        headers={"authorization": f"{scheme} {TOKEN}"},
        timeout=60,
    )
    # Past the token check: the body's missing tiling fields are what is refused.
    assert response.status_code == 422, response.text
    assert response.json()["type"] == "/problems/validation-error"


@pytest.mark.parametrize(
    "authorization",
    [f"Basic {TOKEN}", f"Bearer {TOKEN.lower()}", f"Bearer{TOKEN}", TOKEN, f"Bearer {TOKEN}x"],
)
def test_anything_else_is_refused(server: Server, authorization: str) -> None:
    response = httpx.post(
        f"{server.url}/v1/tilings:validate",
        json={},
        headers={"authorization": authorization},
        timeout=60,
    )
    assert response.status_code == 401


def test_an_impossible_pin_is_refused_before_any_search(server: Server) -> None:
    with server.client() as client:
        response = client.post(
            "/v1/tilings:tune", json={"problem": GEMM, "fixed": {"baseM": 4096, "baseN": 4096}}
        )
    assert response.status_code == 422, response.text
    fields = [e["field"] for e in response.json()["errors"]]
    assert fields == ["fixed.baseM"]
    assert server.metric("tiler_searches_total") == 0
    assert server.metric("tiler_searches_running") == 0


def test_a_large_jobs_bad_fields_are_all_named(server: Server) -> None:
    # Over 200 problems the body is validated in slices (off the event loop); the errors must
    # be the same as for a small one: every bad field, at its own index, and the other members.
    problems: list[dict[str, object]] = [{"m": 1 + i, "n": 64, "k": 64} for i in range(500)]
    problems[3] = {"m": 0, "n": 64, "k": 64}
    problems[401] = {"m": 8, "n": 64, "k": "many"}
    with server.client() as client:
        refused = client.post("/v1/tuning-jobs", json={"problems": problems, "budget": -1})
        accepted = client.post("/v1/tuning-jobs", json={"problems": problems[4:401], "budget": 0})
    assert refused.status_code == 422, refused.text
    fields = [e["field"] for e in refused.json()["errors"]]
    assert fields == ["problems.3.m", "problems.401.k", "budget"]
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["progress"]["total"] == 397
