"""Declarative base with a constraint naming convention, and a portable UTC timestamp type."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import DateTime, MetaData, TypeDecorator
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase

#: Every constraint gets a deterministic name: Alembic's batch mode on SQLite recreates tables
#: and can only carry over (or drop) constraints that have names.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UtcDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware UTC timestamp on every backend.

    SQLite stores datetimes as text without an offset and returns them naive; PostgreSQL returns
    them aware. Storing UTC and re-attaching the UTC offset on load makes both behave the same.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        """Converts an aware datetime to UTC; naive datetimes are refused (ambiguous)."""
        if value is None:
            return None
        if value.tzinfo is None:
            msg = "UtcDateTime needs a timezone-aware datetime"
            raise ValueError(msg)
        return value.astimezone(dt.UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        """Returns the stored timestamp as an aware UTC datetime."""
        if value is None:
            return None
        assert isinstance(value, dt.datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC)


def utc_now() -> dt.datetime:
    """The current time, timezone-aware in UTC."""
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    """Base class of the service's tables."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
