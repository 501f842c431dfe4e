"""The least-recently-used map behind the service's memos and the measured kernels' estimates."""

from __future__ import annotations

import threading

from tiler.lru import Lru


def test_the_least_recently_used_entry_goes_first() -> None:
    memo: Lru[str, int] = Lru(2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.get("a") == 1  # "a" is now the most recently used
    memo.put("c", 3)
    assert memo.get("b") is None
    assert (memo.get("a"), memo.get("c"), len(memo)) == (1, 3, 2)


def test_threads_sharing_one_map_keep_it_within_its_size() -> None:
    memo: Lru[int, int] = Lru(50)

    def fill(start: int) -> None:
        for i in range(start, start + 1000):
            memo.put(i, i)
            memo.get(i - 7)

    threads = [threading.Thread(target=fill, args=(n * 1000,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(memo) == 50
    memo.clear()
    assert len(memo) == 0
