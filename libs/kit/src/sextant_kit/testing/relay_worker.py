"""A relay process for the relay test: `python -m sextant_kit.testing.relay_worker ...`.

Runs the real `Relay` (PostgreSQL outbox → idempotent Kafka producer) with every stream mapped to
`--topic`, until the outbox is drained, then exits 0. With `--die-after-publish` it SIGKILLs
itself right after the broker acknowledged its first round and before marking it sent — the
window in which a relay crash causes a re-publication. With `--forever` it runs `Relay.run`
(NOTIFY wake-ups) until SIGTERM instead of exiting when drained.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence

from ..eventstore.postgres import PostgresEventStore, asyncpg_dsn
from ..kafka.producer import KafkaPublisher
from ..ports import OutboxItem
from ..relay import PostgresLeaderLock, Relay


async def main(args: argparse.Namespace) -> int:
    store = PostgresEventStore.from_url(args.db, topic_of=lambda s: args.topic, pool_size=2)
    publisher = KafkaPublisher.create(args.bootstrap)

    def hook(stage: str, items: Sequence[OutboxItem]) -> None:
        if args.die_after_publish and stage == "published":
            print(f"relay_worker: SIGKILL after publishing {len(items)} items", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    leader = PostgresLeaderLock(asyncpg_dsn(store.engine))
    relay = Relay(store, publisher, batch=args.batch, hook=hook, leader=leader, poll_interval=1.0)
    await publisher.start()
    try:
        await leader.acquire()
        if args.forever:
            stop = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            print("relay_worker: running", flush=True)
            await relay.run(stop)
        while await store.pending_count() > 0:
            await relay.relay_once()
    finally:
        await leader.release()
        await publisher.stop()
        await store.close()
    print(f"relay_worker: drained, stats {relay.stats}", flush=True)
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="relay_worker")
    p.add_argument("--db", required=True)
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--die-after-publish", action="store_true")
    p.add_argument("--forever", action="store_true")
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
