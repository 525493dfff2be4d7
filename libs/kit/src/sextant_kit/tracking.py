"""Consumer tracking: which inputs a consumer has already turned into outputs (DESIGN §4).

A tracking row is (`consumer`, `event_id`, `position`): the input's event id and its global log
position — never a Kafka offset, because a relay that re-publishes after a crash produces the
same event under a new offset. The row is inserted in the SAME transaction as the consumer's
outputs — by the database function `sextant_append` (migration 0003, `eventstore/writer.py`), first,
with `ON CONFLICT DO NOTHING`:

- if the insert returns no row, the input was already processed: the transaction writes nothing
  and the redelivery is skipped;
- two processes handling the same input concurrently serialise on the primary key: the second
  waits for the first to commit, then sees the conflict and skips (at-least-once delivery +
  tracking = effectively-once effects).

The tracking row is taken before the log's position lock, always in that order, so the two locks
cannot deadlock. This module holds the read side (look-ups by id, progress).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from .eventstore.schema import tracking


async def is_tracked(conn: AsyncConnection, consumer: str, event_id: str) -> bool:
    stmt = select(tracking.c.event_id).where(tracking.c.consumer == consumer,
                                             tracking.c.event_id == event_id)
    return (await conn.execute(stmt)).first() is not None


async def tracked_ids(conn: AsyncConnection, consumer: str, event_ids: Sequence[str]) -> set[str]:
    """Which of `event_ids` `consumer` has already tracked (one query for a whole batch)."""
    if not event_ids:
        return set()
    stmt = select(tracking.c.event_id).where(tracking.c.consumer == consumer,
                                             tracking.c.event_id.in_(list(event_ids)))
    return {r[0] for r in await conn.execute(stmt)}


async def max_tracked_position(conn: AsyncConnection, consumer: str) -> int:
    """The highest input position tracked for `consumer`, 0 when none."""
    stmt = select(func.coalesce(func.max(tracking.c.position), 0)).where(tracking.c.consumer == consumer)
    return int((await conn.execute(stmt)).scalar_one())


async def tracked_count(conn: AsyncConnection, consumer: str) -> int:
    """How many inputs `consumer` has processed (progress reporting, tests)."""
    stmt = select(func.count()).select_from(tracking).where(tracking.c.consumer == consumer)
    return int((await conn.execute(stmt)).scalar_one())
