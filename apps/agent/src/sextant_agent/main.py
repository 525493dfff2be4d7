"""`python -m sextant_agent.main`: the cluster agent process.

Two tasks share one executor (a single asyncio loop, so they never interleave inside it):

- **commands**: a consumer of the workload and server events (group `agent`). For each record it
  folds the log up to the head (in position order; every newly folded event is shown to the
  executor), runs the core's process manager for agent commands, executes them, and returns the
  facts they produced — appended with the tracking row in one transaction, so a redelivered
  record after a crash never starts a workload twice (a reactor: replay never re-runs it). One
  append per fetched batch (`AgentCore` is a `consumer.Staging` handler run with `effects=True`):
  a batch whose append fails is appended record by record as executed, never executed again; a
  crash before the batch's commit re-delivers the batch, as it did a record (`resume`, `_already_done`).
- **clock**: every `agent_step_s` lets the executor's time advance; the facts of each happening
  are appended tracked under the happening's key; raw samples go to `sextant.telemetry.samples`.

With `agent_recurring_runs`, a named workload's end is appended with its `RecurringRunObserved`
(`recurring.RunRecorder`: what the agent saw of the run, in the same append as the ending fact),
and every plan step (60 s of log time) a running instance of a template holding a reservation is
reported as a `RecurringInstanceObserved` (DRA's input): the clock observes the boundaries up to
each advance's time, and the observations of boundaries before a fact go ahead of it.
With `agent_kwiken_samples`, every window (60 s of log time) a running service with declared
stages is reported as a `StageLatenciesObserved` (`kwiken.StageSampler`: the twin's requests under
the plan in force), observed at the same boundaries in time order with the instances, and the
plan's reissues run on the service's servers as extra load (`TwinExecutor(reissue_load=...)`).

At start it registers the executor's servers (once: optimistic concurrency on each server stream),
appends the executor's offline profiling campaign when the profile's classifier learns from one
(once per model stream), and resumes what the log says should be running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from opentelemetry import trace
from sextant_contracts import codec
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_contracts.topics import SERVER_EVENTS, TELEMETRY_SAMPLES, WORKLOAD_EVENTS
from sextant_core.profiles import policy_set
from sextant_core.workflow import Decider
from sextant_kit.bootstrap import Runtime, serve, with_patience
from sextant_kit.consumer import ConsumerLoop, Outputs
from sextant_kit.errors import ConcurrencyError, FlushFirst, LogUnfoldable
from sextant_kit.ports import EventStore
from sextant_kit.runtime import read_ends
from sextant_kit.telemetry import EFFECTS_ATTRIBUTE, current_traceparent

from .executor import Executor
from .kwiken import StageSampler
from .recurring import RunRecorder
from .settings import Settings
from .twin import TwinExecutor

log = logging.getLogger(__name__)
READ_BATCH = 2000  # envelopes per catch-up read


class AgentCore:
    """The agent's view of the log plus its executor."""

    def __init__(self, executor: Executor, store: EventStore, profile: str,
                 recorder: RunRecorder | None = None, sampler: StageSampler | None = None) -> None:
        self.executor = executor
        self.recorder = recorder or RunRecorder(enabled=False)
        self.sampler = sampler or StageSampler(enabled=False)
        self.store = store
        self.decider = Decider("agent", policy_set(profile))
        # trace context of the command that set a workload's timers: its delayed facts (profiling
        # results, completions) continue that trace instead of starting new ones
        self.traces: dict[str, str] = {}
        self._staged = 0  # facts of the current batch not stored yet (consumer.Staging)

    async def catch_up(self) -> None:
        while True:
            batch = await self.store.read_all(self.decider.position, limit=READ_BATCH)
            if not batch:
                return
            for env in batch:
                try:
                    self.decider.fold([env])
                except Exception as exc:  # no record to blame: wait, never quarantine them all
                    log.error("agent: cannot fold the log at position %s: %r", env.position, exc)
                    raise LogUnfoldable(f"agent: folding position {env.position}: {exc!r}") from exc
                event = env.event()
                self.executor.observe(event, self.decider.state)
                wid = getattr(event, "workload_id", None)
                if wid is not None and env.traceparent:
                    # a restarted agent re-launches in-flight runs from the log (`resume`): their
                    # facts continue the trace of the workload's latest record, as they would have
                    self.traces[wid] = env.traceparent
            if read_ends(batch, READ_BATCH):  # the head its snapshot saw (runtime.read_ends)
                return

    def reacts(self, env: Envelope) -> bool:
        """False when no agent command can follow from `env` (the consumer loop opens no span for
        it, nor a tracking row; it is still handled: folded, and decided on without effect)."""
        return self.decider.reacts(env)

    async def handle(self, env: Envelope) -> Outputs:
        if env.position is None or env.position > self.decider.position:
            if self._staged:  # the log must hold the batch's facts before it is read: store them first
                raise FlushFirst(env.id)
            await self.catch_up()
        facts: list[ev.Event] = []
        commands = self.decider.handle(env).agent_commands
        if commands:  # its facts may come later, in this span's trace: keep the span (telemetry.py)
            trace.get_current_span().set_attribute(EFFECTS_ATTRIBUTE, len(commands))
        for c in commands:
            tp = current_traceparent()
            if tp:
                self.traces[c.workload_id] = tp
            now = time.time()
            facts.extend(self._due(now, inclusive=False))
            self.recorder.command(c, now)
            done = self.executor.execute(c, self.decider.state, now)
            facts.extend(self.recorder.report(done, self.decider.state))
        return Outputs(items=facts)

    # --- consumer.Staging: one append per fetched batch ------------------------------------------
    # The consumer loop runs with `effects=True`: a record is handled once per delivery (its runs
    # start once) and a batch that is not stored is appended record by record as decided. The
    # facts are not folded when staged — the one-by-one loop folds them at the next catch-up
    # too — but a record that needs a catch-up while facts are staged ends the batch
    # (`FlushFirst`): it is decided on the log holding them, as one record at a time would be.

    async def __call__(self, env: Envelope) -> Outputs:
        return await self.handle(env)

    def begin_batch(self, upto: int = 0) -> None:
        self._staged = 0  # reads lazily, as one record at a time does (`upto` unused)

    def stage(self, outputs: Sequence[Envelope]) -> None:
        self._staged += len(outputs)

    def end_batch(self, stored: bool) -> None:
        self._staged = 0

    def with_runs(self, facts: list[ev.Event]) -> list[ev.Event]:
        """`facts` reported by the executor, preceded by the recurring instances and Kwiken windows
        observed before them and followed by the recurring runs they end (`RunRecorder.report`)."""
        due = self._due(facts[0].at, inclusive=False) if facts else []
        return due + self.recorder.report(facts, self.decider.state)

    def instances(self, until: float) -> list[ev.Event]:
        """The recurring instances and Kwiken windows observed at the boundaries up to `until`."""
        return self._due(until, inclusive=True)

    def _due(self, until: float, *, inclusive: bool) -> list[ev.Event]:
        """The observations of the boundaries up to `until`, in time order (a stable merge)."""
        state = self.decider.state
        due: list[ev.Event] = [*self.recorder.instances(until, state, inclusive=inclusive),
                               *self.sampler.windows(until, state, inclusive=inclusive)]
        return sorted(due, key=lambda e: e.at)


