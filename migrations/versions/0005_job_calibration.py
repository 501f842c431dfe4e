"""batch jobs priced with a calibration profile: the job's choice, each shape's profile

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Jobs of earlier versions were priced with the packaged constants: "default".
    op.add_column(
        "jobs",
        sa.Column("calibration", sa.String(length=32), nullable=False, server_default="default"),
    )
    op.add_column("job_items", sa.Column("calibration_id", sa.String(length=24), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("job_items") as batch:
        batch.drop_column("calibration_id")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("calibration")
