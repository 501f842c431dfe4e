"""ASGI middleware: a declared body over the limit (413) and the API token on non-GET routes (401).

Both are pure ASGI (no per-request task or body buffering), and both answer problem+json.
"""

from __future__ import annotations

import hmac
import json

from app.metrics import ASGIApp, Receive, Scope, Send
from app.problem_json import PROBLEM_MEDIA_TYPE, problem_body

_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def _send_problem(
    send: Send, status: int, slug: str, detail: str, path: str, headers: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps(problem_body(status, slug, detail, path)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def header(scope: Scope, name: bytes) -> bytes:
    """The first value of a request header (lowercase ``name``), or empty."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return b""


def bearer_token_matches(authorization: bytes, token: bytes) -> bool:
    """True when an ``Authorization`` header value is ``Bearer <token>`` with this token.

    The scheme name is case-insensitive (RFC 9110 section 11.1: ``bearer``, ``BEARER``), and
    one or more spaces may separate it from the token.
    """
    scheme, _, credentials = authorization.partition(b" ")
    # Constant-time comparison: the time to reject must not reveal a matching prefix.
    matches = hmac.compare_digest(credentials.lstrip(b" "), token)
    return scheme.lower() == b"bearer" and matches


class DeclaredLengthMiddleware:
    """Answers 413 (problem+json) when a request declares a body longer than ``max_bytes``.

    The limit itself is the framework's (``max_body_size`` on the routers), which also stops a
    streamed (chunked) body once it grows past the limit. For a declared ``Content-Length``
    the framework answers a plain-text 413 of its own; this answers it first, before anything is
    read, in the service's error format.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serves the request, or answers 413."""
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                    detail = (
                        f"the request body exceeds {self.max_bytes} bytes (TILER_MAX_BODY_BYTES)"
                    )
                    await _send_problem(send, 413, "payload-too-large", detail, scope["path"], [])
                    return
        await self.app(scope, receive, send)


class TokenMiddleware:
    """Requires ``Authorization: Bearer <token>`` on every non-GET request.

    Args:
        app: The wrapped app.
        token: The expected token.
        exempt_prefixes: Paths left open. The explorer page's form posts only re-evaluate a
            tiling (no state changes) and a browser form cannot send the header; the same
            computation is open to GET on that page anyway.
    """

    def __init__(self, app: ASGIApp, token: str, exempt_prefixes: tuple[str, ...] = ()) -> None:
        self.app = app
        self.expected = token.encode()
        self.exempt_prefixes = exempt_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serves the request, or answers 401."""
        if (
            scope["type"] != "http"
            or scope["method"] in _READ_METHODS
            or scope["path"].startswith(self.exempt_prefixes)
        ):
            await self.app(scope, receive, send)
            return
        if not bearer_token_matches(header(scope, b"authorization"), self.expected):
            detail = "this request needs 'Authorization: Bearer <token>' (TILER_API_TOKEN)"
            headers = [(b"www-authenticate", b'Bearer realm="tiler"')]
            await _send_problem(send, 401, "unauthorized", detail, scope["path"], headers)
            return
        await self.app(scope, receive, send)
