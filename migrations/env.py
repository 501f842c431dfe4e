"""Alembic environment: the service's own tables, its own version table, one history for both
SQLite and PostgreSQL.

Configured programmatically by :mod:`app.db.migrate` (there is no alembic.ini): the database URL
comes from the ``sqlalchemy.url`` main option, or a live connection is passed in
``config.attributes["connection"]``.
"""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import Connection

from app.db.engine import make_engine
from app.db.migrate import VERSION_TABLE
from app.db.models import Base

config = context.config
target_metadata = Base.metadata
_OWN_TABLES = {*target_metadata.tables, VERSION_TABLE}


def _include_name(name: str | None, type_: str, parent_names: Any) -> bool:
    # Other tools may share the database (Optuna's RDB storage creates studies, trials, ... and
    # its own alembic_version): autogenerate and `alembic check` must never propose to drop them.
    if type_ == "table":
        return name in _OWN_TABLES
    return True


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # Our own version table: Optuna (or any other Alembic user) in the same database keeps
        # its alembic_version and neither overwrites the other's revision (mlflow/mlflow#3374).
        version_table=VERSION_TABLE,
        include_name=_include_name,
        compare_type=True,
        # SQLite cannot ALTER most things; batch mode recreates the table (harmless elsewhere).
        render_as_batch=connection.dialect.name == "sqlite",
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":
                # Batch mode copies and drops tables; with foreign keys on, dropping a referenced
                # table would fail or cascade. The pragma is a no-op inside a transaction, so it
                # goes to the driver connection before Alembic begins one.
                conn.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        version_table=VERSION_TABLE,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()
else:
    _run_online()
