"""Helpers of the service tests: a real server process, the test databases, metrics parsing.

The server is started the way users start it (``python -m app.cli serve``), on a free loopback
port, with settings passed through ``TILER_*`` environment variables.

PostgreSQL: the server at ``TILER_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``). Each test gets its own schema (dropped
afterwards), so tests and concurrent runs never see each other's tables. When the server is
unreachable the PostgreSQL cases are skipped, unless ``TILER_REQUIRE_POSTGRES=1`` (CI), which
turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from app.db import migrate
from app.db.engine import Database

REPO = Path(__file__).resolve().parents[2]
PG_URL = os.environ.get(
    "TILER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running ``tiler serve`` process."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, **kwargs: object) -> httpx.Client:
        """A client of the server; it sends the server's API token, if it has one."""
        token = self.env.get("TILER_API_TOKEN")
        headers = {"authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, timeout=120, headers=headers, **kwargs)  # type: ignore[arg-type]

    def metric(self, name: str) -> float:
        """The value of an unlabelled metric from /metrics."""
        text = httpx.get(f"{self.url}/metrics", timeout=30).text
        match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
        assert match, f"{name} not in /metrics"
        return float(match.group(1))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(
    tmp_path: Path, env: dict[str, str], name: str = "server", ready_path: str = "/readyz"
) -> Server:
    """Starts ``tiler serve`` with ``env`` on a free port and waits until ``ready_path`` is 200."""
    port = free_port()
    log = tmp_path / f"{name}-{port}.log"
    full_env = {**os.environ, "TILER_DATA_DIR": str(tmp_path / "data"), **env}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            cwd=REPO,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Server(proc, port, log, env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited with {proc.returncode}:\n{log.read_text()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{server.url}{ready_path}", timeout=2).status_code == 200:
                return server
        time.sleep(0.1)
    server.stop()
    pytest.fail(f"server did not become ready:\n{log.read_text()}")


@contextlib.contextmanager
def running_server(
    tmp_path: Path, env: dict[str, str], name: str = "server", ready_path: str = "/readyz"
) -> Iterator[Server]:
    server = start_server(tmp_path, env, name, ready_path)
    try:
        yield server
    finally:
        server.stop()


def _postgres_reachable() -> str | None:
    """None when the test PostgreSQL answers, else why not."""
    try:
        import psycopg

        with psycopg.connect(_libpq(PG_URL), connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}".strip()
    return None


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@contextlib.contextmanager
def postgres_schema_url() -> Iterator[str]:
    """A SQLAlchemy URL on a fresh, empty PostgreSQL schema (dropped afterwards)."""
    reason = _postgres_reachable()
    if reason is not None:
        message = f"PostgreSQL at {PG_URL} is not reachable ({reason})"
        if os.environ.get("TILER_REQUIRE_POSTGRES") == "1":
            pytest.fail(message + "; TILER_REQUIRE_POSTGRES=1 makes it mandatory")
        pytest.skip(message + "; set TILER_TEST_POSTGRES_URL or start it")
    import psycopg

    schema = f"tiler_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in PG_URL else "?"
    try:
        # Every connection of the server (and of Alembic) then works inside that schema.
        yield f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@contextlib.contextmanager
def database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A database URL of the backend: a SQLite file in tmp_path, or a PostgreSQL schema."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'db' / 'tiler.db'}"
        return
    with postgres_schema_url() as url:
        yield url


BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]


@contextlib.contextmanager
def migrated_database(backend: str, tmp_path: Path) -> Iterator[Database]:
    """A :class:`Database` of the backend (:func:`database_url`), migrated to the head."""
    with database_url(backend, tmp_path) as url:
        migrate.upgrade(url)
        database = Database.from_url(url)
        try:
            yield database
        finally:
            database.dispose()


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process now (from /proc; Linux)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        # The command name (field 2) may hold spaces and parentheses: split after its end.
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(entry.name)] = int(fields[1])
    return out


def descendants(pid: int) -> set[int]:
    """Every process started by ``pid``, directly or not, alive now."""
    parents = _parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def wait_until(predicate: Callable[[], bool], timeout_s: float, poll_s: float = 0.05) -> float:
    """Polls ``predicate`` until it holds; returns the seconds it took (fails at the timeout)."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout_s:
            pytest.fail(f"still not true after {timeout_s} s")
        time.sleep(poll_s)
    return time.monotonic() - start
