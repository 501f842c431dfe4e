"""The search claims that make single-flight work across processes, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.db import migrate
from app.db import repository as repo
from app.db.engine import Database
from app.db.repository import NewResult
from tests.app._server import BACKENDS, database_url

KEY = "c" * 64


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with database_url(request.param, tmp_path) as url:
        migrate.upgrade(url)
        database = Database.from_url(url)
        yield database
        database.dispose()


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


def test_the_first_stored_answer_wins(db: Database) -> None:
    first = NewResult(KEY, "Ascend910B2", "fp16", 64, 64, 64, "v1", "d", "{}", '{"a":1}', 0.1)
    second = NewResult(KEY, "Ascend910B2", "fp16", 64, 64, 64, "v1", "d", "{}", '{"a":2}', 0.1)
    stored = repo.store_result(db, first)
    again = repo.store_result(db, second)
    assert again == stored
    assert again.answer_json == '{"a":1}'
    assert repo.find_by_id(db, KEY[:24]) == stored
