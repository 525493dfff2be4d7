"""A tiny HTTP service for the cross-process trace test: `python -m sextant_kit.testing.trace_app`.

`POST /workloads/{workload_id}/complete` appends a `WorkloadCompleted` event through the PostgreSQL
store; the envelope (and so its outbox row) carries the request's `traceparent`. A relay runs in
the same process and publishes the outbox to `--topic`. Spans (FastAPI server span, SQLAlchemy
statements, relay PRODUCER spans) go to the JSON-lines file `--spans`. `GET /healthz` answers 200
once the process is up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator

import uvicorn
from fastapi import FastAPI
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import WorkloadCompleted
from sextant_contracts.ids import derive_id

from ..eventstore.postgres import PostgresEventStore
from ..kafka.producer import KafkaPublisher
from ..relay import Relay
from ..telemetry import (
    TelemetryConfig,
    current_traceparent,
    instrument_fastapi,
    instrument_sqlalchemy,
    setup_tracing,
)


def build(args: argparse.Namespace) -> FastAPI:
    telemetry = setup_tracing(TelemetryConfig("trace-app", exporter="jsonl", jsonl_path=args.spans))
    store = PostgresEventStore.from_url(args.db, topic_of=lambda s: args.topic, poll_interval=0.2)
    instrument_sqlalchemy(store.engine, telemetry.provider)
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        publisher = KafkaPublisher.create(args.bootstrap)  # aiokafka needs the running loop
        await publisher.start()
        stop = asyncio.Event()
        relay = asyncio.create_task(Relay(store, publisher, poll_interval=0.2).run(stop))
        yield
        stop.set()
        await relay
        await publisher.stop()
        await store.close()
        telemetry.shutdown()

    app = FastAPI(lifespan=lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/workloads/{workload_id}/complete")
    async def complete(workload_id: str) -> dict[str, object]:
        event = WorkloadCompleted(workload_id=workload_id, at=time.time())
        env = Envelope.wrap(event, id=derive_id("trace-app", workload_id), source="trace-app",
                            stream_version=0, time=event.at, traceparent=current_traceparent())
        (stored,) = await store.append(event.stream, None, [env])
        return {"position": stored.position, "traceparent": stored.traceparent, "id": stored.id}

    instrument_fastapi(app, telemetry.provider)
    return app


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="trace_app")
    for name in ("--db", "--bootstrap", "--topic", "--spans"):
        p.add_argument(name, required=True)
    p.add_argument("--port", type=int, required=True)
    args = p.parse_args(argv)
    uvicorn.run(build(args), host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
