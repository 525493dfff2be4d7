"""durability barrier: one row per backend, bumped by a synchronous commit

Revision ID: 0002
Revises: 0001
Create Date: 2025-11-22
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "durability_barrier",
        sa.Column("pid", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("pid", name="durability_barrier_pkey"),
    )


def downgrade() -> None:
    op.drop_table("durability_barrier")
