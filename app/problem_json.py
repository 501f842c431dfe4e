"""Errors as ``application/problem+json`` (RFC 9457), with stable ``type`` URIs.

Every error the service answers is a :class:`ProblemDetail`. ``type`` is a relative URI
``/problems/<slug>`` (resolved against the service; ``GET /problems/<slug>`` describes it), and
stays the same across versions so that clients can branch on it:

=========================  ======  ============================================================
type                       status  when
=========================  ======  ============================================================
``validation-error``       422     a field is missing, unknown, of the wrong type or out of range;
                                   ``errors`` lists every bad field (``field``, ``rule``,
                                   ``message``, ``value``, ``limit``)
``unsupported-problem``    422     the chip cannot run the problem (dtype, memory); ``errors``
``infeasible-problem``     422     no tiling can be legal for the problem (for example K > 65535
                                   with a non-transposed ND A); ``violations``
``illegal-tiling``         422     the tiling breaks legality rules; ``violations`` lists each
                                   rule's ``id``, ``value`` and ``limit``
``unknown-soc``            422     the body names no known SoC (404 on ``/v1/hardware/{soc}``);
                                   ``known`` lists the SoCs
``timeline-too-large``     422     the kernel is too long to simulate for its timeline picture
``malformed-json``         400     the body is not JSON
``unauthorized``           401     an API token is configured and the request lacks it
``not-found``              404     no such route or resource
``method-not-allowed``     405     the route exists with another method
``payload-too-large``      413     the body exceeds ``TILER_MAX_BODY_BYTES``
``unsupported-media-type`` 415     a body without ``Content-Type: application/json``
``not-ready``              503     ``/readyz``: database unreachable or schema not at head
``internal-error``         500     a bug; the body hides the internals (the log has them)
=========================  ======  ============================================================
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from simcore.errors import InputError, UnknownSocError, UnsupportedError

logger = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_BASE = "/problems/"

#: Every problem type: slug -> (title, description).
PROBLEM_TYPES: Mapping[str, tuple[str, str]] = {
    "validation-error": (
        "Invalid request",
        "A field is missing, unknown, of the wrong type or out of range. `errors` lists every "
        "bad field with its rule, value and limit.",
    ),
    "unsupported-problem": (
        "Problem not supported by the chip",
        "The chip cannot run this Matmul (no cube unit for the dtype, or a matrix larger than "
        "device memory). `errors` names the field.",
    ),
    "infeasible-problem": (
        "No legal tiling exists",
        "The problem itself breaks a TCubeTiling rule (seed 002 table 1), so no tiling can be "
        "legal. `violations` lists the rules.",
    ),
    "illegal-tiling": (
        "Illegal tiling",
        "The tiling breaks legality rules. `violations` lists each rule's id, value and limit.",
    ),
    "unknown-soc": (
        "Unknown SoC",
        "No hardware preset has this name. `known` lists the presets.",
    ),
    "timeline-too-large": (
        "Timeline too large",
        "The kernel issues too many instructions per core to simulate and draw its timeline.",
    ),
    "malformed-json": ("Malformed JSON", "The request body is not valid JSON."),
    "unauthorized": (
        "Unauthorized",
        "This service requires `Authorization: Bearer <token>` on every non-GET request.",
    ),
    "not-found": ("Not found", "No such route or resource."),
    "method-not-allowed": ("Method not allowed", "The route exists with another method."),
    "payload-too-large": ("Payload too large", "The request body exceeds the configured limit."),
    "unsupported-media-type": (
        "Unsupported media type",
        "The body must be JSON, sent with `Content-Type: application/json`.",
    ),
    "not-ready": (
        "Not ready",
        "The database is unreachable or its schema is not at the latest migration "
        "(run `tiler db upgrade`).",
    ),
    "internal-error": ("Internal error", "An unexpected error; the server log has the details."),
}

_STATUS_SLUGS = {
    400: "malformed-json",
    401: "unauthorized",
    404: "not-found",
    405: "method-not-allowed",
    413: "payload-too-large",
    415: "unsupported-media-type",
    503: "not-ready",
}


class FieldError(BaseModel):
    """One bad field of a request."""

    field: str = Field(description="Dotted path of the field, e.g. `problem.m`.")
    rule: str = Field(description="Stable id of the broken rule, e.g. `greater_than_equal`.")
    message: str
    value: Any = Field(default=None, description="The value given (absent when missing).")
    limit: Any = Field(default=None, description="The limit the value broke, when there is one.")


class ViolationDetail(BaseModel):
    """One broken legality rule of a tiling or problem."""

    id: str = Field(description="Stable rule id, e.g. `L0A_CAPACITY`.")
    message: str
    formula: str
    value: int
    limit: int | list[int]
    fields: list[str]


class ProblemDetail(BaseModel):
    """An RFC 9457 problem document (each error status's own example: :data:`EXAMPLES`)."""

    type: str = Field(description="Stable URI of the problem type (`/problems/<slug>`).")
    title: str
    status: int
    detail: str
    instance: str | None = Field(default=None, description="The request path.")
    errors: list[FieldError] | None = None
    violations: list[ViolationDetail] | None = None
    known: list[str] | None = Field(default=None, description="Known SoCs (unknown-soc).")


class ProblemError(Exception):
    """An error the service answers as problem+json.

    Args:
        status: HTTP status.
        slug: Problem type slug (a key of :data:`PROBLEM_TYPES`).
        detail: Human-readable explanation of this occurrence.
        headers: Extra response headers.
        **extensions: Extension members (``errors``, ``violations``, ``known``).
    """

    def __init__(
        self,
        status: int,
        slug: str,
        detail: str,
        *,
        headers: Mapping[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.detail = detail
        self.headers = dict(headers or {})
        self.extensions = extensions


def problem_body(
    status: int, slug: str, detail: str, instance: str | None, **extensions: Any
) -> dict[str, Any]:
    """Builds a problem document (members with None values are left out)."""
    title = PROBLEM_TYPES[slug][0]
    body: dict[str, Any] = {
        "type": PROBLEM_BASE + slug,
        "title": title,
        "status": status,
        "detail": detail,
    }
    if instance is not None:
        body["instance"] = instance
    body.update({k: v for k, v in extensions.items() if v is not None})
    return body


def _encodable(value: Any) -> Any:
    """Makes a document encodable as strict UTF-8 JSON, whatever the request put in it.

    An error echoes the offending value, and a request can carry values that JSON text cannot
    hold: ``NaN`` and ``Infinity`` (which Python's parser accepts) and lone surrogates (the
    JSON escape of U+D800 alone). They are answered as text (``"nan"``, ``"inf"``, the escape
    spelled out), so the error is a 4xx naming the field instead of a 500 from the encoder.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, list | tuple):
        return [_encodable(v) for v in value]
    if isinstance(value, dict):
        return {_encodable(str(k)): _encodable(v) for k, v in value.items()}
    return value


class ProblemResponse(JSONResponse):
    """A problem+json response whose body is always encodable (see :func:`_encodable`)."""

    media_type = PROBLEM_MEDIA_TYPE

    def render(self, content: Any) -> bytes:
        """Encodes the document as compact UTF-8 JSON."""
        text = json.dumps(
            _encodable(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
        return text.encode("utf-8")


def problem_response(
    status: int,
    slug: str,
    detail: str,
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
    **extensions: Any,
) -> JSONResponse:
    """Returns a problem+json response."""
    return ProblemResponse(
        problem_body(status, slug, detail, instance, **extensions),
        status_code=status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=dict(headers or {}),
    )


def input_error_problem(exc: InputError) -> ProblemError:
    """Maps a simcore/tiler input error to a 422 problem naming the field."""
    slug = "unsupported-problem" if isinstance(exc, UnsupportedError) else "validation-error"
    return ProblemError(422, slug, exc.message, errors=[_jsonable_error(exc.to_dict())])


def unknown_soc_problem(
    exc: UnknownSocError, status: int = 422, field: str | None = None
) -> ProblemError:
    """Maps an unknown SoC to a problem (422 in a body, 404 as a path parameter).

    Args:
        exc: The error.
        status: 422 (the SoC came in a body) or 404 (it was the resource).
        field: The field that named it; default ``problem.soc`` (422) or ``soc`` (404).
    """
    if field is None:
        field = "problem.soc" if status == 422 else "soc"
    return ProblemError(
        status,
        "unknown-soc",
        f"unknown SoC {exc.soc!r}",
        known=list(exc.known),
        errors=[
            {
                "field": field,
                "rule": "unknown_soc",
                "message": f"unknown SoC {exc.soc!r}",
                "value": exc.soc,
                "limit": None,
            }
        ],
    )


def violations_problem(
    slug: str, detail: str, violations: Sequence[Mapping[str, Any]]
) -> ProblemError:
    """A 422 problem listing legality violations (``illegal-tiling`` or ``infeasible-problem``)."""
    return ProblemError(422, slug, detail, violations=[dict(v) for v in violations])


#: How deep an echoed value is copied into a problem; deeper parts become "...". A request can
#: nest arrays thousands deep, and the copy must not exhaust the interpreter's stack.
_ECHO_DEPTH = 8


def _jsonable(value: Any, depth: int = 0) -> Any:
    """Makes an error's value JSON-safe (bytes, sets and other objects become text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth >= _ECHO_DEPTH and isinstance(value, list | tuple | dict):
        return "..."
    if isinstance(value, list | tuple):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    return str(value)


def _jsonable_error(err: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _jsonable(v) for k, v in err.items()}


def _limit_of(ctx: Mapping[str, Any]) -> Any:
    if "limit" in ctx:
        # A validator of this service set the limit itself (e.g. the allowed values, as a list).
        return ctx["limit"]
    for key in ("ge", "gt", "le", "lt", "max_length", "min_length", "expected"):
        if key in ctx:
            return f"{key} {ctx[key]}"
    return None


def validation_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    """Turns FastAPI's validation errors into :class:`FieldError` dicts (every bad field)."""
    out = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ())]
        # Drop FastAPI's "body"/"query"/"path" prefix: the field path is what the caller wrote.
        if loc and loc[0] in ("body", "query", "path", "header"):
            where, loc = loc[0], loc[1:]
        else:
            where = ""
        field = ".".join(loc) or where or "request"
        if err.get("type") == "json_invalid":
            # FastAPI locates a JSON syntax error by character position: name the body instead.
            position = loc[0] if loc else "?"
            reason = (err.get("ctx") or {}).get("error", "invalid JSON")
            out.append(
                {
                    "field": "body",
                    "rule": "json_invalid",
                    "message": f"body is not valid JSON at character {position}: {reason}",
                    "value": None,
                    "limit": None,
                }
            )
            continue
        rule = {"extra_forbidden": "unknown_field", "missing": "required"}.get(
            err.get("type", ""), err.get("type", "invalid")
        )
        value = None if err.get("type") == "missing" else err.get("input")
        if isinstance(value, dict):
            value = None  # the whole object is not informative; the field says where
        out.append(
            _jsonable_error(
                {
                    "field": field,
                    "rule": rule,
                    "message": f"{field}: {err.get('msg', 'invalid')}",
                    "value": value,
                    "limit": _limit_of(err.get("ctx") or {}),
                }
            )
        )
    return out


async def _api_problem_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProblemError)
    return problem_response(
        exc.status, exc.slug, exc.detail, request.url.path, exc.headers, **exc.extensions
    )


