"""Topic administration: create the registry's topics, read end offsets.

`ensure_topics` is idempotent (existing topics are left as they are) and returns the names it
created. Event topics keep their history (`retention.ms=-1`, never compacted — DESIGN §4).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from sextant_contracts.topics import Topic


async def ensure_topics(bootstrap: str, topics: Iterable[Topic], *, replication: int = 1) -> list[str]:
    """Create the missing topics of `topics` (partitions and retention from the registry)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [t for t in topics if t.name not in existing]
        if not missing:
            return []
        new = [NewTopic(t.name, t.partitions, replication,
                        topic_configs={"retention.ms": str(t.retention_ms), "cleanup.policy": "delete"})
               for t in missing]
        with contextlib.suppress(TopicAlreadyExistsError):  # created concurrently elsewhere
            await admin.create_topics(new)
        return [t.name for t in missing]
    finally:
        await admin.close()


async def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """partition → offset of the next record to be written (the sum is the number of records ever
    written to a topic that was never truncated)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = consumer.partitions_for_topic(topic)
        if partitions is None:
            await consumer._client.force_metadata_update()  # noqa: SLF001 - aiokafka has no public call
            partitions = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        found = await consumer.end_offsets(tps) if tps else {}
        return {tp.partition: off for tp, off in found.items()}
    finally:
        await consumer.stop()
