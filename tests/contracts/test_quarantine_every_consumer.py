"""No poison pill in any consumer: each of the platform's consumers — the five deciders run by
`sextant_kit.runtime.decider_task`, admission's submissions consumer and decisions forwarder, the
cluster agent (and telemetry's sample consumer, services/telemetry/tests/test_samples.py) — gets a
record whose handling raises, built with its real handler on the in-memory bus and store. The record
is quarantined (`RecordQuarantined` naming it and the error, dead letter `quarantined`), the
workload it names fails with reason `quarantined`, and the consumer handles the next record."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from sextant_admission.frontdoor import (
    DECISIONS_CONSUMER,
    SUBMISSIONS_CONSUMER,
    DecisionForwarder,
    HeaderCapture,
    SubmissionHandler,
)
from sextant_agent.main import AgentCore
from sextant_agent.twin import TwinExecutor
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.profiles import policy_set
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, submitted, through_placement
from sextant_core.workflow import Decider
from sextant_kit.bus import MemoryBus
from sextant_kit.consumer import ConsumerLoop, RetryPolicy
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.runtime import DeciderHandler
from sextant_kit.tenancy import Tenant

PROFILE = "sextant-adaptive"
FAST = RetryPolicy(handler_attempts=2, initial_backoff=0.0, max_backoff=0.0)
DECIDERS = ("admission", "profiling", "classification", "planning", "reprovisioning")  # decider_task's
Handler = Callable[[Envelope], Awaitable[Any]]


def raw(type_: str, payload: dict[str, Any], id_: str, stream: str = "workload-w1") -> Envelope:
    return Envelope(id=id_, type=type_, source="test", stream=stream, stream_version=0, schema_version=1,
                    time=9.0, payload=payload)


# a verdict without `met` and `window_s`: well-formed as a record, invalid as an event
MALFORMED = raw("QosVerdict", {"at": 9.0, "workload_id": "w1", "ratio_to_target": 0.5}, "poison")
NEXT = raw("Tick", {"at": 10.0, "seq": 0, "period_s": 1.0}, "next-tick", stream="clock")


async def log_with_w1() -> MemoryEventStore:
    store = MemoryEventStore(topic_of=lambda s: None)
    a = alloc(("s0000", 2, 4.0))
    events: list[ev.Event] = [submitted("w1", at=1.0, fast_path=True), *through_placement("w1", a),
                              ev.WorkloadStarted(at=3.0, workload_id="w1", allocation=a)]
    await store.append_and_track("edge", "setup", None, [
        Envelope.wrap(e, id=f"setup-{i}", source="edge", stream_version=0, time=e.at) for i, e in enumerate(events)])
    return store


async def run(name: str, handler: Handler, store: MemoryEventStore, bus: MemoryBus, topic: str,
              poison: Envelope, following: Envelope, headers: list[tuple[str, bytes]] | None = None,
              source: Any = None, batch_appends: bool = False, effects: bool = False) -> ConsumerLoop:
    loop = ConsumerLoop(name=name, source=source or bus.source(name, [topic]), store=store, handler=handler,
                        dead_letters=bus, dead_letter_topic="dlq", retry=FAST, fetch_timeout=0.0,
                        batch_appends=batch_appends, effects=effects)
    for env in (poison, following):
        key, value, hdrs = env.to_kafka()
        await bus.publish(topic, key, value, [*hdrs, *(headers or [])])
    while await loop.run_once():
        pass
    return loop


async def assert_quarantined(name: str, loop: ConsumerLoop, store: MemoryEventStore, bus: MemoryBus,
                             poison: Envelope, error: str, workload: str | None) -> None:
    log = await store.read_all()
    (q,) = [e.event() for e in log if e.type == "RecordQuarantined"]
    assert (q.consumer, q.record_id, q.record_type, q.workload_id) == (  # type: ignore[attr-defined]
        name, poison.id, poison.type, workload)
    assert error in q.error  # type: ignore[attr-defined]
    (dead,) = bus.records("dlq")
    assert dead.header("ce_id") == poison.id and dead.header("dlq_reason") == "quarantined"
    assert dead.header("dlq_consumer") == name
    assert loop.stats.quarantined == 1 and loop.stats.processed == 1  # it went on with the next record
    if workload is not None:
        w = fold(log).workloads[workload]
        assert (w.phase, w.end_reason) == (WorkloadPhase.FAILED, "quarantined")


@pytest.mark.parametrize("batch_appends", [True, False], ids=["batched", "one-by-one"])
@pytest.mark.parametrize("name", DECIDERS)
async def test_a_decider_quarantines_a_record_it_cannot_handle(name: str, batch_appends: bool) -> None:
    store, bus = await log_with_w1(), MemoryBus({"events": 1, "dlq": 1})
    handler = DeciderHandler(name, Decider(name, policy_set(PROFILE)), store)
    await handler.start()
    loop = await run(name, handler, store, bus, "events", MALFORMED, NEXT, batch_appends=batch_appends)
    await assert_quarantined(name, loop, store, bus, MALFORMED, "ValidationError", "w1")


@pytest.mark.parametrize("batch_appends", [True, False], ids=["batched", "one-by-one"])
async def test_the_agent_quarantines_a_record_it_cannot_handle(batch_appends: bool) -> None:
    """Batched as the agent runs (`effects=True`), and one record at a time."""
    store, bus = await log_with_w1(), MemoryBus({"events": 1, "dlq": 1})
    core = AgentCore(TwinExecutor("smoke", 1, speed=60.0, wall0=0.0), store, PROFILE)
    loop = await run("agent", core, store, bus, "events", MALFORMED, NEXT, batch_appends=batch_appends,
                     effects=True)
    await assert_quarantined("agent", loop, store, bus, MALFORMED, "ValidationError", "w1")


async def test_the_decisions_forwarder_quarantines_a_record_it_cannot_publish() -> None:
    store, bus = await log_with_w1(), MemoryBus({"events": 1, "dlq": 1, "sextant.decisions": 1})

    class Broker:
        """The decisions topic refuses one record for good (a broker's message-size limit)."""

        async def publish(self, topic: str, key: bytes | None, value: bytes | None, headers: Any) -> Any:
            if ("ce_id", b"huge") in list(headers):
                raise ValueError("MessageSizeTooLargeError: the message is 2 MB")
            return await bus.publish(topic, key, value, headers)

    huge = raw("WorkloadStarted", {"at": 9.0, "workload_id": "w1", "allocation": {"assignments": []}}, "huge")
    following = raw("WorkloadCompleted", {"at": 10.0, "workload_id": "w1"}, "fine")
    handler = DecisionForwarder(Decider("admission", policy_set(PROFILE)), store, Broker())  # type: ignore[arg-type]
    loop = await run(DECISIONS_CONSUMER, handler, store, bus, "events", huge, following)
    await assert_quarantined(DECISIONS_CONSUMER, loop, store, bus, huge, "MessageSizeTooLargeError", "w1")
    assert [r.header("ce_id") for r in bus.records("sextant.decisions")] == ["fine"]


async def test_the_submissions_consumer_quarantines_a_record_it_cannot_handle() -> None:
    store, bus = await log_with_w1(), MemoryBus({"sextant.submissions": 1, "dlq": 1, "sextant.decisions": 1})

    class Gate:
        """The token registry fails on one token (a corrupt row), for good."""

        async def token_tenant(self, token: str | None) -> Tenant:
            if token == "sxt_corrupt":
                raise LookupError("tenancy row unreadable")
            return Tenant(name="t1", created_at=0.0)

        def limits_of(self, tenant: Tenant) -> Any:
            return type("Limits", (), {"max_active_workloads": None, "max_cores": None})()

    body = {"kind": "batch", "target": {"type": "completion_time", "seconds": 60},
            "spec": {"type": "twin", "ref": "w00000"}}
    poison = raw("SubmitWorkload", body, "sub-1", stream="submission")
    fine = raw("SubmitWorkload", body, "sub-2", stream="submission")
    source = HeaderCapture(bus.source(SUBMISSIONS_CONSUMER, ["sextant.submissions"]))
    handler = SubmissionHandler(Decider("admission", policy_set(PROFILE)), store, Gate(), bus, source)  # type: ignore[arg-type]
    loop = ConsumerLoop(name=SUBMISSIONS_CONSUMER, source=source, store=store, handler=handler, dead_letters=bus,
                        dead_letter_topic="dlq", retry=FAST, fetch_timeout=0.0)
    for env, token in ((poison, b"Bearer sxt_corrupt"), (fine, b"Bearer sxt_fine")):
        key, value, hdrs = env.to_kafka()
        await bus.publish("sextant.submissions", key, value, [*hdrs, ("authorization", token)])
    while await loop.run_once():
        pass
    await assert_quarantined(SUBMISSIONS_CONSUMER, loop, store, bus, poison, "tenancy row unreadable", None)
    assert sum(e.type == "WorkloadSubmitted" for e in await store.read_all()) == 2  # w1, then sub-2's
