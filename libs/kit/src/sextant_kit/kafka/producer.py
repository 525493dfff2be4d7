"""The Kafka `Publisher`: an idempotent aiokafka producer (acks=all, small linger)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaProducer

from ..ports import Delivered

DEFAULT_LINGER_MS = 2


def make_producer(bootstrap: str, *, client_id: str = "sextant", linger_ms: int = DEFAULT_LINGER_MS,
                  **kwargs: Any) -> AIOKafkaProducer:
    """An unstarted producer with the project's settings: `acks="all"`, `enable_idempotence=True`
    (per-partition order survives retries), `linger_ms` small (latency over batching)."""
    return AIOKafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, acks="all",
                            enable_idempotence=True, linger_ms=linger_ms, **kwargs)


class KafkaPublisher:
    """`Publisher` over one aiokafka producer. `start()` before use, `stop()` after."""

    def __init__(self, producer: AIOKafkaProducer) -> None:
        self.producer = producer

    @classmethod
    def create(cls, bootstrap: str, **kwargs: Any) -> KafkaPublisher:
        return cls(make_producer(bootstrap, **kwargs))

    async def start(self) -> None:
        await self.producer.start()

    async def stop(self) -> None:
        await self.producer.stop()

    async def publish(self, topic: str, key: bytes | None, value: bytes | None,
                      headers: Sequence[tuple[str, bytes]] = ()) -> Delivered:
        md = await self.producer.send_and_wait(topic, value, key=key, headers=list(headers))
        return Delivered(md.topic, md.partition, md.offset)

    async def publish_many(self, items: Sequence[tuple[str, bytes | None, bytes | None,
                                                       Sequence[tuple[str, bytes]]]]) -> list[Delivered]:
        """Enqueue every record in order (one batch per partition in flight, idempotent: per-key
        order holds), then wait for all acknowledgements. Raises if any record failed."""
        futures = [await self.producer.send(topic, value, key=key, headers=list(headers))
                   for topic, key, value, headers in items]
        results = await asyncio.gather(*futures)
        return [Delivered(md.topic, md.partition, md.offset) for md in results]
