"""The HTTP service: ``create_app(settings)`` builds the FastAPI app.

Routes: ``/v1`` (tilings, hardware, UB analysis, tuning jobs; Swagger UI at ``/docs`` and ReDoc
at ``/redoc``, both served from the installed ``fastapi-offline`` package, so they work without
internet access; the document at ``/v1/openapi.json``), ``/healthz``, ``/readyz``, ``/metrics``
and ``/problems/<type>`` outside the document, and the explorer page at ``/explore``.

At start (the lifespan) the app migrates the database when ``TILER_MIGRATE_ON_START`` is set
(single-node mode), opens the database, starts the bounded search pool and the job workers
(``TILER_JOB_WORKERS``, ``tiler serve --job-workers``).
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel

from app.api import (
    calibrations,
    candidates,
    compare,
    hardware,
    jobs,
    measurements,
    meta,
    tilings,
)
from app.api.middleware import DeclaredLengthMiddleware, TokenMiddleware
from app.api.replay import AnswersGeneration, CachedTuneReplay
from app.db import migrate
from app.db.engine import Database
from app.jobs.embedded import EmbeddedWorkers
from app.jobs.service import JobService
from app.metrics import GcPauses, Metrics, MetricsMiddleware
from app.problem_json import (
    apply_limits,
    document_bearer_token,
    install_problem_handlers,
    move_error_schemas_to_problem_json,
)
from app.schemas import JobBody
from app.settings import Settings, get_settings
from app.tuning import SearchPool, TuningService
from app.views import explore, measured

API_VERSION = "1.0.0"

#: Measurement feedback (issue 18): top-k candidates, measurements, calibration profiles.
FEEDBACK_ROUTERS = (candidates.router, measurements.router, calibrations.router, measured.router)

TAGS = [
    {
        "name": "tilings",
        "description": "Tune a TCubeTiling (cached), check or predict one, look up, list and "
        "export stored results.",
    },
    {"name": "hardware", "description": "The SoC presets and their digests."},
    {
        "name": "tuning-jobs",
        "description": "Batch tuning: submit many problems, follow progress (SSE), fetch results.",
    },
    {"name": "ub", "description": "Unified Buffer bank conflicts of vector instructions."},
]

DESCRIPTION = """\
TCubeTiling for Ascend C Matmul kernels, predicted by a calibrated model of the AI Core.

* `POST /v1/tilings:tune` - the fastest legal tiling of a problem; answers are cached by the
  normalized request, the hardware preset's digest and the model version.
* `POST /v1/tilings:evaluate`, `POST /v1/tilings:validate` - predict or check your own tiling.
* `GET /v1/tilings/{id}/export?format=json|cpp|bin` - the struct for your kernel.
* `POST /v1/tuning-jobs` - many problems at once; the server's job workers tune them.

Errors are `application/problem+json` (RFC 9457) with a stable `type` (`/problems/<slug>`).
When the server sets `TILER_API_TOKEN`, every non-GET request needs
`Authorization: Bearer <token>`.
"""


def _operation_id(route: APIRoute) -> str:
    # "<tag>-<function>": stable names for generated clients.
    tag = str(route.tags[0]) if route.tags else "default"
    return f"{tag}-{route.name}"


#: The collector's generation thresholds once the service runs (Python's are 700, 10, 10).
GC_THRESHOLDS = (10_000, 10, 10)


def _settle_garbage_collector() -> None:
    """Keeps the collector off the request path once the service has started.

    Everything loaded at start-up (modules, the app, the presets: hundreds of thousands of
    objects) lives as long as the process; a full collection used to walk it all and stall
    every request in flight for up to 70 ms (the cached tune's p99). Frozen, those objects are
    never walked again; the larger first threshold makes collections rarer, each as cheap.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _add_model_schemas(schema: dict[str, Any], *models: type[BaseModel]) -> dict[str, Any]:
    """Adds request models that routes parse themselves to the document's components."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in models:
        definition = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, nested in definition.pop("$defs", {}).items():
            components.setdefault(name, nested)
        components[model.__name__] = definition
    return schema


def create_app(settings: Settings | None = None) -> FastAPI:
    """Builds the service.

    Args:
        settings: The settings; None reads them from the environment (``TILER_*``).

    Returns:
        The app. Nothing touches the database until it starts (its lifespan).
    """
    settings = settings or get_settings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        url = settings.effective_database_url
        db = Database.from_url(url, sqlite_busy_timeout_ms=settings.sqlite_busy_timeout_ms)
        if settings.migrate_on_start:
            await anyio.to_thread.run_sync(migrate.upgrade, url)
        pool = SearchPool(settings.search_executor, settings.search_workers)
        pool.warm()
        app.state.service = TuningService(settings, db, pool, metrics)
        app.state.jobs = JobService(db, settings)
        app.state.head_revision = migrate.head_revision()
        workers = None
        if settings.job_workers:
            workers = EmbeddedWorkers(db, settings, settings.job_workers)
            workers.start()
        _settle_garbage_collector()
        pauses = GcPauses(metrics)
        gc.callbacks.append(pauses)
        try:
            yield
        finally:
            gc.callbacks.remove(pauses)
            if workers is not None:
                await anyio.to_thread.run_sync(workers.stop)
            await anyio.to_thread.run_sync(pool.shutdown)
            db.dispose()

    # Swagger UI and ReDoc from the package's own copies of their scripts, never a CDN: many
    # Ascend build hosts have no internet access.
    app = FastAPIOffline(
        title="Ascend Matmul tiling autotuner",
        version=API_VERSION,
        summary="TCubeTiling for Ascend C Matmul kernels, from a calibrated model of the AI Core.",
        description=DESCRIPTION,
        openapi_tags=TAGS,
        openapi_url="/v1/openapi.json",
        docs_url="/docs",
        redoc_url="/redoc",
        static_url="/docs/static",
        generate_unique_id_function=_operation_id,
        swagger_ui_parameters={"displayRequestDuration": True, "tryItOutEnabled": True},
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.explore_pages = explore.PageMemo(64)
    # Bumped by the measurement and calibration routes: replayed tune answers go stale.
    app.state.answers_generation = AnswersGeneration()
    install_problem_handlers(app)
    # The framework's body limit, per router: it stops a streamed body once it passes the limit
    # (a declared Content-Length is answered by DeclaredLengthMiddleware below).
    limit = settings.max_body_bytes
    for router in (
        tilings.router,
        compare.router,
        hardware.router,
        jobs.router,
        explore.router,
        *FEEDBACK_ROUTERS,
    ):
        app.include_router(router, max_body_size=limit)
    app.include_router(meta.router)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
            )
            schema = _add_model_schemas(schema, JobBody)
            schema = move_error_schemas_to_problem_json(schema)
            schema = apply_limits(
                schema,
                {
                    "TuneBody": {"budget": settings.max_budget},
                    "JobBody": {
                        "budget": settings.max_budget,
                        "problems": settings.job_max_problems,
                    },
                },
            )
            if settings.token is not None:
                schema = document_bearer_token(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    # Outermost last: metrics see every answer, including 401 and 413. The cached-tune replay
    # sits inside the token check.
    app.add_middleware(
        CachedTuneReplay,
        path="/v1/tilings:tune",
        entries=settings.memo_entries,
        metrics=metrics,
        generation=app.state.answers_generation,
        ttl_s=settings.replay_ttl_s,
    )
    token = settings.token
    if token is not None:
        app.add_middleware(TokenMiddleware, token=token, exempt_prefixes=("/explore",))
    app.add_middleware(DeclaredLengthMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    return app


app = create_app()
