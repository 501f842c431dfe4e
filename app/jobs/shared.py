"""One search split across workers: a large shape's Optuna study, shared through PostgreSQL.

With ``TILER_JOB_SHARED_STUDY_URL`` set, a shape whose explicit ``budget`` is at least
``TILER_JOB_SHARED_MIN_BUDGET`` is not searched by its worker alone:

* **The lead** is the worker holding the shape's lease (and the key's single-flight claim). It
  screens, creates the study ``tiler-job-<cache key>`` in Optuna's storage and enqueues the
  whole budget as WAITING trials - the *slices* of the search, one trial each - then runs
  slices itself (:func:`tiler.tune.tune` with a :class:`tiler.study.SharedStudy`).
* **Helpers** are idle workers (nothing left to claim). They look at the shapes running now,
  and join a shared study that still has WAITING slices (:func:`tiler.tune.contribute`): each
  slice is taken by exactly one worker (Optuna's atomic WAITING -> RUNNING), so the trials of
  all workers total the budget. A helper holds a claim ``help`` row in ``search_claims`` that
  its heartbeat renews, so the lead can tell a dead helper from a slow one.
* **The answer** is written once, by the lead: when no slice is left it waits for the helpers'
  running slices (a dead helper's slice is marked FAIL), takes the best of every COMPLETE trial
  in the study, stores it in the cache and finishes the shape under its lease. A lead killed
  mid-study loses nothing but its running slice: the shape's lease runs out, another worker
  claims it, joins the same study (finishing its setup if needed) and runs what is left.

PostgreSQL only: Optuna's RDB storage on SQLite serializes every write of every worker on one
file lock and has no row locks (Optuna's FAQ advises against SQLite for parallel studies). The
URL must also differ from ``TILER_DATABASE_URL``: Optuna creates generic tables (``studies``,
``trials``, its own ``alembic_version``) that must not mix with the service's migrations.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import make_url

from app.db import repository as repo
from app.db.engine import Database
from app.jobs import store
from app.settings import Settings
from app.tuning import prepare_item
from simcore.errors import InputError, UnknownSocError
from tiler.study import SharedStudy, waiting_trials
from tiler.tune import TuneRequest, contribute

logger = logging.getLogger(__name__)

#: Running shapes an idle worker looks at when it seeks a study to help with.
HELP_CANDIDATES = 50


def check_study_url(url: str, database_url: str) -> None:
    """Refuses a shared-study URL that is not PostgreSQL or that is the service's database.

    Raises:
        ValueError: Naming the setting and why.
    """
    backend = make_url(url).get_backend_name()
    if backend != "postgresql":
        msg = (
            f"TILER_JOB_SHARED_STUDY_URL must be a PostgreSQL URL, not {backend}: Optuna's "
            "storage on SQLite serializes every worker on one file lock and has no row locks"
        )
        raise ValueError(msg)
    if make_url(url) == make_url(database_url):
        msg = (
            "TILER_JOB_SHARED_STUDY_URL must name its own database (or schema, through "
            "options=-csearch_path=...), not TILER_DATABASE_URL: Optuna's tables and "
            "alembic_version would mix with the service's"
        )
        raise ValueError(msg)


def study_name(cache_key: str) -> str:
    """The shared study of a shape: named from its cache key (same search, same study)."""
    return f"tiler-job-{cache_key}"


def help_claim_key(cache_key: str, owner: str) -> str:
    """The ``search_claims`` key a helper holds while it runs slices of a shape's study."""
    return hashlib.sha256(f"help:{cache_key}:{owner}".encode()).hexdigest()


class SharedStudies:
    """The shared-study side of one worker.

    Args:
        db: The service's database (jobs, claims).
        settings: ``job_shared_study_url``, ``job_shared_min_budget``, ``job_shared_wait_s``,
            ``job_lease_s``.
        owner: The worker's id (recorded on the trials it runs).
    """

    def __init__(self, db: Database, settings: Settings, owner: str) -> None:
        url = settings.job_shared_study_url
        if url is None:
            raise ValueError("TILER_JOB_SHARED_STUDY_URL is not set")
        check_study_url(url, settings.effective_database_url)
        self.db = db
        self.url = url
        self.settings = settings
        self.owner = owner

    def applies(self, request: TuneRequest) -> bool:
        """True when a shape's request asks for an explicit budget large enough to share."""
        explicit = "budget" in request.model_fields_set
        return explicit and request.budget >= self.settings.job_shared_min_budget

    def _is_alive(self, worker: str) -> bool:
        return store.owner_is_live(self.db, worker)

    def lead_options(self, cache_key: str) -> dict[str, Any]:
        """The options of :func:`tiler.tune.tune` for the worker that holds the shape."""
        shared = SharedStudy(
            study_name(cache_key),
            worker=self.owner,
            lead=True,
            wait_s=self.settings.job_shared_wait_s,
            is_alive=self._is_alive,
        )
        return {"storage": self.url, "shared": shared}

    def help_once(self, hold: Callable[[str | None], None]) -> int:
        """Runs slices of the first running shared study that has any left.

        Args:
            hold: Called with the helper claim's key before the slices run (so the worker's
                heartbeat renews it) and with None after.

        Returns:
            How many trials ran here (0: nothing to help with).
        """
        for item in store.running_items(self.db, HELP_CANDIDATES):
            try:
                prepared = prepare_item(item.request_json)
            except (InputError, UnknownSocError):
                continue  # the lead reports the shape's error
            if not self.applies(prepared.request):
                continue
            try:
                key = prepared.cache_key
                name = study_name(key)
                if waiting_trials(self.url, name) == 0:
                    continue
                claim = help_claim_key(key, self.owner)
                if not repo.try_claim(self.db, claim, self.owner, self.settings.job_lease_s):
                    continue
            except (InputError, UnknownSocError):
                continue  # the lead reports the shape's error
            hold(claim)
            try:
                shared = SharedStudy(
                    name, worker=self.owner, wait_s=self.settings.job_shared_wait_s
                )
                ran = contribute(prepared.request, storage=self.url, shared=shared)
            finally:
                hold(None)
                repo.release_claim(self.db, claim, self.owner)
            logger.info("helped study %s with %d trials", name, ran)
            return ran
        return 0
