"""The consumer loop's batched appends (`batch_appends=True`): one `append_and_track_many` per
fetched batch, decided on staged outputs, with the one-by-one path's outcomes — in memory, no I/O.

The decider below makes every decision depend on the state it saw (the number of outputs folded
so far is in each output's id): a record decided on a state missing an earlier record's outputs
would leave a different log than the one-by-one loop does."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import WorkloadCompleted
from sextant_kit.bus import MemoryBus
from sextant_kit.consumer import ConsumerLoop, RetryPolicy
from sextant_kit.errors import PoisonMessage
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.runtime import DeciderHandler
from sextant_kit.testing.envelopes import make_envelope

FAST = RetryPolicy(handler_attempts=2, initial_backoff=0.0, max_backoff=0.0)


@dataclass(frozen=True)
class CountState:
    position: int = 0
    outputs: int = 0


class CountDecider:
    """Reacts to each Tick with one WorkloadCompleted whose id counts the outputs folded so far."""

    def __init__(self, poison: set[int] | None = None) -> None:
        self.state = CountState()
        self.poison = poison or set()

    @property
    def position(self) -> int:
        return self.state.position

    def fold(self, envelopes: Any) -> None:
        st = self.state
        for env in envelopes:
            if env.position is None or env.position <= st.position:
                continue
            st = CountState(env.position, st.outputs + (env.type == "WorkloadCompleted"))
        self.state = st

    def reacts(self, env: Envelope) -> bool:
        return env.type == "Tick"

    def handle(self, env: Envelope) -> Any:
        if env.payload["n"] in self.poison:
            raise PoisonMessage("poison")
        return SimpleNamespace(events=[WorkloadCompleted(workload_id=f"w{env.payload['n']}-after-{self.state.outputs}",
                                                         at=1.0)])

    def snapshot(self) -> bytes:
        return pickle.dumps(self.state)

    def restore(self, blob: bytes) -> None:
        self.state = pickle.loads(blob)


class CountingStore(MemoryEventStore):
    """The memory store, counting appends (and able to fail the next batched ones)."""

    def __init__(self) -> None:
        super().__init__(topic_of=lambda s: None)
        self.single = self.many = 0
        self.lookups: list[list[str]] = []  # the event ids of each tracked_ids query
        self.before_many: Any = None

    async def tracked_ids(self, consumer: str, event_ids: Any) -> set[str]:
        self.lookups.append(list(event_ids))
        return await super().tracked_ids(consumer, event_ids)

    async def append_and_track(self, *args: Any, **kw: Any) -> Any:
        self.single += 1
        return await super().append_and_track(*args, **kw)

    async def append_and_track_many(self, *args: Any, **kw: Any) -> Any:
        self.many += 1
        if self.before_many is not None:
            await self.before_many()
        return await super().append_and_track_many(*args, **kw)


class World:
    def __init__(self, n: int, *, poison: set[int] | None = None) -> None:
        self.bus = MemoryBus({"in": 1, "dlq": 1})
        self.store = CountingStore()
        self.n = n
        self.poison = poison

    async def publish_inputs(self) -> list[Envelope]:
        stored = [(await self.store.append(f"clock-{i}", 0, [make_envelope(f"clock-{i}", 1, i)]))[0]
                  for i in range(self.n)]
        for env in stored:
            await self.bus.publish("in", *env.to_kafka())
        return stored

    def loop(self, *, batch: bool, hook: Any = None) -> ConsumerLoop:
        handler = DeciderHandler("svc", CountDecider(self.poison), self.store)
        return ConsumerLoop(name="svc", source=self.bus.source("svc", ["in"]), store=self.store, handler=handler,
                            reacts=handler.reacts, dead_letters=self.bus, dead_letter_topic="dlq", retry=FAST,
                            fetch_timeout=0.0, clock=lambda: 42.0, track_empty=False, batch_appends=batch,
                            hook=hook)

    async def drain(self, loop: ConsumerLoop) -> None:
        while await loop.run_once():
            pass

    async def log(self) -> list[tuple[Any, ...]]:
        return [(e.position, e.id, e.type, e.payload.get("workload_id"), e.causation_id)
                for e in await self.store.read_all(0, 10_000)]


async def reference_log(n: int, poison: set[int] | None = None) -> list[tuple[Any, ...]]:
    w = World(n, poison=poison)
    await w.publish_inputs()
    await w.drain(w.loop(batch=False))
    return await w.log()


async def test_one_append_per_batch_and_the_same_log_as_one_by_one() -> None:
    w = World(20)
    await w.publish_inputs()
    loop = w.loop(batch=True)
    await w.drain(loop)
    assert await w.log() == await reference_log(20)
    assert (w.store.many, w.store.single) == (1, 0)
    assert loop.stats.processed == 20 and loop.stats.batches == 1 and loop.stats.batch_fallbacks == 0
    outs = [r for r in await w.log() if r[2] == "WorkloadCompleted"]
    assert [r[3] for r in outs] == [f"w{i}-after-{i}" for i in range(20)]  # each saw the ones before


async def test_a_duplicate_within_a_batch_is_decided_once() -> None:
    w = World(3)
    stored = await w.publish_inputs()
    await w.bus.publish("in", *stored[1].to_kafka())  # a relay duplicate: same event, new offset
    loop = w.loop(batch=True)
    await w.drain(loop)
    assert await w.log() == await reference_log(3)
    assert loop.stats.processed == 3 and loop.stats.skipped == 1 and w.store.many == 1


@pytest.mark.parametrize("stage", ["handled", "stored"])
async def test_a_crash_mid_batch_replays_it_and_every_output_lands_once(stage: str) -> None:
    """Killed after the 5th record was decided (nothing stored) or after the batch was stored
    (offsets not committed): a new process re-consumes the batch; the log is the uninterrupted one."""
    w = World(10)
    await w.publish_inputs()

    class Crash(Exception):
        pass

    def hook(s: str, record: Any, handled: int) -> None:
        if s == stage and record.offset == 4:
            raise Crash

    with pytest.raises(Crash):
        await w.loop(batch=True, hook=hook).run_once()
    written = len([r for r in await w.log() if r[2] == "WorkloadCompleted"])
    assert written == (0 if stage == "handled" else 10)
    again = w.loop(batch=True)  # the restarted process: a fresh decider, the same store and group
    await w.drain(again)
    assert await w.log() == await reference_log(10)
    assert again.stats.skipped == (0 if stage == "handled" else 10)


async def test_a_poison_record_is_dead_lettered_alone() -> None:
    w = World(6, poison={2})
    await w.publish_inputs()
    loop = w.loop(batch=True)
    await w.drain(loop)
    assert await w.log() == await reference_log(6, poison={2})
    (dead,) = w.bus.records("dlq")
    assert dead.header("dlq_reason") == "poison" and dead.offset == 0 and dead.header("dlq_offset") == "2"
    assert loop.stats.processed == 5 and loop.stats.dead_lettered == 1
    assert (w.store.many, w.store.single) == (2, 0)  # records 0-1 in one append, 3-5 in another


async def drain_with_intruder(w: World, intrude: Any) -> tuple[ConsumerLoop, list[tuple[Any, ...]],
                                                                 list[tuple[Any, ...]]]:
    """Drains the four inputs batched while `intrude` writes before batch appends; every output
    lands, in input order."""
    w.store.before_many = intrude
    loop = w.loop(batch=True)
    await w.drain(loop)
    log = await w.log()
    outs = [r for r in log if r[2] == "WorkloadCompleted"]
    assert [r[3] for r in outs] == [f"w{i}-after-{i}" for i in range(4)]
    return loop, log, outs


async def test_a_batch_refused_because_the_head_moved_is_decided_again_on_the_new_head() -> None:
    """Another writer appends under the batch: its append is refused (head moved), the decider's
    staged state is dropped, and the records are decided again — as batches of at most half as
    many, after a catch-up — on the real log, each once."""
    w = World(4)
    await w.publish_inputs()
    intruder = make_envelope("clock-x", 1, 99)

    async def intrude() -> None:
        w.store.before_many = None
        await w.store.append("clock-x", 0, [intruder])

    loop, log, outs = await drain_with_intruder(w, intrude)
    assert [r[1] for r in log].index(intruder.id) < [r[1] for r in log].index(outs[0][1])
    assert loop.stats.batch_fallbacks == 1 and loop.stats.batches == 2 and loop.stats.processed == 4
    assert (w.store.many, w.store.single) == (3, 0)  # the refused one, then two halves
    assert loop.stats.head_retries == 1  # the second batch caught up first: not refused again


async def test_a_head_that_keeps_moving_shrinks_the_batch_and_every_record_lands_once() -> None:
    """Refused three times in one fetch: the records are decided again as batches of at most half
    as many each time (4, 2, 1, then 1 stored), the size doubling back once stored: same log."""
    w = World(4)
    await w.publish_inputs()
    intruders = [make_envelope(f"clock-x{k}", 1, 90 + k) for k in range(3)]
    sizes: list[int] = []
    many = w.store.append_and_track_many

    async def sized(consumer: str, inputs: Any, **kw: Any) -> Any:
        sizes.append(len(inputs))
        return await many(consumer, inputs, **kw)

    w.store.append_and_track_many = sized  # type: ignore[method-assign]

    async def intrude() -> None:
        env = intruders[w.store.many - 1]
        if w.store.many == len(intruders):
            w.store.before_many = None
        await w.store.append(env.stream, 0, [env])

    loop, log, outs = await drain_with_intruder(w, intrude)
    assert max(r[0] for r in log if r[1].startswith("clock-x")) < min(r[0] for r in outs)
    assert sizes == [4, 2, 1, 1, 2, 1]  # refused, refused, refused, then stored: 1, 2, the last one
    assert loop.stats.batch_fallbacks == len(intruders) and loop.stats.batches == 3
    assert w.store.single == 0 and loop.stats.processed == 4 and loop.stats.head_retries == len(intruders)


async def planning_log(batch: bool) -> tuple[list[tuple[Any, ...]], ConsumerLoop]:
    """Planning (the core's decider, `sextant-adaptive`) places three admitted workloads (it sizes
    each at its requested two cores here) on one 4-core server, all three records in one fetched batch."""
    from sextant_contracts import events as ev
    from sextant_core.profiles import policy_set
    from sextant_core.testing.builders import record, server, submitted
    from sextant_core.workflow import Decider

    store = CountingStore()
    setup: list[ev.Event] = [server("s0", cores=4)]  # room for two of the three 2-core sizings
    for w in ("w1", "w2", "w3"):
        setup += [submitted(w, cores=2, memory_gb=1.0, fast_path=True),
                  ev.WorkloadClassified(at=2.0, workload_id=w, decision=record(1))]
    await store.append_and_track("edge", "setup", None, [
        Envelope.wrap(e, id=f"setup-{i}", source="edge", stream_version=0, time=e.at) for i, e in enumerate(setup)])
    admitted = [Envelope.wrap(ev.WorkloadAdmitted(at=3.0, workload_id=w, decision=record(2), arq_class=0),
                              id=f"admit-{w}", source="admission", stream_version=0, time=3.0)
                for w in ("w1", "w2", "w3")]
    bus = MemoryBus({"in": 1, "dlq": 1})
    for env in admitted:
        (stored,) = await store.append(env.stream, None, [env])
        await bus.publish("in", *stored.to_kafka())
    handler = DeciderHandler("planning", Decider("planning", policy_set("sextant-adaptive")), store)
    await handler.start()
    loop = ConsumerLoop(name="planning", source=bus.source("planning", ["in"]), store=store, handler=handler,
                        reacts=handler.reacts, dead_letters=bus, dead_letter_topic="dlq", retry=FAST,
                        fetch_timeout=0.0, clock=lambda: 42.0, track_empty=False, batch_appends=batch)
    while await loop.run_once():
        pass
    return [(e.position, e.id, e.type, e.payload) for e in await store.read_all(0, 10_000)], loop


async def test_the_core_planner_decides_a_batch_as_it_decides_one_record_at_a_time() -> None:
    """No double booking: the second and third placements are decided on a state holding the
    first's (staged) allocation; the log is byte for byte the one-by-one loop's."""
    batched, loop = await planning_log(batch=True)
    one_by_one, _ = await planning_log(batch=False)
    assert batched == one_by_one
    placed = [p for _, _, t, p in batched if t == "PlacementDecided"]
    deferred = [p for _, _, t, p in batched if t == "PlacementDeferred"]
    assert len(placed) == 2 and len(deferred) == 1
    assert sum(a["cores"] for p in placed for a in p["allocation"]["assignments"]) <= 4
    assert loop.stats.batches == 1 and loop.stats.head_retries == 0


async def test_a_decider_shared_with_another_task_only_ever_holds_a_prefix_of_the_log() -> None:
    """Admission's API and front door fold the decider its consumer uses: a batch stages on a
    copy, so another task catching the shared decider up under the batch (while its append is in
    flight) folds the real log, not staged outputs that are not in it."""
    w = World(4)
    await w.publish_inputs()
    loop = w.loop(batch=True)
    handler = loop._handler
    assert isinstance(handler, DeciderHandler)
    shared = handler.decider
    seen: list[CountState] = []

    def prefix(log: list[Envelope], upto: int) -> CountState:
        d = CountDecider()
        d.fold(e for e in log if e.position is not None and e.position <= upto)
        return d.state

    async def other_task() -> None:  # under the batch's append: someone appends, the API catches up
        w.store.before_many = None
        await w.store.append("clock-x", 0, [make_envelope("clock-x", 1, 99)])
        await DeciderHandler("api", shared, w.store).catch_up()
        seen.append(shared.state)
        assert shared.state == prefix(await w.store.read_all(0, 10_000), shared.position)

    w.store.before_many = other_task
    await w.drain(loop)
    assert seen and handler.decider is shared
    log = await w.store.read_all(0, 10_000)
    assert shared.state == prefix(log, shared.position)
    assert [r[3] for r in await w.log() if r[2] == "WorkloadCompleted"] == [f"w{i}-after-{i}" for i in range(4)]


async def test_a_failed_batch_leaves_one_handling_per_record_in_the_traces_and_logs_carry_them(
        caplog: pytest.LogCaptureFixture) -> None:
    """A batch whose append was refused is decided again: each record's trace holds the handling
    that stored its outputs, not the abandoned batched one too; a stored batch's log lines carry
    each record's own trace id."""
    import logging

    from opentelemetry.trace import SpanKind
    from sextant_kit.logs import TraceIds
    from sextant_kit.telemetry import OUTPUTS_ATTRIBUTE, TelemetryConfig, setup_tracing

    tel = setup_tracing(TelemetryConfig("svc", exporter="memory", set_global=False))
    assert tel.memory is not None
    caplog.handler.addFilter(TraceIds())
    caplog.set_level(logging.INFO, logger="sextant_kit.consumer")

    async def run(fail: bool) -> list[Any]:
        tel.memory.clear()
        w = World(4)
        await w.publish_inputs()
        if fail:
            async def intrude() -> None:
                w.store.before_many = None
                await w.store.append("clock-x", 0, [make_envelope("clock-x", 1, 99)])
            w.store.before_many = intrude
        loop = w.loop(batch=True)
        loop._tracer = tel.tracer()
        await w.drain(loop)
        assert loop.stats.batch_fallbacks == int(fail) and loop.stats.processed == 4
        return [s for s in tel.memory.get_finished_spans() if s.kind == SpanKind.CONSUMER]

    for fail in (True, False):
        caplog.clear()
        spans = await run(fail)
        assert sorted(s.attributes["messaging.kafka.offset"] for s in spans) == [0, 1, 2, 3]
        assert all(s.attributes[OUTPUTS_ATTRIBUTE] == 1 for s in spans)
        assert all(s.attributes.get("sextant.batched") for s in spans)  # the batch decided again
        decided = [r for r in caplog.records if "-> WorkloadCompleted" in r.getMessage()]
        assert len(decided) == 4
        assert {r.trace_ids.split()[0] for r in decided} == {f"trace_id={s.context.trace_id:032x}" for s in spans}


