"""Load benchmark of the service: cached ``tilings:tune`` against ``/healthz``, same run.

    uv run python -m benchmarks.load                    # starts its own server (SQLite, tmp dir)
    uv run python -m benchmarks.load --url http://127.0.0.1:8000   # an already running one
    uv run python -m benchmarks.load --database-url postgresql+psycopg://postgres@127.0.0.1/test

The server is loopback only. The load generator is a minimal HTTP/1.1 keep-alive client on
asyncio streams (one pre-encoded request per connection, responses parsed by Content-Length), so
that the client costs little next to the server: both endpoints are measured through the same
client, and ``/healthz`` (a route that does nothing) is the framework's own ceiling on this
machine. Each phase runs a fixed time after a warm-up; the figures are requests per second and
the p50/p99 latency of single requests.

Targets (issues 4 and 20): with 32 concurrent clients, cached ``tilings:tune`` reaches at least
half of ``/healthz`` throughput, and its p99 latency is under 10 ms. The script also prints the
client's own CPU share per phase (a client near 100 % of a core is the bottleneck, not the
server) and the server's garbage-collection pauses from its ``/metrics``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
TUNE_BODY = {
    "problem": {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"},
    "budget": 4,
}


@dataclass
class Phase:
    name: str
    requests: int
    seconds: float
    latencies_s: list[float]
    errors: int
    client_cpu_s: float = 0.0

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds

    def percentile_ms(self, q: float) -> float:
        ordered = sorted(self.latencies_s)
        index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
        return ordered[index] * 1000


def _request_bytes(method: str, host: str, path: str, body: bytes | None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: keep-alive"]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    await reader.readexactly(length)
    return status


async def _connection(
    host: str, port: int, request: bytes, until: float, expect: int, phase: Phase
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            writer.write(request)
            await writer.drain()
            status = await _read_response(reader)
            phase.latencies_s.append(time.perf_counter() - start)
            phase.requests += 1
            if status != expect:
                phase.errors += 1
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def run_phase(
    name: str, url: str, method: str, path: str, body: bytes | None, *, seconds: float,
    concurrency: int, warmup_s: float = 1.0,
) -> Phase:  # fmt: skip
    """Runs ``concurrency`` keep-alive connections for ``seconds`` after a warm-up."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    request = _request_bytes(method, f"{host}:{port}", path, body)
    warm = Phase(name, 0, warmup_s, [], 0)
    until = time.perf_counter() + warmup_s
    await asyncio.gather(
        *(_connection(host, port, request, until, 200, warm) for _ in range(concurrency))
    )
    phase = Phase(name, 0, seconds, [], 0)
    start = time.perf_counter()
    cpu_start = time.process_time()
    until = start + seconds
    await asyncio.gather(
        *(_connection(host, port, request, until, 200, phase) for _ in range(concurrency))
    )
    phase.seconds = time.perf_counter() - start
    phase.client_cpu_s = time.process_time() - cpu_start
    return phase


