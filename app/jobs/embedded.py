"""The job workers ``tiler serve`` runs itself, so that a job completes without another command.

Each is a :class:`app.jobs.worker.Worker` on a thread of the server: it claims shapes, renews
their leases and records results exactly as ``tiler worker`` does (same database, same protocol,
so the two mix freely), while its searches run in a process pool of its own, one slot per
worker: a search never holds the server's GIL, and interactive ``tilings:tune`` requests keep
their own pool (``TILER_SEARCH_WORKERS``).
"""

from __future__ import annotations

import logging
import threading

from app.db.engine import Database
from app.jobs.worker import Worker
from app.search_jobs import JobOutcome, tune_job
from app.settings import Settings
from app.tuning import SearchPool
from simcore.hardware.presets import HardwarePreset
from tiler.tune import TuneRequest

logger = logging.getLogger(__name__)


class EmbeddedWorkers:
    """``count`` job workers inside this process.

    Args:
        db: The server's database.
        settings: The server's settings (leases, polls; ``search_executor`` for the pool kind).
        count: How many workers (and pool slots); at least 1.
    """

    def __init__(self, db: Database, settings: Settings, count: int) -> None:
        self.pool = SearchPool(settings.search_executor, count)
        self.workers = [Worker(db, settings, search=self._search) for _ in range(count)]
        self._threads: list[threading.Thread] = []

    def _search(self, request: TuneRequest, preset: HardwarePreset | None) -> JobOutcome:
        return self.pool.run(tune_job, request, preset=preset)

    def start(self) -> None:
        """Starts the workers (they poll for shapes until :meth:`stop`)."""
        for number, worker in enumerate(self.workers):
            thread = threading.Thread(
                target=worker.run, name=f"tiler-job-worker-{number}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        logger.info("%d job worker(s) running in this server", len(self.workers))

    def stop(self, timeout_s: float = 60.0) -> None:
        """Stops the workers after the shape each is running, like SIGTERM stops ``tiler worker``.

        Args:
            timeout_s: How long to wait for each worker's thread after its search ended. A
                worker still recording then is left to the process exit; its shape's lease runs
                out and another worker claims it again.
        """
        for worker in self.workers:
            worker.stop.set()
        # Waits for the searches running now; their workers then record them and exit.
        self.pool.shutdown()
        for thread in self._threads:
            thread.join(timeout_s)
