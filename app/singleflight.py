"""Single-flight of searches: many identical requests at once run one search.

Two levels:

* **In the process**: the first request for a key starts one asyncio task; every request for the
  same key that arrives while it runs awaits that task (no thread or pool slot is held while
  waiting). The task is shielded, so a caller that goes away does not cancel the others' search.
* **Across processes** (several server processes, or API and workers, on one database): the task
  first claims the key in ``search_claims`` (a row unique by key: one insert wins). A process
  that loses waits by polling for the result row, and takes the claim over if the holder stops
  renewing its lease (it died), so a crash delays an answer but never loses it.

A key is claimed only once this process has a free search slot (``slot``, the pool's): a server
whose pool is busy leaves new keys unclaimed for another server with a free slot, instead of
claiming every key it was sent and searching them one after another while the other idles.
Waiting for another process's search holds no slot.

The claim holder renews its lease while searching and releases it after storing the answer (or on
failure, so that a waiter retries and reports the same error itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager

import anyio.to_thread

from app.db import repository as repo
from app.db.engine import Database
from app.db.repository import NewResult
from app.metrics import Metrics
from app.schemas import TilingRecord

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def _no_slot() -> AsyncIterator[None]:
    yield


def process_owner_id() -> str:
    """A claim owner id unique to this process: ``host:pid:random``."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


class SearchFlights:
    """Runs at most one search per cache key, in this process and across processes.

    Args:
        db: The database holding results and claims.
        metrics: Where searches, joins and remote waits are counted.
        lease_s: Claim lease; renewed every third of it while the search runs.
        poll_s: Interval at which a process waiting for another's search polls the database.
        slot: Holds one of this process's search slots (entered when a search can start now);
            None: no limit here.
    """

    def __init__(
        self,
        db: Database,
        metrics: Metrics,
        *,
        lease_s: float,
        poll_s: float,
        slot: Callable[[], AbstractAsyncContextManager[None]] | None = None,
    ) -> None:
        self.db = db
        self.slot = slot or _no_slot
        self.metrics = metrics
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.owner = process_owner_id()
        self._inflight: dict[str, asyncio.Task[TilingRecord]] = {}

    @property
    def inflight(self) -> int:
        """Keys being searched (or waited for) by this process now."""
        return len(self._inflight)

    async def run(
        self, cache_key: str, compute: Callable[[], Awaitable[NewResult]]
    ) -> TilingRecord:
        """Returns the stored answer for a key, computing it at most once.

        Args:
            cache_key: The cache key.
            compute: Runs the search and returns the answer to store; called only by the one
                request (of all processes) that holds the key's claim.

        Returns:
            The stored record (the first one stored if two processes raced).

        Raises:
            Exception: Whatever ``compute`` raised (every waiter of this process gets it).
        """
        task = self._inflight.get(cache_key)
        if task is None:
            task = asyncio.create_task(self._lead(cache_key, compute))
            self._inflight[cache_key] = task
            task.add_done_callback(lambda t: self._finished(cache_key, t))
        else:
            self.metrics.flight_joins.inc()
        return await asyncio.shield(task)

    def _finished(self, cache_key: str, task: asyncio.Task[TilingRecord]) -> None:
        if self._inflight.get(cache_key) is task:
            del self._inflight[cache_key]
        # Mark the exception as retrieved: when every waiter went away nobody else will, and
        # asyncio would log "exception was never retrieved" for an error already answered.
        if not task.cancelled():
            task.exception()

    async def _lead(
        self, cache_key: str, compute: Callable[[], Awaitable[NewResult]]
    ) -> TilingRecord:
        db = self.db
        while True:
            stored = await anyio.to_thread.run_sync(repo.find_by_key, db, cache_key)
            if stored is not None:
                return stored
            async with self.slot():
                # The wait for the slot can be long: another process may have answered meanwhile.
                stored = await anyio.to_thread.run_sync(repo.find_by_key, db, cache_key)
                if stored is not None:
                    return stored
                claimed = await anyio.to_thread.run_sync(
                    repo.try_claim, db, cache_key, self.owner, self.lease_s
                )
                if claimed:
                    return await self._search(cache_key, compute)
            self.metrics.remote_waits.inc()
            stored = await self._wait_for_other(cache_key)
            if stored is not None:
                return stored
            # The holder released without storing (its search failed) or died: try again.

    async def _search(
        self, cache_key: str, compute: Callable[[], Awaitable[NewResult]]
    ) -> TilingRecord:
        db = self.db
        heartbeat = asyncio.create_task(self._renew(cache_key))
        try:
            # Another process may have stored the answer between our lookup and our claim.
            stored = await anyio.to_thread.run_sync(repo.find_by_key, db, cache_key)
            if stored is not None:
                return stored
            self.metrics.searches.inc()
            self.metrics.searches_running.inc()
            try:
                with self.metrics.search_seconds.time():
                    new = await compute()
            finally:
                self.metrics.searches_running.dec()
            return await anyio.to_thread.run_sync(repo.store_result, db, new)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            await asyncio.shield(
                anyio.to_thread.run_sync(repo.release_claim, db, cache_key, self.owner)
            )

    async def _renew(self, cache_key: str) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await anyio.to_thread.run_sync(
                    repo.renew_claim, self.db, cache_key, self.owner, self.lease_s
                )
            except Exception:
                # A missed renewal at worst lets another process search too (both store the
                # same answer; the first one stored wins); it must not fail this search.
                logger.warning("could not renew the claim of %s", cache_key, exc_info=True)

    async def _wait_for_other(self, cache_key: str) -> TilingRecord | None:
        """Polls until another process stores the key's answer (or stops holding the claim)."""
        db = self.db
        while True:
            await asyncio.sleep(self.poll_s)
            stored = await anyio.to_thread.run_sync(repo.find_by_key, db, cache_key)
            if stored is not None:
                return stored
            if not await anyio.to_thread.run_sync(repo.claim_is_live, db, cache_key):
                # Released or expired: a last look for the answer, then the caller re-claims.
                return await anyio.to_thread.run_sync(repo.find_by_key, db, cache_key)
