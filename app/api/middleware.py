"""ASGI middleware: the request body limit (413) and the API token on non-GET routes (401).

Both are pure ASGI (no per-request task or body buffering), and both answer problem+json.
"""

from __future__ import annotations

import hmac
import json

from app.metrics import ASGIApp, Message, Receive, Scope, Send
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


class BodyLimitMiddleware:
    """Answers 413 when a request body exceeds ``max_bytes``.

    A declared ``Content-Length`` is checked before anything is read (the server then never
    delivers more than it declared). A chunked body has no declared length: it is read up to the
    limit first and handed to the app only when it fits, so the app never sees a cut-off body.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serves the request, or answers 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunked = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await self._too_large(scope, send)
                    return
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if not chunked:
            await self.app(scope, receive, send)
            return
        buffered: list[Message] = []
        received = 0
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                await self._too_large(scope, send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return buffered.pop(0) if buffered else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, send: Send) -> None:
        detail = f"the request body exceeds {self.max_bytes} bytes"
        await _send_problem(send, 413, "payload-too-large", detail, scope["path"], [])


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
        self.expected = f"Bearer {token}".encode()
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
        given = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                given = value
                break
        # Constant-time comparison: the time to reject must not reveal a matching prefix.
        if not hmac.compare_digest(given, self.expected):
            detail = "this request needs 'Authorization: Bearer <token>' (TILER_API_TOKEN)"
            headers = [(b"www-authenticate", b'Bearer realm="tiler"')]
            await _send_problem(send, 401, "unauthorized", detail, scope["path"], headers)
            return
        await self.app(scope, receive, send)
