"""``tiler worker`` and ``tiler jobs submit | wait | results``: batch tuning from the command line.

``tiler worker`` is the process that does the tuning of batch jobs (on the database of the
settings, ``TILER_DATABASE_URL``). The ``jobs`` commands are an HTTP client of a running server,
for build systems::

    ID=$(tiler jobs submit shapes.jsonl --server http://tuner:8000 --budget 16)
    tiler jobs wait "$ID" --server http://tuner:8000      # progress on stderr; exit 0 = succeeded
    tiler jobs results "$ID" --server http://tuner:8000 > tilings.jsonl
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    # httpx (with the rich and pygments of its own CLI) is imported by the commands that talk to a
    # server, not by every `tiler tune` / `tiler evaluate` a build system starts.
    import httpx

jobs_app = typer.Typer(
    name="jobs",
    help="Batch tuning jobs on a server: submit, wait, results.",
    no_args_is_help=True,
    add_completion=False,
)

ServerOption = Annotated[
    str,
    typer.Option("--server", envvar="TILER_SERVER", help="Base URL of the tiler service."),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token", envvar="TILER_API_TOKEN", help="API token (when the server requires one)."
    ),
]
_DEFAULT_SERVER = "http://127.0.0.1:8000"


def worker_cmd(
    once: Annotated[
        bool, typer.Option("--once", help="Exit when no shape is left to claim.")
    ] = False,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=256, help="Worker processes to run.")
    ] = 1,
    poll_s: Annotated[
        float | None,
        typer.Option("--poll-s", min=0.01, help="Idle poll interval (TILER_JOB_POLL_S)."),
    ] = None,
    schema_wait_s: Annotated[
        float,
        typer.Option("--schema-wait-s", min=0, help="How long to wait for the migrations."),
    ] = 60.0,
) -> None:
    """Tune the shapes of batch jobs, from the database of TILER_DATABASE_URL.

    Run any number of workers, on any number of machines, against one PostgreSQL database (or
    several on one machine against SQLite). SIGTERM stops a worker after its current shape.
    """
    import logging

    from app.jobs.worker import run_workers

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("app").setLevel(logging.INFO)
    try:
        status = run_workers(concurrency, once=once, poll_s=poll_s, schema_wait_s=schema_wait_s)
    except (RuntimeError, ValueError) as exc:
        # The schema is not migrated, or the lease settings contradict each other.
        typer.echo(f"tiler worker: {exc}", err=True)
        raise typer.Exit(2) from exc
    raise typer.Exit(status)


def _client(server: str, token: str | None) -> httpx.Client:
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.rstrip("/"), headers=headers, timeout=300)


def _fail(response: httpx.Response) -> typer.Exit:
    """Prints a server error (problem+json detail and bad fields) and returns exit status 1."""
    try:
        body = response.json()
        detail = body.get("detail", response.text)
        errors = body.get("errors") or []
    except ValueError:
        detail, errors = response.text, []
    typer.echo(f"server answered {response.status_code}: {detail}", err=True)
    for err in errors[:20]:
        typer.echo(f"  {err.get('field')}: {err.get('message')}", err=True)
    return typer.Exit(1)


def _read_problems(path: Path) -> dict[str, Any]:
    """The job body from a file: a JSON body, or JSONL of problems or tune requests."""
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}") from exc
    stripped = text.strip()
    if stripped.startswith("{") and "\n" not in stripped:
        one = json.loads(stripped)
        if isinstance(one, dict) and "problems" in one:
            return one
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "problems" in whole:
        return whole
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"line {number}: not JSON ({exc.msg})") from exc
        # A `tiler tune --jsonl` line carries its problem under "problem".
        problems.append(obj["problem"] if isinstance(obj, dict) and "problem" in obj else obj)
    return {"problems": problems}


@jobs_app.command("submit")
def submit_cmd(
    file: Annotated[
        Path,
        typer.Argument(
            help="JSONL of problems (or of `tiler tune` lines), or a JSON job body; '-' = stdin."
        ),
    ],
    server: ServerOption = _DEFAULT_SERVER,
    token: TokenOption = None,
    budget: Annotated[int | None, typer.Option(help="Trials per shape.")] = None,
    sampler: Annotated[str | None, typer.Option(help="tpe, cmaes, random or gp.")] = None,
    seed: Annotated[int | None, typer.Option(help="Search seed.")] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option(help="Idempotency-Key (default: a new one, reused by this call's retries)."),
    ] = None,
) -> None:
    """Submit a job and print its id (retries on connection errors return the same job)."""
    body = _read_problems(file)
    for name, value in (("budget", budget), ("sampler", sampler), ("seed", seed)):
        if value is not None:
            body[name] = value
    import httpx

    key = idempotency_key or uuid.uuid4().hex
    with _client(server, token) as client:
        for attempt in range(4):
            try:
                response = client.post(
                    "/v1/tuning-jobs", json=body, headers={"Idempotency-Key": key}
                )
                break
            except httpx.TransportError as exc:
                if attempt == 3:
                    typer.echo(f"cannot reach {server}: {exc}", err=True)
                    raise typer.Exit(2) from exc
                time.sleep(0.5 * 2**attempt)
    if response.status_code != 202:
        raise _fail(response)
    job = response.json()
    typer.echo(f"job {job['id']}: {job['progress']['total']} shapes, {job['status']}", err=True)
    typer.echo(job["id"])


def _events(client: httpx.Client, job_id: str, after: int) -> Iterator[tuple[int, str, Any]]:
    """Yields (id, event, data) of a job's SSE stream from ``after`` until it ends.

    Comment lines (the server's keep-alive pings) are skipped.
    """
    headers = {"Last-Event-ID": str(after)} if after else {}
    with client.stream(
        "GET", f"/v1/tuning-jobs/{job_id}/events", headers=headers, timeout=None
    ) as response:
        if response.status_code != 200:
            response.read()
            raise _fail(response)
        number, event, data = 0, "message", ""
        for line in response.iter_lines():
            if line == "":
                if data:
                    yield number, event, json.loads(data)
                number, event, data = 0, "message", ""
            elif line.startswith("id:"):
                number = int(line[3:].strip())
            elif line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()


#: What the stream reader hands the waiting command: an event, a stream end, or a failure.
_Message = tuple[str, Any]


def _follow(client: httpx.Client, job_id: str, inbox: queue.Queue[_Message]) -> None:
    """Reads a job's events into ``inbox`` until the job ends, resuming a dropped stream.

    Runs on its own thread, so that the command's deadline never waits on the network.
    """
    import httpx

    after = 0
    while True:
        try:
            for number, event, data in _events(client, job_id, after):
                after = number
                inbox.put(("event", (event, data)))
                if event in ("finished", "cancelled"):
                    return
            # The stream ended without a final event (the server stopped): resume.
        except httpx.TransportError as exc:
            inbox.put(("interrupted", str(exc)))
        except typer.Exit as exc:
            inbox.put(("failed", exc))
            return
        except Exception as exc:  # a reader that dies must not leave the command waiting
            inbox.put(("failed", exc))
            return
        time.sleep(1.0)


@jobs_app.command("wait")
def wait_cmd(
    job_id: Annotated[str, typer.Argument(help="The job id.")],
    server: ServerOption = _DEFAULT_SERVER,
    token: TokenOption = None,
    timeout_s: Annotated[
        float | None,
        typer.Option("--timeout-s", min=0, help="Give up after this long (exit 2)."),
    ] = None,
) -> None:
    """Follow a job's events until it ends; exit 0 if it succeeded, 1 otherwise.

    Progress goes to stderr; the final job summary is printed as JSON on stdout. With
    --timeout-s the command returns at that deadline (exit 2), whatever the stream does.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    final: str | None = None
    inbox: queue.Queue[_Message] = queue.Queue()
    with _client(server, token) as client:
        reader = threading.Thread(
            target=_follow, args=(client, job_id, inbox), name="tiler-jobs-wait", daemon=True
        )
        reader.start()
        while final is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            try:
                if remaining is not None and remaining <= 0:
                    raise queue.Empty
                kind, value = inbox.get(timeout=remaining)
            except queue.Empty:
                typer.echo(f"job {job_id}: still not finished after {timeout_s} s", err=True)
                raise typer.Exit(2) from None
            if kind == "failed":
                raise value
            if kind == "interrupted":
                # The server restarted or the connection dropped: the reader resumes.
                typer.echo(f"event stream interrupted ({value}); resuming", err=True)
                continue
            event, data = value
            if event == "progress":
                done = data["done"] + data["failed"] + data["cancelled"]
                typer.echo(f"{done}/{data['total']} ({data['failed']} failed)", err=True)
            elif event in ("finished", "cancelled"):
                final = data["status"]
        response = client.get(f"/v1/tuning-jobs/{job_id}", params={"results": "false"})
    if response.status_code != 200:
        raise _fail(response)
    typer.echo(json.dumps(response.json(), separators=(",", ":")))
    raise typer.Exit(0 if final == "succeeded" else 1)


@jobs_app.command("results")
def results_cmd(
    job_id: Annotated[str, typer.Argument(help="The job id.")],
    server: ServerOption = _DEFAULT_SERVER,
    token: TokenOption = None,
) -> None:
    """Print every finished shape as one JSON line, by position (exit 1 if any failed).

    Each line is the shape's entry of the job resource: ``position``, ``problem``, ``status``
    and the tuned result's keys (``tiling``, ``estimate``, ...) or ``error``.
    """
    failed = False
    cursor: str | None = None
    with _client(server, token) as client:
        while True:
            params: dict[str, Any] = {"limit": 500}
            if cursor is not None:
                params["cursor"] = cursor
            response = client.get(f"/v1/tuning-jobs/{job_id}/results", params=params)
            if response.status_code != 200:
                raise _fail(response)
            page = response.json()
            for item in page["items"]:
                failed |= item["status"] != "done"
                sys.stdout.write(json.dumps(item, separators=(",", ":")) + "\n")
            # A running job's cursor leads on; stop at the shapes finished so far.
            if page["next_cursor"] is None or not page["items"]:
                break
            cursor = page["next_cursor"]
    raise typer.Exit(1 if failed else 0)
