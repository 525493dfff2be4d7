"""The Kafka `RecordSource`: an aiokafka consumer in a consumer group, with manual commits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from ..ports import Record


def make_consumer(bootstrap: str, group_id: str, topics: Sequence[str], *, client_id: str = "sextant",
                  **kwargs: Any) -> AIOKafkaConsumer:
    """An unstarted consumer subscribed to `topics`: `enable_auto_commit=False` (the consumer loop
    commits after its database commit), `auto_offset_reset="earliest"` (a new group reads the
    history). Extra kwargs go to aiokafka (e.g. `session_timeout_ms`)."""
    options: dict[str, Any] = {"enable_auto_commit": False, "auto_offset_reset": "earliest",
                               "isolation_level": "read_committed"}
    options.update(kwargs)
    return AIOKafkaConsumer(*topics, bootstrap_servers=bootstrap, group_id=group_id, client_id=client_id,
                            **options)


class KafkaSource:
    """`RecordSource` over one aiokafka consumer. `start()` before use, `stop()` after."""

    def __init__(self, consumer: AIOKafkaConsumer) -> None:
        self.consumer = consumer
        self._next: dict[TopicPartition, int] = {}  # next offset to fetch, per partition fetched from

    @classmethod
    def create(cls, bootstrap: str, group_id: str, topics: Sequence[str], **kwargs: Any) -> KafkaSource:
        return cls(make_consumer(bootstrap, group_id, topics, **kwargs))

    async def start(self) -> None:
        await self.consumer.start()

    async def stop(self) -> None:
        await self.consumer.stop()

    async def fetch(self, timeout: float, max_records: int) -> list[Record]:
        batches = await self.consumer.getmany(timeout_ms=int(timeout * 1000), max_records=max_records)
        out: list[Record] = []
        for tp, msgs in batches.items():
            if msgs:
                self._next[tp] = msgs[-1].offset + 1
        for tp in sorted(batches, key=lambda t: (t.topic, t.partition)):
            out.extend(Record(topic=m.topic, partition=m.partition, offset=m.offset, key=m.key,
                              value=m.value, headers=tuple(m.headers or ())) for m in batches[tp])
        return out

    async def commit(self, offsets: Mapping[tuple[str, int], int]) -> None:
        if offsets:
            await self.consumer.commit({TopicPartition(t, p): o for (t, p), o in offsets.items()})

    def lag(self) -> dict[tuple[str, int], int]:
        """(topic, partition) → records not fetched yet (high watermark − next offset), for the
        assigned partitions this consumer has fetched from; as of the last fetch response."""
        out: dict[tuple[str, int], int] = {}
        for tp in self.consumer.assignment():
            high, nxt = self.consumer.highwater(tp), self._next.get(tp)
            if high is not None and nxt is not None:
                out[(tp.topic, tp.partition)] = max(0, high - nxt)
        return out
