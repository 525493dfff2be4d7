"""The migrated schema matches the SQLAlchemy models, migrations are idempotent and safe to run
from several processes at once."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sextant_kit.eventstore.schema import metadata
from sextant_kit.migrations import VERSION_TABLE, migrate, migrate_async
from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import create_async_engine

pytestmark = pytest.mark.integration


async def _diff_and_tables(url: str) -> tuple[list[Any], set[str]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            def inspect_sync(sync_conn: Any) -> tuple[list[Any], set[str]]:
                ctx = MigrationContext.configure(sync_conn, opts={"version_table": VERSION_TABLE,
                                                                  "compare_type": True,
                                                                  "compare_server_default": True})
                return compare_metadata(ctx, metadata), set(inspect(sync_conn).get_table_names())
            return await conn.run_sync(inspect_sync)
    finally:
        await engine.dispose()


async def test_migrated_schema_matches_the_models(fresh_pg_url: str) -> None:
    await migrate_async(fresh_pg_url)
    diff, tables = await _diff_and_tables(fresh_pg_url)
    assert diff == []
    assert tables == {"events", "log_head", "tracking", "outbox", "snapshots", "durability_barrier",
                      VERSION_TABLE}


async def test_migrations_are_idempotent_and_concurrent_safe(fresh_pg_url: str) -> None:
    code = f"from sextant_kit.migrations import migrate; migrate({fresh_pg_url!r})"
    procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", code) for _ in range(3)]
    assert [await p.wait() for p in procs] == [0, 0, 0]
    await asyncio.gather(*(asyncio.to_thread(migrate, fresh_pg_url) for _ in range(2)))
    await migrate_async(fresh_pg_url)
    diff, _ = await _diff_and_tables(fresh_pg_url)
    assert diff == []


async def test_downgrade_to_base_removes_the_tables(fresh_pg_url: str) -> None:
    from alembic import command
    from sextant_kit.migrations import alembic_config

    await migrate_async(fresh_pg_url)
    await asyncio.to_thread(command.downgrade, alembic_config(fresh_pg_url), "base")
    _, tables = await _diff_and_tables(fresh_pg_url)
    assert tables == {VERSION_TABLE}


async def test_appends_are_made_durable_by_a_barrier_outside_the_lock(fresh_pg_url: str) -> None:
    """The append transaction commits asynchronously; a synchronous barrier follows it, and the
    store then knows the appended positions are durable."""
    from sextant_kit.eventstore.postgres import PostgresEventStore
    from sextant_kit.testing.envelopes import make_envelopes
    from sqlalchemy import text

    await migrate_async(fresh_pg_url)
    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None)
    try:
        stored = await store.append("workload-a", 0, make_envelopes("workload-a", 3))
        assert store._durability.durable_position >= stored[-1].position  # type: ignore[operator]
        async with store.engine.connect() as conn:
            bumps = (await conn.execute(text("SELECT coalesce(sum(n), 0) FROM durability_barrier"))).scalar_one()
        assert bumps == 1
        await store.read_all()  # already known durable: no second barrier
        async with store.engine.connect() as conn:
            assert (await conn.execute(text("SELECT sum(n) FROM durability_barrier"))).scalar_one() == 1
    finally:
        await store.close()


async def test_a_read_past_the_durable_mark_carries_its_own_barrier(fresh_pg_url: str) -> None:
    """`read_all` and the relay's `pending()` put the barrier in their statement (one round trip):
    it writes only when the snapshot holds rows past the reader's highest known durable position;
    the reader then knows what it read is durable, and reading it again writes nothing."""
    from sextant_kit.eventstore.postgres import PostgresEventStore
    from sextant_kit.testing.envelopes import make_envelopes
    from sqlalchemy import text

    await migrate_async(fresh_pg_url)
    writer = PostgresEventStore.from_url(fresh_pg_url)
    readers = [PostgresEventStore.from_url(fresh_pg_url) for _ in range(2)]

    async def bumps() -> int:
        async with writer.engine.connect() as conn:
            return int((await conn.execute(text("SELECT coalesce(sum(n), 0) FROM durability_barrier"))).scalar_one())

    async def no_second_round_trip(position: int) -> None:
        raise AssertionError(f"a separate barrier for position {position}")

    for reader in readers:
        reader._durability.ensure = no_second_round_trip  # type: ignore[attr-defined,method-assign]
    try:
        stored = await writer.append_and_track("svc", "in-1", None, make_envelopes("workload-a", 3), durable=False)
        assert stored is not None and await bumps() == 0  # not durable yet: no barrier so far
        found = await readers[0].read_all()
        assert [e.position for e in found] == [1, 2, 3] and await bumps() == 1
        assert readers[0]._durability.durable_position == 3  # type: ignore[attr-defined]
        assert len(await readers[0].read_all()) == 3 and await bumps() == 1  # known durable: no write
        assert await readers[0].pending() != [] and await bumps() == 1  # nothing past the mark either
        items = await readers[1].pending()  # the relay's read: its own barrier
        assert [i.envelope.position for i in items] == [1, 2, 3] and await bumps() == 2
        assert readers[1]._durability.durable_position == 3  # type: ignore[attr-defined]
        assert await readers[1].read_all(3) == [] and await bumps() == 2
    finally:
        for store in (writer, *readers):
            await store.close()
