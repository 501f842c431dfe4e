"""The search claims that make single-flight work across processes, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.db import repository as repo
from app.db.engine import Database
from app.db.repository import NewResult
from app.schemas import TuneBody
from app.search_jobs import tune_job
from app.tuning import prepare_tune
from tests.app._server import BACKENDS, migrated_database

KEY = "c" * 64


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with migrated_database(request.param, tmp_path) as database:
        yield database


def test_one_claim_per_key_and_a_dead_holder_is_taken_over(db: Database) -> None:
    assert repo.try_claim(db, KEY, "a", lease_s=1.0)
    assert not repo.try_claim(db, KEY, "b", lease_s=1.0)
    assert repo.claim_is_live(db, KEY)
    assert repo.renew_claim(db, KEY, "a", lease_s=1.0)
    time.sleep(1.2)  # "a" stops renewing: its lease runs out
    assert not repo.claim_is_live(db, KEY)
    assert repo.try_claim(db, KEY, "b", lease_s=30)
    # The old holder can neither renew nor release what is now b's.
    assert not repo.renew_claim(db, KEY, "a", lease_s=30)
    repo.release_claim(db, KEY, "a")
    assert repo.claim_is_live(db, KEY)
    repo.release_claim(db, KEY, "b")
    assert not repo.claim_is_live(db, KEY)


def test_of_many_threads_claiming_at_once_exactly_one_wins(db: Database) -> None:
    barrier = threading.Barrier(8)
    wins: list[str] = []

    def claim(owner: str) -> None:
        barrier.wait()
        if repo.try_claim(db, KEY, owner, lease_s=30):
            wins.append(owner)

    threads = [threading.Thread(target=claim, args=(f"t{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1


@pytest.fixture(scope="module")
def answer() -> tuple[str, str]:
    """A real tuner answer of a small problem and its canonical request, as JSON text."""
    body = TuneBody.model_validate({"problem": {"m": 64, "n": 64, "k": 64}, "budget": 0})
    prepared = prepare_tune(body.tuner_request(0), body.problem)
    outcome = tune_job(prepared.request)
    assert outcome[0] == "ok"
    return prepared.request_json, outcome[1][0]


def test_the_first_stored_answer_wins(db: Database, answer: tuple[str, str]) -> None:
    request_json, answer_json = answer
    # Two processes that searched the same key store answers that differ (here: the time the
    # search took); the first one stored is what every later request is served.
    slower = json.loads(answer_json)
    slower["search"]["seconds"] += 1.0
    first = NewResult(KEY, "Ascend910B2", "fp16", 64, 64, 64, "v1", "d", request_json,
                      answer_json, 0.1)  # fmt: skip
    second = NewResult(KEY, "Ascend910B2", "fp16", 64, 64, 64, "v1", "d", request_json,
                       json.dumps(slower), 0.1)  # fmt: skip
    stored = repo.store_result(db, first)
    again = repo.store_result(db, second)
    assert again == stored
    assert again.search.seconds == json.loads(answer_json)["search"]["seconds"]
    assert repo.find_by_id(db, KEY[:24]) == stored
