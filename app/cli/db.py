"""``tiler db upgrade | downgrade | current``: the database migrations as an explicit step.

The database is the one the server uses (``TILER_DATABASE_URL``, else the SQLite file in
``TILER_DATA_DIR``); ``--url`` overrides it. With several server or worker processes on one
PostgreSQL database, run ``tiler db upgrade`` once before starting them (and set
``TILER_MIGRATE_ON_START=false``); a single SQLite server migrates itself at start.
"""

from __future__ import annotations

from typing import Annotated

import typer

db_app = typer.Typer(
    name="db", help="Database migrations (Alembic).", no_args_is_help=True, add_completion=False
)

UrlOption = Annotated[
    str | None,
    typer.Option("--url", help="Database URL (default: the server's, from TILER_* settings)."),
]


def _url(url: str | None) -> str:
    from app.settings import get_settings

    return url or get_settings().effective_database_url


def _shown(url: str) -> str:
    from sqlalchemy.engine import make_url

    # Never print a password that the URL may carry.
    return make_url(url).render_as_string(hide_password=True)


def _current(url: str) -> str | None:
    from app.db import migrate
    from app.db.engine import make_engine

    engine = make_engine(url)
    try:
        return migrate.current_revision(engine)
    finally:
        engine.dispose()


@db_app.command("upgrade")
def upgrade_cmd(
    url: UrlOption = None,
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
) -> None:
    """Migrate the database up to the latest schema (creates it from empty)."""
    from app.db import migrate

    target = _url(url)
    migrate.upgrade(target, revision)
    typer.echo(f"{_shown(target)}: at {_current(target)}")


@db_app.command("downgrade")
def downgrade_cmd(
    url: UrlOption = None,
    revision: Annotated[str, typer.Argument(help="Target revision ('base' drops all).")] = "-1",
) -> None:
    """Migrate the database down (one revision by default)."""
    from app.db import migrate

    target = _url(url)
    migrate.downgrade(target, revision)
    typer.echo(f"{_shown(target)}: at {_current(target)}")


@db_app.command("current")
def current_cmd(url: UrlOption = None) -> None:
    """Print the database's revision and the latest one (exit 1 when behind)."""
    from app.db import migrate

    target = _url(url)
    current = _current(target)
    head = migrate.head_revision()
    typer.echo(f"{_shown(target)}: at {current}, latest {head}")
    raise typer.Exit(0 if current == head else 1)