async def test_only_records_the_decider_reacts_to_are_looked_up_in_the_tracking_table() -> None:
    """A record the decider ignores is never tracked (`track_empty=False`): a fetch of only such
    records makes no tracking query, and a mixed one asks about the others alone; a redelivered
    record the decider reacts to is still skipped."""
    w = World(3)
    stored = await w.publish_inputs()
    ignored = [(await w.store.append(f"workload-x{i}", None, [Envelope.wrap(
        WorkloadCompleted(workload_id=f"x{i}", at=1.0), id=f"done-{i}", source="t", stream_version=1, time=1.0)]))[0]
        for i in range(2)]
    for env in ignored:
        await w.bus.publish("in", *env.to_kafka())
    loop = w.loop(batch=True)
    await w.drain(loop)
    assert w.store.lookups == [[e.id for e in stored]]
    for env in ignored:  # a fetch of ignored records only
        await w.bus.publish("in", *env.to_kafka())
    await w.drain(loop)
    assert len(w.store.lookups) == 1
    await w.bus.publish("in", *stored[0].to_kafka())  # a redelivery
    await w.drain(loop)
    assert w.store.lookups[1:] == [[stored[0].id]] and loop.stats.skipped == 1
    outs = [r for r in await w.log() if r[2] == "WorkloadCompleted" and r[4] is not None]
    assert [r[3] for r in outs] == [f"w{i}-after-{i + 2}" for i in range(3)]  # the 2 ignored counted


