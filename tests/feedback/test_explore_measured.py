"""The explorer's measurement form and chart over a real server (no browser: plain forms)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx

from tests.app._server import running_server


def _hidden(page: str, name: str) -> str:
    match = re.search(rf"<input type='hidden' name='{name}' value='([^']*)'>", page)
    assert match, name
    return html.unescape(match.group(1))


def test_a_measured_time_entered_on_the_explorer_is_stored_and_charted(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
    env = {"TILER_DATABASE_URL": url, "TILER_SEARCH_EXECUTOR": "thread"}
    with running_server(tmp_path, env) as server, server.client() as client:
        page = client.get("/explore", params={"m": 256, "n": 256, "k": 256}).text
        assert "id='measure-form'" in page
        form = {"problem": _hidden(page, "problem"), "tiling": _hidden(page, "tiling")}
        tune = {"problem": {"soc": "Ascend910B2", "m": 256, "n": 256, "k": 256}, "budget": 0}
        before = [client.post("/v1/tilings:tune", json=tune).json() for _ in range(2)]
        bad = client.post("/explore/measure", data={**form, "device_time_us": "fast"})
        stored = client.post(
            "/explore/measure",
            data={**form, "device_time_us": "12.5", "cann_version": "8.0.RC3"},
        )
        after = client.post("/v1/tilings:tune", json=tune).json()
        listed = client.get("/v1/measurements", params={"soc": "Ascend910B2"}).json()
        chart = client.get("/explore/measurements", params={"soc": "Ascend910B2"})
    assert bad.status_code == 422 and "id='error'" in bad.text
    assert stored.status_code == 201, stored.text
    assert "12.500 us" in stored.text
    [item] = listed["items"]
    assert item["measured"] == {"device_time_us": 12.5}
    assert item["device"]["cann_version"] == "8.0.RC3"
    assert item["source"] == "explorer"
    # The repeated tune body is not replayed stale: the measured kernel is the answer now.
    assert [b["source"] for b in before] == ["model", "model"]
    assert after["source"] == "measured" and after["measurement"]["id"] == item["id"]
    assert chart.status_code == 200
    assert chart.text.count("<circle class='default'") == 1
    assert f"data-id='{item['id']}'" in chart.text
    assert "Active profile: none" in chart.text


def test_the_form_needs_the_api_token_when_the_server_has_one(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
    env = {"TILER_DATABASE_URL": url, "TILER_SEARCH_EXECUTOR": "thread", "TILER_API_TOKEN": "s3"}
    with running_server(tmp_path, env) as server, server.client() as client:
        page = client.get("/explore", params={"m": 256, "n": 256, "k": 256}).text
        form = {"problem": _hidden(page, "problem"), "tiling": _hidden(page, "tiling"),
                "device_time_us": "12.5"}  # fmt: skip
        # A browser without the API's header: the form's token field decides.
        with httpx.Client(base_url=server.url, timeout=120) as browser:
            refused = browser.post("/explore/measure", data={**form, "token": "wrong"})
            after_refused = client.get("/v1/measurements").json()["items"]
            accepted = browser.post("/explore/measure", data={**form, "token": "s3"})
        # With the API's header the token field may stay empty.
        with_header = client.post("/explore/measure", data=form)
    assert refused.status_code == 401
    assert after_refused == []
    assert accepted.status_code == 201
    assert with_header.status_code == 201
