"""A consumer process for latency measurements: `python -m sextant_kit.testing.echo_worker ...`.

Consumes `--topic` with the real `ConsumerLoop` (tracking name and group `--group`), answers each
input with one `WorkloadCompleted(workload_id="echo-<input id>")` through `append_and_track`, and
appends one JSON line per input to `--out`: `{"id", "delivered", "processed"}` — wall-clock
seconds (`time.time()`, comparable across processes on one machine) when the handler saw the
record and when its output was durably stored. Exits 0 after `--expect` inputs were processed, or
on SIGTERM. Outputs are not published (`topic_of` returns None).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from collections.abc import Sequence

from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event, WorkloadCompleted

from ..consumer import ConsumerLoop
from ..eventstore.postgres import PostgresEventStore
from ..kafka.consumer import KafkaSource
from ..kafka.producer import KafkaPublisher
from ..ports import Record


async def main(args: argparse.Namespace) -> int:
    store = PostgresEventStore.from_url(args.db, topic_of=lambda s: None, pool_size=2)
    delivered: dict[str, float] = {}
    out = open(args.out, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - closed in finally

    async def handler(env: Envelope) -> Sequence[Event]:
        delivered[env.id] = time.time()
        return [WorkloadCompleted(workload_id=f"echo-{env.id}", at=0.0)]

    def hook(stage: str, record: Record, handled: int) -> None:
        if stage == "stored":
            eid = record.header("ce_id") or ""
            out.write(json.dumps({"id": eid, "delivered": delivered.pop(eid, None),
                                  "processed": time.time()}) + "\n")

    source = KafkaSource.create(args.bootstrap, args.group, [args.topic], fetch_max_wait_ms=5)
    dlq = KafkaPublisher.create(args.bootstrap)
    loop = ConsumerLoop(name=args.group, source=source, store=store, handler=handler, dead_letters=dlq,
                        dead_letter_topic=args.dlq_topic, fetch_timeout=0.05, hook=hook)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await source.start()
    await dlq.start()
    print("echo_worker: ready", flush=True)
    try:
        while loop.stats.processed < args.expect and not stop.is_set():
            await loop.run_once()
    finally:
        await source.stop()
        await dlq.stop()
        await store.close()
        out.close()
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="echo_worker")
    for name in ("--db", "--bootstrap", "--topic", "--group", "--out", "--dlq-topic"):
        p.add_argument(name, required=True)
    p.add_argument("--expect", type=int, default=10**12)
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
