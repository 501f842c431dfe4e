"""Migrations: upgrade from empty, downgrade back to nothing, no drift, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from sqlalchemy import inspect
from typer.testing import CliRunner

from app.cli import cli
from app.db import migrate
from app.db.engine import make_engine
from app.db.models import Base
from tests.app._server import BACKENDS, database_url

APP_TABLES = set(Base.metadata.tables)


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def _revision(url: str) -> str | None:
    engine = make_engine(url)
    try:
        return migrate.current_revision(engine)
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_upgrade_from_empty_then_downgrade_to_nothing(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        assert _tables(url) == set()
        migrate.upgrade(url)
        assert _tables(url) == APP_TABLES | {migrate.VERSION_TABLE}
        assert _revision(url) == migrate.head_revision()
        # The models and the migrated schema agree (autogenerate finds nothing to do).
        migrate.check(url)
        migrate.downgrade(url, "base")
        assert _tables(url) == {migrate.VERSION_TABLE}
        assert _revision(url) is None
        # And back up again: the downgrade left nothing behind that blocks a new upgrade.
        migrate.upgrade(url)
        migrate.check(url)
        assert _revision(url) == migrate.head_revision()


def test_the_version_table_is_our_own(tmp_path: Path) -> None:
    # Optuna's RDB storage writes Alembic's default "alembic_version"; ours must not collide.
    url = f"sqlite:///{tmp_path / 'x.db'}"
    migrate.upgrade(url)
    assert "alembic_version" not in _tables(url)
    assert migrate.VERSION_TABLE == "tiler_alembic_version"


def test_sqlite_connections_get_the_pragmas(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'p.db'}", sqlite_busy_timeout_ms=1234)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 1234
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
    finally:
        engine.dispose()


def test_cli_db_commands(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()

    def tiler(*args: str) -> Result:
        return runner.invoke(cli, ["db", *args, "--url", url])

    behind = tiler("current")
    assert behind.exit_code == 1, behind.output
    assert "at None" in behind.output
    up = tiler("upgrade")
    assert up.exit_code == 0, up.output
    head = migrate.head_revision()
    assert f"at {head}" in up.output
    current = tiler("current")
    assert current.exit_code == 0
    assert f"at {head}, latest {head}" in current.output
    down = tiler("downgrade", "base")
    assert down.exit_code == 0, down.output
    assert _tables(url) == {migrate.VERSION_TABLE}
