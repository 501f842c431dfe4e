"""tuning results cache and search claims

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UtcDateTime

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tuning_results",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("soc", sa.String(length=64), nullable=False),
        sa.Column("dtype", sa.String(length=16), nullable=False),
        sa.Column("m", sa.BigInteger(), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.Column("k", sa.BigInteger(), nullable=False),
        sa.Column("model_version", sa.String(length=32), nullable=False),
        sa.Column("preset_digest", sa.String(length=64), nullable=False),
        sa.Column("request_json", sa.Text(), nullable=False),
        sa.Column("answer_json", sa.Text(), nullable=False),
        sa.Column("search_s", sa.Float(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_tuning_results")),
        sa.UniqueConstraint("cache_key", name=op.f("uq_tuning_results_cache_key")),
        sa.UniqueConstraint("id", name=op.f("uq_tuning_results_id")),
    )
    op.create_index("ix_tuning_results_soc_dtype", "tuning_results", ["soc", "dtype"])
    op.create_table(
        "search_claims",
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=128), nullable=False),
        sa.Column("claimed_at", UtcDateTime(), nullable=False),
        sa.Column("expires_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("cache_key", name=op.f("pk_search_claims")),
    )


def downgrade() -> None:
    op.drop_table("search_claims")
    op.drop_index("ix_tuning_results_soc_dtype", table_name="tuning_results")
    op.drop_table("tuning_results")
