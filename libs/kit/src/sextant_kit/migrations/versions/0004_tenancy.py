"""tenancy: tenants (virtual clusters) and their hashed API tokens, in their own schema

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22

A separate schema (`tenancy`) keeps credentials apart from the event store's tables (grants can
differ); see sextant_kit/tenancy.py for the token format and why tokens are not events.
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE SCHEMA IF NOT EXISTS tenancy")
    op.create_table(
        "tenants",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=True),
        sa.Column("max_active_workloads", sa.Integer(), nullable=True),
        sa.Column("max_cores", sa.Integer(), nullable=True),
        sa.Column("rate_per_s", sa.Float(), nullable=True),
        sa.Column("burst", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("name", name="tenants_pkey"),
        schema="tenancy",
    )
    op.create_table(
        "tokens",
        sa.Column("token_id", sa.Text(), nullable=False),
        sa.Column("tenant", sa.Text(), nullable=False),
        sa.Column("secret_sha256", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("token_id", name="tokens_pkey"),
        sa.ForeignKeyConstraint(["tenant"], ["tenancy.tenants.name"], name="tokens_tenant_fkey"),
        schema="tenancy",
    )
    op.create_index("tokens_tenant_idx", "tokens", ["tenant"], schema="tenancy")


def downgrade() -> None:
    op.drop_index("tokens_tenant_idx", table_name="tokens", schema="tenancy")
    op.drop_table("tokens", schema="tenancy")
    op.drop_table("tenants", schema="tenancy")
    op.execute("DROP SCHEMA IF EXISTS tenancy")