async def _validation_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    allowed = _allowed_methods(request)
    if allowed and request.method not in allowed:
        # A path parameter swallowed an action suffix (GET /x/1:cancel routed to GET /x/{id}):
        # the resource is /x/{id}:cancel, which has no GET.
        return problem_response(
            405, "method-not-allowed", f"{request.method} is not allowed here",
            request.url.path, {"Allow": ", ".join(allowed)},
        )  # fmt: skip
    errors = validation_errors(exc)
    if any(e["rule"] == "json_invalid" for e in errors):
        return problem_response(
            400, "malformed-json", "the request body is not valid JSON", request.url.path,
            errors=errors,
        )  # fmt: skip
    names = ", ".join(dict.fromkeys(e["field"] for e in errors))
    noun = "field" if len(errors) == 1 else "fields"
    return problem_response(
        422, "validation-error", f"{len(errors)} invalid {noun}: {names}", request.url.path,
        errors=errors,
    )  # fmt: skip


async def _input_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InputError)
    return await _api_problem_handler(request, input_error_problem(exc))


async def _unknown_soc_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, UnknownSocError)
    return await _api_problem_handler(request, unknown_soc_problem(exc))


_HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def _allowed_methods(request: Request) -> list[str]:
    """The documented methods of the path, for ``Allow`` on a 405.

    Starlette lists the methods of the first route whose path matches, which is wrong twice:
    a path served by two routes (GET and POST on one path) lists one of them, and ``/x/{id}``
    also matches ``/x/1:cancel``, whose own route is ``/x/{id}:cancel``. So: the OpenAPI path
    templates that match, the most specific ones (most literal characters), all their methods.
    Empty for paths outside the document.
    """
    path = request.url.path
    best, methods = -1, set()
    for template, item in request.app.openapi().get("paths", {}).items():
        parts = re.split(r"{[^}]+}", template)
        if not re.fullmatch("[^/]+".join(re.escape(p) for p in parts), path):
            continue
        literal = sum(len(p) for p in parts)
        found = {m.upper() for m in item if m in _HTTP_METHODS}
        if literal > best:
            best, methods = literal, found
        elif literal == best:
            methods |= found
    return sorted(methods)


