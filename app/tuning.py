"""The tuning service behind the routes: cache key, cache lookup, bounded searches.

A ``tilings:tune`` request goes through :meth:`TuningService.tune`:

1. The body (:class:`app.schemas.TuneBody`, simcore's ``Problem`` inside) becomes the tuner's
   request (:class:`tiler.tune.TuneRequest`) once, and :func:`prepare_tune` builds the cache key:
   SHA-256 over the canonical request (problem with every default filled in, fixed fields,
   baseline, budget, sampler, seed), the preset's content digest and
   :data:`simcore.version.MODEL_VERSION`. A preset or model change never serves a stale answer.
2. A hit is served from the stored record (``cached: true``).
3. A miss goes through :class:`app.singleflight.SearchFlights`, which runs the search at most once
   per key (in this process and across processes) on the :class:`SearchPool`: a bounded pool of
   worker processes (or threads), so the event loop never runs a search.

What runs inside the pool (the ``*_job`` functions) lives in :mod:`app.search_jobs`, which
imports the search and not the server, so that a worker's start does not import the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import json
import multiprocessing
import os
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, TypeVar

import anyio.to_thread

from app.db import repository as repo
from app.db.engine import Database
from app.db.repository import NewResult
from app.lifeline import run_in_child
from app.metrics import Metrics
from app.problem_json import input_error_problem, unknown_soc_problem, violations_problem
from app.schemas import (
    EvaluateResponse,
    TilingCheckBody,
    TilingRecord,
    TuneBody,
    TuneResponse,
    ValidateResponse,
)
from app.search_jobs import JobOutcome, evaluate_job, ready, tune_job
from app.settings import Settings
from app.singleflight import SearchFlights
from simcore.errors import InputError, UnknownSocError, UnsupportedError
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.tiling.problem import Problem, check_supported
from simcore.tiling.tcube import TCubeTiling
from simcore.version import MODEL_VERSION
from tiler.lru import Lru
from tiler.tune import TuneRequest

T = TypeVar("T")


@cache
def preset_digest(soc: str) -> str:
    """The content digest of a packaged preset (memoized: packaged presets never change).

    Raises:
        UnknownSocError: No preset has that name.
    """
    return load_preset(soc).digest


def canonical_json(value: Any) -> str:
    """Deterministic compact JSON (sorted keys): the text that is hashed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


#: The samplers that need the optional ``gp`` dependency group, and what they need from it.
_GP_MODULES = ("torch", "scipy")


