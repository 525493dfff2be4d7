"""The PostgreSQL event store: the system of record (DESIGN §4).

Async SQLAlchemy 2 Core over asyncpg. Implements `EventStore`, `TrackingRecorder`, `OutboxReader`
and `SnapshotStore` (ports.py). How positions are assigned so that commit order equals position
order, and what that costs, is documented in `writer.py`; the tables in `schema.py`; the migrations
in `sextant_kit.migrations` (run `migrate(url)` before using a database).

Construct it from an engine the process's bootstrap owns (`PostgresEventStore(engine)`) or from a
URL (`PostgresEventStore.from_url(url)`, which owns and disposes its engine). Tailing readers and
the relay wake up on NOTIFY (`notify.py`); `poll_interval` is the slow fallback. Appends commit
asynchronously and are made durable by a barrier outside the log lock before anything is returned
or published (`durability.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from sextant_contracts.envelope import Envelope
from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from .. import outbox, tracking
from ..ports import OutboxItem, Snapshot, TrackedInput
from . import batches
from .durability import DurabilityBarrier, barrier_if_newer
from .notify import Notifications
from .rawconn import raw_connection
from .rows import COLUMNS, envelope_from_record, envelope_from_row, envelopes_from_records
from .schema import NOTIFY_CHANNEL, events, log_head, snapshots
from .writer import write, write_many

# both carry their durability barrier (durability.barrier_if_newer: $3 / $2 = the highest position
# known durable): one round trip each
_READ_ALL = (barrier_if_newer("$3")
             + f"SELECT {COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2")
_PENDING = (barrier_if_newer("$2", "outbox")
            + f"SELECT {', '.join('e.' + c.strip() for c in COLUMNS.split(','))}, o.topic, "
            "o.traceparent AS outbox_traceparent FROM outbox o JOIN events e ON e.position = o.position "
            "WHERE o.sent_at IS NULL ORDER BY o.position LIMIT $1")
_TRACKED_IDS = "SELECT event_id FROM tracking WHERE consumer = $1 AND event_id = ANY($2::text[])"


def asyncpg_dsn(engine: AsyncEngine) -> str:
    """A plain `postgresql://` DSN for asyncpg.connect from the engine's URL."""
    return engine.url.set(drivername="postgresql", query={}).render_as_string(hide_password=False)


