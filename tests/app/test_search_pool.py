"""The search pool's worker processes: what their start costs and that they search.

Every ``tiler serve`` start warms one worker process (and each embedded job worker starts its
own pool): a worker that imported the whole service (web framework, database layer, request
schemas) took about three times the CPU of one that imports the search alone.
"""

from __future__ import annotations

import json

from app.search_jobs import tune_job
from app.tuning import SearchPool
from tiler.tune import parse_tune_request

#: Modules of the server that a search worker never needs.
SERVER_MODULES = ("fastapi", "starlette", "sqlalchemy", "alembic", "app.db", "app.schemas")


def test_a_warmed_search_worker_holds_the_search_and_none_of_the_server() -> None:
    pool = SearchPool("process", 1)
    try:
        pool.warm()
        # builtins.eval pickles by name, so running it imports nothing more in the worker.
        loaded = set(pool.run(eval, "list(__import__('sys').modules)"))
        request = parse_tune_request(
            {"problem": {"soc": "Ascend910B2", "m": 256, "n": 256, "k": 256, "dtype": "fp16"},
             "budget": 2, "seed": 1}
        )  # fmt: skip
        kind, (answer_json, _seconds) = pool.run(tune_job, request)
    finally:
        pool.shutdown()
    assert "tiler.tune" in loaded, "a warmed worker has imported the search already"
    assert not loaded & set(SERVER_MODULES), sorted(loaded & set(SERVER_MODULES))
    # The same worker then searches: a legal tiling of the problem.
    assert kind == "ok"
    answer = json.loads(answer_json)
    assert answer["tiling"]["baseM"] > 0
    assert answer["estimate"]["time_us"] > 0