@pytest.mark.parametrize("track_ignored", [True, False])
async def test_track_ignored_false_leaves_no_tracking_row_for_a_record_the_handler_ignores(track_ignored: bool) -> None:
    """The agent's setting: empty outputs are tracked (a reaction's effect must not run twice),
    but not for the records `reacts` says it ignores — one write less for each of them."""
    w = World(2)
    stored = await w.publish_inputs()
    ignored = (await w.store.append("workload-x", None, [Envelope.wrap(
        WorkloadCompleted(workload_id="x", at=1.0), id="done-x", source="t", stream_version=1, time=1.0)]))[0]
    await w.bus.publish("in", *ignored.to_kafka())
    seen: list[str] = []

    async def handler(env: Envelope) -> list[Any]:
        seen.append(env.id)
        return []  # an effect without outputs, or nothing at all

    loop = ConsumerLoop(name="agent", source=w.bus.source("agent", ["in"]), store=w.store, handler=handler,
                        reacts=lambda env: env.type == "Tick", dead_letters=w.bus, dead_letter_topic="dlq",
                        retry=FAST, fetch_timeout=0.0, track_ignored=track_ignored)
    await w.drain(loop)
    assert seen == [*(e.id for e in stored), ignored.id]
    assert await w.store.tracked_count("agent") == (3 if track_ignored else 2)
    assert w.store.lookups == [[*(e.id for e in stored), *([ignored.id] if track_ignored else [])]]
    for env in [*stored, ignored]:  # redelivered: the tracked reactions are skipped, the ignored one handled
        await w.bus.publish("in", *env.to_kafka())
    await w.drain(loop)
    assert seen[3:] == ([] if track_ignored else [ignored.id]) and loop.stats.skipped == (3 if track_ignored else 2)


