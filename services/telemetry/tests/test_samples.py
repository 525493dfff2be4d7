"""Telemetry's sample consumer (services/telemetry/samples.py) over the in-memory bus and store: a
fetched batch survives a database outage, and a sample whose handling raises is quarantined."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_contracts import codec
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import RawSample
from sextant_contracts.topics import DEAD_LETTERS, TELEMETRY_SAMPLES
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.profiles import policy_set
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, submitted, through_placement
from sextant_core.workflow import Decider
from sextant_kit.bus import MemoryBus
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.runtime import DeciderHandler
from sextant_telemetry.handlers import Aggregator
from sextant_telemetry.samples import SampleConsumer

TOPIC = TELEMETRY_SAMPLES.name


class FlakyStore:
    """The memory store, with `append_and_track` refused (database down) `down` times."""

    def __init__(self, store: MemoryEventStore, down: int = 0) -> None:
        self.store = store
        self.down = down

    async def append_and_track(self, *args: Any, **kw: Any) -> Any:
        if self.down > 0:
            self.down -= 1
            raise ConnectionRefusedError("database down")
        return await self.store.append_and_track(*args, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


async def platform(down: int = 0, aggregator: Aggregator | None = None) -> tuple[MemoryBus, MemoryEventStore,
                                                                                  SampleConsumer]:
    bus = MemoryBus({TOPIC: 1, DEAD_LETTERS.name: 1})
    store = MemoryEventStore(topic_of=lambda s: None)
    events: list[ev.Event] = [submitted("w1", at=1.0, fast_path=True), *through_placement("w1", alloc(("s1", 2, 4.0))),
                              ev.WorkloadStarted(at=3.0, workload_id="w1", allocation=alloc(("s1", 2, 4.0)))]
    await store.append_and_track("edge", "setup", None, [
        Envelope.wrap(e, id=f"setup-{i}", source="edge", stream_version=0, time=e.at) for i, e in enumerate(events)])
    handler = DeciderHandler("telemetry", Decider("telemetry", policy_set("foundation")), store)
    await handler.start()
    consumer = SampleConsumer(bus.source("telemetry", [TOPIC]), FlakyStore(store, down), bus, handler,
                              aggregator or Aggregator(window_s=10.0), clock=lambda: 50.0, fetch_timeout=0.0)
    return bus, store, consumer


async def send(bus: MemoryBus, *ats: float) -> None:
    for at in ats:
        s = RawSample(sample_id=f"s{at}", workload_id="w1", at=at, value=1.0, ratio_to_target=1.0 + at / 100)
        await bus.publish(TOPIC, b"w1", codec.dumpb(s), [])


async def verdicts(store: MemoryEventStore) -> list[tuple[float, float]]:
    return [(e.payload["at"], e.payload["ratio_to_target"]) for e in await store.read_all() if e.type == "QosVerdict"]


async def test_a_fetched_batch_is_kept_through_a_database_outage() -> None:
    bus, store, consumer = await platform(down=3)
    await send(bus, 4.0, 6.0, 12.0, 25.0)  # closes window 0 (4, 6) and window 1 (12)
    for _ in range(3):  # the database refuses: each round raises, nothing is committed or refetched
        with pytest.raises(ConnectionRefusedError):
            await consumer.run_once()
        assert bus.committed("telemetry", TOPIC, 0) in (None, 0) and consumer.due
    assert await consumer.run_once() == 0  # resumes the pending batch instead of fetching
    # window 0: (1.04 + 1.06) / 2 = 1.05 at 6.0; window 1: 1.12 at 12.0
    assert [(at, round(r, 6)) for at, r in await verdicts(store)] == [(6.0, 1.05), (12.0, 1.12)]
    assert bus.committed("telemetry", TOPIC, 0) == 4 and not consumer.due


async def test_a_sample_whose_handling_raises_is_quarantined_and_the_consumer_goes_on() -> None:
    class Poisoned(Aggregator):
        def add(self, s: RawSample, phase: WorkloadPhase | None) -> list[tuple[str, list[ev.Event]]]:
            if s.sample_id == "s6.0":
                raise ArithmeticError("injected")
            return super().add(s, phase)

    bus, store, consumer = await platform(aggregator=Poisoned(window_s=10.0))
    await send(bus, 4.0, 6.0, 12.0)
    await consumer.run_once()
    log = await store.read_all()
    (q,) = [e.event() for e in log if e.type == "RecordQuarantined"]
    assert (q.consumer, q.record_id, q.workload_id, q.error) == (  # type: ignore[attr-defined]
        "telemetry", "s6.0", "w1", "ArithmeticError: injected")
    (dead,) = bus.records(DEAD_LETTERS.name)
    assert dead.header("dlq_reason") == "quarantined" and dead.header("dlq_offset") == "1"
    w = fold(log).workloads["w1"]
    assert w.phase == WorkloadPhase.FAILED and w.end_reason == "quarantined"
    assert bus.committed("telemetry", TOPIC, 0) == 3  # and the consumer went on
