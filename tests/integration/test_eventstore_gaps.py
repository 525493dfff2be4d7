"""Acceptance "No gaps": 8 concurrent writers append 10 000 events in total while a reader tails
by position; the reader sees every event exactly once, in position order (DESIGN §4).

Each writer has its own engine (its own connections), appends batches of seeded random sizes
(1..12) to seeded random streams, and the reader tails through a third engine woken by NOTIFY.
A store whose positions could commit out of order would let the reader jump past a position
that commits later: it would then miss that event, which the assertions below catch.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.migrations import migrate_async
from sextant_kit.testing.envelopes import make_envelope

pytestmark = pytest.mark.integration

WRITERS = 8
TOTAL = 10_000


async def writer(url: str, w: int, count: int) -> list[str]:
    rng = random.Random(1000 + w)
    store = PostgresEventStore.from_url(url, topic_of=lambda s: None, pool_size=2)
    ids: list[str] = []
    try:
        while len(ids) < count:
            size = min(rng.randint(1, 12), count - len(ids))
            stream = f"workload-w{w}-s{rng.randrange(20)}"
            batch = [make_envelope(stream, 0, len(ids) + i, id=f"w{w}-{len(ids) + i}") for i in range(size)]
            await store.append(stream, None, batch)
            ids.extend(e.id for e in batch)
            if rng.random() < 0.2:
                await asyncio.sleep(0)  # vary the interleaving
    finally:
        await store.close()
    return ids


async def test_concurrent_writers_and_a_tailing_reader_see_every_event_once_in_order(fresh_pg_url: str) -> None:
    await migrate_async(fresh_pg_url)
    reader = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None, pool_size=2, poll_interval=0.5)
    seen: list[tuple[int, str]] = []

    async def tail() -> None:
        async for env in reader.tail(0, batch=300):
            assert env.position is not None
            seen.append((env.position, env.id))
            if len(seen) == TOTAL:
                return

    tail_task = asyncio.create_task(tail())
    written = await asyncio.gather(*(writer(fresh_pg_url, w, TOTAL // WRITERS) for w in range(WRITERS)))
    await asyncio.wait_for(tail_task, 120)
    try:
        positions = [p for p, _ in seen]
        assert positions == list(range(1, TOTAL + 1))  # in order, no gap, no repeat
        all_ids = [i for ids in written for i in ids]
        assert len(all_ids) == TOTAL
        assert sorted(i for _, i in seen) == sorted(all_ids)  # every event exactly once
        assert await reader.last_position() == TOTAL
        # per writer, the log keeps each writer's own order
        for ids in written:
            order = {i: k for k, (_, i) in enumerate(seen)}
            assert [order[i] for i in ids] == sorted(order[i] for i in ids)
    finally:
        await reader.close()
