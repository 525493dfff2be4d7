"""Broker-side evidence for Kafka tests: the end offset (high watermark) of each partition."""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import TopicPartition


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
