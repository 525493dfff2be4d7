"""Acceptance "Relay": events committed in PostgreSQL reach Kafka in per-stream order; a relay
killed (SIGKILL, a separate process) between publishing and marking sent loses nothing, and the
duplicates it then publishes are absorbed by consumer tracking — shown on the topic and in the
consumer's counters. Broker offsets are asserted to have moved."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event, WorkloadCompleted
from sextant_kit.consumer import ConsumerLoop
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.kafka.consumer import KafkaSource
from sextant_kit.kafka.producer import KafkaPublisher
from sextant_kit.migrations import migrate_async
from sextant_kit.ports import Record
from sextant_kit.relay import Relay
from sextant_kit.testing.envelopes import make_envelope
from sextant_kit.testing.kafka_offsets import topic_end_offsets

pytestmark = pytest.mark.integration

STREAMS = 12
PER_STREAM = 25


async def fill(store: PostgresEventStore) -> list[Envelope]:
    """STREAMS × PER_STREAM events, streams interleaved in the log."""
    stored: list[Envelope] = []
    for v in range(1, PER_STREAM + 1):
        for s in range(STREAMS):
            stream = f"workload-r{s}"
            stored += await store.append(stream, v - 1, [make_envelope(stream, v, s * 1000 + v)])
    return stored


async def read_topic(bootstrap: str, topic: str, count: int) -> list[Record]:
    source = KafkaSource.create(bootstrap, f"reader-{topic}", [topic])
    await source.start()
    got: list[Record] = []
    try:
        for _ in range(240):
            got += await source.fetch(0.5, 1000)
            if len(got) >= count:
                break
    finally:
        await source.stop()
    return got


def per_stream_versions(records: Sequence[Record]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in records:
        env = Envelope.from_kafka(r.key, r.value, r.headers)
        assert r.key == env.stream.encode()
        out.setdefault(env.stream, []).append(env.stream_version)
    return out


async def test_committed_events_reach_kafka_in_per_stream_order(fresh_pg_url: str, kafka_bootstrap: str,
                                                                 kafka_topics: Any) -> None:
    (topic,) = await kafka_topics(1, partitions=3)
    await migrate_async(fresh_pg_url)
    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: topic, poll_interval=0.2)
    publisher = KafkaPublisher.create(kafka_bootstrap)
    await publisher.start()
    stop = asyncio.Event()
    relay = Relay(store, publisher, batch=64)
    task = asyncio.create_task(relay.run(stop))
    try:
        stored = await fill(store)  # appended while the relay runs
        for _ in range(600):
            if await store.pending_count() == 0:
                break
            await asyncio.sleep(0.05)
        assert await store.pending_count() == 0
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        await publisher.stop()
        await store.close()
    assert sum((await topic_end_offsets(kafka_bootstrap, topic)).values()) == len(stored)
    records = await read_topic(kafka_bootstrap, topic, len(stored))
    versions = per_stream_versions(records)
    assert len(versions) == STREAMS
    assert all(v == list(range(1, PER_STREAM + 1)) for v in versions.values())
    positions = [int(r.header("ce_position") or 0) for r in records]
    assert sorted(positions) == [e.position for e in stored]


async def _relay_process(url: str, bootstrap: str, topic: str, *extra: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sextant_kit.testing.relay_worker", "--db", url, "--bootstrap", bootstrap,
        "--topic", topic, "--batch", "100", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env={**os.environ})
    out, _ = await asyncio.wait_for(proc.communicate(), 180)
    return proc.returncode or 0, out.decode()


async def test_relay_killed_between_publish_and_mark_loses_nothing_and_duplicates_are_absorbed(
        fresh_pg_url: str, kafka_bootstrap: str, kafka_topics: Any) -> None:
    topic, dlq = await kafka_topics(2, partitions=2)
    await migrate_async(fresh_pg_url)
    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: topic)
    stored = await fill(store)
    total = len(stored)

    # 1. the relay publishes its first round (100 events), then is SIGKILLed before marking them
    code, out = await _relay_process(fresh_pg_url, kafka_bootstrap, topic, "--die-after-publish")
    assert code == -signal.SIGKILL, out
    assert await store.pending_count() == total  # nothing was marked sent
    assert sum((await topic_end_offsets(kafka_bootstrap, topic)).values()) == 100

    # 2. a restarted relay publishes everything, the first 100 a second time
    code, out = await _relay_process(fresh_pg_url, kafka_bootstrap, topic)
    assert code == 0, out
    assert await store.pending_count() == 0
    assert sum((await topic_end_offsets(kafka_bootstrap, topic)).values()) == total + 100
    records = await read_topic(kafka_bootstrap, topic, total + 100)
    ids = [r.header("ce_id") for r in records]
    duplicated = {i for i in ids if ids.count(i) == 2}
    assert len(duplicated) == 100 and set(ids) == {e.id for e in stored}  # nothing lost
    for versions in per_stream_versions(records).values():  # per stream: in order, then a replayed prefix
        firsts = [v for k, v in enumerate(versions) if v not in versions[:k]]
        assert firsts == list(range(1, PER_STREAM + 1))

    # 3. a consumer with tracking processes each event once and skips the 100 duplicates
    outputs = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None)

    async def handler(env: Envelope) -> Sequence[Event]:
        return [WorkloadCompleted(workload_id=f"seen-{env.id}", at=1.0)]

    source = KafkaSource.create(kafka_bootstrap, "absorber", [topic])
    dead = KafkaPublisher.create(kafka_bootstrap)
    await source.start()
    await dead.start()
    loop = ConsumerLoop(name="absorber", source=source, store=outputs, handler=handler,
                        dead_letters=dead, dead_letter_topic=dlq)
    try:
        for _ in range(240):
            await loop.run_once()
            if loop.handled >= total + 100:
                break
    finally:
        await source.stop()
        await dead.stop()
    assert loop.stats.processed == total
    assert loop.stats.skipped == 100  # the relay's duplicates, recognised by event id
    assert loop.stats.dead_lettered == 0
    assert await outputs.tracked_count("absorber") == total
    produced = [e for e in await outputs.read_all(total, 10 * total) if e.source == "absorber"]
    assert len(produced) == total and len({e.causation_id for e in produced}) == total
    await outputs.close()
    await store.close()


async def test_two_relays_one_leader_publishes_each_event_once(fresh_pg_url: str, kafka_bootstrap: str,
                                                                kafka_topics: Any) -> None:
    from sextant_kit.eventstore.postgres import asyncpg_dsn
    from sextant_kit.relay import PostgresLeaderLock

    (topic,) = await kafka_topics(1, partitions=2)
    await migrate_async(fresh_pg_url)
    stores = [PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: topic, poll_interval=0.2)
              for _ in range(3)]
    writer, relay_stores = stores[0], stores[1:]
    publishers = [KafkaPublisher.create(kafka_bootstrap) for _ in relay_stores]
    for p in publishers:
        await p.start()
    stop = asyncio.Event()
    relays = [Relay(s, p, batch=20, leader=PostgresLeaderLock(asyncpg_dsn(s.engine)))
              for s, p in zip(relay_stores, publishers, strict=True)]
    tasks = [asyncio.create_task(r.run(stop)) for r in relays]
    try:
        stored = await fill(writer)
        for _ in range(600):
            if await writer.pending_count() == 0:
                break
            await asyncio.sleep(0.05)
        assert await writer.pending_count() == 0
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        for p in publishers:
            await p.stop()
        for s in stores:
            await s.close()
    assert sorted(r.stats.published for r in relays) == [0, len(stored)]  # one leader did it all
    assert sum((await topic_end_offsets(kafka_bootstrap, topic)).values()) == len(stored)  # no duplicate
