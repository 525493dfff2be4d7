"""PostgreSQL-only outbox housekeeping: sent rows can be purged, pending rows never are."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sextant_kit import outbox
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.migrations import migrate_async
from sextant_kit.testing.envelopes import make_envelopes

pytestmark = pytest.mark.integration


async def test_purge_sent_deletes_only_sent_rows(fresh_pg_url: str) -> None:
    await migrate_async(fresh_pg_url)
    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: "t")
    try:
        await store.append("workload-a", 0, make_envelopes("workload-a", 3))
        await store.mark_sent([1, 2])
        async with store.engine.begin() as conn:
            assert await outbox.purge_sent(conn, timedelta(hours=1)) == 0  # sent just now: kept
            assert await outbox.purge_sent(conn, timedelta(0)) == 2
        assert [i.position for i in await store.pending()] == [3]
        assert len(await store.read_all()) == 3  # the log itself is untouched
    finally:
        await store.close()
