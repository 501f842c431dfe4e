"""Service settings, read from the environment with the ``TILER_`` prefix.

Every setting has a default that runs the service on one machine with SQLite in ``./data``:

=================================  ==============================================================
variable                           meaning
=================================  ==============================================================
``TILER_DATA_DIR``                 directory of the SQLite file (default ``./data``)
``TILER_DATABASE_URL``             SQLAlchemy URL; unset means ``sqlite:///<data_dir>/tiler.db``;
                                   ``postgresql+psycopg://user@host:5432/db`` for scale-out
``TILER_MIGRATE_ON_START``         run ``tiler db upgrade`` when the server starts (single-node
                                   mode, default true); set false when several processes share a
                                   database and run the migration as its own deployment step
``TILER_DEFAULT_BUDGET``           trials of a ``tilings:tune`` without ``budget``; unset: the
                                   tuner's default (16 trials, stopped early on large kernels)
``TILER_MAX_BUDGET``               largest ``budget`` a request may ask for (422 above it; the
                                   OpenAPI document's maximum); at most the tuner's 5000
``TILER_SEARCH_WORKERS``           searches (and evaluations) that run at once; further ones wait
``TILER_SEARCH_EXECUTOR``          ``process`` (default: searches in worker processes, so they
                                   never hold the server's GIL) or ``thread``
``TILER_API_TOKEN``                when set, every non-GET request needs
                                   ``Authorization: Bearer <token>``, and so does a search
                                   started from ``/explore``; set but empty is refused at start
                                   (unset it to run an open service)
``TILER_MAX_BODY_BYTES``           larger request bodies are answered 413
``TILER_ACCESS_LOG``               one log line per request (default false: ``/metrics`` counts
                                   every request by route and status, and a line per request
                                   cost a third of the cached tune's throughput)
``TILER_CLAIM_LEASE_S``            lease of a search claim (renewed every third of it); a claim
                                   not renewed for this long is taken over (its process died)
``TILER_CLAIM_POLL_S``             how often a request waiting for another process's search polls
``TILER_SQLITE_BUSY_TIMEOUT_MS``   how long an SQLite writer waits for the write lock
``TILER_MEMO_ENTRIES``             requests and answers remembered in memory per process (a
                                   repeat then skips parsing and the database read)
``TILER_JOB_WORKERS``              batch-job workers ``tiler serve`` runs (0: separate
                                   ``tiler worker`` processes do the work); ``--job-workers``
``TILER_JOB_UNCLAIMED_NOTICE_S``   a queued job no worker has claimed for this long says so
``TILER_JOB_MAX_PROBLEMS``         most shapes one batch job may hold (422 above it; the
                                   OpenAPI document's maximum)
``TILER_JOB_LEASE_S``              lease of a job shape claimed by a worker; a shape whose worker
                                   stops renewing it (died) is claimed again after this long
``TILER_JOB_HEARTBEAT_S``          how often a worker renews its leases (well under the lease)
``TILER_JOB_MAX_ATTEMPTS``         claims of one shape before it fails ("worker lost")
``TILER_JOB_POLL_S``               how often an idle worker looks for work
``TILER_JOB_EVENTS_POLL_S``        how often an open event stream looks for new job events
``TILER_JOB_IDEMPOTENCY_TTL_S``    how long an ``Idempotency-Key`` maps to its job
``TILER_JOB_SHARED_STUDY_URL``     PostgreSQL URL of Optuna's own database (or schema): when
                                   set, a shape with a large budget is searched by several
                                   workers in one shared Optuna study (unset: one worker each)
``TILER_JOB_SHARED_MIN_BUDGET``    smallest explicit ``budget`` whose shapes are shared
``TILER_JOB_SHARED_WAIT_S``        how long a worker waits for the others' running trials of a
                                   shared study before answering without them
=================================  ==============================================================

Every limit a request can hit is a setting here, and only here: the service checks it, the OpenAPI
document states it (:func:`app.problem_json.apply_limits`), and the README's table lists these
defaults (a test compares them).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tiler.limits import MAX_BUDGET


class Settings(BaseSettings):
    """The service's configuration (environment variables ``TILER_<NAME>``)."""

    model_config = SettingsConfigDict(env_prefix="TILER_", extra="ignore", frozen=True)

    data_dir: Path = Path("data")
    database_url: str | None = None
    migrate_on_start: bool = True
    default_budget: int | None = Field(default=None, ge=0)
    max_budget: int = Field(default=2000, ge=0, le=MAX_BUDGET)
    search_workers: int = Field(default=1, ge=1, le=64)
    search_executor: Literal["process", "thread"] = "process"
    api_token: SecretStr | None = None
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    access_log: bool = False
    claim_lease_s: float = Field(default=6.0, gt=0)
    claim_poll_s: float = Field(default=0.05, gt=0)
    sqlite_busy_timeout_ms: int = Field(default=30_000, ge=0)
    memo_entries: int = Field(default=4096, ge=1)
    #: How long a cached tune's response is replayed byte for byte; a measurement or profile
    #: stored through another server on the same database is seen after at most this long.
    replay_ttl_s: float = Field(default=2.0, ge=0)
    job_workers: int = Field(default=1, ge=0, le=64)
    job_unclaimed_notice_s: float = Field(default=30.0, gt=0)
    job_max_problems: int = Field(default=10_000, ge=1)
    job_lease_s: float = Field(default=6.0, gt=0)
    job_heartbeat_s: float = Field(default=2.0, gt=0)
    job_max_attempts: int = Field(default=3, ge=1)
    job_poll_s: float = Field(default=0.5, gt=0)
    job_events_poll_s: float = Field(default=0.25, gt=0)
    job_idempotency_ttl_s: float = Field(default=86_400.0, gt=0)
    job_shared_study_url: str | None = None
    job_shared_min_budget: int = Field(default=64, ge=1)
    job_shared_wait_s: float = Field(default=120.0, gt=0)

    @field_validator("api_token")
    @classmethod
    def _token_not_empty(cls, value: SecretStr | None) -> SecretStr | None:
        # An empty value is a mistake (a template left blank, an unset shell variable), never
        # a way to turn authentication off: unsetting the variable is.
        if value is not None and not value.get_secret_value().strip():
            msg = (
                "TILER_API_TOKEN is set but empty: give it a value, or unset it to run the "
                "service without a token"
            )
            raise ValueError(msg)
        return value

    @property
    def effective_database_url(self) -> str:
        """The database URL: ``database_url``, or the SQLite file in ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'tiler.db').resolve()}"

    @property
    def token(self) -> str | None:
        """The API token in clear, or None when the service is open."""
        if self.api_token is None:
            return None
        return self.api_token.get_secret_value()


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Returns the settings read from the environment (once per process)."""
    return Settings()
