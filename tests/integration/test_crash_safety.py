"""Acceptance "Crash safety": a consumer transforming 5 000 input events, in a separate process, is
SIGKILLed at seeded points between 10 % and 90 % of its progress and restarted; afterwards there is
exactly one output event per input (DESIGN §8).

Kill points (seed 20251122): three self-kills inside the consumer loop at the three windows that
matter — after the handler but before the database commit (`handled`), after the database commit
but before the Kafka offset commit (`stored`: the batch is redelivered and must be skipped), and
right after an offset commit (`committed`) — plus one kill from outside at a seeded progress,
whatever the worker is doing then. Each restart joins the same consumer group.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from typing import Any

import pytest
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.kafka.producer import KafkaPublisher
from sextant_kit.migrations import migrate_async
from sextant_kit.testing.envelopes import make_envelope
from sextant_kit.testing.kafka_offsets import topic_end_offsets

pytestmark = pytest.mark.integration

INPUTS = 5_000
SEED = 20251122
GROUP = "crash-consumer"


def kill_plan(seed: int) -> tuple[list[tuple[str, int]], int]:
    """Three (stage, progress) self-kills and one external kill progress, all in [10 %, 90 %]."""
    rng = random.Random(seed)
    points = sorted(rng.sample(range(INPUTS // 10, INPUTS * 9 // 10), 4))
    stages = ["handled", "stored", "committed"]
    rng.shuffle(stages)
    external = points.pop(rng.randrange(4))
    return list(zip(stages, points, strict=True)), external


async def spawn(url: str, bootstrap: str, topic: str, dlq: str, *extra: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "sextant_kit.testing.crash_worker", "--db", url, "--bootstrap", bootstrap,
        "--topic", topic, "--dlq-topic", dlq, "--group", GROUP, "--expect", str(INPUTS), *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env={**os.environ})


async def test_consumer_killed_repeatedly_produces_exactly_one_output_per_input(
        fresh_pg_url: str, kafka_bootstrap: str, kafka_topics: Any) -> None:
    topic, dlq = await kafka_topics(2, partitions=3)
    await migrate_async(fresh_pg_url)
    inputs = [make_envelope(f"workload-in-{i % 97}", i // 97 + 1, i, id=f"input-{i}").with_position(i + 1)
              for i in range(INPUTS)]
    publisher = KafkaPublisher.create(kafka_bootstrap)
    await publisher.start()
    try:
        for k in range(0, INPUTS, 500):
            await publisher.publish_many([(topic, *e.to_kafka()) for e in inputs[k:k + 500]])
    finally:
        await publisher.stop()
    assert sum((await topic_end_offsets(kafka_bootstrap, topic)).values()) == INPUTS

    store = PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None, pool_size=2)
    self_kills, external = kill_plan(SEED)
    kills: list[int] = []
    try:
        for stage, at in self_kills:  # the worker SIGKILLs itself at (stage, progress)
            proc = await spawn(fresh_pg_url, kafka_bootstrap, topic, dlq, "--kill-stage", stage,
                               "--kill-at", str(at))
            out, _ = await asyncio.wait_for(proc.communicate(), 300)
            assert proc.returncode == -signal.SIGKILL, out.decode()
            progress = await store.tracked_count(GROUP)
            assert INPUTS // 10 <= at <= progress < INPUTS, (stage, at, progress)
            kills.append(progress)

        proc = await spawn(fresh_pg_url, kafka_bootstrap, topic, dlq)  # killed from outside
        for _ in range(6000):
            if await store.tracked_count(GROUP) >= external or proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        assert proc.returncode is None, "worker finished before the external kill point"
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        kills.append(await store.tracked_count(GROUP))

        proc = await spawn(fresh_pg_url, kafka_bootstrap, topic, dlq)  # the final run completes
        out, _ = await asyncio.wait_for(proc.communicate(), 300)
        assert proc.returncode == 0, out.decode()

        assert len(kills) >= 3 and all(p < INPUTS for p in kills)
        outputs = [e for e in await store.read_all(0, 10 * INPUTS)]
        assert len(outputs) == INPUTS  # exactly one output per input: no loss, no duplicate
        assert sorted(e.causation_id or "" for e in outputs) == sorted(e.id for e in inputs)
        assert {e.type for e in outputs} == {"WorkloadCompleted"}
        assert {e.stream_version for e in outputs} == {1}
        assert await store.tracked_count(GROUP) == INPUTS
        assert await store.max_tracked_position(GROUP) == INPUTS
        assert sum((await topic_end_offsets(kafka_bootstrap, dlq)).values()) == 0  # nothing dead-lettered
    finally:
        await store.close()
