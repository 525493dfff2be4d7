"""The consuming process of the cross-process trace test: `python -m sextant_kit.testing.trace_consumer`.

Consumes `--topic` with the real `ConsumerLoop`; its handler runs in a `handle <type>` span (child
of the loop's CONSUMER span, itself the child of the record's `traceparent` header) and returns one
output event, which `append_and_track` writes to PostgreSQL (SQLAlchemy spans). Spans go to the
JSON-lines file `--spans`. Exits 0 after `--expect` records were processed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event, WorkloadFailed

from ..consumer import ConsumerLoop
from ..eventstore.postgres import PostgresEventStore
from ..kafka.consumer import KafkaSource
from ..kafka.producer import KafkaPublisher
from ..telemetry import TelemetryConfig, instrument_sqlalchemy, setup_tracing


async def main(args: argparse.Namespace) -> int:
    telemetry = setup_tracing(TelemetryConfig("trace-consumer", exporter="jsonl", jsonl_path=args.spans))
    tracer = telemetry.tracer()
    store = PostgresEventStore.from_url(args.db, topic_of=lambda s: None, pool_size=2)
    instrument_sqlalchemy(store.engine, telemetry.provider)

    async def handler(env: Envelope) -> Sequence[Event]:
        with tracer.start_as_current_span(f"handle {env.type}", attributes={"sextant.event_id": env.id}):
            return [WorkloadFailed(workload_id=f"echo-{env.payload['workload_id']}", at=1.0,
                                   reason="trace test")]

    source = KafkaSource.create(args.bootstrap, args.group, [args.topic])
    dlq = KafkaPublisher.create(args.bootstrap)
    loop = ConsumerLoop(name=args.group, source=source, store=store, handler=handler, dead_letters=dlq,
                        dead_letter_topic=args.dlq_topic, tracer=tracer)
    await source.start()
    await dlq.start()
    try:
        while loop.stats.processed < args.expect:
            await loop.run_once()
    finally:
        await source.stop()
        await dlq.stop()
        await store.close()
        telemetry.shutdown()
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="trace_consumer")
    for name in ("--db", "--bootstrap", "--topic", "--group", "--spans", "--dlq-topic"):
        p.add_argument(name, required=True)
    p.add_argument("--expect", type=int, default=1)
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
