"""Batch jobs priced with a calibration profile, over a real server and SQLite database.

A team that calibrated its board tunes its model's shapes as a batch job with the profile:
``calibration: "active"`` freezes each SoC's active profile at submission, a shape of a SoC
without one takes the packaged constants, and each result names the profile it was priced with.
The job's answer for a shape is the one ``tilings:tune`` gives with the same profile (one cache
key), and a profile that cannot be used is a 422 naming ``calibration``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app._server import running_server
from tests.feedback.test_calibration_api import _wait
from tests.feedback.test_feedback_api import import_shared_csv

B1 = {"soc": "Ascend910B1", "m": 512, "n": 512, "k": 2048, "dtype": "fp16", "trans_b": True}
B2 = {"soc": "Ascend910B2", "m": 256, "n": 512, "k": 1024, "dtype": "fp16"}
SEARCH = {"budget": 2, "seed": 1}


def _final(client: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = client.get(f"/v1/tuning-jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "cancelled"):
            return job  # type: ignore[no-any-return]
        time.sleep(0.3)
    pytest.fail(f"job {job_id} did not finish")


def _job(client: httpx.Client, problems: list[dict[str, Any]], calibration: str) -> httpx.Response:
    return client.post(
        "/v1/tuning-jobs", json={"problems": problems, "calibration": calibration, **SEARCH}
    )


def test_a_job_prices_its_shapes_with_the_active_profile(tmp_path: Path) -> None:
    env = {"TILER_DATABASE_URL": f"sqlite:///{tmp_path / 'tiler.db'}"}
    with running_server(tmp_path, env) as server, server.client() as client:
        import_shared_csv(client)
        cal = _wait(client, client.post("/v1/calibrations", json={"soc": B1["soc"]}).json()["id"])
        assert cal["status"] == "done" and cal["activatable"], cal
        activated = client.put(f"/v1/calibrations/active/{B1['soc']}", json={"id": cal["id"]})
        assert activated.status_code == 200, activated.text
        default = client.post("/v1/tilings:tune", json={"problem": B1, **SEARCH}).json()
        profiled = client.post(
            "/v1/tilings:tune", json={"problem": {**B1, "calibration": cal["id"]}, **SEARCH}
        ).json()
        active_job = _final(client, _job(client, [B1, B2], "active").json()["id"])
        default_job = _final(client, _job(client, [B1], "default").json()["id"])
        other_soc = _job(client, [B1, B2], cal["id"])
        unknown = _job(client, [B1], "0" * 24)
    assert active_job["status"] == "succeeded", active_job
    assert active_job["calibration"] == "active"
    on_b1, on_b2 = active_job["results"]
    # The profile's answer, from the cache tilings:tune filled under the profile's key.
    assert on_b1["calibration_id"] == cal["id"]
    assert on_b1["id"] == profiled["id"] != default["id"]
    assert on_b1["cached"] is True
    assert on_b1["estimate"]["preset_digest"] == profiled["calibration"]["preset_digest"]
    # No profile is active on 910B2: the packaged constants.
    assert on_b2["calibration_id"] is None
    assert default_job["calibration"] == "default"
    assert default_job["results"][0]["calibration_id"] is None
    assert default_job["results"][0]["id"] == default["id"]
    for refused, needle in ((other_soc, "not Ascend910B2"), (unknown, "no calibration")):
        assert refused.status_code == 422, refused.text
        body = refused.json()
        assert body["errors"][0]["field"] == "calibration"
        assert needle in body["detail"]