class EffectsHandler:
    """An agent-like handler (`effects=True`): each reaction has an effect (a run started, counted
    per event id) and returns one unpinned fact; it stages without folding, and a record past what
    it read while facts are staged asks for a flush first (`FlushFirst`), like `AgentCore`."""

    def __init__(self, store: CountingStore) -> None:
        self.store = store
        self.effects: dict[str, int] = {}
        self.position = 0
        self.staged = 0
        self.read_at: list[int] = []  # the log head each catch-up saw

    async def __call__(self, env: Envelope) -> list[Any]:
        from sextant_kit.errors import FlushFirst

        if env.position is None or env.position > self.position:
            if self.staged:
                raise FlushFirst(env.id)
            log = await self.store.read_all(self.position, 10_000)
            self.position = max([self.position, *(e.position or 0 for e in log)])
            self.read_at.append(self.position)
        self.effects[env.id] = self.effects.get(env.id, 0) + 1
        return [WorkloadCompleted(workload_id=f"w{env.payload['n']}", at=1.0)]

    def begin_batch(self, upto: int = 0) -> None:
        self.staged = 0

    def stage(self, outputs: Any) -> None:
        self.staged += len(outputs)

    def end_batch(self, stored: bool) -> None:
        self.staged = 0


def effects_loop(w: World, handler: Any, *, batch: bool, effects: bool = True) -> ConsumerLoop:
    return ConsumerLoop(name="agent", source=w.bus.source("agent", ["in"]), store=w.store, handler=handler,
                        dead_letters=w.bus, dead_letter_topic="dlq", retry=FAST, fetch_timeout=0.0,
                        clock=lambda: 42.0, batch_appends=batch, effects=effects)


