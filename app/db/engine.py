"""Engines and transactions: SQLite (embedded default) and PostgreSQL by URL.

:class:`Database` wraps one SQLAlchemy engine and hands out two kinds of transaction:

* :meth:`Database.read` - a plain (deferred) transaction;
* :meth:`Database.write` - on SQLite ``BEGIN IMMEDIATE``, which takes the write lock before the
  first statement. Under WAL a transaction that starts as a reader and later writes fails at once
  with ``SQLITE_BUSY`` when another writer committed in between (its snapshot is stale), and
  ``busy_timeout`` does not help because it is a conflict, not a lock wait. Taking the lock first
  turns that into a wait bounded by ``busy_timeout``.

On PostgreSQL both are ordinary READ COMMITTED transactions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

#: Execution option that marks a connection whose transactions must begin IMMEDIATE.
_WRITE_OPTION = "tiler_sqlite_write"


def _sqlite_setup(engine: Engine, busy_timeout_ms: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN itself: pysqlite's own implicit BEGIN
        # is always DEFERRED and is issued lazily before the first DML, which makes BEGIN
        # IMMEDIATE impossible (SQLAlchemy's SQLite docs, "Serializable isolation").
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # WAL: readers never block the writer and the writer never blocks readers, so cached
        # lookups go on while a search result is being stored. Persistent in the file.
        cursor.execute("PRAGMA journal_mode=WAL")
        # With WAL, NORMAL only loses the last transactions on power loss (never corrupts), and
        # skips an fsync per commit; a lost cache row is recomputed.
        cursor.execute("PRAGMA synchronous=NORMAL")
        # A writer waits this long for the lock instead of failing at once with "database is
        # locked": several server processes share one file.
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        # Off by default and per connection; the jobs tables that build on these reference
        # rows of other tables and rely on it.
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # See the module docstring: a write transaction takes the lock up front.
        if conn.get_execution_options().get(_WRITE_OPTION):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


def make_engine(url: str, *, sqlite_busy_timeout_ms: int = 30_000) -> Engine:
    """Creates an engine for ``url`` with the per-connection settings of its backend.

    Args:
        url: A SQLAlchemy URL (``sqlite:///path``, ``postgresql+psycopg://...``).
        sqlite_busy_timeout_ms: How long an SQLite writer waits for the lock.

    Returns:
        The engine. For a file SQLite database the file's directory is created.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False})
        _sqlite_setup(engine, sqlite_busy_timeout_ms)
        return engine
    # pre_ping: a pooled connection the server dropped (restart, idle timeout) is replaced
    # instead of failing the request that draws it.
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


class Database:
    """One engine with read and write transactions (see the module docstring).

    Args:
        engine: The engine, from :func:`make_engine`.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.is_sqlite = engine.dialect.name == "sqlite"
        self._write_engine = engine.execution_options(**{_WRITE_OPTION: True})

    @classmethod
    def from_url(cls, url: str, *, sqlite_busy_timeout_ms: int = 30_000) -> Database:
        """Builds a database from a URL (see :func:`make_engine`)."""
        return cls(make_engine(url, sqlite_busy_timeout_ms=sqlite_busy_timeout_ms))

    @property
    def dialect(self) -> str:
        """The backend's name: ``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (committed at the end, rolled back on error)."""
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction: ``BEGIN IMMEDIATE`` on SQLite (committed at the end)."""
        with self._write_engine.begin() as conn:
            yield conn

    def dispose(self) -> None:
        """Closes every pooled connection."""
        self.engine.dispose()
