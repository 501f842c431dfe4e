"""The service's tables.

``tuning_results`` is the cache of ``tilings:tune``: one row per cache key, holding the normalized
request and the full answer as the JSON text that was first served, so that a repeat is answered
byte for byte the same. ``search_claims`` is the cross-process single-flight: a process that is
running the search for a key holds its row (unique by key) under a renewed lease.

Documents are stored as JSON *text* rather than JSONB on PostgreSQL on purpose: JSONB reorders
keys, and a build system comparing answers byte for byte must see the same bytes from either
database. The filterable fields (SoC, dtype, M, N, K) are real columns.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime

#: Autoincrementing keys: SQLite only autoincrements ``INTEGER PRIMARY KEY``.
_SeqType = BigInteger().with_variant(Integer(), "sqlite")


class TuningResult(Base):
    """A cached ``tilings:tune`` answer.

    Attributes:
        seq: Insertion order; the cursor of ``GET /v1/tilings`` pages over it.
        id: The public id (``GET /v1/tilings/{id}``): the first 24 hex digits of the cache key,
            so the same request has the same id on every installation.
        cache_key: SHA-256 over the canonical request (problem with defaults filled, fixed
            fields, baseline, budget, sampler, seed), the preset digest and the model version.
        request_json: The canonical request, as JSON text.
        answer_json: The tuner's answer (tiling, estimate, baselines, certificate, explanation,
            search), as the JSON text that is served.
        search_s: Wall time of the search that produced the answer, in seconds.
    """

    __tablename__ = "tuning_results"

    seq: Mapped[int] = mapped_column(_SeqType, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(24), unique=True)
    cache_key: Mapped[str] = mapped_column(String(64), unique=True)
    soc: Mapped[str] = mapped_column(String(64))
    dtype: Mapped[str] = mapped_column(String(16))
    m: Mapped[int] = mapped_column(BigInteger)
    n: Mapped[int] = mapped_column(BigInteger)
    k: Mapped[int] = mapped_column(BigInteger)
    model_version: Mapped[str] = mapped_column(String(32))
    preset_digest: Mapped[str] = mapped_column(String(64))
    request_json: Mapped[str] = mapped_column(Text)
    answer_json: Mapped[str] = mapped_column(Text)
    search_s: Mapped[float] = mapped_column(Float)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)

    __table_args__ = (Index("ix_tuning_results_soc_dtype", "soc", "dtype"),)


class SearchClaim(Base):
    """A search in progress somewhere: the single-flight lock of one cache key.

    Attributes:
        cache_key: The key being searched (primary key: at most one claim per key).
        owner: ``host:pid:random`` of the claiming process.
        claimed_at: When the claim was taken.
        expires_at: The lease: the owner renews it while searching; after it passes, another
            process may take the claim over (the owner died).
    """

    __tablename__ = "search_claims"

    cache_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str] = mapped_column(String(128))
    claimed_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
    expires_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