async def failing_batch_world(n: int) -> World:
    """`n` inputs published; the first batched append fails (any error but a moved head)."""
    w = World(n)
    await w.publish_inputs()

    async def fail() -> None:
        w.store.before_many = None
        raise RuntimeError("the batch's append fails")

    w.store.before_many = fail
    return w


async def effects_log(w: World) -> list[tuple[Any, ...]]:
    return [r for r in await w.log() if r[2] == "WorkloadCompleted"]


async def test_a_handler_with_effects_is_batched_and_each_reaction_runs_once() -> None:
    """The agent's loop: one append for the fetch, each record's effect once, the same facts as
    one record at a time."""
    ref = World(5)
    await ref.publish_inputs()
    await ref.drain(effects_loop(ref, EffectsHandler(ref.store), batch=False))
    w = World(5)
    await w.publish_inputs()
    h = EffectsHandler(w.store)
    loop = effects_loop(w, h, batch=True)
    await w.drain(loop)
    assert await effects_log(w) == await effects_log(ref)
    assert (w.store.many, w.store.single) == (1, 0) and loop.stats.batches == 1
    assert set(h.effects.values()) == {1} and len(h.effects) == 5


@pytest.mark.parametrize("effects", [True, False])
async def test_a_failed_batch_of_a_handler_with_effects_is_stored_as_decided_never_decided_again(
        effects: bool) -> None:
    """The batch's append fails (not a moved head: the agent pins none): with `effects=True` every
    record's fact is appended one record at a time as decided — each effect ran once; without it,
    the one-by-one path runs every handling again (what the agent must never do)."""
    w = await failing_batch_world(4)
    h = EffectsHandler(w.store)
    loop = effects_loop(w, h, batch=True, effects=effects)
    await w.drain(loop)
    outs = await effects_log(w)
    assert [r[3] for r in outs] == [f"w{i}" for i in range(4)]  # each once, in input order
    assert (w.store.many, w.store.single) == (1, 4)
    assert set(h.effects.values()) == ({1} if effects else {2})
    assert loop.stats.batch_fallbacks == 1 and loop.stats.processed == 4 and loop.stats.skipped == 0
    assert await w.store.tracked_count("agent") == 4


