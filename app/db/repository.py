"""The queries of the service: the tuning cache, the search claims, and listing.

Every function takes a :class:`~app.db.engine.Database` and runs one short transaction, so no
transaction is ever held open across a search. Writes use :meth:`Database.write` (BEGIN
IMMEDIATE on SQLite). A row read is mapped once, into the record the routes answer with
(:class:`app.schemas.TilingRecord`, :class:`app.schemas.TilingSummary`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, delete, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from app.db.base import utc_now
from app.db.engine import Database
from app.db.models import SearchClaim, TuningResult
from app.schemas import TilingRecord, TilingSummary

_RESULTS = cast(Table, TuningResult.__table__)
_CLAIMS = cast(Table, SearchClaim.__table__)

#: Columns read for an answer (the JSON documents and what the response adds to them).
_ANSWER_COLUMNS = (
    _RESULTS.c.id,
    _RESULTS.c.model_version,
    _RESULTS.c.preset_digest,
    _RESULTS.c.request_json,
    _RESULTS.c.answer_json,
    _RESULTS.c.created_at,
)


@dataclass(frozen=True)
class NewResult:
    """A tuning answer to store.

    Attributes:
        cache_key: The cache key (its first 24 hex digits become the public id).
        soc: SoC of the problem.
        dtype: Input dtype of the problem.
        m: M of the problem.
        n: N of the problem.
        k: K of the problem.
        model_version: The model version.
        preset_digest: Digest of the preset.
        request_json: The canonical request, JSON text.
        answer_json: The answer, JSON text.
        search_s: Wall time of the search in seconds.
    """

    cache_key: str
    soc: str
    dtype: str
    m: int
    n: int
    k: int
    model_version: str
    preset_digest: str
    request_json: str
    answer_json: str
    search_s: float

    @property
    def id(self) -> str:
        """The public id: the first 24 hex digits of the cache key."""
        return self.cache_key[:24]


def find_by_key(db: Database, cache_key: str) -> TilingRecord | None:
    """Returns the cached answer of a key, or None."""
    with db.read() as conn:
        row = conn.execute(
            select(*_ANSWER_COLUMNS).where(_RESULTS.c.cache_key == cache_key)
        ).first()
    return None if row is None else TilingRecord.from_row(row)


def result_id(db: Database, cache_key: str) -> str | None:
    """The public id of a key's cached answer, or None (a lookup that reads no document)."""
    with db.read() as conn:
        found = conn.execute(
            select(_RESULTS.c.id).where(_RESULTS.c.cache_key == cache_key)
        ).scalar_one_or_none()
    return None if found is None else str(found)


def find_by_id(db: Database, result_id: str) -> TilingRecord | None:
    """Returns the cached answer with a public id, or None."""
    with db.read() as conn:
        row = conn.execute(select(*_ANSWER_COLUMNS).where(_RESULTS.c.id == result_id)).first()
    return None if row is None else TilingRecord.from_row(row)


def store_result(db: Database, new: NewResult) -> TilingRecord:
    """Stores an answer unless its key is already stored, and returns the stored record.

    When another process stored the same key first, its record wins (both computed the same
    answer from the same request; the first one is what every later request is served).
    """
    values = {
        "id": new.id,
        "cache_key": new.cache_key,
        "soc": new.soc,
        "dtype": new.dtype,
        "m": new.m,
        "n": new.n,
        "k": new.k,
        "model_version": new.model_version,
        "preset_digest": new.preset_digest,
        "request_json": new.request_json,
        "answer_json": new.answer_json,
        "search_s": new.search_s,
        "created_at": utc_now(),
    }
    with db.write() as conn:
        if db.dialect == "postgresql":
            stmt: Any = postgresql.insert(_RESULTS).on_conflict_do_nothing()
        else:
            stmt = sqlite.insert(_RESULTS).on_conflict_do_nothing()
        conn.execute(stmt.values(**values))
        row = conn.execute(
            select(*_ANSWER_COLUMNS).where(_RESULTS.c.cache_key == new.cache_key)
        ).one()
    return TilingRecord.from_row(row)


@dataclass(frozen=True, kw_only=True)
class ShapeRange:
    """The M/N/K range filters shared by the listings (None means any).

    Attributes:
        m_min: Smallest M.
        m_max: Largest M.
        n_min: Smallest N.
        n_max: Largest N.
        k_min: Smallest K.
        k_max: Largest K.
    """

    m_min: int | None = None
    m_max: int | None = None
    n_min: int | None = None
    n_max: int | None = None
    k_min: int | None = None
    k_max: int | None = None


@dataclass(frozen=True, kw_only=True)
class ResultFilter(ShapeRange):
    """Filters of ``GET /v1/tilings`` (None means any), with the shape ranges.

    Attributes:
        soc: SoC name.
        dtype: Input dtype.
        model_version: Model version.
    """

    soc: str | None = None
    dtype: str | None = None
    model_version: str | None = None


