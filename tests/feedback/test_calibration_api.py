"""Calibration profiles over a real server and database: a job fitted from imported
measurements, activation (refused for a profile worse than the default), and tune answers keyed
by the profile."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app._server import BACKENDS, database_url, running_server
from tests.feedback.test_feedback_api import import_shared_csv

PROBLEM = {"soc": "Ascend910B1", "m": 512, "n": 512, "k": 2048, "dtype": "fp16", "trans_b": True}
REQUEST = {"problem": PROBLEM, "budget": 2, "seed": 1}


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as url:
        yield url


def _wait(client: httpx.Client, cal_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        cal = client.get(f"/v1/calibrations/{cal_id}").json()
        if cal["status"] in ("done", "failed"):
            return cal
        time.sleep(0.5)
    pytest.fail(f"calibration {cal_id} did not finish")


def test_profile_is_fitted_activated_and_keys_tune_answers(db_url: str, tmp_path: Path) -> None:
    env = {"TILER_DATABASE_URL": db_url, "TILER_SEARCH_EXECUTOR": "thread"}
    with running_server(tmp_path, env) as server, server.client() as client:
        import_shared_csv(client)
        default = client.post("/v1/tilings:tune", json=REQUEST).json()
        posted = client.post("/v1/calibrations", json={"soc": "Ascend910B1"})
        assert posted.status_code == 202, posted.text
        assert posted.headers["location"] == f"/v1/calibrations/{posted.json()['id']}"
        cal = _wait(client, posted.json()["id"])
        # Launch overhead is not in a device time: nothing is fitted, so the profile is no
        # better than the default under cross-validation.
        useless = _wait(
            client,
            client.post(
                "/v1/calibrations",
                json={"soc": "Ascend910B1", "constants": ["launch_overhead_us"]},
            ).json()["id"],
        )
        refused = client.put("/v1/calibrations/active/Ascend910B1", json={"id": useless["id"]})
        active_before = client.post(
            "/v1/tilings:tune", json={**REQUEST, "problem": {**PROBLEM, "calibration": "active"}}
        ).json()
        activated = client.put("/v1/calibrations/active/Ascend910B1", json={"id": cal["id"]})
        active = client.post(
            "/v1/tilings:tune", json={**REQUEST, "problem": {**PROBLEM, "calibration": "active"}}
        ).json()
        by_id = client.post(
            "/v1/tilings:tune", json={**REQUEST, "problem": {**PROBLEM, "calibration": cal["id"]}}
        ).json()
        default_again = client.post("/v1/tilings:tune", json=REQUEST).json()
        evaluated = client.post(
            "/v1/tilings:evaluate",
            json={"problem": {**PROBLEM, "calibration": "active"}, "tiling": default["tiling"]},
        ).json()
        unknown = client.post(
            "/v1/tilings:tune",
            json={**REQUEST, "problem": {**PROBLEM, "calibration": "0" * 24}},
        )
        listed = client.get("/v1/calibrations", params={"soc": "Ascend910B1"}).json()
        chart = client.get("/explore/measurements", params={"soc": "Ascend910B1"}).text
        bad_constant = client.post(
            "/v1/calibrations", json={"soc": "Ascend910B1", "constants": ["no_such_thing"]}
        )
    assert cal["status"] == "done", cal["error"]
    report = cal["report"]
    assert report["activatable"] is True
    cv = report["errors"]["cross_validation"]
    assert cv["after"]["median_abs_error"] < cv["before"]["median_abs_error"]
    for name, entry in report["constants"].items():
        assert {"default", "value", "bounds", "determined"} <= set(entry)
        if entry["determined"]:
            assert cal["profile"]["constants"][name] == entry["value"]
            assert entry["uncertainty"] is not None
        else:
            assert entry["reason"]
    assert len(cal["digest"]) == 64
    assert useless["status"] == "done" and useless["activatable"] is False
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["rule"] == "activatable"
    # No profile active yet: "active" is the default model, the same cached answer.
    assert active_before["id"] == default["id"] and active_before["cached"] is True
    assert activated.status_code == 200 and activated.json()["active"] is True
    assert active["calibration"]["id"] == cal["id"]
    assert active["calibration"]["digest"] == cal["digest"]
    assert active["id"] != default["id"], "a profile's answer is cached under its own key"
    assert active["estimate"]["preset_digest"] != default["estimate"]["preset_digest"]
    assert active["estimate"]["preset_digest"] == active["calibration"]["preset_digest"]
    assert by_id["id"] == active["id"] and by_id["cached"] is True
    assert default_again["id"] == default["id"]
    assert default_again["estimate"] == default["estimate"]
    assert default_again["calibration"]["id"] is None
    assert evaluated["calibration"]["id"] == cal["id"]
    assert evaluated["estimate"]["preset_digest"] == active["estimate"]["preset_digest"]
    assert unknown.status_code == 422
    assert unknown.json()["errors"][0]["field"] == "problem.calibration"
    assert [c["id"] for c in listed if c["active"]] == [cal["id"]]
    # The explorer's chart marks the active profile and draws its predictions beside the
    # default model's.
    assert f"Active profile: {cal['id']}" in chart
    assert chart.count("<rect class='profile'") == chart.count("<circle class='default'") == 8
    assert bad_constant.status_code == 422


def test_suggestions_name_kernels_of_stored_shapes_and_why(tmp_path: Path) -> None:
    from simcore.hardware.presets import load_preset
    from simcore.tiling.legality import check_tiling
    from simcore.tiling.problem import parse_problem
    from simcore.tiling.tcube import TCubeTiling

    url = f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
    env = {"TILER_DATABASE_URL": url, "TILER_SEARCH_EXECUTOR": "thread"}
    small = {"soc": "Ascend910B2", "m": 512, "n": 1024, "k": 256, "dtype": "fp16"}
    with running_server(tmp_path, env) as server, server.client() as client:
        none_yet = client.get("/v1/calibrations/suggestions", params={"soc": "Ascend910B2"})
        answer = client.post("/v1/tilings:tune", json={"problem": small, "budget": 0}).json()
        client.post(
            "/v1/measurements",
            json={"problem": small, "tiling": answer["tiling"],
                  "measured": {"device_time_us": answer["estimate"]["time_us"]}},
        )  # fmt: skip
        got = client.get("/v1/calibrations/suggestions", params={"soc": "Ascend910B2", "n": 3})
    assert none_yet.status_code == 404
    assert got.status_code == 200, got.text
    items = got.json()["items"]
    assert len(items) == 3
    gains = [i["gain"] for i in items]
    assert gains == sorted(gains, reverse=True)
    preset = load_preset("Ascend910B2")
    for item in items:
        assert item["pins"], "a suggestion names the constants it pins"
        assert next(iter(item["pins"])) in item["why"]
        assert item["tiling"] != answer["tiling"], "the measured kernel is not suggested again"
        problem = parse_problem(item["problem"])
        assert check_tiling(problem, TCubeTiling.model_validate(item["tiling"]), preset).valid
