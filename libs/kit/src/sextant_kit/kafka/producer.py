"""The Kafka `Publisher`: an idempotent aiokafka producer (acks=all, small linger).

A broker that restarts can lose the idempotent producer's sequence state (measured: after a 30 s
outage of the single-node broker, every send of the relay and of admission failed with
`OutOfOrderSequenceNumber`, for good — the relay stopped publishing). aiokafka treats that as
fatal for the producer, so `KafkaPublisher` replaces it with a fresh one (a new producer id) and
raises `TransientError`: the caller retries the same records, which is at-least-once as before
(consumers skip what they already tracked) and keeps per-key order (nothing of the failed send
is acknowledged out of order).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from aiokafka import AIOKafkaProducer
from aiokafka.errors import InvalidProducerEpoch, OutOfOrderSequenceNumber, UnknownProducerId

from ..errors import TransientError
from ..ports import Delivered

log = logging.getLogger(__name__)
FENCED = (OutOfOrderSequenceNumber, UnknownProducerId, InvalidProducerEpoch)
"""Errors after which an idempotent producer cannot send again: it is replaced."""
T = TypeVar("T")

DEFAULT_LINGER_MS = 2


def make_producer(bootstrap: str, *, client_id: str = "sextant", linger_ms: int = DEFAULT_LINGER_MS,
                  **kwargs: Any) -> AIOKafkaProducer:
    """An unstarted producer with the project's settings: `acks="all"`, `enable_idempotence=True`
    (per-partition order survives retries), `linger_ms` small (latency over batching)."""
    return AIOKafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, acks="all",
                            enable_idempotence=True, linger_ms=linger_ms, **kwargs)


class KafkaPublisher:
    """`Publisher` over one aiokafka producer. `start()` before use, `stop()` after."""

    def __init__(self, producer: AIOKafkaProducer,
                 factory: Callable[[], AIOKafkaProducer] | None = None) -> None:
        self.producer = producer
        self._factory = factory  # builds a replacement after a fenced send (None: no replacement)
        self.replaced = 0

    @classmethod
    def create(cls, bootstrap: str, **kwargs: Any) -> KafkaPublisher:
        return cls(make_producer(bootstrap, **kwargs), factory=lambda: make_producer(bootstrap, **kwargs))

    async def _sending(self, send: Callable[[], Awaitable[T]]) -> T:
        try:
            return await send()
        except FENCED as exc:
            if self._factory is None:
                raise
            old, self.producer = self.producer, self._factory()
            self.replaced += 1
            log.warning("kafka producer unusable after %r (a broker restart lost its sequence state); "
                        "replaced by a new producer, the send is retried", exc)
            with contextlib.suppress(Exception):
                await old.stop()
            await self.producer.start()
            raise TransientError(f"producer replaced after {type(exc).__name__}") from exc

    async def start(self) -> None:
        await self.producer.start()

    async def stop(self) -> None:
        await self.producer.stop()

    async def publish(self, topic: str, key: bytes | None, value: bytes | None,
                      headers: Sequence[tuple[str, bytes]] = ()) -> Delivered:
        md = await self._sending(lambda: self.producer.send_and_wait(topic, value, key=key, headers=list(headers)))
        return Delivered(md.topic, md.partition, md.offset)

    async def publish_many(self, items: Sequence[tuple[str, bytes | None, bytes | None,
                                                       Sequence[tuple[str, bytes]]]]) -> list[Delivered]:
        """Enqueue every record in order (one batch per partition in flight, idempotent: per-key
        order holds), then wait for all acknowledgements. Raises if any record failed."""
        async def send_all() -> list[Any]:
            futures = [await self.producer.send(topic, value, key=key, headers=list(headers))
                       for topic, key, value, headers in items]
            return list(await asyncio.gather(*futures))

        results = await self._sending(send_all)
        return [Delivered(md.topic, md.partition, md.offset) for md in results]
