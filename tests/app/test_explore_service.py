"""``GET /explore`` searches the way ``POST /v1/tilings:tune`` does, on a real server.

The page once ran a full search in the API process on every request: no cache, no single-flight,
no pool limit, no token. Now its answer comes from the same cache and single-flight (three
identical pages at once run one search, a repeat runs none, the API then answers it from the
cache), and with ``TILER_API_TOKEN`` set a new search needs the token while stored answers stay
open to read.
"""

from __future__ import annotations

import concurrent.futures
import re
from pathlib import Path

import httpx

from tests.app._server import running_server

PROBLEM = {"soc": "Ascend910B2", "m": 384, "n": 640, "k": 1024, "dtype": "fp16"}
ENV = {"TILER_DEFAULT_BUDGET": "4", "TILER_SEARCH_WORKERS": "1", "TILER_JOB_WORKERS": "0"}


def _time_us(page: str) -> str:
    match = re.search(r"id='time-us'>([^<]+)<", page)
    assert match, page[:2000]
    return match.group(1)


def test_identical_pages_run_one_search_and_share_the_api_cache(tmp_path: Path) -> None:
    with running_server(tmp_path, ENV) as server:
        url = f"{server.url}/explore"
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            pages = list(pool.map(lambda _: httpx.get(url, params=PROBLEM, timeout=300), range(3)))
        assert [p.status_code for p in pages] == [200, 200, 200]
        assert len({_time_us(p.text) for p in pages}) == 1
        assert server.metric("tiler_searches_total") == 1

        hits = server.metric("tiler_cache_hits_total")
        repeat = httpx.get(url, params=PROBLEM, timeout=60)
        assert repeat.status_code == 200
        assert _time_us(repeat.text) == _time_us(pages[0].text)
        assert server.metric("tiler_searches_total") == 1
        assert server.metric("tiler_cache_hits_total") == hits + 1

        # The page's request is the API's: the same problem is a cache hit there.
        with server.client() as client:
            api = client.post("/v1/tilings:tune", json={"problem": PROBLEM})
        assert api.status_code == 200, api.text
        assert api.json()["cached"] is True
        assert f"{api.json()['estimate']['time_us']:.2f}" == _time_us(pages[0].text)
        assert server.metric("tiler_searches_total") == 1

        bad = httpx.get(url, params={**PROBLEM, "soc": "Ascend000"}, timeout=60)
        assert bad.status_code == 422
        assert "Ascend000" in bad.text


def test_with_a_token_a_search_needs_it_and_stored_answers_stay_open(tmp_path: Path) -> None:
    with running_server(tmp_path, {**ENV, "TILER_API_TOKEN": "page-secret"}) as server:
        url = f"{server.url}/explore"
        anonymous = httpx.get(url, params=PROBLEM, timeout=60)
        assert anonymous.status_code == 401
        assert "token-form" in anonymous.text
        assert server.metric("tiler_searches_total") == 0

        with httpx.Client(base_url=server.url, timeout=300) as browser:
            wrong = browser.post("/explore/token", data={"token": "guess", "next": "/explore"})
            assert wrong.status_code == 401
            target = str(httpx.URL("/explore", params=PROBLEM))
            login = browser.post("/explore/token", data={"token": "page-secret", "next": target})
            assert login.status_code == 303
            assert login.headers["location"] == target
            assert "page-secret" not in login.headers["location"]
            tuned = browser.get(target)
            assert tuned.status_code == 200, tuned.text[:2000]
        assert server.metric("tiler_searches_total") == 1

        # Now stored: shown without the token, and no search runs.
        stored = httpx.get(url, params=PROBLEM, timeout=60)
        assert stored.status_code == 200
        assert _time_us(stored.text) == _time_us(tuned.text)
        # The API's header works on the page too.
        header = httpx.get(
            url,
            params={**PROBLEM, "m": 512},
            headers={"authorization": "bearer page-secret"},
            timeout=300,
        )
        assert header.status_code == 200
        assert server.metric("tiler_searches_total") == 2