def list_results(
    db: Database, where: ResultFilter, *, before_seq: int | None, limit: int
) -> tuple[list[TilingSummary], int | None]:
    """Returns up to ``limit`` results matching ``where``, newest first, older than a cursor.

    Args:
        db: The database.
        where: The filters.
        before_seq: Only rows inserted before this one (the cursor of the previous page).
        limit: Page size.

    Returns:
        The page, and the cursor of the next one (the last row's insertion order; None when
        nothing follows).
    """
    r = _RESULTS.c
    query = select(
        r.seq, r.id, r.soc, r.dtype, r.m, r.n, r.k, r.model_version, r.answer_json, r.created_at
    )
    conditions = [
        (where.soc, r.soc.__eq__),
        (where.dtype, r.dtype.__eq__),
        (where.model_version, r.model_version.__eq__),
        *shape_conditions(r, where),
    ]
    rows, next_seq = keyset_page(db, query, r.seq, conditions, before_seq, limit)
    return [TilingSummary.from_row(row) for row in rows], next_seq


def shape_conditions(columns: Any, where: ShapeRange) -> list[tuple[Any, Any]]:
    """The M/N/K range filters of a listing: ``where``'s ``m_min`` .. ``k_max`` on ``columns``."""
    return [
        (where.m_min, columns.m.__ge__),
        (where.m_max, columns.m.__le__),
        (where.n_min, columns.n.__ge__),
        (where.n_max, columns.n.__le__),
        (where.k_min, columns.k.__ge__),
        (where.k_max, columns.k.__le__),
    ]


def keyset_page(
    db: Database,
    query: Any,
    seq: Any,
    conditions: list[tuple[Any, Any]],
    before_seq: int | None,
    limit: int,
) -> tuple[list[Any], int | None]:
    """One page of a listing, newest first, and the cursor of the next page (None when last).

    The rows match every condition whose value is set and were inserted before ``before_seq``.
    """
    for value, condition in [*conditions, (before_seq, seq.__lt__)]:
        if value is not None:
            query = query.where(condition(value))
    with db.read() as conn:
        rows = conn.execute(query.order_by(seq.desc()).limit(limit + 1)).all()
    next_seq = int(rows[limit - 1].seq) if len(rows) > limit else None
    return list(rows[:limit]), next_seq


def try_claim(db: Database, cache_key: str, owner: str, lease_s: float) -> bool:
    """Claims the search of a key for ``owner``, or takes over a claim whose lease expired.

    Returns:
        True when ``owner`` now holds the claim, False when another live process holds it.
    """
    now = utc_now()
    expires = now + dt.timedelta(seconds=lease_s)
    with db.write() as conn:
        try:
            # The primary key makes this the lock: of many processes inserting at once, one
            # insert succeeds and the others hit the unique constraint.
            with conn.begin_nested():
                conn.execute(
                    insert(_CLAIMS).values(
                        cache_key=cache_key, owner=owner, claimed_at=now, expires_at=expires
                    )
                )
            return True
        except IntegrityError:
            pass
        # The holder stopped renewing (its process died): take the claim over. The condition
        # on expires_at makes the take-over itself exclusive.
        taken = conn.execute(
            update(_CLAIMS)
            .where(_CLAIMS.c.cache_key == cache_key, _CLAIMS.c.expires_at < now)
            .values(owner=owner, claimed_at=now, expires_at=expires)
        )
        return taken.rowcount == 1


def renew_claim(db: Database, cache_key: str, owner: str, lease_s: float) -> bool:
    """Extends ``owner``'s lease on a key; False when the claim is no longer its own."""
    expires = utc_now() + dt.timedelta(seconds=lease_s)
    with db.write() as conn:
        done = conn.execute(
            update(_CLAIMS)
            .where(_CLAIMS.c.cache_key == cache_key, _CLAIMS.c.owner == owner)
            .values(expires_at=expires)
        )
        return done.rowcount == 1


def release_claim(db: Database, cache_key: str, owner: str) -> None:
    """Drops ``owner``'s claim on a key (after storing the answer, or on failure)."""
    with db.write() as conn:
        conn.execute(
            delete(_CLAIMS).where(_CLAIMS.c.cache_key == cache_key, _CLAIMS.c.owner == owner)
        )


def claim_is_live(db: Database, cache_key: str) -> bool:
    """True while some process holds an unexpired claim on the key."""
    with db.read() as conn:
        expires = conn.execute(
            select(_CLAIMS.c.expires_at).where(_CLAIMS.c.cache_key == cache_key)
        ).scalar_one_or_none()
    return expires is not None and expires >= utc_now()
