"""The cached-tune fast path: a repeat of a cached ``tilings:tune`` is answered with stored bytes.

The model's cached answer never changes for the life of a process: the cache key is a pure
function of the request body (with this process's default budget, presets and model version),
and the first answer stored for a key is the answer. But the answer a client gets can change:
a new measurement makes a measured kernel win (:mod:`app.feedback.answers`), and a newly
activated calibration profile changes what ``"calibration": "active"`` means. So a recorded
response is replayed only while two things hold: no measurement was stored and no profile was
activated through this process since it was recorded (:class:`AnswersGeneration`), and it is at
most ``ttl_s`` old (a measurement stored through another server on the same database shows up
after at most that long). Then its bytes (status, headers, body) are the answer to a request
with the same bytes, and :class:`CachedTuneReplay` sends them without routing, validation, a
database read or serialization - the work that made a cached tune cost twice a ``/healthz``.

Only what the route itself marked as a cache hit (``scope["state"]["tiler_cached"]``) is
recorded, only for small JSON bodies, and only behind the token check (the middleware sits
inside :class:`app.api.middleware.TokenMiddleware`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from starlette.requests import Request

from app.api.deps import is_json_media_type
from app.api.middleware import header
from app.metrics import ASGIApp, Message, Metrics, Receive, Scope, Send

#: Bodies longer than this are never recorded (a tune body is about a hundred bytes).
MAX_KEY_BYTES = 4096
#: The state key the route sets on a cache hit.
CACHED_STATE_KEY = "tiler_cached"

_Key = tuple[bytes, bytes]
#: The response's headers and body, the route that answered (for the metrics' label), the
#: answers' generation and the monotonic time when it was recorded.
_Recorded = tuple[list[tuple[bytes, bytes]], bytes, Any, int, float]


class AnswersGeneration:
    """Counts the changes, made through this process, that can change a tune's answer.

    The measurement and calibration routes call :meth:`bump`; a replayed response recorded
    under an older generation is stale.
    """

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> None:
        """Marks every recorded answer stale."""
        self.value += 1


def answers_changed(request: Request) -> None:
    """Marks this app's replayed tune answers stale (a measurement or a profile changed)."""
    generation: AnswersGeneration = request.app.state.answers_generation
    generation.bump()


class CachedTuneReplay:
    """Answers a repeated cached ``POST`` to ``path`` with the recorded response.

    Args:
        app: The wrapped app.
        path: The route (``/v1/tilings:tune``).
        entries: Responses remembered (least recently used dropped first).
        metrics: A replay counts as the cache hit it is.
        generation: Bumped when an answer may have changed (a measurement, a profile).
        ttl_s: The longest a recorded response is replayed (changes through other servers).
    """

    def __init__(
        self,
        app: ASGIApp,
        path: str,
        entries: int,
        metrics: Metrics,
        generation: AnswersGeneration,
        ttl_s: float,
    ) -> None:
        self.app = app
        self.path = path
        self.entries = entries
        self.metrics = metrics
        self.generation = generation
        self.ttl_s = ttl_s
        self._recorded: OrderedDict[_Key, _Recorded] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Replays a recorded answer, or serves the request and records a cache hit's answer."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        content_type = header(scope, b"content-type")
        chunks: list[bytes] = []
        size = 0
        more = True
        while more and size <= MAX_KEY_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                # The client went away: let the app see it.
                await self.app(scope, _replaying(chunks, message, receive), send)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        body = b"".join(chunks)
        key = (content_type, body)
        if not more and not scope.get("query_string"):
            recorded = self._recorded.get(key)
            if recorded is not None and not self._fresh(recorded):
                del self._recorded[key]
                recorded = None
            if recorded is not None:
                self._recorded.move_to_end(key)
                headers, content, scope["route"] = recorded[:3]
                self.metrics.cache_hits.inc()
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send({"type": "http.response.body", "body": content})
                return
        tail: Message = {"type": "http.request", "body": b"", "more_body": more}
        replay = _replaying([body], tail, receive)
        if more or not is_json_media_type(content_type.decode("latin-1")):
            await self.app(scope, replay, send)
            return
        await self._serve_and_record(scope, replay, send, key)

    def _fresh(self, recorded: _Recorded) -> bool:
        return recorded[3] == self.generation.value and time.monotonic() - recorded[4] <= self.ttl_s

    async def _serve_and_record(
        self, scope: Scope, receive: Receive, send: Send, key: _Key
    ) -> None:
        start: dict[str, Any] = {}
        parts: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
            await send(message)

        generation = self.generation.value
        recorded_at = time.monotonic()
        await self.app(scope, receive, capture)
        cached = scope.get("state", {}).get(CACHED_STATE_KEY, False)
        if cached and start.get("status") == 200:
            headers = list(start.get("headers", []))
            content = b"".join(parts)
            self._recorded[key] = (headers, content, scope.get("route"), generation, recorded_at)
            if len(self._recorded) > self.entries:
                self._recorded.popitem(last=False)


def _replaying(chunks: list[bytes], last: Message, receive: Receive) -> Receive:
    """A ``receive`` that hands out the body read so far, then ``last``, then the rest."""
    pending: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": True} for chunk in chunks
    ]
    pending.append(last)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
