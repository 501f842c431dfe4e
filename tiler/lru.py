"""A small least-recently-used map, safe to share between threads.

The service's memos (prepared requests and stored answers, :mod:`app.tuning`) and the
per-process estimates of measured kernels (:func:`tiler.measured.kernel_estimate`) hold values
that never change for their key, so a bounded map that forgets the least recently used is all
they need.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    """A map of at most ``size`` entries that drops the least recently used first.

    Args:
        size: How many entries it keeps.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        # Pool workers may be threads (TILER_SEARCH_EXECUTOR=thread) sharing one map.
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value stored for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Stores ``value`` for ``key``, dropping the least recently used beyond ``size``."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forgets every entry."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
