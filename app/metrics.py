"""Prometheus metrics of one server process (``GET /metrics``).

Each app gets its own registry, so that several apps in one process (tests) do not collide.
The single-flight proof reads ``tiler_searches_total``: searches this process actually ran.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Metrics:
    """The service's counters, histograms and gauges, in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "tiler_http_requests_total",
            "HTTP requests by method, route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "tiler_http_request_duration_seconds",
            "HTTP request latency by route template.",
            ["route"],
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 30, 120),
            registry=self.registry,
        )
        self.searches = Counter(
            "tiler_searches_total",
            "Searches this process ran (a cache miss that no other request was already running).",
            registry=self.registry,
        )
        self.search_seconds = Histogram(
            "tiler_search_duration_seconds",
            "Wall time of searches.",
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
            registry=self.registry,
        )
        self.cache_hits = Counter(
            "tiler_cache_hits_total",
            "tilings:tune answered from the cache.",
            registry=self.registry,
        )
        self.cache_misses = Counter(
            "tiler_cache_misses_total",
            "tilings:tune not in the cache on arrival.",
            registry=self.registry,
        )
        self.flight_joins = Counter(
            "tiler_singleflight_joins_total",
            "Requests that waited for a search another request of this process was running.",
            registry=self.registry,
        )
        self.remote_waits = Counter(
            "tiler_singleflight_remote_waits_total",
            "Searches this process waited for because another process held the claim.",
            registry=self.registry,
        )
        self.gc_pause = Histogram(
            "tiler_gc_pause_seconds",
            "Garbage collections of this process by generation, and how long each stopped it.",
            ["generation"],
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1),
            registry=self.registry,
        )
        self.gc_pause_max = Gauge(
            "tiler_gc_pause_max_seconds",
            "The longest garbage collection of this process so far, by generation.",
            ["generation"],
            registry=self.registry,
        )
        self.searches_running = Gauge(
            "tiler_searches_running",
            "Searches running in this process now.",
            registry=self.registry,
        )


class MetricsMiddleware:
    """Counts requests and their latency by route template (pure ASGI, cheap per request)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serves the request and records it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            # The template (/v1/tilings/{id}), not the path: one series per route, not per id.
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(scope["method"], template, str(status)).inc()
            self.metrics.latency.labels(template).observe(time.perf_counter() - start)


class GcPauses:
    """A ``gc.callbacks`` entry that times every collection into the metrics.

    A collection stops every request the process is serving; the longest ones are the latency
    tail, so they are measured where they happen.
    """

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._start = 0.0
        self._longest: dict[int, float] = {}

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        """Records the pause of a collection (called by the interpreter at its start and stop)."""
        if phase == "start":
            self._start = time.perf_counter()
            return
        generation = int(info["generation"])
        seconds = time.perf_counter() - self._start
        self.metrics.gc_pause.labels(str(generation)).observe(seconds)
        if seconds > self._longest.get(generation, 0.0):
            self._longest[generation] = seconds
            self.metrics.gc_pause_max.labels(str(generation)).set(seconds)
