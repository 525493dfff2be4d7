"""Broker-side evidence for Kafka tests: the end offset (high watermark) of each partition, and every
record a topic holds."""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import ConsumerRecord, TopicPartition


async def topic_end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """{partition: end offset} of `topic` as the broker reports it now (read_uncommitted).

    The end offset is the offset the next record will get, so the sum over partitions is the
    number of records ever written (including transaction markers). Raises LookupError when the
    topic does not exist.
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        [described] = await admin.describe_topics([topic])
    finally:
        await admin.close()
    if described["error_code"] != 0 or not described["partitions"]:
        raise LookupError(f"topic {topic!r} not found on {bootstrap} (error {described['error_code']})")
    tps = [TopicPartition(topic, p["partition"]) for p in sorted(described["partitions"],
                                                                  key=lambda p: p["partition"])]
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(tps)
    finally:
        await consumer.stop()
    return {tp.partition: int(ends[tp]) for tp in tps}


async def read_topic(bootstrap: str, topic: str) -> list[ConsumerRecord[bytes, bytes]]:
    """Every record of `topic` from the beginning of each partition up to its end offset as of the
    call (records produced meanwhile may or may not be included), partition by partition in
    offset order. A topic unknown to the broker yields []."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        parts = consumer.partitions_for_topic(topic) or set()
        if not parts:
            await consumer._client.force_metadata_update()
            parts = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        out: list[ConsumerRecord[bytes, bytes]] = []
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            for batch in (await consumer.getmany(timeout_ms=1000, max_records=5000)).values():
                out.extend(batch)
        return out
    finally:
        await consumer.stop()
