"""The cached-tune fast path on a real server: a replayed answer is the route's answer, byte for
byte, and it keeps every rule of the route (the token, the content type, cache-hit metrics).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.app._server import Server, running_server

TOKEN = "replay-secret"
BODY = json.dumps(
    {"problem": {"soc": "Ascend910B2", "m": 512, "n": 512, "k": 512}, "budget": 0}
).encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"TILER_SEARCH_EXECUTOR": "thread", "TILER_JOB_WORKERS": "0", "TILER_API_TOKEN": TOKEN}
    with running_server(tmp_path_factory.mktemp("replay"), env) as srv:
        yield srv


def _tune(client: httpx.Client, body: bytes, **headers: str) -> httpx.Response:
    return client.post(
        "/v1/tilings:tune", content=body, headers={"content-type": "application/json", **headers}
    )


def test_a_replayed_answer_is_the_routes_answer(server: Server) -> None:
    with server.client() as client:
        searched = _tune(client, BODY)
        first_hit = _tune(client, BODY)  # through the route: recorded
        hits = server.metric("tiler_cache_hits_total")
        replays = [_tune(client, BODY) for _ in range(3)]
        assert server.metric("tiler_cache_hits_total") == hits + 3
        assert server.metric("tiler_searches_total") == 1
        # The same problem written differently is the same cache key, answered by the route.
        spaced = _tune(client, BODY.replace(b",", b", "))
    assert searched.status_code == 200
    assert searched.json()["cached"] is False
    assert first_hit.json()["cached"] is True
    for replay in replays:
        assert replay.status_code == 200
        assert replay.content == first_hit.content
        assert replay.headers["content-type"] == first_hit.headers["content-type"]
        assert replay.headers["content-length"] == str(len(first_hit.content))
    assert spaced.json() == first_hit.json()
    # Counted under the route's template, like any tune (six above, replays included).
    assert (
        server.metric(
            'tiler_http_requests_total{method="POST",route="/v1/tilings:tune",status="200"}'
        )
        >= 6
    )


def test_a_replay_keeps_the_token_and_content_type_rules(server: Server) -> None:
    with server.client() as client:
        _tune(client, BODY)
        _tune(client, BODY)
        replayed = _tune(client, BODY)
    assert replayed.status_code == 200
    with httpx.Client(base_url=server.url, timeout=60) as anonymous:
        refused = _tune(anonymous, BODY)
        wrong = _tune(anonymous, BODY, authorization="Bearer guess")
        as_text = anonymous.post(
            "/v1/tilings:tune",
            content=BODY,
            headers={"content-type": "text/plain", "authorization": f"Bearer {TOKEN}"},
        )
    assert refused.status_code == 401
    assert wrong.status_code == 401
    assert as_text.status_code == 415


def test_a_new_measurement_ends_the_replay_of_a_model_answer(tmp_path: Path) -> None:
    # A replayed answer would hide a measured kernel that now wins (app.feedback.answers).
    env = {"TILER_SEARCH_EXECUTOR": "thread", "TILER_JOB_WORKERS": "0"}
    with running_server(tmp_path, env) as srv, srv.client() as client:
        model = _tune(client, BODY).json()
        recorded = _tune(client, BODY)  # a cache hit: recorded for replay
        assert _tune(client, BODY).content == recorded.content  # replayed
        cands = client.get(f"/v1/tilings/{model['id']}/candidates", params={"k": 3}).json()
        other = next(c for c in cands["candidates"] if not c["answer"])
        posted = client.post(
            "/v1/measurements",
            json={
                "problem": json.loads(BODY)["problem"],
                "tiling": other["tiling"],
                "measured": {"device_time_us": 0.5 * model["estimate"]["time_us"]},
            },
        )
        after = _tune(client, BODY).json()
    assert posted.status_code == 201, posted.text
    assert recorded.json()["source"] == "model"
    assert after["source"] == "measured"
    assert after["tiling"] == other["tiling"]
