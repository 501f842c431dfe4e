"""Measurement feedback over a real server on a real database (SQLite file and PostgreSQL):
top-k candidates, measurements (JSON and CSV), measured answers that win."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app._server import BACKENDS, REPO, database_url, running_server
from tiler.topk import KERNEL_FIELDS

# The repository's copy of ../shared/reference (tests/data/reference/README.md).
SHARED_CSV = REPO / "tests" / "data" / "reference" / "measured_msprof_910b1_8192.csv"


def import_shared_csv(client: httpx.Client) -> None:
    """Imports the shared 910B1 profiler file through ``POST /v1/measurements:import``."""
    imported = client.post(
        "/v1/measurements:import", content=SHARED_CSV.read_text(),
        headers={"content-type": "text/csv"},
    )  # fmt: skip
    assert imported.status_code == 201, imported.text


PROBLEM = {"soc": "Ascend910B2", "m": 256, "n": 256, "k": 256, "dtype": "fp16"}
REQUEST = {"problem": PROBLEM, "budget": 2, "seed": 1}


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as url:
        yield url


def _env(db_url: str) -> dict[str, str]:
    return {"TILER_DATABASE_URL": db_url, "TILER_SEARCH_EXECUTOR": "thread"}


def _count(client: httpx.Client, **params: Any) -> int:
    total, cursor = 0, None
    while True:
        query = {**params, "limit": 200, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/measurements", params=query).json()
        total += len(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return total


def test_candidates_are_distinct_ranked_and_explained(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
    with running_server(tmp_path, _env(url)) as server, server.client() as client:
        answer = client.post("/v1/tilings:tune", json=REQUEST).json()
        got = client.get(f"/v1/tilings/{answer['id']}/candidates", params={"k": 5})
        too_many = client.get(f"/v1/tilings/{answer['id']}/candidates", params={"k": 21})
    assert got.status_code == 200, got.text
    cands = got.json()["candidates"]
    assert len(cands) == 5
    kernels = {tuple(c["tiling"][f] for f in KERNEL_FIELDS) for c in cands}
    assert len(kernels) == 5, "candidates must differ in a kernel field"
    times = [c["estimate"]["time_us"] for c in cands]
    assert times == sorted(times)
    assert cands[0]["margin"] == 0 and cands[0]["differs"] is None
    assert any(c["answer"] for c in cands)
    for c in cands[1:]:
        assert c["margin"] == pytest.approx((c["estimate"]["time_us"] - times[0]) / times[0])
        assert c["differs"]["fields"], "a candidate names the fields it differs in"
        assert c["differs"]["largest_pipe_change"] in c["differs"]["pipe_busy_delta_us"]
    assert too_many.status_code == 422
    error = too_many.json()["errors"][0]
    assert error["field"].endswith("k") and "20" in str(error["limit"])


def test_measured_answer_wins_and_model_answer_stays_reachable(db_url: str, tmp_path: Path) -> None:
    with running_server(tmp_path, _env(db_url)) as server, server.client() as client:
        model = client.post("/v1/tilings:tune", json=REQUEST).json()
        assert model["source"] == "model"
        cands = client.get(f"/v1/tilings/{model['id']}/candidates", params={"k": 3}).json()
        other = next(c for c in cands["candidates"] if not c["answer"])
        measured_us = 0.5 * model["estimate"]["time_us"]
        posted = client.post(
            "/v1/measurements",
            json={
                "problem": PROBLEM,
                "tiling": other["tiling"],
                "measured": {"device_time_us": measured_us},
                "device": {"soc": "Ascend910B2", "cann_version": "8.0.RC3", "clock_mhz": 1800},
            },
        )
        # A slower measurement of the model's own kernel does not beat it.
        slower = client.post(
            "/v1/measurements",
            json={"problem": PROBLEM, "tiling": model["tiling"],
                  "measured": {"device_time_us": 2 * measured_us}},
        )  # fmt: skip
        again = client.post("/v1/tilings:tune", json=REQUEST).json()
        forced = client.post("/v1/tilings:tune", json={**REQUEST, "source": "model"}).json()
        stored = client.get(f"/v1/tilings/{model['id']}").json()
        stored_model = client.get(f"/v1/tilings/{model['id']}", params={"source": "model"}).json()
        listed = client.get("/v1/measurements", params={"tiling_id": model["id"]}).json()
        exported = client.get(f"/v1/tilings/{model['id']}/export").json()
        exported_model = client.get(
            f"/v1/tilings/{model['id']}/export", params={"source": "model"}
        ).json()
        header = client.get(f"/v1/tilings/{model['id']}/export", params={"format": "cpp"}).text
    assert posted.status_code == 201, posted.text
    item = posted.json()["items"][0]
    assert item["prediction"]["kind"] == "device_time_us"
    assert item["prediction"]["measured_us"] == measured_us
    assert slower.status_code == 201
    assert again["source"] == "measured"
    assert again["tiling"] == other["tiling"]
    assert again["measurement"]["id"] == item["id"]
    assert again["measurement"]["device"]["cann_version"] == "8.0.RC3"
    assert again["model_answer"]["tiling"] == model["tiling"]
    assert forced["source"] == "model" and forced["tiling"] == model["tiling"]
    assert stored["source"] == "measured" and stored["tiling"] == other["tiling"]
    assert stored_model["source"] == "model" and stored_model["tiling"] == model["tiling"]
    assert {m["id"] for m in listed["items"]} >= {item["id"]}
    assert exported == other["tiling"] and exported_model == model["tiling"]
    assert f"measured kernel {item['id']}" in header
    assert all(m["prediction"]["model_version"] == model["model_version"]
               for m in listed["items"])  # fmt: skip


def test_bad_csv_is_422_naming_row_and_column_and_stores_nothing(
    db_url: str, tmp_path: Path
) -> None:
    good = SHARED_CSV.read_text()
    lines = good.splitlines()
    # Row 3's m becomes malformed; rows 1-2 are fine and must not be stored either.
    cells = lines[3].split(",")
    cells[2] = "8192x"
    bad = "\n".join([*lines[:3], ",".join(cells), *lines[4:]]) + "\n"
    # An illegal tiling (baseM far beyond L0A) is a 422 with its violations.
    cells = lines[1].split(",")
    cells[16] = "4096"
    illegal = "\n".join([lines[0], ",".join(cells)]) + "\n"
    headers = {"content-type": "text/csv"}
    with running_server(tmp_path, _env(db_url)) as server, server.client() as client:
        before = _count(client)
        got = client.post("/v1/measurements:import", content=bad, headers=headers)
        after_bad = _count(client)
        got_illegal = client.post("/v1/measurements:import", content=illegal, headers=headers)
        after_illegal = _count(client)
        imported = client.post(
            "/v1/measurements:import", content=good, headers=headers,
            params={"filename": SHARED_CSV.name},
        )  # fmt: skip
        listed = client.get("/v1/measurements", params={"soc": "Ascend910B1", "m_min": 8192})
        none_listed = client.get("/v1/measurements", params={"soc": "Ascend910B1", "k_max": 8191})
    assert got.status_code == 422, got.text
    error = got.json()["errors"][0]
    assert (error["row"], error["column"], error["value"]) == (3, "m", "8192x")
    assert before == after_bad == after_illegal == 0
    assert got_illegal.status_code == 422
    assert got_illegal.json()["violations"], "the violations are listed"
    assert imported.status_code == 201, imported.text
    body = imported.json()
    # MDL rows with empty steps are completed by the template's defaults (rows with l2_rounds
    # = 2 are priced: Problem.l2_rounds); case 6 states neither depthB1 nor stepKb, so it is
    # skipped with that reason.
    assert [(s["case"], "depthB1" in s["reason"]) for s in body["skipped"]] == [("case6", True)]
    assert len(body["items"]) == 8
    assert any("case4" in i["source"] for i in body["items"])
    assert any("case7" in i["source"] for i in body["items"])
    assert len(listed.json()["items"]) == 8
    assert none_listed.json()["items"] == []
    for m in listed.json()["items"]:
        assert m["prediction"]["error"] == pytest.approx(
            (m["prediction"]["predicted_us"] - m["prediction"]["measured_us"])
            / m["prediction"]["measured_us"]
        )


def test_far_off_measurement_warns_and_the_stated_clock_is_priced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
    with running_server(tmp_path, _env(url)) as server, server.client() as client:
        model = client.post("/v1/tilings:tune", json=REQUEST).json()
        far = client.post(
            "/v1/measurements",
            json=[{"problem": PROBLEM, "tiling": model["tiling"],
                   "measured": {"time_us": 100 * model["estimate"]["time_us"]}}],
        )  # fmt: skip
        mismatch = client.post(
            "/v1/measurements",
            json={"problem": PROBLEM, "tiling": model["tiling"],
                  "measured": {"time_us": 1.0}, "device": {"soc": "Ascend910B1"}},
        )  # fmt: skip
        values = client.get("/v1/hardware/Ascend910B2").json()["values"]
        clock, startup_us = values["clock_mhz"], values["device_startup_us"]
        both = client.post(
            "/v1/measurements",
            json=[{"problem": PROBLEM, "tiling": model["tiling"],
                   "measured": {"device_time_us": 10.0}},
                  {"problem": PROBLEM, "tiling": model["tiling"],
                   "measured": {"device_time_us": 10.0}, "device": {"clock_mhz": clock / 2}}],
        )  # fmt: skip
    assert far.status_code == 201
    assert "5x" in far.json()["items"][0]["prediction"]["warning"]
    # A board at half the preset's clock takes twice the core time for the same cycles (the
    # device's start-up is a time: simcore.pipeline.traffic.kernel_times).
    at_preset, at_half = (i["prediction"]["predicted_us"] for i in both.json()["items"])
    assert startup_us > 0
    assert at_half - startup_us == pytest.approx(2 * (at_preset - startup_us), rel=1e-9)
    assert far.json()["warnings"]
    assert mismatch.status_code == 422
    assert mismatch.json()["errors"][0]["field"] == "device.soc"


def test_two_processes_importing_at_once_lose_nothing(db_url: str, tmp_path: Path) -> None:
    env = {"TILER_DATABASE_URL": db_url, "TILER_DATA_DIR": str(tmp_path / "data")}
    subprocess.run([sys.executable, "-m", "app.cli", "db", "upgrade"], cwd=REPO,
                   env={**os.environ, **env}, check=True, capture_output=True)  # fmt: skip
    command = [sys.executable, "-m", "app.cli", "measurements", "import", str(SHARED_CSV)]
    full_env = {**os.environ, **env}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    procs = [subprocess.Popen(command, cwd=REPO, env=full_env, **pipes) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    with running_server(tmp_path, _env(db_url)) as server, server.client() as client:
        # Both processes import the file's eight pricable rows.
        assert _count(client, soc="Ascend910B1") == 16