def check_search_options(budget: int | None, sampler: str, max_budget: int) -> None:
    """Refuses a budget above the server's limit, or a sampler this installation cannot run.

    Checked before anything is searched, so the answer comes at once and names the field.

    Raises:
        InputError: ``budget`` above ``max_budget`` (TILER_MAX_BUDGET), or ``sampler`` ``gp``
            without torch and scipy installed.
    """
    if budget is not None and budget > max_budget:
        raise InputError(
            "budget",
            "max_budget",
            f"budget {budget} exceeds this server's limit of {max_budget} trials "
            "(TILER_MAX_BUDGET)",
            budget,
            max_budget,
        )
    if sampler == "gp":
        # find_spec, not import: Optuna registers lazy stand-ins for its optional modules.
        missing = [m for m in _GP_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise InputError(
                "sampler",
                "sampler_unavailable",
                f"sampler 'gp' needs {' and '.join(missing)}, which this server does not have: "
                "install the optional gp group (`uv sync --frozen --group gp`), or use tpe, "
                "cmaes or random",
                sampler,
                ["tpe", "cmaes", "random"],
            )


@dataclass(frozen=True)
class PreparedTune:
    """A tune request ready to search, and its cache key.

    Attributes:
        request: The tuner's request (what the search runs).
        problem: Its problem.
        canonical: The canonical request (``tiler.tune.canonical_request``).
        request_json: ``canonical`` as deterministic JSON text (what is stored with the answer).
        cache_key: SHA-256 hex of the request, preset digest and model version.
        preset_digest: Digest of the problem's preset.
    """

    request: TuneRequest
    problem: Problem
    canonical: dict[str, Any]
    request_json: str
    cache_key: str
    preset_digest: str
    #: A calibration profile's preset (None: the packaged one).
    preset: HardwarePreset | None = None

    def new_result(self, answer_json: str, search_s: float) -> NewResult:
        """The row to store for this request's answer."""
        problem = self.problem
        return NewResult(
            cache_key=self.cache_key,
            soc=problem.soc,
            dtype=problem.dtype.value,
            m=problem.m,
            n=problem.n,
            k=problem.k,
            model_version=MODEL_VERSION,
            preset_digest=self.preset_digest,
            request_json=self.request_json,
            answer_json=answer_json,
            search_s=search_s,
        )


def prepare_tune(
    request: TuneRequest, problem: Problem, preset: HardwarePreset | None = None
) -> PreparedTune:
    """Builds the cache key of a tune request.

    Args:
        request: The request.
        problem: Its problem (the typed one it was built from).
        preset: A calibration profile's preset (its digest, not the packaged one's, is keyed).

    Raises:
        InputError: A pin or the baseline is invalid (the tuner names the field).
        UnknownSocError: The problem names no known SoC.
    """
    from tiler.tune import canonical_request

    canonical = canonical_request(request)
    digest = preset_digest(problem.soc) if preset is None else preset.digest
    request_json = canonical_json(canonical)
    keyed = canonical_json(
        {"request": canonical, "preset_digest": digest, "model_version": MODEL_VERSION}
    )
    cache_key = hashlib.sha256(keyed.encode()).hexdigest()
    return PreparedTune(request, problem, canonical, request_json, cache_key, digest, preset)


def prepare_item(request_json: str, preset: HardwarePreset | None = None) -> PreparedTune:
    """A queued job shape's request, parsed once from its row, and its cache key here.

    ``preset`` is the shape's calibration profile's (None: the packaged one).

    Raises:
        InputError: The request does not parse with this process's tuner (named field).
        UnknownSocError: Its SoC has no preset here.
    """
    from simcore.tiling.problem import parse_problem
    from tiler.tune import parse_tune_request

    request = parse_tune_request(json.loads(request_json))
    return prepare_tune(request, parse_problem(request.problem), preset)


def raise_outcome_error(outcome: JobOutcome) -> None:
    """Re-raises a pool job's error in the server process as the matching problem."""
    kind, data = outcome
    if kind == "ok":
        return
    if kind == "unknown_soc":
        raise unknown_soc_problem(UnknownSocError(data["soc"], data["known"]))
    cls = UnsupportedError if kind == "unsupported" else InputError
    raise input_error_problem(
        cls(data["field"], data["rule"], data["message"], data["value"], data["limit"])
    )


def check_feasible(problem: Problem, fixed: Mapping[str, Any] | None = None) -> None:
    """Refuses a problem that breaks a rule of its own (seed 002 table 1), or impossible pins.

    Checked before a search is claimed (and counted), so the answer comes at once and names the
    rule (for example ``ND_A_KA_RANGE`` for K > 65535 with a non-transposed ND A) or the pin
    that no legal tiling meets, instead of an empty space after a search.

    Args:
        problem: The problem.
        fixed: The request's pinned fields (struct names); with pins, the legal space is built
            (milliseconds), which is where a pin that cannot be met shows.

    Raises:
        UnsupportedError: The chip cannot run the problem (dtype, device memory).
        InputError: A pin cannot be met (``fixed.<field>``).
        ProblemError: 422 ``infeasible-problem`` listing the violated rules.
    """
    from simcore.tiling.legality import problem_violations

    preset = load_preset(problem.soc)
    check_supported(problem, preset)
    violations = [v.to_dict() for v in problem_violations(problem, preset)]
    if violations:
        raise violations_problem(
            "infeasible-problem",
            "no tiling can be legal for this problem: "
            + "; ".join(v["message"] for v in violations),
            violations,
        )
    if fixed:
        from tiler.space import build_space

        build_space(problem, preset, fixed)


def checked_pair(body: TilingCheckBody) -> tuple[Problem, TCubeTiling, HardwarePreset]:
    """The problem, its complete tiling and its chip, from a validate / evaluate body.

    Raises:
        UnknownSocError: The problem names no known SoC.
        InputError: The chip cannot run the problem, or the tiling's fields contradict it.
    """
    problem = body.problem
    preset = load_preset(problem.soc)
    check_supported(problem, preset)
    return problem, body.tiling.complete(problem, preset), preset


def validate_pair(body: TilingCheckBody) -> ValidateResponse:
    """The legality report of a tiling, as ``tiler validate`` prints it."""
    from simcore.evaluate import validate

    return ValidateResponse.model_validate(validate(*checked_pair(body)))


class SearchPool:
    """A bounded pool that runs searches and evaluations off the event loop.

    Args:
        kind: ``process`` (worker processes: a search never competes with the server for the
            GIL) or ``thread``.
        workers: How many run at once; further calls queue.
    """

    def __init__(self, kind: str, workers: int) -> None:
        self.kind = kind
        self.workers = workers
        self._executor = self._make()
        # The async callers' admission: at most ``workers`` of their calls are in the executor,
        # the others wait here (where the wait is visible and costs no claim).
        self._slots = asyncio.Semaphore(workers)

    def _make(self) -> Executor:
        if self.kind == "thread":
            return ThreadPoolExecutor(self.workers, thread_name_prefix="tiler-search")
        # spawn, not fork: the server has threads (anyio's pool, the DB pool) and forking a
        # threaded process can copy a held lock into the child.
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            # A server killed with SIGKILL must not leave its searches running (and holding
            # memory): each worker watches this process from before it imports anything heavy.
            initializer=run_in_child,
            initargs=(os.getpid(), "app.search_jobs:worker_init"),
        )

    def warm(self) -> None:
        """Starts the worker processes now, in the background, instead of at the first search.

        A worker's start imports the search (seconds on a loaded machine); paid at start-up,
        it no longer delays the first search, or the takeover of a dead server's search.
        """
        if self.kind == "process":
            for _ in range(self.workers):
                self._executor.submit(ready)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Holds one of the pool's ``workers`` slots: entered once a worker is free.

        A search claims its cache key (across processes) only inside a slot, so that a process
        never holds claims on work it has not started while another process sits idle.
        """
        async with self._slots:
            yield

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Runs ``fn(*args)`` in the pool (once a slot is free) and returns its result."""
        async with self._slots:
            return await self.call_in_slot(fn, *args)

    async def call_in_slot(self, fn: Callable[..., T], *args: Any) -> T:
        """Runs ``fn(*args)`` in the pool; the caller holds a :meth:`slot`."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, fn, *args)
        except BrokenProcessPool:
            # A worker died (killed, out of memory): replace the pool and retry the call once.
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = self._make()
            return await loop.run_in_executor(self._executor, fn, *args)

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Runs ``fn(*args, **kwargs)`` in the pool and waits for it (call from a thread)."""
        try:
            return self._executor.submit(fn, *args, **kwargs).result()
        except BrokenProcessPool:
            # As in call(): a dead worker process costs one retry on a fresh pool.
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = self._make()
            return self._executor.submit(fn, *args, **kwargs).result()

    def shutdown(self) -> None:
        """Stops the workers (running tasks finish first)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


class TuningService:
    """What the routes call: tuning with the cache, evaluation, lookups.

    Args:
        settings: The settings.
        db: The database.
        pool: Where searches and evaluations run.
        metrics: The process's metrics.
    """

    def __init__(self, settings: Settings, db: Database, pool: SearchPool, metrics: Metrics):
        self.settings = settings
        self.db = db
        self.pool = pool
        self.metrics = metrics
        self.flights = SearchFlights(
            db, metrics, lease_s=settings.claim_lease_s, poll_s=settings.claim_poll_s,
            slot=pool.slot,
        )  # fmt: skip
        # Two memos in front of the database, both safe because what they hold never changes:
        # a request's cache key is a pure function of the request (the preset digest and the
        # model version are fixed for the life of the process), and a stored answer is never
        # rewritten (the first one stored for a key is the answer). They make a repeated
        # request skip the preparation and the database round trip.
        self._prepared: Lru[str, PreparedTune] = Lru(settings.memo_entries)
        self._stored: Lru[str, TilingRecord] = Lru(settings.memo_entries)

    def prepare(self, body: TuneBody, preset: HardwarePreset | None = None) -> PreparedTune:
        """The tuner's request of a body, with the server's default budget, and its cache key.

        Raises:
            ProblemError: 422 naming the field: the budget above the server's limit, a sampler
                this installation lacks, a pin or a baseline the tuner refuses, an unknown SoC.
        """
        budget = self.settings.default_budget if body.budget is None else body.budget
        # The profile's digest, not its name: "active" may name another profile tomorrow.
        digest = "" if preset is None else preset.digest
        memo_key = f"{budget}|{digest}|{body.model_dump_json()}"
        prepared = self._prepared.get(memo_key)
        if prepared is None:
            try:
                check_search_options(budget, body.sampler, self.settings.max_budget)
                prepared = prepare_tune(body.tuner_request(budget), body.problem, preset)
            except InputError as exc:
                raise input_error_problem(exc) from exc
            except UnknownSocError as exc:
                raise unknown_soc_problem(exc) from exc
            self._prepared.put(memo_key, prepared)
        return prepared

    async def tune(self, body: TuneBody, preset: HardwarePreset | None = None) -> TuneResponse:
        """Answers a tune request from the cache or by one search.

        ``preset`` is a calibration profile's (None: the packaged one); it is keyed by digest.

        Returns:
            The answer, ``cached`` true when it was in the cache on arrival.

        Raises:
            ProblemError: The request is invalid (422 naming the field or rule).
        """
        prepared = self.prepare(body, preset)
        stored = await self.lookup(prepared)
        if stored is not None:
            return stored.answer(cached=True)
        return (await self.search(prepared)).answer(cached=False)

    async def lookup(self, prepared: PreparedTune) -> TilingRecord | None:
        """The stored answer of a prepared request (counted as a cache hit), or None."""
        stored = self._stored.get(prepared.cache_key)
        if stored is None:
            stored = await anyio.to_thread.run_sync(repo.find_by_key, self.db, prepared.cache_key)
        if stored is not None:
            self._stored.put(prepared.cache_key, stored)
            self.metrics.cache_hits.inc()
        return stored

    async def search(self, prepared: PreparedTune) -> TilingRecord:
        """Searches a request that was not in the cache (once across requests and processes).

        The search runs in the pool once a slot is free (:meth:`SearchPool.slot`); identical
        requests meanwhile join it (:class:`app.singleflight.SearchFlights`).

        Raises:
            ProblemError: The problem or its pins cannot be met (before anything is searched),
                or the search refused the request.
            InputError: A pin that no legal tiling meets (``fixed.<field>``).
        """
        self.metrics.cache_misses.inc()
        # Off the event loop: with pins, the check builds the legal space (milliseconds).
        await anyio.to_thread.run_sync(check_feasible, prepared.problem, prepared.request.fixed)

        async def compute() -> NewResult:
            # Called by the flight inside a pool slot it holds.
            job = tune_job if prepared.preset is None else partial(tune_job, preset=prepared.preset)
            outcome = await self.pool.call_in_slot(job, prepared.request)
            raise_outcome_error(outcome)
            answer_json, seconds = outcome[1]
            return prepared.new_result(answer_json, seconds)

        stored = await self.flights.run(prepared.cache_key, compute)
        self._stored.put(prepared.cache_key, stored)
        return stored

    async def evaluate(
        self, body: TilingCheckBody, *, explain: bool, preset: HardwarePreset | None = None
    ) -> EvaluateResponse:
        """Validates and predicts a tiling; an illegal tiling is a 422 listing its violations.

        ``preset`` is a calibration profile's (None: the packaged one).
        """
        problem, tiling, _preset = checked_pair(body)
        outcome = await self.pool.call(evaluate_job, problem, tiling, explain, preset)
        if outcome[0] == "illegal":
            report = outcome[1]
            ids = ", ".join(v["id"] for v in report["violations"])
            raise violations_problem(
                "illegal-tiling", f"the tiling breaks {ids}", report["violations"]
            )
        return EvaluateResponse.model_validate(outcome[1])
