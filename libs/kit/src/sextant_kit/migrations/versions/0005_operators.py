"""operators: a tenant row may be an operator's (cluster-wide reads, every tenant's workloads)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26

See sextant_kit/tenancy.py: an operator is a tenant row with `operator = true`; its tokens are
issued, rotated and revoked like a tenant's.
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("tenants", sa.Column("operator", sa.Boolean(), nullable=False, server_default=sa.false()),
                  schema="tenancy")


def downgrade() -> None:
    op.drop_column("tenants", "operator", schema="tenancy")
