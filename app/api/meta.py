"""Operational routes, kept out of the OpenAPI document.

Liveness, readiness, metrics, and the pages that describe each problem type.
"""

from __future__ import annotations

import html

import anyio.to_thread
from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from app.db import migrate
from app.db.engine import Database
from app.problem_json import PROBLEM_TYPES, ProblemError, problem_response
from simcore.version import MODEL_VERSION

router = APIRouter(include_in_schema=False)


@router.get("/healthz")
async def healthz() -> JSONResponse:
    """Liveness: the process serves requests (no dependency is checked)."""
    return JSONResponse({"status": "ok", "model_version": MODEL_VERSION})


def _readiness(db: Database, head: str | None) -> str | None:
    """None when ready, else why not."""
    try:
        with db.read() as conn:
            conn.execute(text("SELECT 1"))
        current = migrate.current_revision(db.engine)
    except Exception as exc:  # any driver error means "not reachable"
        return f"database unreachable: {type(exc).__name__}"
    if current != head:
        return f"schema at revision {current}, latest is {head}: run `tiler db upgrade`"
    return None


@router.get("/readyz")
async def readyz(request: Request) -> Response:
    """Readiness: the database answers and its schema is at the latest migration."""
    db: Database = request.app.state.service.db
    head: str | None = request.app.state.head_revision
    reason = await anyio.to_thread.run_sync(_readiness, db, head)
    if reason is not None:
        return problem_response(503, "not-ready", reason, request.url.path)
    return JSONResponse({"status": "ready", "revision": head, "database": db.dialect})


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """Prometheus metrics of this process."""
    registry = request.app.state.metrics.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


@router.get("/problems/{slug}")
async def problem_type(slug: str) -> HTMLResponse:
    """A short page describing a problem type (the target of every problem's ``type`` URI)."""
    if slug not in PROBLEM_TYPES:
        raise ProblemError(404, "not-found", f"no problem type {slug!r}")
    title, description = PROBLEM_TYPES[slug]
    page = (
        f"<!doctype html><title>{html.escape(title)}</title>"
        f"<h1>{html.escape(title)}</h1><p><code>/problems/{html.escape(slug)}</code></p>"
        f"<p>{html.escape(description)}</p>"
    )
    return HTMLResponse(page)
