"""The in-memory bus: Kafka's twin for the simulator and unit tests (DESIGN §6).

`MemoryBus` is a `Publisher`; `MemoryBus.source(group_id, topics)` is a `RecordSource`. They pass
the same transport contract suite as the Kafka adapters. Semantics kept from Kafka:

- topics have a fixed number of partitions; a record goes to `crc32(key) % partitions` (a record
  without key to partition 0), so one key's records keep their order;
- offsets start at 0 per partition and only grow; history is kept;
- a consumer group reads from its committed offset (the earliest when none), `commit` stores
  "next offset to read" per (topic, partition), and a new source of the same group resumes there
  (a restart redelivers whatever was fetched but not committed).

Simplification: one source per group at a time gets every partition (no rebalancing).
Publishing to an unknown topic raises `KeyError` unless `auto_create` is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import Iterable, Mapping, Sequence

from .ports import Delivered, Record


class MemoryBus:
    """Topics, partitions and committed offsets in memory."""

    def __init__(self, topics: Mapping[str, int] | None = None, *, auto_create: bool = False) -> None:
        self._partitions: dict[str, list[list[Record]]] = {}
        self._committed: dict[tuple[str, str, int], int] = {}
        self._auto_create = auto_create
        self._wakeup = asyncio.Event()
        for name, count in (topics or {}).items():
            self.create_topic(name, count)

    def create_topic(self, name: str, partitions: int = 1) -> None:
        if partitions < 1:
            raise ValueError("a topic needs at least one partition")
        self._partitions.setdefault(name, [[] for _ in range(partitions)])

    def records(self, topic: str) -> list[Record]:
        """Every record of `topic`, partition by partition, in offset order (for tests)."""
        return [r for part in self._partitions[topic] for r in part]

    def end_offsets(self, topic: str) -> dict[int, int]:
        return {p: len(part) for p, part in enumerate(self._partitions[topic])}

    def committed(self, group_id: str, topic: str, partition: int) -> int | None:
        return self._committed.get((group_id, topic, partition))

    # --- Publisher -----------------------------------------------------------------------------

    async def publish(self, topic: str, key: bytes | None, value: bytes | None,
                      headers: Sequence[tuple[str, bytes]] = ()) -> Delivered:
        if topic not in self._partitions:
            if not self._auto_create:
                raise KeyError(f"unknown topic {topic!r}")
            self.create_topic(topic)
        parts = self._partitions[topic]
        p = zlib.crc32(key) % len(parts) if key is not None else 0
        record = Record(topic, p, len(parts[p]), key, value, tuple(headers))
        parts[p].append(record)
        event, self._wakeup = self._wakeup, asyncio.Event()
        event.set()
        return Delivered(topic, p, record.offset)

    async def publish_many(self, items: Sequence[tuple[str, bytes | None, bytes | None,
                                                       Sequence[tuple[str, bytes]]]]) -> list[Delivered]:
        return [await self.publish(t, k, v, h) for t, k, v, h in items]

    # --- RecordSource --------------------------------------------------------------------------

    def source(self, group_id: str, topics: Iterable[str]) -> MemorySource:
        names = list(topics)
        for name in names:
            if name not in self._partitions:
                if not self._auto_create:
                    raise KeyError(f"unknown topic {name!r}")
                self.create_topic(name)
        return MemorySource(self, group_id, names)


class MemorySource:
    """One consumer of a group on a `MemoryBus` (see the module docstring)."""

    def __init__(self, bus: MemoryBus, group_id: str, topics: list[str]) -> None:
        self._bus = bus
        self.group_id = group_id
        self._topics = topics
        self._position: dict[tuple[str, int], int] = {}
        for t in topics:
            for p in range(len(bus._partitions[t])):
                self._position[(t, p)] = bus._committed.get((group_id, t, p), 0)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def _available(self, max_records: int) -> list[Record]:
        out: list[Record] = []
        for (t, p), pos in self._position.items():
            part = self._bus._partitions[t][p]
            take = part[pos:pos + max(0, max_records - len(out))]
            out.extend(take)
            self._position[(t, p)] = pos + len(take)
        return out

    async def fetch(self, timeout: float, max_records: int) -> list[Record]:
        found = self._available(max_records)
        if found or timeout <= 0:
            await asyncio.sleep(0)  # like a network call, always give the loop a turn
            return found
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._bus._wakeup.wait(), timeout)
        return self._available(max_records)

    async def commit(self, offsets: Mapping[tuple[str, int], int]) -> None:
        for (t, p), offset in offsets.items():
            self._bus._committed[(self.group_id, t, p)] = offset

    def seek_to_committed(self) -> None:
        """Forget fetched-but-uncommitted records (what a restart does)."""
        for (t, p) in self._position:
            self._position[(t, p)] = self._bus._committed.get((self.group_id, t, p), 0)
