"""A PostgreSQL restart kills the pooled connections under a running process: the event store's
driver-level statements (the log read every decider's catch-up runs, the batched append, the
durability barrier, the relay's mark) fail once, and the next call gets a fresh connection — a
dead connection is never checked in again (`eventstore.rawconn`). Before, a decider whose catch-up
hit a dead connection first retried on it forever, silently, after the platform's outage test."""

from __future__ import annotations

import itertools

import asyncpg
import pytest
from sextant_kit.errors import is_transient
from sextant_kit.eventstore.postgres import PostgresEventStore, asyncpg_dsn
from sextant_kit.migrations import migrate_async
from sextant_kit.ports import TrackedInput
from sextant_kit.testing.envelopes import make_envelope

pytestmark = pytest.mark.integration


async def _kill_backends(store: PostgresEventStore) -> int:
    """Terminate every other backend of this database (the store's pooled connections)."""
    conn = await asyncpg.connect(asyncpg_dsn(store.engine))
    try:
        return int(await conn.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"))
    finally:
        await conn.close()


async def test_a_killed_pooled_connection_fails_once_and_the_next_call_reconnects(fresh_pg_url: str) -> None:
    await migrate_async(fresh_pg_url)
    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None, pool_size=1)
    try:
        await store.append("clock-1", 0, [make_envelope("clock-1", 1, 1)])
        ids = itertools.count(100)

        async def append_one() -> object:
            n = next(ids)
            return await store.append_and_track_many("c", [TrackedInput(f"in-{n}", None,
                                                                        (make_envelope(f"clock-x{n}", 1, n),))])

        calls = {"read_all": lambda: store.read_all(0, 10), "append_and_track_many": append_one, "sync": store.sync}
        for name, call in calls.items():
            store._written = 10**9  # type: ignore[attr-defined]  # make the barrier ask the server
            await call()  # the pool holds one live connection
            assert await _kill_backends(store) >= 1, name
            with pytest.raises(Exception) as failed:
                await call()
            assert is_transient(failed.value), (name, failed.value)
            await call()  # a fresh connection, not the dead one again
        assert (await store.read_all(0, 1))[0].stream == "clock-1"
    finally:
        await store.close()


async def test_a_statement_refused_by_the_server_keeps_its_connection(fresh_pg_url: str) -> None:
    """A batched append refused because the log's head moved is the statement's own error: the
    pooled connection stays (no reconnect per refusal)."""
    from sextant_kit.errors import HeadMovedError

    await migrate_async(fresh_pg_url)
    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None, pool_size=1)
    try:
        await store.append("clock-1", 0, [make_envelope("clock-1", 1, 1)])
        conn = await asyncpg.connect(asyncpg_dsn(store.engine))
        pid_sql = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        try:
            before = set(await conn.fetch(pid_sql))
            with pytest.raises(HeadMovedError):
                await store.append_and_track_many("c", [TrackedInput("in-1", None, (make_envelope("clock-2", 1, 2),))],
                                                  expected_head=0)
            assert set(await conn.fetch(pid_sql)) == before and before
        finally:
            await conn.close()
    finally:
        await store.close()
