"""measurement feedback: measurements, calibrations, active calibrations

Revision ID: 0003f18
Revises: 0002
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UtcDateTime

revision: str = "0003f18"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "measurements",
        sa.Column("seq", _SEQ, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("soc", sa.String(length=64), nullable=False),
        sa.Column("dtype", sa.String(length=16), nullable=False),
        sa.Column("m", sa.BigInteger(), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.Column("k", sa.BigInteger(), nullable=False),
        sa.Column("problem_key", sa.String(length=64), nullable=False),
        sa.Column("kernel_key", sa.String(length=64), nullable=False),
        sa.Column("problem_json", sa.Text(), nullable=False),
        sa.Column("tiling_json", sa.Text(), nullable=False),
        sa.Column("options_json", sa.Text(), nullable=True),
        sa.Column("measured_json", sa.Text(), nullable=False),
        sa.Column("rank_us", sa.Float(), nullable=False),
        sa.Column("cann_version", sa.String(length=64), nullable=True),
        sa.Column("clock_mhz", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_measurements")),
        sa.UniqueConstraint("id", name=op.f("uq_measurements_id")),
    )
    op.create_index("ix_measurements_problem_key", "measurements", ["problem_key"])
    op.create_index("ix_measurements_soc_dtype", "measurements", ["soc", "dtype"])
    op.create_table(
        "calibrations",
        sa.Column("seq", _SEQ, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("soc", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("request_json", sa.Text(), nullable=False),
        sa.Column("profile_json", sa.Text(), nullable=True),
        sa.Column("digest", sa.String(length=64), nullable=True),
        sa.Column("report_json", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("activatable", sa.Boolean(), nullable=True),
        sa.Column("model_version", sa.String(length=32), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("finished_at", UtcDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_calibrations")),
        sa.UniqueConstraint("id", name=op.f("uq_calibrations_id")),
    )
    op.create_table(
        "active_calibrations",
        sa.Column("soc", sa.String(length=64), nullable=False),
        sa.Column("calibration_id", sa.String(length=24), nullable=False),
        sa.Column("set_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("soc", name=op.f("pk_active_calibrations")),
    )


def downgrade() -> None:
    op.drop_table("active_calibrations")
    op.drop_table("calibrations")
    op.drop_index("ix_measurements_soc_dtype", table_name="measurements")
    op.drop_index("ix_measurements_problem_key", table_name="measurements")
    op.drop_table("measurements")
