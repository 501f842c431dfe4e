"""calibration leases: a calibration whose process died is reported as interrupted

Revision ID: 0004
Revises: 0003f18
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UtcDateTime

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003f18"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable: rows of earlier versions have no lease; an unfinished one among them is read as
    # interrupted (no process of this version runs it).
    op.add_column("calibrations", sa.Column("lease_expires_at", UtcDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("calibrations") as batch:
        batch.drop_column("lease_expires_at")
