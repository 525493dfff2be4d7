"""event store: events, log_head, tracking, outbox, snapshots

Revision ID: 0001
Revises:
Create Date: 2025-11-22
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = postgresql.TIMESTAMP(timezone=True)


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("position", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("stream", sa.Text(), nullable=False),
        sa.Column("stream_version", sa.Integer(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("time", sa.Double(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("traceparent", sa.Text(), nullable=True),
        sa.Column("causation_id", sa.Text(), nullable=True),
        sa.Column("correlation_id", sa.Text(), nullable=True),
        sa.Column("recorded_at", TS, server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("position", name="events_pkey"),
        sa.UniqueConstraint("id", name="uq_events_id"),
        sa.UniqueConstraint("stream", "stream_version", name="uq_events_stream_version"),
    )
    op.create_table(
        "log_head",
        sa.Column("id", sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="log_head_pkey"),
    )
    op.execute("INSERT INTO log_head (id, position) VALUES (1, 0)")
    op.create_table(
        "tracking",
        sa.Column("consumer", sa.Text(), nullable=False),
        sa.Column("event_id", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=True),
        sa.Column("recorded_at", TS, server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("consumer", "event_id", name="tracking_pkey"),
    )
    op.create_index("ix_tracking_consumer_position", "tracking", ["consumer", "position"])
    op.create_table(
        "outbox",
        sa.Column("position", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("topic", sa.Text(), nullable=False),
        sa.Column("traceparent", sa.Text(), nullable=True),
        sa.Column("created_at", TS, server_default=sa.text("now()"), nullable=False),
        sa.Column("sent_at", TS, nullable=True),
        sa.ForeignKeyConstraint(["position"], ["events.position"], name="fk_outbox_position"),
        sa.PrimaryKeyConstraint("position", name="outbox_pkey"),
    )
    op.create_index("ix_outbox_pending", "outbox", ["position"],
                    postgresql_where=sa.text("sent_at IS NULL"))
    op.create_table(
        "snapshots",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("code_version", sa.Text(), nullable=False),
        sa.Column("schema_version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("blob", sa.LargeBinary(), nullable=False),
        sa.Column("saved_at", TS, server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("key", "code_version", "schema_version", name="snapshots_pkey"),
    )


def downgrade() -> None:
    op.drop_table("snapshots")
    op.drop_index("ix_outbox_pending", table_name="outbox")
    op.drop_table("outbox")
    op.drop_index("ix_tracking_consumer_position", table_name="tracking")
    op.drop_table("tracking")
    op.drop_table("log_head")
    op.drop_table("events")
