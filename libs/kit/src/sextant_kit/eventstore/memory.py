"""The in-memory event store: a first-class twin of `PostgresEventStore` (DESIGN §6).

Same ports, same contract suite, same numbering and error rules (`batches.py`); used by the twin
and by unit tests for speed and reproducibility, never where a test claims to test PostgreSQL.
Everything lives in one process's memory and is lost with it. Each public method runs without
awaiting in the middle of a mutation, so on one event loop every append is atomic and commit
order is position order trivially.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence

from sextant_contracts.envelope import Envelope

from .. import outbox
from ..errors import DuplicateEventError, HeadMovedError
from ..ports import OutboxItem, Snapshot, TrackedInput
from . import batches
from .rows import stored_row


class MemoryEventStore:
    """Event store, tracking recorder, outbox reader and snapshot store, in memory."""

    def __init__(self, *, topic_of: outbox.TopicResolver = outbox.default_topic_of) -> None:
        self._topic_of = topic_of
        self._log: list[Envelope] = []  # index i holds position i + 1
        self._checksums: list[str | None] = []  # the `events.checksum` column, same indexing
        self._streams: dict[str, list[Envelope]] = {}
        self._ids: set[str] = set()
        self._tracking: dict[str, dict[str, int | None]] = {}
        self._outbox: dict[int, OutboxItem] = {}  # pending only, insertion = position order
        self._snapshots: dict[tuple[str, str, int], Snapshot] = {}
        self._generation = 0
        self._wakeup = asyncio.Event()

    async def close(self) -> None:
        return None

    # --- writing -----------------------------------------------------------------------------

    def _write(self, todo: Sequence[batches.StreamBatch]) -> list[Envelope]:
        for b in todo:  # resolve topics first: an unknown stream fails before anything is written
            for env in b.envelopes:
                self._topic_of(env.stream)
        position = len(self._log) + 1
        stored: list[Envelope] = []
        versions: dict[str, int] = {}
        for b in todo:
            current = versions.get(b.stream, len(self._streams.get(b.stream, ())))
            stored.extend(batches.number(b, current, position))
            versions[b.stream] = current + len(b.envelopes)  # a stream may come back in a later run
            position += len(b.envelopes)
        fresh: set[str] = set()
        for env in stored:
            if env.id in self._ids or env.id in fresh:
                raise DuplicateEventError(env.id)
            fresh.add(env.id)
        # the row round trip: the memory store gives back what PostgreSQL would (canonical JSON,
        # trusted when the checksum it writes vouches for the payload, validated otherwise)
        rows_ = [stored_row(env) for env in stored]
        stored = [env for env, _ in rows_]
        for env, checksum in rows_:
            self._checksums.append(checksum)
            self._log.append(env)
            self._streams.setdefault(env.stream, []).append(env)
            self._ids.add(env.id)
        for item in outbox.outbox_items(stored, self._topic_of):
            self._outbox[item.position] = item
        if stored:
            self._notify()
        return stored

    def _notify(self) -> None:
        self._generation += 1
        event, self._wakeup = self._wakeup, asyncio.Event()
        event.set()

    async def append(self, stream: str, expected_version: int | None,
                     envelopes: Sequence[Envelope]) -> list[Envelope]:
        return self._write(batches.single(stream, expected_version, envelopes))

    async def append_and_track(self, consumer: str, input_event_id: str, input_position: int | None,
                               outputs: Sequence[Envelope], *,
                               expected: Mapping[str, int | None] | None = None,
                               expected_head: int | None = None,
                               durable: bool = True) -> list[Envelope] | None:
        todo = batches.group(outputs, expected)
        seen = self._tracking.setdefault(consumer, {})
        if input_event_id in seen:
            return None
        if todo and expected_head is not None and expected_head != len(self._log):
            raise HeadMovedError(expected_head, len(self._log))
        stored = self._write(todo)  # raises before tracking on any error: nothing half-written
        seen[input_event_id] = input_position
        return stored

    async def append_and_track_many(self, consumer: str, inputs: Sequence[TrackedInput], *,
                                    expected_head: int | None = None,
                                    durable: bool = True) -> list[list[Envelope]] | None:
        todo = batches.group([e for i in inputs for e in i.outputs], None)
        seen = self._tracking.setdefault(consumer, {})
        ids = [i.event_id for i in inputs]
        if len(set(ids)) != len(ids) or any(i in seen for i in ids):
            return None
        if todo and expected_head is not None and expected_head != len(self._log):
            raise HeadMovedError(expected_head, len(self._log))
        stored = self._write(todo)  # raises before tracking on any error: nothing half-written
        for i in inputs:
            seen[i.event_id] = i.position
        return batches.split(stored, [len(i.outputs) for i in inputs])

    async def sync(self) -> None:
        return None  # memory is as durable as it gets

    # --- reading -----------------------------------------------------------------------------

    def checksum(self, position: int) -> str | None:
        """The checksum stored with the envelope at `position` (`rows.row_values`)."""
        return self._checksums[position - 1]

    async def read_stream(self, stream: str, from_version: int = 0,
                          limit: int | None = None) -> list[Envelope]:
        found = self._streams.get(stream, [])[max(from_version, 0):]
        return list(found if limit is None else found[:limit])

    async def stream_version(self, stream: str) -> int:
        return len(self._streams.get(stream, ()))

    async def read_all(self, from_position: int = 0, limit: int = 1000) -> list[Envelope]:
        start = max(from_position, 0)
        return self._log[start:start + limit]

    async def tail(self, from_position: int = 0, *, batch: int = 500) -> AsyncIterator[Envelope]:
        position = from_position
        while True:
            seen = self._generation
            found = await self.read_all(position, batch)
            for env in found:
                assert env.position is not None
                position = env.position
                yield env
            if len(found) < batch:
                await self.wait_for_notification(seen, 3600.0)

    async def last_position(self) -> int:
        return len(self._log)

    # --- tracking ----------------------------------------------------------------------------

    async def is_tracked(self, consumer: str, event_id: str) -> bool:
        return event_id in self._tracking.get(consumer, {})

    async def tracked_ids(self, consumer: str, event_ids: Sequence[str]) -> set[str]:
        seen = self._tracking.get(consumer, {})
        return {i for i in event_ids if i in seen}

    async def max_tracked_position(self, consumer: str) -> int:
        return max((p for p in self._tracking.get(consumer, {}).values() if p is not None), default=0)

    async def tracked_count(self, consumer: str) -> int:
        return len(self._tracking.get(consumer, {}))

    # --- outbox ------------------------------------------------------------------------------

    async def pending(self, limit: int = 500) -> list[OutboxItem]:
        return [self._outbox[p] for p in sorted(self._outbox)[:limit]]

    async def mark_sent(self, positions: Sequence[int]) -> None:
        for p in positions:
            self._outbox.pop(p, None)

    async def pending_count(self) -> int:
        return len(self._outbox)

    def notification_generation(self) -> int:
        return self._generation

    async def wait_for_notification(self, seen_generation: int, timeout: float) -> None:
        if self._generation != seen_generation:
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._wakeup.wait(), timeout)

    # --- snapshots ---------------------------------------------------------------------------

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        k = (snapshot.key, snapshot.code_version, snapshot.schema_version)
        old = self._snapshots.get(k)
        if old is None or old.position <= snapshot.position:
            self._snapshots[k] = snapshot

    async def load_snapshot(self, key: str, code_version: str, schema_version: int) -> Snapshot | None:
        return self._snapshots.get((key, code_version, schema_version))
