"""The batch worker: claims shapes from the database under a lease, tunes them, records results.

``tiler worker`` runs :func:`run_workers`: one :class:`Worker` per process (``--concurrency N``
starts N processes, because a search is CPU-bound Python and threads would share one GIL). Any
number of workers on any number of machines can share one database.

One shape, in a worker:

1. **Claim** (:func:`app.jobs.store.claim_items`): the oldest queued shape, or one whose lease
   expired (its worker died), leased to this worker for ``TILER_JOB_LEASE_S``. A heartbeat
   thread renews the lease every ``TILER_JOB_HEARTBEAT_S`` while the search runs.
2. **Answer**, through the same cache as ``POST /v1/tilings:tune``: a cached key costs one
   lookup. Otherwise the cross-process single-flight claim of the key (``search_claims``) makes
   sure that a shape another worker or an API request is already searching is waited for, not
   searched twice; the search itself is :func:`app.search_jobs.tune_job`, and its answer is
   stored in ``tuning_results``.
3. **Finish** (:func:`app.jobs.store.finish_item`): only while the lease is still this worker's,
   so a shape is never counted twice even when a slow worker's lease was taken over.

A worker killed at any point loses nothing: its shape's lease runs out and another worker claims
it again (after ``TILER_JOB_MAX_ATTEMPTS`` claims the shape fails with a "worker lost"
``internal-error``, so a shape that kills every worker cannot block a job). SIGTERM or SIGINT
stops a worker after the shape it is running; a second signal stops it at once.

With ``TILER_JOB_SHARED_STUDY_URL`` a shape with a large budget is searched in an Optuna study
shared with idle workers, which run slices of it (:mod:`app.jobs.shared`).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from app.db import repository as repo
from app.db.engine import Database
from app.feedback.profiles import ProfileError, profile_problem, resolve_profile
from app.jobs import store
from app.jobs.shared import SharedStudies, check_study_url
from app.jobs.store import ClaimedItem
from app.lifeline import run_in_child
from app.problem_json import (
    ProblemError,
    input_error_problem,
    problem_body,
    unknown_soc_problem,
)
from app.search_jobs import JobOutcome, tune_job
from app.settings import Settings, get_settings
from app.singleflight import process_owner_id
from app.tuning import PreparedTune, check_feasible, prepare_item, raise_outcome_error
from simcore.alloc import tune_allocator
from simcore.errors import InputError, UnknownSocError
from simcore.hardware.presets import HardwarePreset
from tiler.tune import TuneRequest

logger = logging.getLogger(__name__)


@dataclass
class WorkerStats:
    """What one worker did.

    Attributes:
        searched: Shapes this worker searched.
        helped_trials: Trials this worker ran in shared studies of shapes other workers hold.
        from_cache: Shapes answered from the cache (or by another process's search).
        failed: Shapes recorded with an error.
        lost: Shapes whose result was not recorded because the lease was no longer this
            worker's (taken over, or the job was cancelled).
    """

    searched: int = 0
    helped_trials: int = 0
    from_cache: int = 0
    failed: int = 0
    lost: int = 0

    @property
    def finished(self) -> int:
        """Shapes recorded by this worker."""
        return self.searched + self.from_cache + self.failed


@dataclass(frozen=True)
class _Outcome:
    result_id: str | None = None
    cached: bool | None = None
    error: dict[str, Any] | None = None
    searched: bool = False


def _problem_document(exc: ProblemError) -> dict[str, Any]:
    return problem_body(exc.status, exc.slug, exc.detail, None, **exc.extensions)


@dataclass
class _Held:
    """What the heartbeat renews: this worker's search claim, if any (leases go by owner)."""

    search_key: str | None = None
    help_key: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Worker:
    """Claims and runs job shapes until stopped (or, with ``once``, until none is left).

    Args:
        db: The database (jobs and the tuning cache).
        settings: Lease, heartbeat, attempts, poll intervals.
        owner: Lease owner id; by default ``host:pid:random``.
        search: Runs one search (:func:`app.search_jobs.tune_job`'s contract). None runs it in this
            thread; the server's own workers pass a process pool's, so that a search never holds
            the server's GIL. A worker with its own ``search`` takes no part in shared studies:
            their options (callbacks on this process's database) do not cross processes.
    """

    def __init__(
        self,
        db: Database,
        settings: Settings,
        owner: str | None = None,
        search: Callable[[TuneRequest, HardwarePreset | None], JobOutcome] | None = None,
    ) -> None:
        if settings.job_heartbeat_s >= settings.job_lease_s:
            msg = (
                f"TILER_JOB_HEARTBEAT_S ({settings.job_heartbeat_s}) must be shorter than "
                f"TILER_JOB_LEASE_S ({settings.job_lease_s}), or leases expire between beats"
            )
            raise ValueError(msg)
        self.db = db
        self.settings = settings
        self.owner = owner or process_owner_id()
        self.stats = WorkerStats()
        self.stop = threading.Event()
        self._held = _Held()
        self.search = search
        self.shared = (
            SharedStudies(db, settings, self.owner)
            if settings.job_shared_study_url is not None and search is None
            else None
        )

    # --- the loop ---------------------------------------------------------------------------

    def run(self, *, once: bool = False, poll_s: float | None = None) -> WorkerStats:
        """Runs shapes until :attr:`stop` is set, or with ``once`` until none is claimable.

        Args:
            once: Exit when no shape is claimable (instead of waiting for more).
            poll_s: Idle interval between looks for work (default ``TILER_JOB_POLL_S``).

        Returns:
            What this worker did.
        """
        poll = poll_s if poll_s is not None else self.settings.job_poll_s
        beat = threading.Thread(target=self._heartbeat, name="tiler-heartbeat", daemon=True)
        beat.start()
        logger.info("worker %s started", self.owner)
        try:
            while not self.stop.is_set():
                items = self._claim()
                if not items:
                    if self._help():
                        continue
                    if once:
                        break
                    self.stop.wait(poll)
                    continue
                for item in items:
                    try:
                        self._run_item(item)
                    except Exception:
                        # The database failed while recording (unreachable, locked beyond
                        # busy_timeout): the worker lives on; the shape's lease runs out and it
                        # is claimed again, its answer then a cache hit.
                        where = (item.job_id, item.position)
                        logger.exception("job %s shape %d: recording failed", *where)
        finally:
            self.stop.set()
            beat.join(timeout=5)
            stats = self.stats
            logger.info(
                "worker %s stopped: %d searched, %d from cache, %d failed, %d lost, "
                "%d trials helped",
                *(self.owner, stats.searched, stats.from_cache, stats.failed, stats.lost),
                stats.helped_trials,
            )
        return self.stats

    def _claim(self) -> list[ClaimedItem]:
        try:
            # A read first: idle workers polling must not queue on SQLite's write lock.
            if not store.has_claimable(self.db):
                return []
            return store.claim_items(
                self.db,
                self.owner,
                lease_s=self.settings.job_lease_s,
                limit=1,
                max_attempts=self.settings.job_max_attempts,
            )
        except Exception:
            # The database is unreachable or busy beyond busy_timeout: keep the worker alive
            # and try again at the next poll.
            logger.exception("claiming work failed; retrying")
            return []

    def _help(self) -> bool:
        """Runs slices of another worker's shared study; True when some ran."""
        if self.shared is None:
            return False

        def hold(key: str | None) -> None:
            with self._held.lock:
                self._held.help_key = key

        try:
            ran = self.shared.help_once(hold)
        except Exception:
            # Optuna's database unreachable, or a study gone: helping is optional.
            logger.exception("helping a shared study failed")
            return False
        self.stats.helped_trials += ran
        return ran > 0

    def _heartbeat(self) -> None:
        interval = self.settings.job_heartbeat_s
        lease = self.settings.job_lease_s
        while not self.stop.wait(interval):
            try:
                store.renew_leases(self.db, self.owner, lease)
                with self._held.lock:
                    keys = (self._held.search_key, self._held.help_key)
                for key in keys:
                    if key is not None:
                        repo.renew_claim(self.db, key, self.owner, lease)
            except Exception:
                logger.exception("heartbeat failed; retrying")

    def _run_item(self, item: ClaimedItem) -> None:
        started = time.perf_counter()
        try:
            outcome = self._answer(item)
        except InterruptedError:
            # Stopping while another process searches this shape: hand it back.
            store.release_item(self.db, item.id, self.owner)
            return
        except Exception:
            logger.exception("job %s shape %d: unexpected error", item.job_id, item.position)
            if item.attempts < self.settings.job_max_attempts:
                # Possibly transient (database, memory): another claim retries it.
                store.release_item(self.db, item.id, self.owner)
                return
            outcome = _Outcome(
                error=problem_body(
                    500,
                    "internal-error",
                    f"the worker failed on this shape {item.attempts} times; see its log",
                    None,
                )
            )
        recorded = store.finish_item(
            self.db,
            item,
            self.owner,
            result_id=outcome.result_id,
            cached=outcome.cached,
            error=outcome.error,
        )
        if not recorded:
            self.stats.lost += 1
        elif outcome.error is not None:
            self.stats.failed += 1
        elif outcome.searched:
            self.stats.searched += 1
        else:
            self.stats.from_cache += 1
        status = "error" if outcome.error else "done"
        seconds = time.perf_counter() - started
        logger.debug("job %s shape %d: %s in %.3f s", item.job_id, item.position, status, seconds)

    # --- one shape --------------------------------------------------------------------------

    def _answer(self, item: ClaimedItem) -> _Outcome:
        db = self.db
        try:
            # Prepared here: the cache key is this worker's (its model version and presets).
            prepared = prepare_item(item.request_json, self._profile_preset(item))
        except ProfileError as exc:
            return _Outcome(error=_problem_document(profile_problem(exc, "calibration")))
        except InputError as exc:
            return _Outcome(error=_problem_document(input_error_problem(exc)))
        except UnknownSocError as exc:
            return _Outcome(error=_problem_document(unknown_soc_problem(exc)))
        key = prepared.cache_key
        found = repo.result_id(db, key)
        if found is not None:
            return _Outcome(result_id=found, cached=True)
        try:
            check_feasible(prepared.problem, prepared.request.fixed)
        except ProblemError as exc:
            return _Outcome(error=_problem_document(exc))
        except InputError as exc:
            return _Outcome(error=_problem_document(input_error_problem(exc)))
        lease = self.settings.job_lease_s
        while True:
            if repo.try_claim(db, key, self.owner, lease):
                with self._held.lock:
                    self._held.search_key = key
                try:
                    return self._search(prepared)
                finally:
                    with self._held.lock:
                        self._held.search_key = None
                    repo.release_claim(db, key, self.owner)
            # Another process is searching this key: wait for its answer (or its death).
            while repo.claim_is_live(db, key):
                if self.stop.wait(self.settings.claim_poll_s):
                    break
            found = repo.result_id(db, key)
            if found is not None:
                return _Outcome(result_id=found, cached=True)
            if self.stop.is_set():
                raise InterruptedError("stopping while waiting for another search")

    def _profile_preset(self, item: ClaimedItem) -> HardwarePreset | None:
        """The preset of the item's calibration profile (None: the packaged constants).

        Raises:
            ProfileError: The profile cannot be used here (e.g. this worker runs another model
                version than the one it was fitted against).
        """
        if item.calibration_id is None:
            return None
        soc = json.loads(item.request_json)["problem"]["soc"]
        return resolve_profile(self.db, soc, item.calibration_id)[0]

    def _search(self, prepared: PreparedTune) -> _Outcome:
        # The key may have been stored between our lookup and our claim.
        found = repo.result_id(self.db, prepared.cache_key)
        if found is not None:
            return _Outcome(result_id=found, cached=True)
        request, preset = prepared.request, prepared.preset
        if self.shared is not None and self.shared.applies(request):
            options = self.shared.lead_options(prepared.cache_key)
            outcome = tune_job(request, preset=preset, **options)
        elif self.search is not None:
            outcome = self.search(request, preset)
        else:
            outcome = tune_job(request, preset=preset)
        try:
            raise_outcome_error(outcome)
        except ProblemError as exc:
            return _Outcome(error=_problem_document(exc))
        answer_json, seconds = outcome[1]
        stored = repo.store_result(self.db, prepared.new_result(answer_json, seconds))
        return _Outcome(result_id=stored.id, cached=False, searched=True)


def wait_for_schema(db: Database, timeout_s: float) -> None:
    """Waits until the database schema is at the latest migration.

    Workers never migrate: with several processes that would race. A single-node SQLite server
    migrates at start; elsewhere ``tiler db upgrade`` is its own step.

    Raises:
        RuntimeError: Still not at the latest revision after ``timeout_s``.
    """
    from app.db import migrate

    head = migrate.head_revision()
    deadline = time.monotonic() + timeout_s
    current: str | None = None
    while True:
        try:
            current = migrate.current_revision(db.engine)
        except Exception as exc:  # any driver error: not reachable (yet)
            current = f"unreachable ({type(exc).__name__})"
        if current == head:
            return
        if time.monotonic() >= deadline:
            msg = (
                f"database schema is at {current}, latest is {head}: run `tiler db upgrade` "
                "(or start `tiler serve`, which migrates a single-node SQLite database)"
            )
            raise RuntimeError(msg)
        time.sleep(0.5)


def _install_stop_signals(worker: Worker) -> None:
    def _stop(signum: int, _frame: FrameType | None) -> None:
        logger.info("signal %d: finishing the current shape, then stopping", signum)
        worker.stop.set()
        # A second signal ends the process at once (default handlers).
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)