def gc_pauses(url: str) -> dict[str, tuple[int, float]]:
    """The server's collections by generation: (count, longest pause in ms), from /metrics."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as response:
        text = response.read().decode()
    counts: dict[str, int] = {}
    longest: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name.startswith("tiler_gc_pause_seconds_count{"):
            counts[name.split('"')[1]] = int(float(value))
        elif name.startswith("tiler_gc_pause_max_seconds{"):
            longest[name.split('"')[1]] = float(value) * 1000
    return {g: (counts[g], longest.get(g, 0.0)) for g in sorted(counts)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def own_server(database_url: str | None) -> Iterator[str]:
    """Starts ``tiler serve`` on a free loopback port (a temporary SQLite database by default)."""
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "TILER_DATA_DIR": data}
        if database_url:
            env["TILER_DATABASE_URL"] = database_url
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError):
                    if urllib.request.urlopen(f"{url}/readyz", timeout=2).status == 200:
                        break
                time.sleep(0.1)
            else:
                raise SystemExit("the server did not start")
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


#: Problems of the large job whose submission is timed against /healthz (the server's limit).
LARGE_JOB_PROBLEMS = 10_000


def _post_json(url: str, path: str, payload: object) -> tuple[float, dict[str, object]]:
    """POSTs JSON; returns the seconds it took and the decoded answer."""
    data = json.dumps(payload).encode()
    request = urllib.request.Request(
        f"{url}{path}", data=data, headers={"content-type": "application/json"}
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.loads(response.read())
    return time.perf_counter() - start, answer


def large_job_stall(url: str) -> tuple[float, float, int]:
    """Submits a 10,000-problem job while one client polls /healthz; cancels the job after.

    Returns:
        (the submission's seconds, the slowest /healthz in ms meanwhile, /healthz answered).
    """
    problems = [{"m": 1 + i, "n": 64, "k": 64} for i in range(LARGE_JOB_PROBLEMS)]
    done = threading.Event()
    latencies: list[float] = []

    def poll() -> None:
        while not done.is_set():
            start = time.perf_counter()
            with urllib.request.urlopen(f"{url}/healthz", timeout=60) as response:
                response.read()
            latencies.append(time.perf_counter() - start)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    time.sleep(0.2)
    seconds, job = _post_json(url, "/v1/tuning-jobs", {"problems": problems, "budget": 0})
    done.set()
    poller.join()
    _post_json(url, f"/v1/tuning-jobs/{job['id']}:cancel", {})
    return seconds, max(latencies) * 1000, len(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="A running server (default: start one).")
    parser.add_argument("--database-url", help="Database of the server this script starts.")
    parser.add_argument("--seconds", type=float, default=3.0, help="Length of each phase.")
    parser.add_argument("--rounds", type=int, default=3, help="Alternating rounds.")
    parser.add_argument("--concurrency", type=int, default=32, help="Keep-alive connections.")
    args = parser.parse_args()
    if args.url and urlsplit(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("loopback only: pass a 127.0.0.1 / localhost URL")
    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(own_server(args.database_url))
        body = json.dumps(TUNE_BODY).encode()
        # Populate the cache (the first request runs the search).
        request = urllib.request.Request(
            f"{url}/v1/tilings:tune", data=body, headers={"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=600) as response:
            first = json.loads(response.read())
        print(f"cache filled: id {first['id']}, search {first['search'].get('seconds')} s")
        endpoints = (
            ("GET /healthz", "GET", "/healthz", None),
            ("POST /v1/tilings:tune (cached)", "POST", "/v1/tilings:tune", body),
        )
        # Alternate the endpoints for several rounds: a machine shared with other work drifts,
        # and alternating exposes both endpoints to the same drift.
        rounds: dict[str, list[Phase]] = {name: [] for name, *_ in endpoints}
        for _ in range(args.rounds):
            for name, method, path, payload in endpoints:
                rounds[name].append(
                    asyncio.run(
                        run_phase(name, url, method, path, payload, seconds=args.seconds,
                                  concurrency=args.concurrency)
                    )
                )  # fmt: skip
        pauses = gc_pauses(url)
        job_s, stall_ms, polls = large_job_stall(url)
    print(
        f"\n{args.rounds} rounds x {args.seconds:.0f} s per endpoint, concurrency "
        f"{args.concurrency}, loopback; requests/s is the median round, latency is pooled\n"
    )
    print(
        "| endpoint | requests/s (median) | rounds | p50 ms | p99 ms | requests | non-200 "
        "| client CPU |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    summary = {}
    for name, phases in rounds.items():
        pooled = Phase(
            name,
            sum(p.requests for p in phases),
            sum(p.seconds for p in phases),
            [x for p in phases for x in p.latencies_s],
            sum(p.errors for p in phases),
        )
        median = statistics.median(p.throughput for p in phases)
        summary[name] = (median, pooled)
        per_round = " / ".join(f"{p.throughput:,.0f}" for p in phases)
        client_cpu = sum(p.client_cpu_s for p in phases) / pooled.seconds
        print(
            f"| {name} | {median:,.0f} | {per_round} | {pooled.percentile_ms(0.5):.2f} | "
            f"{pooled.percentile_ms(0.99):.2f} | {pooled.requests} | {pooled.errors} | "
            f"{client_cpu:.0%} |"
        )  # fmt: skip
    (health, _), (tune, tune_pooled) = summary.values()
    print(
        f"\ncached tune / healthz throughput: {tune / health:.2f} (target >= 0.5); "
        f"cached tune p99 {tune_pooled.percentile_ms(0.99):.2f} ms (target < 10 ms)"
    )
    collections = ", ".join(
        f"gen {g}: {count} (longest {ms:.1f} ms)" for g, (count, ms) in pauses.items()
    )
    print(f"server garbage collections since its start: {collections or 'not reported'}")
    print(
        f"a {LARGE_JOB_PROBLEMS:,}-problem job submitted in {job_s * 1000:.0f} ms; the slowest "
        f"of {polls} /healthz meanwhile took {stall_ms:.1f} ms"
    )


if __name__ == "__main__":
    main()
