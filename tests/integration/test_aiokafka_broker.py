"""aiokafka 0.14 against the pinned Kafka 4.1.1 broker (KAFKA.md, "First thing to check").

What Sextant relies on: an idempotent producer with acks=all, record headers that round-trip
byte for byte (the CloudEvents binary envelope), per-key order, and consumer groups with
manual commits that resume exactly after the last committed offset.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import ConsumerRecord, OffsetAndMetadata, TopicPartition
from sextant_kit.testing import topic_end_offsets

pytestmark = pytest.mark.integration

TopicFactory = Callable[..., Awaitable[list[str]]]


def producer(bootstrap: str) -> AIOKafkaProducer:
    return AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=0)


def consumer(bootstrap: str, group: str, *topics: str) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(*topics, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                            auto_offset_reset="earliest", max_poll_records=50)


async def drain(c: AIOKafkaConsumer, count: int, *, patience_ms: int = 30_000) -> list[ConsumerRecord]:
    """Fetch until `count` records arrived or the broker stayed silent for `patience_ms` (a safety
    net against hanging, not a timing assertion)."""
    got: list[ConsumerRecord] = []
    idle = 0
    while len(got) < count and idle < patience_ms:
        batch = await c.getmany(timeout_ms=500)
        records = [r for rs in batch.values() for r in rs]
        idle = 0 if records else idle + 500
        got += records
    return got


async def test_idempotent_producer_writes_headers_and_offsets_move(kafka_bootstrap: str,
                                                                    kafka_topics: TopicFactory) -> None:
    [topic] = await kafka_topics(partitions=3)
    assert await topic_end_offsets(kafka_bootstrap, topic) == {0: 0, 1: 0, 2: 0}
    headers = [("ce_specversion", b"1.0"), ("ce_id", b"evt-1"), ("ce_type", b"WorkloadSubmitted"),
               ("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
               ("bin", bytes(range(256)))]
    p = producer(kafka_bootstrap)
    await p.start()
    try:
        metas = [await p.send_and_wait(topic, key=f"workload-{i % 4}".encode(), value=f"v{i}".encode(),
                                       headers=headers) for i in range(40)]
    finally:
        await p.stop()
    # the same key always lands on the same partition, offsets within a partition are dense
    by_key: dict[int, set[int]] = {}
    for i, m in enumerate(metas):
        by_key.setdefault(i % 4, set()).add(m.partition)
    assert all(len(parts) == 1 for parts in by_key.values())
    ends = await topic_end_offsets(kafka_bootstrap, topic)
    assert sum(ends.values()) == 40
    for part, end in ends.items():
        assert sorted(m.offset for m in metas if m.partition == part) == list(range(end))

    c = consumer(kafka_bootstrap, "g-headers", topic)
    await c.start()
    try:
        records = await drain(c, 40)
    finally:
        await c.stop()
    assert len(records) == 40
    assert all(list(r.headers) == headers for r in records)
    # per-key order: values of one key arrive in the order they were produced
    for k in range(4):
        seen = [int(r.value.decode()[1:]) for r in records if r.key == f"workload-{k}".encode()]
        assert seen == sorted(seen) and len(seen) == 10


async def test_consumer_group_resumes_after_last_manual_commit(kafka_bootstrap: str,
                                                               kafka_topics: TopicFactory) -> None:
    [topic] = await kafka_topics(partitions=2)
    p = producer(kafka_bootstrap)
    await p.start()
    try:
        for i in range(30):
            await p.send_and_wait(topic, key=str(i % 3).encode(), value=str(i).encode())
    finally:
        await p.stop()

    # first member: reads everything, commits only the first half of each partition
    first = consumer(kafka_bootstrap, "g-resume", topic)
    await first.start()
    try:
        records = await drain(first, 30)
        assert len(records) == 30
        committed_upto: dict[TopicPartition, int] = {}
        for tp in first.assignment():
            offs = sorted(r.offset for r in records if r.partition == tp.partition)
            committed_upto[tp] = offs[len(offs) // 2]
        await first.commit({tp: OffsetAndMetadata(off, "") for tp, off in committed_upto.items()})
        for tp, off in committed_upto.items():
            assert await first.committed(tp) == off
    finally:
        await first.stop()

    # second member of the same group starts exactly at the committed offsets
    second = consumer(kafka_bootstrap, "g-resume", topic)
    await second.start()
    try:
        expected = sum(1 for r in records if r.offset >= committed_upto[TopicPartition(topic, r.partition)])
        again = await drain(second, expected)
        assert sorted((r.partition, r.offset) for r in again) == sorted(
            (r.partition, r.offset) for r in records
            if r.offset >= committed_upto[TopicPartition(topic, r.partition)])
        await second.commit()
        ends = await topic_end_offsets(kafka_bootstrap, topic)
        for tp in second.assignment():
            assert await second.committed(tp) == ends[tp.partition]
        # nothing more arrives once everything is committed
        assert await drain(second, 1, patience_ms=1_000) == []
    finally:
        await second.stop()


async def test_concurrent_idempotent_producers_lose_nothing(kafka_bootstrap: str,
                                                           kafka_topics: TopicFactory) -> None:
    [topic] = await kafka_topics(partitions=3)

    async def produce(tag: str) -> None:
        p = producer(kafka_bootstrap)
        await p.start()
        try:
            futs = [await p.send(topic, key=f"{tag}-{i % 5}".encode(), value=f"{tag}:{i}".encode())
                    for i in range(200)]
            await asyncio.gather(*futs)
        finally:
            await p.stop()

    await asyncio.gather(produce("a"), produce("b"))
    ends = await topic_end_offsets(kafka_bootstrap, topic)
    assert sum(ends.values()) == 400
    c = consumer(kafka_bootstrap, "g-concurrent", topic)
    await c.start()
    try:
        values = {r.value for r in await drain(c, 400)}
    finally:
        await c.stop()
    assert values == {f"{t}:{i}".encode() for t in "ab" for i in range(200)}
