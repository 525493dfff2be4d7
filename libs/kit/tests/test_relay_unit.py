"""Unit tests of the outbox relay over the in-memory store and bus (no I/O)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from sextant_contracts.envelope import Envelope
from sextant_kit.bus import MemoryBus
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.ports import OutboxItem
from sextant_kit.relay import Relay
from sextant_kit.telemetry import TelemetryConfig, setup_tracing
from sextant_kit.testing.envelopes import make_envelopes


def store_and_bus() -> tuple[MemoryEventStore, MemoryBus]:
    return MemoryEventStore(topic_of=lambda s: "events"), MemoryBus({"events": 3})


async def test_relay_publishes_in_position_order_keyed_by_stream_and_marks_sent() -> None:
    store, bus = store_and_bus()
    for s in ("workload-a", "workload-b", "workload-c"):
        await store.append(s, 0, make_envelopes(s, 4))
    assert await Relay(store, bus, batch=5).relay_once() == 5
    assert await Relay(store, bus, batch=100).relay_once() == 7
    assert await store.pending_count() == 0
    records = bus.records("events")
    assert len(records) == 12
    for s in ("workload-a", "workload-b", "workload-c"):
        mine = [Envelope.from_kafka(r.key, r.value, r.headers) for r in records if r.key == s.encode()]
        assert [e.stream_version for e in mine] == [1, 2, 3, 4]
        assert len({r.partition for r in records if r.key == s.encode()}) == 1


async def test_a_relay_dying_between_publish_and_mark_republishes() -> None:
    store, bus = store_and_bus()
    await store.append("workload-a", 0, make_envelopes("workload-a", 3))

    def die(stage: str, items: Sequence[OutboxItem]) -> None:
        if stage == "published":
            raise SystemExit("killed")

    with pytest.raises(SystemExit):
        await Relay(store, bus, hook=die).relay_once()
    assert await store.pending_count() == 3  # nothing was marked
    await Relay(store, bus).relay_once()
    ids = [r.header("ce_id") for r in bus.records("events")]
    assert ids == ["workload-a:1:1", "workload-a:2:2", "workload-a:3:3"] * 2
    assert await store.pending_count() == 0


async def test_run_wakes_up_on_append_and_stops() -> None:
    store, bus = store_and_bus()
    stop = asyncio.Event()
    relay = Relay(store, bus, poll_interval=3600)
    task = asyncio.create_task(relay.run(stop))
    await store.append("workload-a", 0, make_envelopes("workload-a", 2))
    for _ in range(200):  # bounded: the relay publishes on the notification, not the hour-long poll
        if len(bus.records("events")) == 2:
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(task, 10)
    assert len(bus.records("events")) == 2 and relay.stats.published == 2


async def test_relay_retries_when_the_broker_is_down() -> None:
    store, bus = store_and_bus()
    await store.append("workload-a", 0, make_envelopes("workload-a", 1))
    failures = 3

    class DownThenUp(MemoryBus):
        async def publish_many(self, items: Any) -> Any:
            nonlocal failures
            if failures:
                failures -= 1
                raise ConnectionRefusedError("broker down")
            return await bus.publish_many(items)

    stop = asyncio.Event()
    relay = Relay(store, DownThenUp(), max_backoff=0.01)
    task = asyncio.create_task(relay.run(stop))
    for _ in range(500):
        if bus.records("events"):
            break
        await asyncio.sleep(0.01)
    stop.set()
    await asyncio.wait_for(task, 10)
    assert relay.stats.transient_errors == 3 and len(bus.records("events")) == 1


async def test_published_record_continues_the_trace_of_the_outbox_row() -> None:
    telemetry = setup_tracing(TelemetryConfig("relay-test", exporter="memory", set_global=False))
    tracer = telemetry.tracer()
    store, bus = store_and_bus()
    with tracer.start_as_current_span("request") as request:
        from sextant_kit.telemetry import current_traceparent

        tp = current_traceparent()
        await store.append("workload-a", 0, [e.model_copy(update={"traceparent": tp})
                                             for e in make_envelopes("workload-a", 1)])
    await Relay(store, bus, tracer=tracer).relay_once()
    (record,) = bus.records("events")
    header = record.header("traceparent") or ""
    (publish,) = [s for s in telemetry.memory.get_finished_spans() if s.name == "publish events"]  # type: ignore[union-attr]
    trace_id = f"{request.get_span_context().trace_id:032x}"
    assert header.split("-")[1] == trace_id
    assert header.split("-")[2] == f"{publish.context.span_id:016x}"
    assert publish.parent is not None and publish.parent.span_id == request.get_span_context().span_id


async def test_a_relay_waiting_for_leadership_stops_and_backs_off_on_errors() -> None:
    store, bus = store_and_bus()
    attempts = 0

    class NeverLeader:
        held = False

        async def acquire(self) -> None:
            nonlocal attempts
            attempts += 1
            raise ConnectionRefusedError("postgres down")

        async def release(self) -> None:
            return None

    stop = asyncio.Event()
    relay = Relay(store, bus, leader=NeverLeader(), max_backoff=0.05)  # type: ignore[arg-type]
    task = asyncio.create_task(relay.run(stop))
    await asyncio.sleep(0.3)
    stop.set()
    await asyncio.wait_for(task, 10)
    assert 1 <= attempts < 30  # retried with backoff, not in a tight loop
    assert relay.stats.transient_errors == attempts