async def test_a_failed_batch_of_a_handler_with_effects_keeps_one_handling_span_per_record() -> None:
    """The record's batched span is the one its outputs are stored in (the facts carry it)."""
    from opentelemetry.trace import SpanKind
    from sextant_kit.telemetry import OUTPUTS_ATTRIBUTE, TelemetryConfig, setup_tracing, trace_id_of

    tel = setup_tracing(TelemetryConfig("agent", exporter="memory", set_global=False))
    assert tel.memory is not None
    w = await failing_batch_world(3)
    loop = effects_loop(w, EffectsHandler(w.store), batch=True)
    loop._tracer = tel.tracer()
    await w.drain(loop)
    spans = [s for s in tel.memory.get_finished_spans() if s.kind == SpanKind.CONSUMER]
    assert sorted(s.attributes["messaging.kafka.offset"] for s in spans) == [0, 1, 2]
    assert all(s.attributes[OUTPUTS_ATTRIBUTE] == 1 and s.attributes.get("sextant.batched") for s in spans)
    facts = [e for e in await w.store.read_all(0, 10_000) if e.type == "WorkloadCompleted"]
    assert {f"{s.context.span_id:016x}" for s in spans} == {e.traceparent.split("-")[2] for e in facts}
    assert {trace_id_of(e.traceparent) for e in facts} == {f"{s.context.trace_id:032x}" for s in spans}


