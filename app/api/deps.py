"""Dependencies shared by the routes (``Annotated`` aliases)."""

from __future__ import annotations

from email.message import Message
from typing import Annotated

from fastapi import Depends, Query, Request

from app.db.repository import ShapeRange
from app.jobs.service import JobService
from app.problem_json import ProblemError
from app.settings import Settings
from app.tuning import TuningService
from simcore.tiling.problem import INT32_MAX


def get_service(request: Request) -> TuningService:
    """The app's tuning service (built by the lifespan)."""
    service: TuningService = request.app.state.service
    return service


def get_job_service(request: Request) -> JobService:
    """The app's job service (built by the lifespan)."""
    service: JobService = request.app.state.jobs
    return service


def get_settings_dep(request: Request) -> Settings:
    """The app's settings."""
    settings: Settings = request.app.state.settings
    return settings


def is_json_media_type(content_type: str | None) -> bool:
    """True for ``application/json`` and ``application/<anything>+json`` (parameters aside)."""
    if not content_type:
        return False
    message = Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def require_json_body(request: Request) -> None:
    """Refuses a body that is not declared as JSON with 415, before the body is validated.

    Without it the framework leaves such a body unparsed, and the caller gets a 422 saying the
    body is not "a valid dictionary", quoting the raw bytes. A request without a body is left to
    validation, which names the missing body.

    Raises:
        ProblemError: 415 ``unsupported-media-type`` naming the expected type.
    """
    headers = request.headers
    has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
    content_type = headers.get("content-type")
    if not has_body or is_json_media_type(content_type):
        return
    given = content_type or "no Content-Type"
    raise ProblemError(
        415,
        "unsupported-media-type",
        f"the body must be JSON: send 'Content-Type: application/json' (got {given!r})",
        headers={"Accept-Post": "application/json"},
        errors=[
            {
                "field": "content-type",
                "rule": "media_type",
                "message": "content-type: expected application/json",
                "value": content_type,
                "limit": "application/json",
            }
        ],
    )


ServiceDep = Annotated[TuningService, Depends(get_service)]
JobServiceDep = Annotated[JobService, Depends(get_job_service)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
#: Route dependency of every operation that takes a JSON body.
JSON_BODY = [Depends(require_json_body)]


_Dim = Query(ge=1, le=INT32_MAX)


def shape_range_query(
    m_min: Annotated[int | None, _Dim] = None,
    m_max: Annotated[int | None, _Dim] = None,
    n_min: Annotated[int | None, _Dim] = None,
    n_max: Annotated[int | None, _Dim] = None,
    k_min: Annotated[int | None, _Dim] = None,
    k_max: Annotated[int | None, _Dim] = None,
) -> ShapeRange:
    """The M/N/K range query parameters of a listing (``m_min`` ... ``k_max``; None: any)."""
    return ShapeRange(m_min=m_min, m_max=m_max, n_min=n_min, n_max=n_max, k_min=k_min, k_max=k_max)


ShapeRangeDep = Annotated[ShapeRange, Depends(shape_range_query)]
