"""The consumer loop against the real Kafka and PostgreSQL: poison records are dead-lettered with
their reason and origin, good records around them are processed, offsets are committed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event, WorkloadCompleted
from sextant_kit.consumer import ConsumerLoop, RetryPolicy
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.kafka.consumer import KafkaSource
from sextant_kit.kafka.producer import KafkaPublisher
from sextant_kit.migrations import migrate_async
from sextant_kit.testing.envelopes import make_envelope
from sextant_kit.testing.kafka_offsets import topic_end_offsets

pytestmark = pytest.mark.integration


async def test_poison_records_go_to_the_dead_letter_topic_and_the_loop_goes_on(
        fresh_pg_url: str, kafka_bootstrap: str, kafka_topics: Any) -> None:
    topic, dlq = await kafka_topics(2)
    await migrate_async(fresh_pg_url)
    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None)
    publisher = KafkaPublisher.create(kafka_bootstrap)
    await publisher.start()

    async def handler(env: Envelope) -> Sequence[Event]:
        if env.payload["n"] == 2:
            raise ValueError("cannot handle n=2")
        return [WorkloadCompleted(workload_id=f"out-{env.payload['n']}", at=1.0)]

    source = KafkaSource.create(kafka_bootstrap, "dlq-test", [topic])
    await source.start()
    loop = ConsumerLoop(name="dlq-test", source=source, store=store, handler=handler, dead_letters=publisher,
                        dead_letter_topic=dlq, retry=RetryPolicy(handler_attempts=2, initial_backoff=0.01))
    try:
        await publisher.publish(topic, *make_envelope("workload-a", 1, 1).to_kafka())
        await publisher.publish(topic, b"workload-a", b"not json at all", [("ce_id", b"junk")])
        await publisher.publish(topic, *make_envelope("workload-a", 2, 2).to_kafka())
        await publisher.publish(topic, *make_envelope("workload-a", 3, 3).to_kafka())
        for _ in range(240):
            await loop.run_once()
            if loop.handled >= 4:
                break
    finally:
        await source.stop()
    assert (loop.stats.processed, loop.stats.dead_lettered, loop.stats.quarantined) == (2, 1, 1)
    assert sum((await topic_end_offsets(kafka_bootstrap, dlq)).values()) == 2
    reader = KafkaSource.create(kafka_bootstrap, "dlq-reader", [dlq])
    await reader.start()
    try:
        dead = []
        for _ in range(60):
            dead += await reader.fetch(0.5, 10)
            if len(dead) == 2:
                break
    finally:
        await reader.stop()
        await publisher.stop()
    by_reason = {r.header("dlq_reason"): r for r in dead}
    assert set(by_reason) == {"undecodable", "quarantined"}
    junk = by_reason["undecodable"]
    assert junk.value == b"not json at all" and junk.header("dlq_offset") == "1"
    assert junk.header("dlq_topic") == topic and junk.header("dlq_partition") == "0"
    failed = by_reason["quarantined"]
    assert failed.header("ce_id") == "workload-a:2:2" and "cannot handle n=2" in (failed.header("dlq_error") or "")
    outputs = await store.read_all()
    assert sorted(e.stream for e in outputs) == ["quarantine-" + loop.name, "workload-out-1", "workload-out-3"]
    await store.close()
