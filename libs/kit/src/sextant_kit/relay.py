"""The outbox relay: publishes committed events to Kafka in position order (DESIGN §4).

One round: read up to `batch` pending outbox items (position order) → publish them all through
the `Publisher` (each record keyed by its stream id via `Envelope.to_kafka()`, to the topic stored
in the outbox row) → wait for every acknowledgement → mark them sent. Per-stream order holds
because items are sent in position order, a stream's records share a key (so a partition), and
the producer is idempotent (retries cannot reorder).

Guarantees:
- **at least once**: rows are marked sent only after the broker acknowledged them. A relay killed
  between publishing and marking re-publishes those rows on restart — the same event ids under new
  offsets — and consumer tracking (by event id) absorbs the duplicates;
- **low latency**: after a round that drained the outbox it sleeps until a NOTIFY from an append
  (or `poll_interval`, the slow fallback) — no busy polling;
- **one active relay**: with a `leader` lock (`PostgresLeaderLock`), a second relay waits until the
  first dies, so two relays never interleave their publishing;
- **never crash-loops**: a transient error (database or broker down) waits with capped
  exponential backoff and retries the round.

Tracing: each published record gets a `publish <topic>` PRODUCER span, child of the outbox row's
`traceparent`; the record's `traceparent` header is that span, so consumers continue the trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import asyncpg
from opentelemetry import trace

from .errors import dependency_of, is_transient
from .logs import recovered
from .ports import Delivered, OutboxItem, OutboxReader, Publisher
from .telemetry import current_traceparent, default_tracer, span_from

log = logging.getLogger(__name__)

RelayHook = Callable[[str, Sequence[OutboxItem]], None]
"""Called with ("published", items) after the broker acknowledged a round, and ("marked", items)
after they were marked sent. Fault-injection tests use it to die in between."""


@dataclass
class RelayStats:
    rounds: int = 0
    published: int = 0
    transient_errors: int = 0


class PostgresLeaderLock:
    """A session-level advisory lock on a dedicated connection: held while the connection lives
    (a killed holder's lock is released when PostgreSQL notices the closed socket)."""

    def __init__(self, dsn: str, key: int = 0x5E7A_0002) -> None:
        self._dsn = dsn
        self._key = key
        self._conn: asyncpg.Connection | None = None

    @property
    def held(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    async def acquire(self, retry_every: float = 1.0) -> None:
        """Wait until this process holds the lock."""
        while not self.held:
            conn = await asyncpg.connect(self._dsn, timeout=10)
            try:
                if await conn.fetchval("SELECT pg_try_advisory_lock($1)", self._key):
                    self._conn = conn
                    return
            except BaseException:
                await conn.close()
                raise
            await conn.close()
            await asyncio.sleep(retry_every)

    async def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                await conn.close(timeout=2)


class Relay:
    """Outbox → Kafka publisher (see the module docstring)."""

    def __init__(self, outbox: OutboxReader, publisher: Publisher, *, batch: int = 500,
                 poll_interval: float = 1.0, max_backoff: float = 5.0,
                 leader: PostgresLeaderLock | None = None, tracer: trace.Tracer | None = None,
                 hook: RelayHook | None = None) -> None:
        self._outbox = outbox
        self._publisher = publisher
        self._batch = batch
        self._poll_interval = poll_interval
        self._max_backoff = max_backoff
        self._leader = leader
        self._tracer = tracer
        self._hook = hook
        self._down: set[str] = set()  # dependencies that failed since the last good round
        self.stats = RelayStats()

    async def relay_once(self) -> int:
        """Publish one round of pending items; returns how many were published and marked."""
        items = await self._outbox.pending(self._batch)
        if not items:
            return 0
        await self._publish(items)
        if self._hook:
            self._hook("published", items)
        await self._outbox.mark_sent([i.position for i in items])
        if self._hook:
            self._hook("marked", items)
        self.stats.rounds += 1
        self.stats.published += len(items)
        return len(items)

    async def _publish(self, items: Sequence[OutboxItem]) -> list[Delivered]:
        tracer = self._tracer or default_tracer()
        records = []
        for item in items:
            with span_from(tracer, f"publish {item.topic}", item.traceparent, kind=trace.SpanKind.PRODUCER,
                           attributes={"messaging.system": "kafka", "messaging.destination.name": item.topic,
                                       "messaging.message.id": item.envelope.id,
                                       "sextant.event.type": item.envelope.type,
                                       "sextant.position": item.position}):
                env = item.envelope.model_copy(update={"traceparent": current_traceparent()
                                                       or item.envelope.traceparent})
                log.info("relay: %s %s -> %s", env.type, env.stream, item.topic)  # carries the trace ids
            key, value, headers = env.to_kafka()
            records.append((item.topic, key, value, headers))
        return await self._publisher.publish_many(records)

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Relay until `stop` is set (or the task is cancelled)."""
        stop = stop or asyncio.Event()
        try:
            await self._run(stop)
        finally:
            if self._leader is not None:
                await self._leader.release()  # hand over at once to a waiting relay

    async def _run(self, stop: asyncio.Event) -> None:
        failures = 0
        while not stop.is_set():
            try:
                if self._leader is not None and not self._leader.held:
                    await _wait_either(self._leader.acquire(), stop)
                    continue  # re-check `stop` (and the lock) before a round
                seen = self._outbox.notification_generation()
                n = await self.relay_once()
                if n:  # the broker acknowledged (ends an outage's log, if any)
                    self._down.add("kafka")
                if failures or n:
                    for dependency in self._down:
                        recovered(dependency)
                    self._down.clear()
                failures = 0
                if n < self._batch:
                    await _wait_either(self._outbox.wait_for_notification(seen, self._poll_interval), stop)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not is_transient(exc):
                    log.exception("relay round failed; retrying")
                else:  # once per outage (logs.OutageLog)
                    dependency = dependency_of(exc) or "a dependency"
                    self._down.add(dependency)
                    log.warning("relay: dependency unavailable (%s); retrying", exc,
                                extra={"dependency": dependency})
                self.stats.transient_errors += 1
                failures += 1
                await _wait_either(asyncio.sleep(min(self._max_backoff, 0.05 * 2 ** min(failures, 10))), stop)


async def _wait_either(aw: Awaitable[object], stop: asyncio.Event) -> None:
    """Await `aw` but return early when `stop` is set; re-raises what `aw` raised."""
    main = asyncio.ensure_future(aw)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({main, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in (main, stopper):
            if not t.done():
                t.cancel()
        await asyncio.gather(main, stopper, return_exceptions=True)
    error = main.exception() if main.done() and not main.cancelled() else None
    if error is not None:
        raise error
