"""Two ``tiler serve`` processes on one database share new searches between them.

A server used to claim every key it was sent at once, then run the searches one after another in
its pool while the other server, sent the same keys a moment later, found them all claimed and
only waited. A server now claims a key when a pool slot is free to search it, so the second
server takes the keys the first has not started.
"""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path
from typing import Any

import pytest

from tests.app._server import BACKENDS, Server, database_url, running_server, wait_until

SHAPES = 8


def _bodies() -> list[dict[str, Any]]:
    # Distinct keys of a search of a second or more each (the screening got faster: at 2048^3
    # the first server's eight searches could end before the second server's pool was up).
    return [
        {"problem": {"soc": "Ascend910B2", "m": 2048 + 16 * i, "n": 3072, "k": 3072}, "budget": 2}
        for i in range(SHAPES)
    ]


def _warm(server: Server, m: int) -> float:
    """Starts the server's search worker (a small search of its own key, ``m``); returns its
    search count after."""
    with server.client() as client:
        small = {"problem": {"soc": "Ascend910B2", "m": m, "n": 64, "k": 64}, "budget": 0}
        assert client.post("/v1/tilings:tune", json=small).status_code == 200
    return server.metric("tiler_searches_total")


def _send_all(server: Server, pool: concurrent.futures.Executor) -> list[Any]:
    def post(body: dict[str, Any]) -> dict[str, Any]:
        with server.client() as client:
            response = client.post("/v1/tilings:tune", json=body)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer

    return [pool.submit(post, body) for body in _bodies()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_servers_sent_the_same_new_shapes_both_search(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        env = {"TILER_DATABASE_URL": url, "TILER_SEARCH_WORKERS": "1", "TILER_JOB_WORKERS": "0"}
        with (
            running_server(tmp_path, env, "first") as first,
            running_server(tmp_path, env, "second") as second,
            concurrent.futures.ThreadPoolExecutor(2 * SHAPES) as pool,
        ):
            # Both pools started, so that the race is between searches, not process start-ups.
            warm = (_warm(first, 64), _warm(second, 80))
            sent_first = _send_all(first, pool)
            wait_until(lambda: first.metric("tiler_searches_running") == 1, 60)
            time.sleep(0.3)  # every request has reached the first server
            sent_second = _send_all(second, pool)
            answers = [f.result(timeout=600) for f in sent_first + sent_second]
            searched = (
                first.metric("tiler_searches_total") - warm[0],
                second.metric("tiler_searches_total") - warm[1],
            )
    # Each key searched once, and by both servers: the second took its share.
    assert sum(searched) == SHAPES
    assert min(searched) >= SHAPES // 4, searched
    assert len({a["id"] for a in answers}) == SHAPES