def envelopes(facts: Sequence[ev.Event], key: str, traces: dict[str, str] | None = None) -> list[Envelope]:
    now = time.time()
    return [Envelope.wrap(f, id=derive_id("agent", key, i), source="agent", stream_version=0, time=now,
                          correlation_id=f.stream,
                          traceparent=(traces or {}).get(getattr(f, "workload_id", ""), None))
            for i, f in enumerate(facts)]


async def register_servers(store: EventStore, executor: Executor) -> int:
    n = 0
    for s in executor.servers():
        env = Envelope.wrap(s, id=derive_id("register", s.server_id), source="agent", stream_version=1,
                            time=time.time())
        try:
            await store.append(s.stream, 0, [env])
            n += 1
        except ConcurrencyError:
            pass  # registered by an earlier start
    return n


async def seed_knowledge(store: EventStore, executor: Executor, profile: str) -> int:
    """Append the executor's offline campaign once: each model stream gets its seeds in one append
    at version 0, so a restarted agent (or a second one) adds nothing."""
    by_stream: dict[str, list[ev.KnowledgeSeeded]] = {}
    for e in executor.knowledge(profile):
        by_stream.setdefault(e.stream, []).append(e)
    n = 0
    for stream, seeds in sorted(by_stream.items()):
        envs = [Envelope.wrap(e, id=derive_id("seed", stream, e.row_id), source="agent", stream_version=i + 1,
                              time=time.time()) for i, e in enumerate(seeds)]
        try:
            await store.append(stream, 0, envs)
            n += len(envs)
        except ConcurrencyError:
            pass  # seeded by an earlier start
    return n