async def test_a_handler_with_effects_reads_the_log_holding_the_staged_facts() -> None:
    """A record past what the handler read, while facts are staged: the batch is stored first
    (`FlushFirst`), so its catch-up sees them — as it would one record at a time."""
    w = World(2)
    stored = await w.publish_inputs()
    h = EffectsHandler(w.store)
    loop = effects_loop(w, h, batch=True)
    await w.drain(loop)
    assert h.read_at == [stored[-1].position]
    later = [(await w.store.append(f"clock-{i}", 0, [make_envelope(f"clock-{i}", 1, i)]))[0] for i in (5, 6)]
    # the second arrives past the handler's position only once the first's fact is written
    await w.bus.publish("in", *later[0].to_kafka())
    await w.bus.publish("in", *later[1].to_kafka())
    head = (await w.store.read_all(0, 10_000))[-1].position
    h.position = later[0].position  # the first needs no catch-up, the second does
    await w.drain(loop)
    assert (w.store.many, w.store.single) == (3, 0)  # flushed before the second record's catch-up
    assert h.read_at[-1] == head + 1  # it saw the first's fact
    assert set(h.effects.values()) == {1}


async def test_a_batch_whose_records_prove_the_head_moved_catches_up_before_its_first_decision() -> None:
    """The decider already folded past the fetch's first records (read while deciding earlier
    ones) but not its last: the log's head is at least the last one's position, so outputs pinned
    to the decider's position would be refused for certain. The batch catches up first: one
    append, never refused (before: refused, then the whole batch decided again)."""
    w = World(4)
    stored = await w.publish_inputs()  # inputs 0-3 in the log, all four on the bus
    source = w.bus.source("svc", ["in"])
    first = await source.fetch(0.0, 2)  # inputs 0 and 1 alone in the first fetch
    await source.commit({(r.topic, r.partition): r.offset + 1 for r in first})
    loop = w.loop(batch=True)
    loop._source = source
    handler = loop._handler
    assert isinstance(handler, DeciderHandler)
    await handler.catch_up()  # as if deciding inputs 0 and 1 had read the log up to input 3
    assert handler.decider.position == stored[3].position
    late = (await w.store.append("clock-9", 0, [make_envelope("clock-9", 1, 9)]))[0]
    await w.bus.publish("in", *late.to_kafka())
    await loop.run_once()  # inputs 2, 3 (folded by the first catch-up) and 9 (past it)
    assert w.store.many == 1 and loop.stats.head_retries == 0 and loop.stats.processed == 3
    assert handler.decider.position > late.position
    outs = [r for r in await w.log() if r[2] == "WorkloadCompleted"]
    assert [r[3] for r in outs] == ["w2-after-0", "w3-after-1", "w9-after-2"]
    assert [r[4] for r in outs] == [stored[2].id, stored[3].id, late.id]


async def test_one_record_at_a_time_a_decision_after_stored_outputs_catches_up_first() -> None:
    """The one-by-one loop: the outputs of a record moved the head past the decider's state; the
    next record (already folded by the first catch-up) is decided after a catch-up, so no append is
    refused — before, each record after the first was decided on the old state and refused once."""
    w = World(4)
    await w.publish_inputs()
    loop = w.loop(batch=False)
    await w.drain(loop)
    outs = [r for r in await w.log() if r[2] == "WorkloadCompleted"]
    assert [r[3] for r in outs] == [f"w{i}-after-{i}" for i in range(4)]
    assert (w.store.many, w.store.single) == (0, 4) and loop.stats.head_retries == 0