async def _http_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    slug = _STATUS_SLUGS.get(exc.status_code, "not-found" if exc.status_code == 404 else "")
    if not slug:
        slug = "internal-error" if exc.status_code >= 500 else "validation-error"
    detail = exc.detail if isinstance(exc.detail, str) else PROBLEM_TYPES[slug][1]
    limit = request.scope.get("starlette.max_body_size")
    if exc.status_code == 413 and limit is not None:
        # The framework's own limit, hit while a streamed (chunked) body was read.
        detail = f"the request body exceeds {limit} bytes (TILER_MAX_BODY_BYTES)"
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allowed = _allowed_methods(request)
        if allowed:
            headers["Allow"] = ", ".join(allowed)
    return problem_response(exc.status_code, slug, detail, request.url.path, headers)


async def _unexpected_handler(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem_response(
        500, "internal-error", "unexpected error; see the server log", request.url.path
    )


def install_problem_handlers(app: FastAPI) -> None:
    """Registers the handlers that turn every error into problem+json."""
    app.add_exception_handler(ProblemError, _api_problem_handler)
    app.add_exception_handler(RequestValidationError, _validation_handler)
    app.add_exception_handler(InputError, _input_error_handler)
    app.add_exception_handler(UnknownSocError, _unknown_soc_handler)
    app.add_exception_handler(StarletteHTTPException, _http_handler)
    app.add_exception_handler(Exception, _unexpected_handler)


_DESCRIPTIONS = {
    400: "Malformed JSON (`malformed-json`).",
    401: "API token missing or wrong (`unauthorized`).",
    404: "Not found (`not-found`, `unknown-soc`).",
    413: "Body too large (`payload-too-large`).",
    415: "The body is not declared as JSON (`unsupported-media-type`).",
    422: "Invalid input (`validation-error`, `unsupported-problem`, `infeasible-problem`, "
    "`illegal-tiling`, `unknown-soc`).",
    503: "Not ready (`not-ready`).",
}


def _example(status: int, slug: str, detail: str, **extensions: Any) -> dict[str, Any]:
    return problem_body(status, slug, detail, "/v1/tilings:tune", **extensions)


def _bad_field(field: str, rule: str, message: str, value: Any, limit: Any) -> dict[str, Any]:
    return {"field": field, "rule": rule, "message": message, "value": value, "limit": limit}


#: One example per error status, as the service answers it.
EXAMPLES: Mapping[int, dict[str, Any]] = {
    400: _example(
        400, "malformed-json", "the request body is not valid JSON",
        errors=[_bad_field("body", "json_invalid", "body is not valid JSON at character 40: "
                           "Expecting ',' delimiter", None, None)],
    ),
    401: _example(
        401, "unauthorized",
        "this request needs 'Authorization: Bearer <token>' (TILER_API_TOKEN)",
    ),
    404: {
        **_example(404, "not-found", "no stored tiling has id '0123456789abcdef01234567'"),
        "instance": "/v1/tilings/0123456789abcdef01234567",
    },
    413: _example(
        413, "payload-too-large",
        "the request body exceeds 1048576 bytes (TILER_MAX_BODY_BYTES)",
    ),
    415: _example(
        415, "unsupported-media-type",
        "the body must be JSON: send 'Content-Type: application/json' (got 'text/plain')",
        errors=[_bad_field("content-type", "media_type", "content-type: expected "
                           "application/json", "text/plain", "application/json")],
    ),
    422: _example(
        422, "validation-error", "1 invalid field: problem.dtype",
        errors=[_bad_field("problem.dtype", "enum", "problem.dtype: Input should be one of "
                           "fp16, bf16, fp32, hf32, int8, int4 (input dtypes)", "int32",
                           ["fp16", "bf16", "fp32", "hf32", "int8", "int4"])],
    ),
    503: {
        **_example(503, "not-ready", "schema at revision None, latest is 0002: run "
                   "`tiler db upgrade`"),
        "instance": "/readyz",
    },
}  # fmt: skip


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` declaring problem+json bodies for the given statuses.

    FastAPI would document its own 422 shape otherwise; declaring 422 here replaces it. Each
    status carries its own example (Swagger UI would otherwise show one example for all).
    """
    return {
        status: {
            "model": ProblemDetail,
            "description": _DESCRIPTIONS.get(status, "Error."),
            "content": {PROBLEM_MEDIA_TYPE: {"example": EXAMPLES[status]}},
        }
        for status in statuses
    }


def move_error_schemas_to_problem_json(schema: dict[str, Any]) -> dict[str, Any]:
    """Rewrites an OpenAPI document so error responses are documented as problem+json only.

    FastAPI puts a response ``model`` under the route's media type (``application/json``, or
    ``text/event-stream`` on a stream); the service answers errors as
    ``application/problem+json``, which is what clients (and schemathesis) must see.
    """
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict):
                continue
            for status, response in operation.get("responses", {}).items():
                if str(status)[0] not in "45":
                    continue
                content = response.get("content", {})
                for media_type in [m for m in content if m != PROBLEM_MEDIA_TYPE]:
                    # The schema joins the status's own example (declared under problem+json).
                    content[PROBLEM_MEDIA_TYPE] = {
                        **content.pop(media_type),
                        **content.get(PROBLEM_MEDIA_TYPE, {}),
                    }
    return schema


def apply_limits(schema: dict[str, Any], limits: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Writes the server's limits into the request schemas of an OpenAPI document.

    The request models state what any server accepts; how large a budget or a job this server
    takes is its settings. The document then says the same number as the 422 above it.

    Args:
        schema: The OpenAPI document.
        limits: ``{schema name: {property: limit}}``: an integer property gets ``maximum``, an
            array property ``maxItems``.
    """
    components = schema.get("components", {}).get("schemas", {})
    for name, properties in limits.items():
        for prop, limit in properties.items():
            definition = components[name]["properties"][prop]
            for branch in definition.get("anyOf", [definition]):
                if branch.get("type") == "integer":
                    branch["maximum"] = limit
                elif branch.get("type") == "array":
                    branch["maxItems"] = limit
    return schema


def document_bearer_token(schema: dict[str, Any]) -> dict[str, Any]:
    """Declares the API token on every non-GET operation of an OpenAPI document.

    Added only when the server has a token, so the document says what this server requires.
    """
    schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes["bearerToken"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "TILER_API_TOKEN of the server.",
    }
    for path_item in schema.get("paths", {}).values():
        for method, operation in path_item.items():
            if method.upper() not in ("GET", "HEAD", "OPTIONS") and isinstance(operation, dict):
                operation["security"] = [{"bearerToken": []}]
    return schema
