"""One composition root per process (STYLE 5): `bootstrap(settings)` builds the engine, the event
store, the Kafka producer, the tracer provider; `serve(...)` runs the process's tasks and its HTTP
app until SIGTERM/SIGINT. Nothing heavy happens at import time. Tests call `bootstrap` with the
real infrastructure's settings, or build the in-memory adapters directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import APIRouter
from sextant_contracts.upcasters import check_upcasters
from sqlalchemy import text

from . import logs, metrics
from .app import ReadinessCheck, create_app
from .errors import dependency_of
from .eventstore.postgres import PostgresEventStore
from .kafka.consumer import KafkaSource
from .kafka.producer import KafkaPublisher
from .logs import setup_logging
from .operators import OperatorGate
from .settings import KitSettings
from .telemetry import (
    Telemetry,
    instrument_fastapi,
    instrument_sqlalchemy,
    setup_tracing,
    tracing_config,
)
from .tenancy import TenantRegistry

log = logging.getLogger(__name__)

Task = Callable[["Runtime", asyncio.Event], Awaitable[None]]


@dataclass
class Runtime:
    """Everything a process talks to; `close()` releases it in reverse order."""

    settings: KitSettings
    store: PostgresEventStore
    publisher: KafkaPublisher
    telemetry: Telemetry
    sources: list[KafkaSource] = field(default_factory=list)
    consumers: dict[str, Any] = field(default_factory=dict)  # name -> ConsumerLoop (for /v1/stats)
    handlers: dict[str, Any] = field(default_factory=dict)

    def source(self, group_id: str, topics: Sequence[str]) -> KafkaSource:
        """A consumer-group source (started by the caller's task, stopped by `close`)."""
        src = KafkaSource.create(self.settings.kafka_bootstrap, group_id, list(topics),
                                 client_id=self.settings.service_name)
        self.sources.append(src)
        metrics.watch_source(group_id, src)
        return src

    def operator_gate(self) -> OperatorGate:
        """The dependency that lets only operators read this process's own routes."""
        return OperatorGate(TenantRegistry(self.store.engine))

    async def postgres_ready(self) -> bool:
        async with self.store.engine.connect() as conn:
            return (await conn.execute(text("SELECT 1"))).scalar_one() == 1

    async def kafka_ready(self) -> bool:
        client = self.publisher.producer.client
        return bool(await client.fetch_all_metadata()) if client is not None else False

    async def close(self) -> None:
        for src in self.sources:
            with contextlib.suppress(Exception):
                await src.stop()
        with contextlib.suppress(Exception):
            await self.publisher.stop()
        with contextlib.suppress(Exception):
            await self.store.close()
        self.telemetry.shutdown()


async def bootstrap(settings: KitSettings) -> Runtime:
    """Build the process's runtime. The producer is started with patience: an unavailable broker is
    waited for (with backoff), not a crash. A broken upcaster chain fails start-up before anything
    is opened."""
    check_upcasters()
    setup_logging(settings.service_name, settings.log_level.upper())
    metrics.process_started(settings.service_name)
    tel = setup_tracing(tracing_config(settings))
    store = PostgresEventStore.from_url(settings.database_url)
    instrument_sqlalchemy(store.engine.sync_engine, tel.provider)
    publisher = KafkaPublisher.create(settings.kafka_bootstrap, client_id=settings.service_name)
    await with_patience(f"{settings.service_name}: kafka producer", publisher.start,
                        settings.retry_backoff_s, settings.retry_backoff_max_s)
    return Runtime(settings=settings, store=store, publisher=publisher, telemetry=tel)


async def with_patience(what: str, call: Callable[[], Awaitable[object]], backoff_s: float,
                        backoff_max_s: float, stop: asyncio.Event | None = None) -> None:
    """Retry `call` with capped exponential backoff until it succeeds (or `stop` is set). The
    warnings of one outage are logged once (`logs.OutageLog`)."""
    delay = backoff_s
    dependency: str | None = None
    while True:
        try:
            await call()
            if dependency is not None:
                logs.recovered(dependency)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            dependency = dependency_of(exc) or ("kafka" if "kafka" in what else "postgres")
            log.warning("%s not available yet (%s); retrying in %.1fs", what, exc, delay,
                        extra={"dependency": dependency})
            if stop is not None and stop.is_set():
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, backoff_max_s)


async def _sweep_outages(stop: asyncio.Event, every_s: float = 1.0) -> None:
    """End the outages nobody reported as over (a quiet period; `logs.OutageLog.sweep`)."""
    while not stop.is_set():
        await asyncio.sleep(every_s)
        logs.OUTAGES.sweep()


async def serve(settings: KitSettings, tasks: Sequence[Task], *,
                routers: Callable[[Runtime], Sequence[APIRouter]] = lambda rt: (),
                checks: Callable[[Runtime], Mapping[str, ReadinessCheck]] = lambda rt: {}) -> None:
    """Run `tasks` and the HTTP app (with /healthz, /readyz) until SIGTERM or SIGINT. `/readyz`
    checks PostgreSQL, Kafka and the process's own `checks`."""
    runtime = await bootstrap(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    app = create_app(settings.service_name, routers=tuple(routers(runtime)),
                     checks={"postgres": runtime.postgres_ready, "kafka": runtime.kafka_ready,
                             **checks(runtime)}, metrics_gate=runtime.operator_gate())
    instrument_fastapi(app, runtime.telemetry.provider)
    server = uvicorn.Server(uvicorn.Config(app, host=settings.http_host, port=settings.http_port,
                                           log_level="warning", lifespan="off"))
    server.install_signal_handlers = lambda: None  # type: ignore[attr-defined]
    running: dict[asyncio.Future[None], str] = {
        asyncio.ensure_future(task(runtime, stop)): getattr(task, "__name__", "task") for task in tasks}
    sweeper = asyncio.ensure_future(_sweep_outages(stop))
    http: asyncio.Future[Any] = asyncio.ensure_future(server.serve())
    stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    watched: list[asyncio.Future[Any]] = [*running, http, stopper]
    try:
        done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        for fut in done:
            if fut is not stopper and not fut.cancelled() and fut.exception() is not None:
                log.error("task %s died: %r", running.get(fut, "http"), fut.exception())
    finally:
        stop.set()
        server.should_exit = True
        for fut in (*running, sweeper):
            fut.cancel()
        await asyncio.gather(*running, http, stopper, sweeper, return_exceptions=True)
        await runtime.close()
        logs.OUTAGES.close()
