"""Unit tests of the consumer loop over the in-memory bus and store (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event, WorkloadCompleted
from sextant_kit.bus import MemoryBus
from sextant_kit.consumer import ConsumerLoop, Outputs, RetryPolicy
from sextant_kit.errors import PoisonMessage, TransientError
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.testing.envelopes import make_envelope

FAST = RetryPolicy(handler_attempts=3, initial_backoff=0.0, max_backoff=0.0)


def completed(env: Envelope) -> list[Event]:
    return [WorkloadCompleted(workload_id=f"out-{env.payload['n']}", at=1.0)]


class Harness:
    def __init__(self, handler: Any, **kw: Any) -> None:
        self.bus = MemoryBus({"in": 2, "dlq": 1})
        self.store = MemoryEventStore(topic_of=lambda s: None)
        self.loop = ConsumerLoop(name="svc", source=self.bus.source("svc", ["in"]), store=self.store,
                                 handler=handler, dead_letters=self.bus, dead_letter_topic="dlq",
                                 retry=FAST, fetch_timeout=0.0, clock=lambda: 42.0, **kw)

    async def send(self, env: Envelope) -> None:
        await self.bus.publish("in", *env.to_kafka())

    async def drain(self) -> None:
        while await self.loop.run_once():
            pass


async def test_outputs_are_wrapped_tracked_and_offsets_committed() -> None:
    async def handler(env: Envelope) -> Sequence[Event]:
        return completed(env)

    h = Harness(handler)
    inputs = [make_envelope(f"workload-{i}", 1, i).with_position(10 + i) for i in range(5)]
    for env in inputs:
        await h.send(env)
    await h.drain()
    out = await h.store.read_all()
    assert sorted(e.causation_id or "" for e in out) == sorted(e.id for e in inputs)
    assert {e.type for e in out} == {"WorkloadCompleted"} and {e.source for e in out} == {"svc"}
    assert all(e.time == 42.0 and e.correlation_id == e.causation_id for e in out)
    assert await h.store.max_tracked_position("svc") == 14
    ends = h.bus.end_offsets("in")
    assert all(h.bus.committed("svc", "in", p) == ends[p] for p in ends if ends[p])
    assert h.loop.stats.processed == 5


async def test_redelivered_and_duplicate_records_are_skipped() -> None:
    calls: list[str] = []

    async def handler(env: Envelope) -> Sequence[Event]:
        calls.append(env.id)
        return completed(env)

    h = Harness(handler)
    env = make_envelope("workload-a", 1, 1)
    await h.send(env)
    await h.send(env)  # a relay duplicate: same event, new offset
    await h.drain()
    assert calls == [env.id]
    assert h.loop.stats.processed == 1 and h.loop.stats.skipped == 1
    assert await h.store.last_position() == 1


async def test_same_outputs_ids_on_reprocessing_after_a_lost_tracking_row() -> None:
    outputs: list[str] = []

    async def handler(env: Envelope) -> Sequence[Event]:
        return completed(env)

    for _ in range(2):
        h = Harness(handler)
        await h.send(make_envelope("workload-a", 1, 1))
        await h.drain()
        outputs.extend(e.id for e in await h.store.read_all())
    assert outputs[0] == outputs[1]  # derived, deterministic ids


async def test_undecodable_record_goes_to_the_dead_letter_topic_and_the_loop_goes_on() -> None:
    async def handler(env: Envelope) -> Sequence[Event]:
        return completed(env)

    h = Harness(handler)
    await h.bus.publish("in", b"workload-x", b"{not json", [("ce_id", b"x")])
    await h.send(make_envelope("workload-x", 1, 2))
    await h.drain()
    (dead,) = h.bus.records("dlq")
    assert dead.value == b"{not json" and dead.header("dlq_reason") == "undecodable"
    assert dead.header("dlq_topic") == "in" and dead.header("dlq_offset") == "0"
    assert dead.header("dlq_consumer") == "svc" and dead.header("dlq_partition") is not None
    assert h.loop.stats.dead_lettered == 1 and h.loop.stats.processed == 1


async def test_failing_handler_is_retried_then_quarantined_and_the_loop_goes_on() -> None:
    attempts: list[int] = []

    async def handler(env: Envelope) -> Sequence[Event]:
        attempts.append(env.payload["n"])
        if env.payload["n"] == 1:
            raise RuntimeError("boom")
        return completed(env)

    h = Harness(handler)
    await h.send(make_envelope("workload-a", 1, 1, workload_id="a"))
    await h.send(make_envelope("workload-a", 2, 2))
    await h.drain()
    assert attempts.count(1) == 3
    (dead,) = h.bus.records("dlq")
    assert dead.header("dlq_reason") == "quarantined" and dead.header("ce_id") == "workload-a:1:1"
    assert "RuntimeError: boom" in (dead.header("dlq_error") or "")
    assert await h.store.is_tracked("svc", "workload-a:1:1")  # never handled again
    quarantined = [e.event() for e in await h.store.read_all() if e.type == "RecordQuarantined"]
    assert [(q.consumer, q.record_id, q.record_type, q.workload_id, q.error) for q in quarantined] == [  # type: ignore[attr-defined]
        ("svc", "workload-a:1:1", "Tick", "a", "RuntimeError: boom")]
    assert quarantined[0].stream == "workload-a"
    assert h.loop.stats.handler_retries == 2 and h.loop.stats.processed == 1 and h.loop.stats.quarantined == 1


async def test_poison_message_is_dead_lettered_at_once() -> None:
    calls = 0

    async def handler(env: Envelope) -> Sequence[Event]:
        nonlocal calls
        calls += 1
        raise PoisonMessage("unsupported-target")

    h = Harness(handler)
    await h.send(make_envelope("workload-a", 1, 1))
    await h.drain()
    assert calls == 1
    assert h.bus.records("dlq")[0].header("dlq_reason") == "unsupported-target"


async def test_transient_errors_are_waited_out_not_dead_lettered() -> None:
    failures = 5

    async def handler(env: Envelope) -> Sequence[Event]:
        nonlocal failures
        if failures:
            failures -= 1
            raise TransientError("database restarting")
        return completed(env)

    h = Harness(handler)
    await h.send(make_envelope("workload-a", 1, 1))
    await h.drain()
    assert h.bus.records("dlq") == []
    assert h.loop.stats.processed == 1 and h.loop.stats.transient_waits == 5


class FlakyStore(MemoryEventStore):
    def __init__(self, failures: int) -> None:
        super().__init__(topic_of=lambda s: None)
        self.failures = failures

    async def append_and_track(self, *args: Any, **kwargs: Any) -> Any:
        if self.failures:
            self.failures -= 1
            raise ConnectionRefusedError("postgres down")
        return await super().append_and_track(*args, **kwargs)


async def test_database_outage_during_append_is_retried_with_the_same_outputs() -> None:
    async def handler(env: Envelope) -> Sequence[Event]:
        return completed(env)

    h = Harness(handler)
    h.store = FlakyStore(failures=4)
    h.loop._store = h.store
    await h.send(make_envelope("workload-a", 1, 1))
    await h.drain()
    assert await h.store.tracked_count("svc") == 1 and await h.store.last_position() == 1
    assert h.loop.stats.transient_waits == 4 and h.bus.records("dlq") == []


async def test_outputs_with_expected_versions_are_numbered_from_them() -> None:
    async def handler(env: Envelope) -> Outputs:
        ev = completed(env)[0]
        return Outputs([ev, ev.model_copy(update={"at": 2.0})], expected={ev.stream: 0})

    h = Harness(handler)
    await h.send(make_envelope("workload-a", 1, 7))
    await h.drain()
    assert [e.stream_version for e in await h.store.read_stream("workload-out-7")] == [1, 2]


@pytest.mark.parametrize("stage", ["fetched", "handled", "stored", "committed"])
async def test_stage_hook_sees_every_stage(stage: str) -> None:
    seen: list[tuple[str, int]] = []

    async def handler(env: Envelope) -> Sequence[Event]:
        return completed(env)

    h = Harness(handler, hook=lambda s, r, n: seen.append((s, r.offset)) if s == stage else None)
    await h.send(make_envelope("workload-a", 1, 1))
    await h.drain()
    assert seen == [(stage, 0)]


async def test_run_survives_a_failing_transport_and_stops_on_request() -> None:
    import asyncio

    async def handler(env: Envelope) -> Sequence[Event]:
        return completed(env)

    h = Harness(handler)
    real_fetch = h.loop._source.fetch
    calls = 0

    async def broken_then_fine(timeout: float, max_records: int) -> Any:
        nonlocal calls
        calls += 1
        if calls <= 2:
            raise RuntimeError("consumer in a bad state")
        return await real_fetch(timeout, max_records)

    h.loop._source.fetch = broken_then_fine  # type: ignore[method-assign]
    await h.send(make_envelope("workload-a", 1, 1))
    stop = asyncio.Event()
    task = asyncio.create_task(h.loop.run(stop))
    for _ in range(500):
        if h.loop.stats.processed:
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(task, 10)
    assert calls > 2 and h.loop.stats.processed == 1


async def test_a_log_the_decider_cannot_fold_is_waited_out_not_quarantined() -> None:
    """A fold failure (`LogUnfoldable`) blames no record: the consumer waits and retries the same
    record — quarantining each one would fail every live workload — and handles it once the log
    folds again."""
    from sextant_kit.errors import LogUnfoldable

    broken = [2]

    async def handler(env: Envelope) -> Sequence[Event]:
        if broken[0]:
            broken[0] -= 1
            raise LogUnfoldable("svc: folding after position 7: IllegalTransition(...)")
        return completed(env)

    h = Harness(handler)
    await h.send(make_envelope("workload-a", 1, 1, workload_id="a"))
    await h.drain()
    assert h.loop.stats.quarantined == 0 and h.bus.records("dlq") == []
    assert h.loop.stats.transient_waits == 2 and h.loop.stats.processed == 1
