"""The event store's tables (SQLAlchemy Core). The Alembic migrations create exactly these; a test
compares the migrated database with this metadata.

- `events`: the append-only log. `position` is the global position (contiguous, commit-ordered,
  see `postgres.py`); (`stream`, `stream_version`) is unique (optimistic concurrency); `id` is
  unique. `payload` is canonical JSON *text*, not JSONB, so a replay reads back the exact bytes.
- `log_head`: one row holding the last assigned position. Taking its row lock serialises position
  assignment; the lock is held until commit, so commit order equals position order.
- `tracking`: what each consumer has processed, by event id and global position (DESIGN §4).
- `outbox`: events not yet published to Kafka (`sent_at` NULL), with their topic and trace context.
- `snapshots`: disposable caches tagged with code and schema version (DESIGN §4).
- `durability_barrier`: one row per server backend, bumped by a synchronous commit to force the
  WAL to disk up to "now" (see `durability.py`).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import TIMESTAMP

metadata = MetaData()

events = Table(
    "events", metadata,
    Column("position", BigInteger, primary_key=True, autoincrement=False),
    Column("id", Text, nullable=False),
    Column("stream", Text, nullable=False),
    Column("stream_version", Integer, nullable=False),
    Column("type", Text, nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("source", Text, nullable=False),
    Column("time", Double, nullable=False),
    Column("payload", Text, nullable=False),
    Column("traceparent", Text, nullable=True),
    Column("causation_id", Text, nullable=True),
    Column("correlation_id", Text, nullable=True),
    Column("recorded_at", TIMESTAMP(timezone=True), nullable=False, server_default=text("now()")),
    # the writer's `sextant_contracts.trusted.stored_checksum` (migration 0007); NULL: read validated
    Column("checksum", Text, nullable=True),
    UniqueConstraint("id", name="uq_events_id"),
    UniqueConstraint("stream", "stream_version", name="uq_events_stream_version"),
)

log_head = Table(
    "log_head", metadata,
    Column("id", SmallInteger, primary_key=True, autoincrement=False),
    Column("position", BigInteger, nullable=False),
)

tracking = Table(
    "tracking", metadata,
    Column("consumer", Text, primary_key=True),
    Column("event_id", Text, primary_key=True),
    Column("position", BigInteger, nullable=True),
    Column("recorded_at", TIMESTAMP(timezone=True), nullable=False, server_default=text("now()")),
    Index("ix_tracking_consumer_position", "consumer", "position"),
)

outbox = Table(
    "outbox", metadata,
    Column("position", BigInteger, ForeignKey("events.position", name="fk_outbox_position"),
           primary_key=True, autoincrement=False),
    Column("topic", Text, nullable=False),
    Column("traceparent", Text, nullable=True),
    Column("created_at", TIMESTAMP(timezone=True), nullable=False, server_default=text("now()")),
    Column("sent_at", TIMESTAMP(timezone=True), nullable=True),
    Index("ix_outbox_pending", "position", postgresql_where=text("sent_at IS NULL")),
)

snapshots = Table(
    "snapshots", metadata,
    Column("key", Text, primary_key=True),
    Column("code_version", Text, primary_key=True),
    Column("schema_version", Integer, primary_key=True, autoincrement=False),
    Column("position", BigInteger, nullable=False),
    Column("blob", LargeBinary, nullable=False),
    Column("saved_at", TIMESTAMP(timezone=True), nullable=False, server_default=text("now()")),
)

durability_barrier = Table(
    "durability_barrier", metadata,
    Column("pid", Integer, primary_key=True, autoincrement=False),
    Column("n", BigInteger, nullable=False),
)

LOG_HEAD_ID = 1
NOTIFY_CHANNEL = "sextant_events"
"""`pg_notify` channel: every append notifies it on commit with its last position."""
