"""The telemetry service's consumer of raw samples (`sextant.telemetry.samples`): a fetched batch
is never dropped, and no sample is a poison pill.

One round (`run_once`):

1. fetch a batch — only when everything fetched before is durable;
2. fold the log's tail (phases and targets) and sweep the final windows of completed workloads;
3. add each sample to its window (`handlers.Aggregator`): an undecodable sample is dead-lettered
   (`bad-sample`); a sample whose handling raises is quarantined (`sextant_kit.quarantine`:
   `RecordQuarantined` naming it, tracked under its id, its workload failed; dead letter
   `quarantined`);
4. append every closed window (tracked under the window's id) and every quarantine, in order;
5. commit the batch's offsets.

A step that fails (PostgreSQL or Kafka unavailable) raises to the caller, which waits and calls
again: what step 3 produced stays due, and the batch's records stay pending, so the next round
resumes where this one stopped instead of fetching past them (Kafka's consumer position moved at
the fetch; the offsets are committed only after step 4).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ValidationError
from sextant_contracts import codec
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_contracts.model import RawSample
from sextant_contracts.topics import DEAD_LETTERS
from sextant_kit.ports import Publisher, Record, RecordSource, TrackingRecorder
from sextant_kit.quarantine import REASON, quarantine
from sextant_kit.runtime import DeciderHandler

from .handlers import Aggregator, phase_of

CONSUMER = "telemetry"


@dataclass
class Due:
    """Work produced from fetched records, not durable yet: appends (tracked under `key`) and dead
    letters, in order."""

    appends: list[tuple[str, list[Envelope]]] = field(default_factory=list)
    dead: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.appends or self.dead)


class SampleConsumer:
    def __init__(self, source: RecordSource, store: TrackingRecorder, publisher: Publisher, handler: DeciderHandler,
                 aggregator: Aggregator, *, clock: Callable[[], float] = time.time, max_records: int = 500,
                 fetch_timeout: float = 0.5) -> None:
        self.source = source
        self.store = store
        self.publisher = publisher
        self.handler = handler
        self.aggregator = aggregator
        self.clock = clock
        self.max_records = max_records
        self.fetch_timeout = fetch_timeout
        self.fetched: list[Record] | None = None  # fetched, not yet added to the windows
        self.due = Due()
        self.offsets: dict[tuple[str, int], int] = {}  # to commit once `due` is durable
        self.quarantined = 0

    async def run_once(self) -> int:
        """One round (module doc); returns how many records it fetched. Raises when a dependency
        is unavailable, keeping what is pending for the next call."""
        n = 0
        if self.fetched is None and not self.due and not self.offsets:
            self.fetched = await self.source.fetch(self.fetch_timeout, self.max_records)
            n = len(self.fetched)
        if self.fetched is not None:
            await self.handler.catch_up()  # cheap when nothing is new; needed by the final-window sweep
            decider = self.handler.decider
            self._windows(self.aggregator.finish(lambda wid: phase_of(decider, wid)))  # type: ignore[arg-type]
            for r in self.fetched:
                self._add(r)
                self.offsets[(r.topic, r.partition)] = r.offset + 1
            self.fetched = None
        await self._flush()
        if self.offsets:
            await self.source.commit(self.offsets)
            self.offsets = {}
        return n

    def _add(self, r: Record) -> None:
        try:
            sample = RawSample.model_validate(codec.loads(r.value or b""))
        except (ValidationError, ValueError) as exc:
            self.due.dead.append((r.key, r.value, [
                ("dlq_reason", b"bad-sample"), ("dlq_error", str(exc)[:500].encode()),
                ("dlq_consumer", CONSUMER.encode()), ("dlq_topic", r.topic.encode())]))
            return
        try:
            self._windows(self.aggregator.add(sample, phase_of(self.handler.decider, sample.workload_id)))  # type: ignore[arg-type]
        except Exception as exc:  # a poison sample: set aside, go on
            self.quarantined += 1
            env = quarantine(CONSUMER, sample.sample_id, "RawSample", sample.workload_id, exc, at=self.clock())
            self.due.appends.append((f"quarantine:{sample.sample_id}", [env]))
            self.due.dead.append((r.key, r.value, [
                ("dlq_reason", REASON.encode()), ("dlq_error", f"{type(exc).__name__}: {exc}"[:2000].encode()),
                ("dlq_consumer", CONSUMER.encode()), ("dlq_topic", r.topic.encode()),
                ("dlq_partition", str(r.partition).encode()), ("dlq_offset", str(r.offset).encode())]))

    def _windows(self, closed: list[tuple[str, list]]) -> None:  # type: ignore[type-arg]
        for window_id, events in closed:
            envs = [Envelope.wrap(e, id=derive_id("telemetry", window_id, i), source="telemetry",
                                  stream_version=0, time=self.clock(), correlation_id=e.stream)
                    for i, e in enumerate(events)]
            self.due.appends.append((window_id, envs))

    async def _flush(self) -> None:
        while self.due.appends:
            key, envs = self.due.appends[0]
            await self.store.append_and_track(CONSUMER, key, None, envs)
            self.due.appends.pop(0)
        while self.due.dead:
            rkey, value, headers = self.due.dead[0]
            await self.publisher.publish(DEAD_LETTERS.name, rkey, value, headers)
            self.due.dead.pop(0)