class PostgresEventStore:
    """Event store, tracking recorder, outbox reader and snapshot store on one PostgreSQL database."""

    def __init__(self, engine: AsyncEngine, *, topic_of: outbox.TopicResolver = outbox.default_topic_of,
                 poll_interval: float = 1.0, owns_engine: bool = False) -> None:
        self.engine = engine
        self._topic_of = topic_of
        self._poll_interval = poll_interval
        self._owns_engine = owns_engine
        self._notifications = Notifications(asyncpg_dsn(engine), NOTIFY_CHANNEL)
        self._durability = DurabilityBarrier(engine)
        self._written = 0  # highest position this store appended

    @classmethod
    def from_url(cls, url: str, *, pool_size: int = 10, **kwargs: Any) -> PostgresEventStore:
        """A store with its own engine (`postgresql+asyncpg://...`), disposed by `close()`."""
        engine = create_async_engine(url, pool_size=pool_size, max_overflow=pool_size)
        return cls(engine, owns_engine=True, **kwargs)

    async def close(self) -> None:
        await self._notifications.close()
        if self._owns_engine:
            await self.engine.dispose()

    # --- EventStore --------------------------------------------------------------------------

    async def append(self, stream: str, expected_version: int | None,
                     envelopes: Sequence[Envelope]) -> list[Envelope]:
        todo = batches.single(stream, expected_version, envelopes)
        async with self._autocommit() as conn:
            stored = await write(conn, todo, self._topic_of)
        assert stored is not None
        self._note_written(stored)
        await self._durable(stored)
        return stored

    async def read_stream(self, stream: str, from_version: int = 0,
                          limit: int | None = None) -> list[Envelope]:
        stmt = (select(events).where(events.c.stream == stream, events.c.stream_version > from_version)
                .order_by(events.c.stream_version))
        if limit is not None:
            stmt = stmt.limit(limit)
        async with self.engine.connect() as conn:
            found = [envelope_from_row(r) for r in await conn.execute(stmt)]
        await self._durable(found)
        return found

    async def stream_version(self, stream: str) -> int:
        stmt = select(func.coalesce(func.max(events.c.stream_version), 0)).where(events.c.stream == stream)
        async with self.engine.connect() as conn:
            return int((await conn.execute(stmt)).scalar_one())

    async def read_all(self, from_position: int = 0, limit: int = 1000) -> list[Envelope]:
        """Raw asyncpg (one prepared statement per connection): every decider's catch-up reads
        every event through here, and SQLAlchemy's statement and row layers cost more than the
        query."""
        async with raw_connection(self.engine) as raw:
            rows = await raw.fetch(_READ_ALL, from_position, limit, self._durability.durable_position)
        found = envelopes_from_records(rows)
        if found:  # durable: the statement's own barrier (see _READ_ALL)
            self._durability.covered(found[-1].position or 0)
        return found

    async def tail(self, from_position: int = 0, *, batch: int = 500) -> AsyncIterator[Envelope]:
        position = from_position
        while True:
            seen = self._notifications.generation
            found = await self.read_all(position, batch)
            for env in found:
                assert env.position is not None
                position = env.position
                yield env
            if len(found) < batch:
                await self._notifications.wait(seen, self._poll_interval)

    @contextlib.asynccontextmanager
    async def _autocommit(self) -> AsyncIterator[AsyncConnection]:
        """A pooled connection in AUTOCOMMIT mode: one statement = one transaction."""
        async with self.engine.connect() as conn:
            yield await conn.execution_options(isolation_level="AUTOCOMMIT")

    def _note_written(self, stored: Sequence[Envelope]) -> None:
        if stored:
            self._written = max(self._written, stored[-1].position or 0)

    async def _durable(self, envelopes: Sequence[Envelope]) -> None:
        """Return once every envelope of `envelopes` is on disk (see durability.py)."""
        if envelopes:
            await self._durability.ensure(max(e.position or 0 for e in envelopes))

    async def last_position(self) -> int:
        """The highest committed position: the counter, as every committed append advanced it."""
        async with self.engine.connect() as conn:
            return int((await conn.execute(select(log_head.c.position))).scalar_one())

    # --- TrackingRecorder --------------------------------------------------------------------

    async def append_and_track(self, consumer: str, input_event_id: str, input_position: int | None,
                               outputs: Sequence[Envelope], *,
                               expected: Mapping[str, int | None] | None = None,
                               expected_head: int | None = None,
                               durable: bool = True) -> list[Envelope] | None:
        todo = batches.group(outputs, expected)
        async with self._autocommit() as conn:
            stored = await write(conn, todo, self._topic_of, consumer=consumer, input_id=input_event_id,
                                 input_position=input_position, expected_head=expected_head)
        if stored is None:
            return None
        self._note_written(stored)
        if durable:
            await self._durable(stored)
        return stored

    async def append_and_track_many(self, consumer: str, inputs: Sequence[TrackedInput], *,
                                    expected_head: int | None = None,
                                    durable: bool = True) -> list[list[Envelope]] | None:
        """One `sextant_append_many` call on a raw asyncpg connection (writer.write_many)."""
        todo = batches.group([e for i in inputs for e in i.outputs], None)
        async with raw_connection(self.engine) as raw:
            stored = await write_many(raw, [(i.event_id, i.position) for i in inputs], todo,
                                      self._topic_of, consumer=consumer, expected_head=expected_head)
        if stored is None:
            return None
        self._note_written(stored)
        if durable:
            await self._durable(stored)
        return batches.split(stored, [len(i.outputs) for i in inputs])

    async def sync(self) -> None:
        """One barrier covering every append of this store (see durability.py)."""
        await self._durability.ensure(self._written)

    async def is_tracked(self, consumer: str, event_id: str) -> bool:
        async with self.engine.connect() as conn:
            return await tracking.is_tracked(conn, consumer, event_id)

    async def tracked_ids(self, consumer: str, event_ids: Sequence[str]) -> set[str]:
        """Raw asyncpg: every consumer looks its fetched batch up here (a root statement, never
        exported as a span: telemetry.PollingSampler), and SQLAlchemy cost more than the query."""
        if not event_ids:
            return set()
        async with raw_connection(self.engine) as raw:
            rows = await raw.fetch(_TRACKED_IDS, consumer, list(event_ids))
        return {r[0] for r in rows}

    async def max_tracked_position(self, consumer: str) -> int:
        async with self.engine.connect() as conn:
            return await tracking.max_tracked_position(conn, consumer)

    async def tracked_count(self, consumer: str) -> int:
        async with self.engine.connect() as conn:
            return await tracking.tracked_count(conn, consumer)

    # --- OutboxReader ------------------------------------------------------------------------

    async def pending(self, limit: int = 500) -> list[OutboxItem]:
        """Unsent items, all durable (a barrier runs first if needed): never publish what a server
        crash could still take back."""
        async with raw_connection(self.engine) as raw:  # the relay's every round: no SQLAlchemy
            rows = await raw.fetch(_PENDING, limit, self._durability.durable_position)
        items = [OutboxItem(envelope=envelope_from_record(r), topic=r["topic"], traceparent=r["outbox_traceparent"])
                 for r in rows]
        if items:  # durable: the statement's own barrier (see _PENDING)
            self._durability.covered(max(i.envelope.position or 0 for i in items))
        return items

    async def mark_sent(self, positions: Sequence[int]) -> None:
        """One autocommit statement (one round trip): a lost mark only means a re-publication."""
        if not positions:
            return
        async with raw_connection(self.engine) as raw:
            await raw.execute(outbox.MARK_SENT_SQL, list(positions))

    async def pending_count(self) -> int:
        async with self.engine.connect() as conn:
            return await outbox.pending_count(conn)

    def notification_generation(self) -> int:
        """Read before looking for rows; pass to `wait_for_notification` (lossless wake-ups)."""
        return self._notifications.generation

    async def wait_for_notification(self, seen_generation: int, timeout: float) -> None:
        await self._notifications.wait(seen_generation, timeout)

    # --- SnapshotStore -----------------------------------------------------------------------

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        stmt = insert(snapshots).values(key=snapshot.key, code_version=snapshot.code_version,
                                        schema_version=snapshot.schema_version,
                                        position=snapshot.position, blob=snapshot.blob)
        stmt = stmt.on_conflict_do_update(
            index_elements=["key", "code_version", "schema_version"],
            set_={"position": stmt.excluded.position, "blob": stmt.excluded.blob, "saved_at": func.now()},
            where=snapshots.c.position <= stmt.excluded.position)
        async with self.engine.begin() as conn:
            await conn.execute(stmt)

    async def load_snapshot(self, key: str, code_version: str, schema_version: int) -> Snapshot | None:
        stmt = select(snapshots).where(snapshots.c.key == key, snapshots.c.code_version == code_version,
                                       snapshots.c.schema_version == schema_version)
        async with self.engine.connect() as conn:
            row = (await conn.execute(stmt)).first()
        if row is None:
            return None
        return Snapshot(key=row.key, code_version=row.code_version, schema_version=row.schema_version,
                        position=row.position, blob=bytes(row.blob))
