"""Contract suite of the transport ports (Publisher, RecordSource), run against the in-memory bus
and the real Kafka broker (fresh topics per test through `kafka_topics`)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from sextant_kit.ports import Publisher, Record, RecordSource


@dataclass
class Transport:
    publisher: Publisher
    new_topic: Callable[[int], Awaitable[str]]
    new_source: Callable[[str, list[str]], Awaitable[Any]]
    end_offsets: Callable[[str], Awaitable[dict[int, int]]]
    sources: list[Any] = field(default_factory=list)


@pytest.fixture(params=["memory", pytest.param("kafka", marks=pytest.mark.integration)])
async def transport(request: pytest.FixtureRequest) -> AsyncIterator[Transport]:
    if request.param == "memory":
        from sextant_kit.bus import MemoryBus

        bus = MemoryBus()

        async def new_topic(partitions: int) -> str:
            name = f"t-{uuid.uuid4().hex[:8]}"
            bus.create_topic(name, partitions)
            return name

        async def new_source(group: str, topics: list[str]) -> Any:
            return bus.source(group, topics)

        async def ends(topic: str) -> dict[int, int]:
            return bus.end_offsets(topic)

        yield Transport(bus, new_topic, new_source, ends)
        return

    from sextant_kit.kafka.admin import end_offsets
    from sextant_kit.kafka.producer import KafkaPublisher

    bootstrap = request.getfixturevalue("kafka_bootstrap")
    kafka_topics = request.getfixturevalue("kafka_topics")
    publisher = KafkaPublisher.create(bootstrap)
    await publisher.start()
    t = Transport(publisher, lambda p: _first(kafka_topics(1, p)), lambda g, ts: _kafka_source(bootstrap, g, ts, t),
                  lambda topic: end_offsets(bootstrap, topic))
    try:
        yield t
    finally:
        for s in t.sources:
            await s.stop()
        await publisher.stop()


async def _first(created: Awaitable[list[str]]) -> str:
    return (await created)[0]


async def _kafka_source(bootstrap: str, group: str, topics: list[str], t: Transport) -> Any:
    from sextant_kit.kafka.consumer import KafkaSource

    source = KafkaSource.create(bootstrap, group, topics, session_timeout_ms=6000, heartbeat_interval_ms=1000)
    await source.start()
    t.sources.append(source)
    return source


async def fetch_n(source: RecordSource, n: int, rounds: int = 120) -> list[Record]:
    """Fetch until `n` records arrived (bounded: `rounds` fetches of at most 0.5 s)."""
    got: list[Record] = []
    for _ in range(rounds):
        got.extend(await source.fetch(0.5, n - len(got)))
        if len(got) >= n:
            break
    return got


async def test_publish_acknowledges_with_growing_offsets(transport: Transport) -> None:
    topic = await transport.new_topic(1)
    a = await transport.publisher.publish(topic, b"k", b"1", [("h", b"x")])
    b = await transport.publisher.publish(topic, b"k", b"2")
    assert (a.topic, a.partition, a.offset) == (topic, 0, 0)
    assert (b.partition, b.offset) == (0, 1)
    assert await transport.end_offsets(topic) == {0: 2}


async def test_same_key_same_partition_in_order(transport: Transport) -> None:
    topic = await transport.new_topic(3)
    items = [(topic, f"k{i % 4}".encode(), str(i).encode(), [("i", str(i).encode())]) for i in range(40)]
    delivered = await transport.publisher.publish_many(items)
    by_key: dict[bytes, set[int]] = {}
    for (_, key, _, _), d in zip(items, delivered, strict=True):
        by_key.setdefault(key, set()).add(d.partition)  # type: ignore[arg-type]
    assert all(len(parts) == 1 for parts in by_key.values())
    source = await transport.new_source(f"g-{uuid.uuid4().hex[:6]}", [topic])
    records = await fetch_n(source, 40)
    assert len(records) == 40
    for key in by_key:
        values = [int(r.value) for r in records if r.key == key]  # type: ignore[arg-type]
        assert values == sorted(values) and len(values) == 10
    assert sum((await transport.end_offsets(topic)).values()) == 40


async def test_headers_round_trip(transport: Transport) -> None:
    topic = await transport.new_topic(1)
    await transport.publisher.publish(topic, None, b"v", [("ce_id", b"abc"), ("traceparent", b"00-x")])
    (record,) = await fetch_n(await transport.new_source("g-h", [topic]), 1)
    assert record.header("ce_id") == "abc" and record.header("traceparent") == "00-x"
    assert record.key is None and record.value == b"v"


async def test_group_resumes_at_the_committed_offset(transport: Transport) -> None:
    topic = await transport.new_topic(1)
    await transport.publisher.publish_many([(topic, b"k", str(i).encode(), []) for i in range(6)])
    group = f"g-{uuid.uuid4().hex[:6]}"
    first = await transport.new_source(group, [topic])
    records = await fetch_n(first, 6)
    assert [r.offset for r in records] == list(range(6))
    await first.commit({(topic, 0): 4})  # records 4 and 5 were fetched but not committed
    await first.stop()
    second = await transport.new_source(group, [topic])
    again = await fetch_n(second, 2)
    assert [r.offset for r in again] == [4, 5]
