"""A consumer process for the crash-safety test: `python -m sextant_kit.testing.crash_worker ...`.

It consumes input envelopes from `--topic` (group `--group`, tracking name `--group` too) and turns
each input `n` into one `WorkloadCompleted(workload_id="crash-<n>")` in PostgreSQL through the
real `ConsumerLoop` + `PostgresEventStore`. With `--kill-stage S --kill-at K` it SIGKILLs itself
at stage S (`fetched`, `handled`, `stored`, `committed`) of the first record handled once the
consumer's total progress (tracked inputs, across restarts) reaches K. It exits 0 once `--expect`
inputs are tracked. Nothing is published (`topic_of` returns None).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence

from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event, WorkloadCompleted

from ..consumer import ConsumerLoop, RetryPolicy
from ..eventstore.postgres import PostgresEventStore
from ..kafka.consumer import KafkaSource
from ..kafka.producer import KafkaPublisher
from ..ports import Record


async def transform(env: Envelope) -> Sequence[Event]:
    n = int(env.payload["n"])
    return [WorkloadCompleted(workload_id=f"crash-{n}", at=float(n))]


async def main(args: argparse.Namespace) -> int:
    store = PostgresEventStore.from_url(args.db, topic_of=lambda s: None, pool_size=2)
    base = await store.tracked_count(args.group)
    source = KafkaSource.create(args.bootstrap, args.group, [args.topic], session_timeout_ms=6000,
                                heartbeat_interval_ms=1000, max_poll_records=args.batch)
    dlq = KafkaPublisher.create(args.bootstrap)

    def hook(stage: str, record: Record, handled: int) -> None:
        progress = base + loop.stats.processed  # inputs turned into outputs (redeliveries excluded)
        if args.kill_stage == stage and progress >= args.kill_at:
            print(f"crash_worker: SIGKILL at stage {stage}, progress {progress}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    loop = ConsumerLoop(name=args.group, source=source, store=store, handler=transform, dead_letters=dlq,
                        dead_letter_topic=args.dlq_topic, retry=RetryPolicy(initial_backoff=0.05),
                        max_records=args.batch, hook=hook if args.kill_stage else None)
    await source.start()
    await dlq.start()
    try:
        while await store.tracked_count(args.group) < args.expect:
            await loop.run_once()
    finally:
        await source.stop()
        await dlq.stop()
        await store.close()
    print(f"crash_worker: done, stats {loop.stats}", flush=True)
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="crash_worker")
    p.add_argument("--db", required=True)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--dlq-topic", required=True)
    p.add_argument("--expect", type=int, required=True)
    p.add_argument("--kill-stage", choices=["fetched", "handled", "stored", "committed"])
    p.add_argument("--kill-at", type=int, default=0)
    p.add_argument("--batch", type=int, default=100)
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
