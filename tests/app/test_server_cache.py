"""The cache and single-flight over real server processes, on SQLite and on PostgreSQL.

Every test starts ``tiler serve`` (a real uvicorn process) on a real database: a SQLite file in
tmp_path, or a fresh schema of the test PostgreSQL (skipped when it is absent, mandatory in CI).
"""

from __future__ import annotations

import asyncio
import json
import struct
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.db import migrate
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import parse_problem
from simcore.tiling.tcube import FIELD_ORDER
from tests.app._server import BACKENDS, database_url, running_server

PROBLEM = {"soc": "Ascend910B2", "m": 64, "n": 64, "k": 64, "dtype": "fp16"}
REQUEST = {"problem": PROBLEM, "budget": 2, "seed": 1}


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as url:
        yield url


def _env(db_url: str, **extra: str) -> dict[str, str]:
    return {"TILER_DATABASE_URL": db_url, "TILER_SEARCH_EXECUTOR": "thread", **extra}


def _assert_legal(answer: dict[str, Any]) -> None:
    problem = parse_problem(PROBLEM)
    preset = load_preset(problem.soc)
    tiling = complete_tiling(answer["tiling"], problem, preset)
    assert check_tiling(problem, tiling, preset).valid


def test_tune_is_cached_identical_survives_restart_and_can_be_read(
    db_url: str, tmp_path: Path
) -> None:
    env = _env(db_url)
    with running_server(tmp_path, env, "first") as server, server.client() as client:
        first = client.post("/v1/tilings:tune", json=REQUEST)
        second = client.post("/v1/tilings:tune", json=REQUEST)
        # The same request spelled differently (defaults written out, keys in another order)
        # normalizes to the same cache key.
        spelled = {
            "seed": 1,
            "sampler": "tpe",
            "budget": 2,
            "problem": {**PROBLEM, "trans_a": False, "format_b": "ND", "template": "norm"},
        }
        third = client.post("/v1/tilings:tune", json=spelled)
        # Another problem is another key (and a second item for the listing below).
        other = client.post("/v1/tilings:tune", json={**REQUEST, "problem": {**PROBLEM, "m": 128}})
        searches = server.metric("tiler_searches_total")
    assert first.status_code == 200, first.text
    answer = first.json()
    assert answer["cached"] is False
    for key in ("id", "model_version", "tiling", "estimate", "baselines", "certificate",
                "explanation", "search"):  # fmt: skip
        assert key in answer
    _assert_legal(answer)
    assert second.json()["cached"] is True
    # Byte for byte the same answer, apart from the cached flag.
    assert second.content == first.content.replace(b'"cached":false', b'"cached":true', 1)
    assert third.json()["cached"] is True
    assert third.json()["id"] == answer["id"]
    assert other.json()["cached"] is False
    assert other.json()["id"] != answer["id"]
    assert searches == 2

    with running_server(tmp_path, env, "restarted") as server, server.client() as client:
        again = client.post("/v1/tilings:tune", json=REQUEST)
        restarted_searches = server.metric("tiler_searches_total")
        record = client.get(f"/v1/tilings/{answer['id']}").json()
        exports = {
            fmt: client.get(f"/v1/tilings/{answer['id']}/export", params={"format": fmt})
            for fmt in ("json", "cpp", "bin")
        }
        page1 = client.get("/v1/tilings", params={"soc": "Ascend910B2", "limit": 1}).json()
        page2 = client.get(
            "/v1/tilings", params={"limit": 1, "cursor": page1["next_cursor"]}
        ).json()
        only_m64 = client.get("/v1/tilings", params={"m_min": 32, "m_max": 100}).json()
        other_chip = client.get("/v1/tilings", params={"soc": "Ascend310P3"}).json()
        svg = client.get(f"/v1/tilings/{answer['id']}/timeline.svg")
    assert again.content == second.content
    assert restarted_searches == 0

    assert record["tiling"] == answer["tiling"]
    assert record["request"]["problem"]["m"] == PROBLEM["m"]
    assert record["request"]["budget"] == 2

    as_json = exports["json"].json()
    assert list(as_json) == list(FIELD_ORDER)
    assert as_json == answer["tiling"]
    raw = exports["bin"].content
    assert exports["bin"].headers["content-type"] == "application/octet-stream"
    assert struct.unpack(f"<{len(FIELD_ORDER)}i", raw) == tuple(as_json[f] for f in FIELD_ORDER)
    cpp = exports["cpp"].text
    assert f"tiling.set_baseM({as_json['baseM']});" in cpp
    assert f"tiling.baseK = {as_json['baseK']};" in cpp
    assert "attachment" in exports["cpp"].headers["content-disposition"]

    # Newest first, one per page; the cursor leads to the other and then to the end.
    assert [i["id"] for i in page1["items"]] == [other.json()["id"]]
    assert [i["id"] for i in page2["items"]] == [answer["id"]]
    assert page2["next_cursor"] is None
    assert [i["id"] for i in only_m64["items"]] == [answer["id"]]
    assert only_m64["items"][0]["time_us"] == answer["estimate"]["time_us"]
    assert other_chip["items"] == []

    assert svg.headers["content-type"] == "image/svg+xml"
    root = ET.fromstring(svg.text)
    assert root.findall(".//{http://www.w3.org/2000/svg}g[@class='lane']")


async def _burst(urls: list[str], body: dict[str, Any], count: int) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=count)
    async with httpx.AsyncClient(timeout=180, limits=limits) as client:
        return await asyncio.gather(
            *(
                client.post(f"{urls[i % len(urls)]}/v1/tilings:tune", json=body)
                for i in range(count)
            )
        )


def test_readiness_then_fifty_identical_requests_across_two_processes_run_one_search(
    db_url: str, tmp_path: Path
) -> None:
    # Multi-process mode: no migration at start. The first server is alive but not ready until
    # `tiler db upgrade` (here its function) has run.
    env = {"TILER_DATABASE_URL": db_url, "TILER_MIGRATE_ON_START": "false"}
    with running_server(tmp_path, env, "a", ready_path="/healthz") as a:
        before = httpx.get(f"{a.url}/readyz", timeout=30)
        migrate.upgrade(db_url)
        after = httpx.get(f"{a.url}/readyz", timeout=30)
        assert before.status_code == 503
        assert before.headers["content-type"] == "application/problem+json"
        assert before.json()["type"] == "/problems/not-ready"
        assert "tiler db upgrade" in before.json()["detail"]
        assert after.status_code == 200
        assert after.json()["revision"] == migrate.head_revision()

        # Two server processes on one database, with the default process pool: the single
        # flight must hold within each process and across them (through the claim row).
        body = {"problem": {**PROBLEM, "n": 128}, "budget": 2, "seed": 7}
        with running_server(tmp_path, env, "b") as b:
            responses = asyncio.run(_burst([a.url, b.url], body, 50))
            searches = a.metric("tiler_searches_total") + b.metric("tiler_searches_total")
            counters = ("tiler_cache_hits_total", "tiler_cache_misses_total")
            arrivals = sum(s.metric(m) for s in (a, b) for m in counters)
    assert [r.status_code for r in responses] == [200] * 50, responses[0].text
    answers = [r.json() for r in responses]
    assert len({a["id"] for a in answers}) == 1
    assert len({json.dumps(a["tiling"], sort_keys=True) for a in answers}) == 1
    # Every request reached the tuning service, and of all of them exactly one searched.
    assert arrivals == 50
    assert searches == 1
