"""The transactional outbox (DESIGN §4): events committed in PostgreSQL wait here for the relay.

Every append writes, in its own transaction, one outbox row per stored event: (`position`,
`topic`, `traceparent`, `sent_at` NULL). The topic comes from a `TopicResolver` (by default the
contracts' `topic_for_stream`); a resolver returning None means "this stream is not published".
The relay (`relay.py`) reads pending rows in position order, publishes them, and only then marks
them sent — so a relay killed in between re-publishes on restart (at-least-once), and consumer
tracking absorbs the duplicate.

Rows are kept after sending (`sent_at` set) for inspection; `purge_sent` deletes old ones. The
pending scan uses the partial index `ix_outbox_pending`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta

from sextant_contracts.envelope import Envelope
from sextant_contracts.topics import topic_for_stream
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from .eventstore import rows
from .eventstore.schema import events, outbox
from .ports import OutboxItem

TopicResolver = Callable[[str], str | None]
"""stream id → Kafka topic name, or None when the stream is not published."""


def default_topic_of(stream: str) -> str:
    """The contracts' registry: `workload-*` → sextant.events.workloads, ... (KeyError if unknown)."""
    return topic_for_stream(stream).name


def outbox_items(stored: Sequence[Envelope], topic_of: TopicResolver) -> list[OutboxItem]:
    """The outbox items for freshly stored envelopes (positions set); unpublished streams skipped."""
    out: list[OutboxItem] = []
    for env in stored:
        topic = topic_of(env.stream)
        if topic is not None:
            out.append(OutboxItem(envelope=env, topic=topic, traceparent=env.traceparent))
    return out


async def enqueue(conn: AsyncConnection, stored: Sequence[Envelope], topic_of: TopicResolver) -> int:
    """Insert the outbox rows inside the caller's (append) transaction; returns how many."""
    values = [{"position": i.position, "topic": i.topic, "traceparent": i.traceparent}
              for i in outbox_items(stored, topic_of)]
    if values:
        await conn.execute(outbox.insert(), values)
    return len(values)


async def pending(conn: AsyncConnection, limit: int) -> list[OutboxItem]:
    """At most `limit` unsent items in position order, each with its full envelope."""
    stmt = (select(events, outbox.c.topic, outbox.c.traceparent.label("outbox_traceparent"))
            .select_from(outbox.join(events, events.c.position == outbox.c.position))
            .where(outbox.c.sent_at.is_(None))
            .order_by(outbox.c.position).limit(limit))
    result = await conn.execute(stmt)
    return [OutboxItem(envelope=rows.envelope_from_row(r), topic=r.topic, traceparent=r.outbox_traceparent)
            for r in result]


MARK_SENT_SQL = ("WITH async AS (SELECT set_config('synchronous_commit', 'off', true)) "
                 "UPDATE outbox SET sent_at = now() FROM async "
                 "WHERE position = ANY($1::bigint[]) AND sent_at IS NULL")
"""asyncpg statement marking positions ($1) sent: one autocommit round trip, committed without
waiting for the WAL flush — a mark lost in a server crash only causes a re-publication, which
consumer tracking absorbs."""


async def mark_sent(conn: AsyncConnection, positions: Sequence[int]) -> None:
    if positions:
        stmt = (update(outbox).where(outbox.c.position.in_(list(positions)))
                .values(sent_at=func.now()))
        await conn.execute(stmt)


async def pending_count(conn: AsyncConnection) -> int:
    stmt = select(func.count()).select_from(outbox).where(outbox.c.sent_at.is_(None))
    return int((await conn.execute(stmt)).scalar_one())


async def purge_sent(conn: AsyncConnection, older_than: timedelta) -> int:
    """Delete rows sent more than `older_than` ago; returns how many."""
    stmt = delete(outbox).where(outbox.c.sent_at.is_not(None),
                                outbox.c.sent_at < func.now() - text(":age * interval '1 second'")
                                .bindparams(age=older_than.total_seconds()))
    result = await conn.execute(stmt)
    return int(getattr(result, "rowcount", 0) or 0)