def main() -> None:
    settings = Settings()  # type: ignore[call-arg]
    wall0 = time.time()
    executor = TwinExecutor(settings.agent_scenario, settings.agent_seed, speed=settings.agent_speed,
                            wall0=wall0, inject_failures=settings.agent_inject_failures,
                            reissue_load=settings.agent_kwiken_samples)

    async def agent(rt: Runtime, stop: asyncio.Event) -> None:
        core = AgentCore(executor, rt.store, settings.policy_profile,
                         RunRecorder(enabled=settings.agent_recurring_runs),
                         StageSampler(enabled=settings.agent_kwiken_samples))

        async def start() -> None:
            await register_servers(rt.store, executor)
            await seed_knowledge(rt.store, executor, settings.policy_profile)
            await core.catch_up()
            facts = core.with_runs(executor.resume(core.decider.state, time.time()))
            if facts:
                await rt.store.append_and_track("agent-clock", derive_id("resume", wall0), None,
                                                envelopes(facts, f"resume:{wall0}"))

        await with_patience("agent: event store", start, 0.5, 5.0, stop)
        source = rt.source("agent", [WORKLOAD_EVENTS.name, SERVER_EVENTS.name])
        await with_patience("agent: kafka", source.start, 0.5, 5.0, stop)
        # a record it ignores starts nothing: re-handling a redelivered one is harmless, no tracking row;
        # one append per fetched batch, and a record's runs start once (effects: never decided again)
        loop = ConsumerLoop(name="agent", source=source, store=rt.store, handler=core, reacts=core.reacts,
                            dead_letters=rt.publisher, tracer=rt.telemetry.tracer("agent"), track_ignored=False,
                            batch_appends=True, effects=True)
        rt.consumers["agent"] = loop
        await asyncio.gather(loop.run(stop), clock(rt, core, stop))

    async def clock(rt: Runtime, core: AgentCore, stop: asyncio.Event) -> None:
        # what the executor reported but is not durable yet: kept across outages, in order
        facts_due: list[tuple[str, list[ev.Event]]] = []
        samples_due: list[tuple[str, bytes | None, bytes | None, list[tuple[str, bytes]]]] = []
        while not stop.is_set():
            wall = time.time()
            happenings, samples = executor.advance(core.decider.state, wall)
            facts_due.extend((key, core.with_runs(facts)) for key, facts in happenings)
            observed = core.instances(wall)
            if observed:  # keyed by its last boundary: observed once
                facts_due.append((f"instances:{observed[-1].at:.0f}", observed))
            samples_due.extend((TELEMETRY_SAMPLES.name, s.workload_id.encode(), codec.dumpb(s), [])
                               for s in samples)
            try:
                while facts_due:
                    key, facts = facts_due[0]
                    await rt.store.append_and_track("agent-clock", f"{wall0}:{key}", None,
                                                    envelopes(facts, f"{wall0}:{key}", core.traces))
                    facts_due.pop(0)
                if samples_due:
                    await rt.publisher.publish_many(samples_due)
                    samples_due = []
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("agent clock: %r; retrying", exc)
                await asyncio.sleep(0.5)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=settings.agent_step_s)

    agent.__name__ = "agent"
    asyncio.run(serve(settings, [agent]))


if __name__ == "__main__":
    main()