def run_one_worker(once: bool, poll_s: float | None, schema_wait_s: float) -> WorkerStats:
    """Runs one worker in this process with the settings from the environment.

    Args:
        once: Exit when no shape is claimable.
        poll_s: Idle poll interval (None: ``TILER_JOB_POLL_S``).
        schema_wait_s: How long to wait for the schema to reach the latest migration.
    """
    # A worker runs searches in this process: keep the estimator's block temporaries mapped.
    tune_allocator()
    # One search per process: numpy's BLAS threads would only oversubscribe the cores.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    settings = get_settings()
    if settings.job_shared_study_url is not None:
        # Before the schema wait: a wrong setting is reported at once, not after a timeout.
        check_study_url(settings.job_shared_study_url, settings.effective_database_url)
    db = Database.from_url(
        settings.effective_database_url, sqlite_busy_timeout_ms=settings.sqlite_busy_timeout_ms
    )
    try:
        wait_for_schema(db, schema_wait_s)
        worker = Worker(db, settings)
        _install_stop_signals(worker)
        return worker.run(once=once, poll_s=poll_s)
    finally:
        db.dispose()


def _child(once: bool, poll_s: float | None, schema_wait_s: float) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("app").setLevel(logging.INFO)
    run_one_worker(once, poll_s, schema_wait_s)


def run_workers(concurrency: int, *, once: bool, poll_s: float | None, schema_wait_s: float) -> int:
    """Runs ``concurrency`` workers (this process, or as many child processes).

    Returns:
        The exit status: 0, or 1 when a child worker failed.
    """
    if concurrency == 1:
        run_one_worker(once, poll_s, schema_wait_s)
        return 0
    # spawn: a fresh interpreter per worker (no inherited engine or locks).
    context = multiprocessing.get_context("spawn")
    children = [
        # Through run_in_child: a parent killed with SIGKILL must not leave its workers
        # running; their shapes' leases run out and other processes' workers take them over.
        context.Process(
            target=run_in_child,
            args=(os.getpid(), f"{__name__}:_child", once, poll_s, schema_wait_s),
            name=f"worker-{i}",
        )
        for i in range(concurrency)
    ]
    for child in children:
        child.start()

    def _forward(signum: int, _frame: FrameType | None) -> None:
        for child in children:
            if child.pid is not None and child.is_alive():
                os.kill(child.pid, signum)

    signal.signal(signal.SIGTERM, _forward)
    signal.signal(signal.SIGINT, _forward)
    for child in children:
        child.join()
    return 0 if all(child.exitcode == 0 for child in children) else 1
