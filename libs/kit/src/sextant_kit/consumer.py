"""The consumer loop: records in, effectively-once outputs out (DESIGN §4, STYLE examples 3–4).

Per record, in partition-offset order:

1. decode the CloudEvents envelope (`Envelope.from_kafka`) — undecodable → dead letter;
2. skip it if this consumer already tracked its event id (a redelivery, or a relay duplicate) —
   looked up for the whole batch in one query, plus the ids handled earlier in the batch
   (`append_and_track` still refuses an input another process tracked meanwhile); with
   records that are never tracked — with `track_empty=False` or `track_ignored=False`, those the
   handler ignores (`reacts`) — are not looked up, and a fetch of only such records makes no query;
3. run the handler inside a CONSUMER span that continues the record's `traceparent`; the handler
   returns the output events (`Sequence[Event | Envelope]`, or `Outputs` to pin stream versions);
4. `append_and_track(consumer, event id, position, outputs)`: outputs, tracking row and outbox rows
   in one transaction;
5. after the batch, make the batch's writes durable (`store.sync()`: one shared WAL flush instead of
   one per record) and commit the Kafka offsets of every record handled — always after the
   database commit, so a crash in between only causes a redelivery that step 2 skips.

**Batched appends** (`batch_appends=True`, a store with `append_and_track_many` — `BatchRecorder` —
and a handler with `begin_batch`/`stage`/`end_batch` — `Staging`, e.g. `runtime.DeciderHandler`):
steps 3–4 run for the whole fetched batch first — each record's handler decides on the state
plus the outputs *staged* for the records before it (numbered as they will be stored, right after
the head the first one pinned) — then ONE `append_and_track_many` writes every tracking row,
output and outbox row. A record the batch cannot take ends the batch: what was staged is
committed first; then a record past the staged state (`FlushFirst`: the log grew under the batch)
starts the next batch, which catches up before deciding it, and any other (undecodable, a handler
error, pinned stream versions, a head that does not follow the staged outputs) is handled one by
one as above, and batching goes on after it. A batch whose append fails is rolled back in the
handler (`end_batch(False)`); refused because the head moved, its records are decided again after
a catch-up as a batch of at most half as many records (down to one; the size doubles back after
each stored batch); any other failure (an input tracked meanwhile, a duplicate output, any error)
hands its records and the rest of the fetch to the one-record-at-a-time path — so a poison record
is still dead-lettered or quarantined alone, and every other record lands exactly once.
A crash before the batch's commit writes nothing: the redelivered batch is decided again.
A handler whose handling has **effects** beyond its outputs (`effects=True`: the agent, whose
reactions start runs) is never called twice for one delivery: when its batch's append fails, each
record's outputs as decided are appended one record at a time (`append_and_track`, inside the
record's span), and only a failure of that append calls the handler again, as the one-by-one path
does. Such a handler pins no head (nothing refuses its batch but a failure).

Failures never stop the loop:
- a **transient** error (`errors.is_transient`: database or broker unavailable) waits with capped
  exponential backoff and retries the same record, forever — no crash loop, no dropped record;
- a handler error (or a `ConcurrencyError` from the append) is retried up to
  `RetryPolicy.handler_attempts` times, then the record is **quarantined** (`quarantine.py`:
  `RecordQuarantined` appended and tracked under the record's id — its workload fails with reason
  `quarantined` — and the record dead-lettered with `dlq_reason=quarantined`);
- `PoisonMessage` from the handler, an undecodable record, or a `DuplicateEventError` is
  dead-lettered at once.

A dead letter is the original key, value and headers, published to the dead-letter topic with
headers `dlq_reason`, `dlq_error`, `dlq_consumer`, `dlq_topic`, `dlq_partition`, `dlq_offset`. Its
offset is committed like any handled record.

`reacts(envelope) -> bool` (a parameter; deciders pass their handler's `reacts`): False for a record
the handler ignores — it is still handled, but without a CONSUMER span, so a trace holds the work
done for it and not every service's look at every record (telemetry.py, sampling).

`track_empty=False` skips the tracking row when the handler produced nothing: for deciders whose
commands are re-checked against the state, re-handling a redelivered no-op is harmless, and most
events are no-ops for most services (one write saved per event per service). `track_ignored=False`
skips it only for the records `reacts` says the handler ignores (the handler must then have no
effect for them: the agent, whose reactions start runs — effects without outputs — that a
redelivery must not start again, while the records it ignores are most of its topics).

Output envelopes get derived ids (`derive_id(consumer, input id, index)`), `causation_id` = input
id, `correlation_id` = the input's correlation id (or its id), `traceparent` = the consumer span.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol, TypeVar, runtime_checkable

from opentelemetry import trace
from sextant_contracts import codec
from sextant_contracts.envelope import Envelope, EnvelopeError
from sextant_contracts.events import Event
from sextant_contracts.ids import derive_id
from sextant_contracts.topics import DEAD_LETTERS

from . import metrics
from .errors import (
    ConcurrencyError,
    DuplicateEventError,
    FlushFirst,
    HeadMovedError,
    PoisonMessage,
    dependency_of,
    is_transient,
)
from .logs import recovered
from .ports import BatchRecorder, Publisher, Record, RecordSource, TrackedInput, TrackingRecorder
from .quarantine import REASON, quarantine, workload_of
from .telemetry import (
    OUTPUTS_ATTRIBUTE,
    SUPERSEDED_ATTRIBUTE,
    consumer_span,
    current_traceparent,
    default_tracer,
    open_consumer_span,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

Outcome = Literal["processed", "skipped", "dead_lettered", "quarantined"]
BatchEnd = Literal["all", "flush", "limit", "alone", "moved", "failed"]
"""Why a batch ended (`ConsumerLoop._process_batch`)."""
Stage = Literal["fetched", "handled", "stored", "committed"]


@dataclass(frozen=True)
class Outputs:
    """A handler result that pins stream versions (`expected`: stream → version, see ports) and/or
    the log head (`expected_head`: the outputs must land right after that position; when the log
    has grown, the handler is simply called again — it re-reads and re-decides — without counting
    a failed attempt)."""

    items: Sequence[Event | Envelope]
    expected: Mapping[str, int | None] = field(default_factory=dict)
    expected_head: int | None = None


Handler = Callable[[Envelope], Awaitable[Sequence[Event | Envelope] | Outputs]]
StageHook = Callable[[Stage, Record, int], None]
"""Called as hook(stage, record, records handled so far); fault-injection tests die in it."""


@runtime_checkable
class Staging(Protocol):
    """A handler that can decide a batch's records before their outputs are stored."""

    def begin_batch(self, upto: int = 0) -> None:
        """A batch starts: remember the state to return to if the batch is not stored. `upto`:
        the highest log position among the batch's records — the log's head is at least there,
        so outputs pinned to an earlier head would be refused: catch up before deciding."""
        ...

    def stage(self, outputs: Sequence[Envelope]) -> None:
        """The outputs of the record just handled, as they will be stored (positions set when
        the head was pinned, payloads canonical): decide the next records on a state with them."""
        ...

    def end_batch(self, stored: bool) -> None:
        """The batched part is over: its staged outputs were stored (`stored`; they are now the
        log's), or not — then forget everything staged since `begin_batch`."""
        ...


@dataclass
class _Staged:
    record: Record
    env: Envelope
    outputs: list[Envelope]
    started: float
    span: trace.Span  # its handling's CONSUMER span, ended once the batch's append is known
    head: int | None = None  # the head its outputs were pinned to (None: unpinned)


class _Abort(Exception):
    """The batched part ends before this record (consumer-internal)."""


def _discard(span: trace.Span) -> None:
    """End a handling's span as one that decided nothing: not exported, nor the spans under it."""
    span.set_attribute(OUTPUTS_ATTRIBUTE, 0)
    span.end()


@dataclass(frozen=True)
class RetryPolicy:
    """Handler attempts before dead-lettering, and the backoff between any two attempts."""

    handler_attempts: int = 3
    initial_backoff: float = 0.05
    max_backoff: float = 5.0

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1)."""
        return min(self.max_backoff, self.initial_backoff * 2 ** min(max(attempt - 1, 0), 16))


@dataclass
class ConsumerStats:
    processed: int = 0
    skipped: int = 0
    dead_lettered: int = 0
    quarantined: int = 0
    handler_retries: int = 0
    transient_waits: int = 0
    commit_failures: int = 0
    head_retries: int = 0
    batches: int = 0
    batch_fallbacks: int = 0


class ConsumerLoop:
    """One consumer (`name` = its tracking id and, by convention, its Kafka group id)."""

    def __init__(self, *, name: str, source: RecordSource, store: TrackingRecorder, handler: Handler,
                 dead_letters: Publisher, dead_letter_topic: str = DEAD_LETTERS.name,
                 output_source: str | None = None, retry: RetryPolicy | None = None,
                 tracer: trace.Tracer | None = None, clock: Callable[[], float] = time.time,
                 max_records: int = 200, fetch_timeout: float = 0.5, hook: StageHook | None = None,
                 track_empty: bool = True, reacts: Callable[[Envelope], bool] | None = None,
                 track_ignored: bool = True,
                 batch_appends: bool = False, effects: bool = False) -> None:
        self.name = name
        self._source = source
        self._store = store
        self._handler = handler
        self._dlq = dead_letters
        self._dlq_topic = dead_letter_topic
        self._output_source = output_source or name
        self._retry = retry or RetryPolicy()
        self._tracer = tracer
        self._clock = clock
        self._max_records = max_records
        self._fetch_timeout = fetch_timeout
        self._hook = hook
        self._track_empty = track_empty
        self._track_ignored = track_ignored
        self._effects = effects
        # False for a record the handler ignores: it is still handled, without a span of its own
        self._reacts: Callable[[Envelope], bool] | None = reacts
        self.stats = ConsumerStats()
        self._refused = 0  # records staged in the last batch refused because the head moved
        self.handled = 0
        self._fetched = 0  # records of the current batch the hook saw "fetched" for
        self._decoded: dict[tuple[str, int, int], Envelope] = {}  # the current fetch's envelopes
        # one append per fetched batch: needs a store and a handler that support it
        self._batch_store: BatchRecorder | None = (
            store if batch_appends and isinstance(store, BatchRecorder) and isinstance(handler, Staging) else None)

    # --- driving -----------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Consume until `stop` is set (or the task is cancelled)."""
        stop = stop or asyncio.Event()
        failures = 0
        while not stop.is_set():
            try:
                if not await self.run_once():
                    await asyncio.sleep(0)  # an idle source that returns at once must not starve the loop
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a transport in a bad state: never crash-loop, wait and go on
                failures += 1
                dependency = dependency_of(exc) if is_transient(exc) else None
                log.exception("%s: consumer round failed; retrying", self.name,
                              extra={"dependency": dependency} if dependency else None)
                await asyncio.sleep(self._retry.backoff(failures))

    async def run_once(self) -> int:
        """Fetch one batch, handle every record, commit; returns how many records were handled."""
        records = await self._with_patience("fetch", lambda: self._source.fetch(self._fetch_timeout,
                                                                                self._max_records))
        if records:
            recovered("kafka")  # records came in: the broker answers (ends an outage's log, if any)
        done: dict[tuple[str, int], int] = {}
        self._decoded = {}
        ids: list[str] = []
        for r in records:
            try:
                env = self._decoded[(r.topic, r.partition, r.offset)] = Envelope.from_kafka(r.key, r.value, r.headers)
            except (EnvelopeError, ValueError, UnicodeDecodeError):
                continue  # dead-lettered when its turn comes
            if self._reacts is None or self._reacts(env) or (self._track_empty and self._track_ignored):
                ids.append(env.id)
        # a record the handler ignores leaves no tracking row when empty outputs are not tracked:
        # only the others are looked up, and a batch of ignored records needs no query at all
        tracked = (await self._with_patience("tracking", lambda: self._store.tracked_ids(self.name, ids))
                   if ids else set())
        self._fetched = 0
        i, batching, most = 0, self._batch_store is not None, None
        while i < len(records):
            if batching:
                n, why = await self._process_batch(records, i, tracked, most)
                metrics.record_batch_end(self.name, why)
                i += n
                if why == "moved":
                    # another writer got there first: decided again after a catch-up, as a batch
                    # of at most half as many records (a shorter window: less likely refused; a
                    # batch of one is retried as the one-by-one path retries a record)
                    most = max(1, self._refused // 2)
                    continue
                if most is not None:
                    most *= 2  # stored: the size grows back
                if why in ("flush", "limit") and n:
                    continue  # what was staged is stored: the next batch starts with a catch-up
                batching = why != "failed"  # any other failure: the rest one by one (the old loop)
                if i >= len(records):
                    break
            if i >= self._fetched:
                self._stage("fetched", records[i])
            await self.process(records[i], tracked)  # the record a batch could not take
            i += 1
        for record in records:
            done[(record.topic, record.partition)] = record.offset + 1
        if done:
            # outputs were appended with durable=False: one barrier for the whole batch, before
            # the offsets say "done" (so a database crash cannot lose what Kafka forgets)
            await self._with_patience("sync", self._store.sync)
            try:
                await self._source.commit(done)
            except Exception as exc:  # rebalance or broker trouble: redelivery is absorbed by tracking
                self.stats.commit_failures += 1
                log.warning("%s: offset commit failed (%s); records will be redelivered and skipped",
                            self.name, exc)
            else:
                for record in records:
                    self._stage("committed", record)
        return len(records)

    async def process(self, record: Record, tracked: set[str] | None = None) -> Outcome:
        """Handle one record to completion (processed, skipped or dead-lettered); never raises
        except on cancellation. `tracked`: event ids of the batch known to be tracked already
        (looked up once per batch); None looks the record up on its own."""
        started = time.monotonic()
        outcome = await self._process(record, tracked)
        self._count(outcome, started)
        return outcome

    def _count(self, outcome: Outcome, started: float) -> None:
        metrics.record_handled(self.name, outcome, time.monotonic() - started)
        self.handled += 1
        if outcome == "processed":
            self.stats.processed += 1
        elif outcome == "skipped":
            self.stats.skipped += 1
        elif outcome == "quarantined":
            self.stats.quarantined += 1
        else:
            self.stats.dead_lettered += 1

    # --- a whole batch (batch_appends) --------------------------------------------------------

    async def _process_batch(self, records: Sequence[Record], start: int, tracked: set[str],
                             most: int | None = None) -> tuple[int, BatchEnd]:
        """Decide `records[start:]` in order on the staged state and store them with ONE append;
        returns how many records are done, and why it stopped: "all" (every record is done),
        "flush" (the next record is past the staged state: a new batch starts with it, after a
        catch-up), "limit" (`most` records staged: a new batch starts with the next), "alone"
        (the next record is handled one by one, then batching goes on), "moved" (the append was
        refused: another writer moved the head; rolled back, 0 records done — decided again after
        the handler caught up, as a batch of at most half as many), "failed" (any other failure:
        rolled back, 0 records done, the rest one by one)."""
        store, handler = self._batch_store, self._handler
        assert store is not None and isinstance(handler, Staging)
        upto = max((e.position or 0 for r in records[start:]
                    if (e := self._decoded.get((r.topic, r.partition, r.offset))) is not None), default=0)
        handler.begin_batch(upto)
        staged: list[_Staged] = []
        done: list[tuple[Outcome, float]] = []  # outcomes of records that write nothing
        first_head: int | None = None  # the head the first outputs were decided on (None: unpinned)
        head: int | None = None  # first_head + the outputs staged so far
        ids: set[str] = set()  # event ids staged (a second copy in the batch is skipped)
        n = 0
        why: BatchEnd = "all"
        for record in records[start:]:
            if most is not None and len(staged) >= most:
                why = "limit"
                break
            started = time.monotonic()
            if start + n >= self._fetched:
                self._stage("fetched", record)
                self._fetched = start + n + 1
            try:
                env = self._envelope(record)
            except (EnvelopeError, ValueError, UnicodeDecodeError):
                why = "alone"
                break  # dead-lettered one by one
            if env.id in tracked or env.id in ids:
                done.append(("skipped", started))
                n += 1
                continue
            try:
                outputs, expected_head, span = await self._decide_staged(record, env, head)
            except _Abort as exc:
                why = "flush" if isinstance(exc.__cause__, FlushFirst) else "alone"
                break
            if outputs and staged and (expected_head is None) != (first_head is None):
                _discard(span)
                why = "alone"
                break  # pinned after unpinned outputs (or the reverse): one by one
            if outputs and expected_head is not None:
                if first_head is None:
                    first_head = head = expected_head
                assert head is not None
                outputs = [e.model_copy(update={"position": head + 1 + i}) for i, e in enumerate(outputs)]
                head += len(outputs)
            if outputs or self._tracks_empty(env):
                handler.stage(outputs)
                staged.append(_Staged(record, env, outputs, started, span, expected_head))
                ids.add(env.id)
            else:
                _discard(span)  # decided nothing: not exported (telemetry.NoOpHandlingDropped)
                done.append(("processed", started))  # a no-op reaction: nothing to write
            self._stage("handled", record)
            n += 1
        try:
            result = await self._store_staged(store, staged, first_head, tracked) if staged else "stored"
        except BaseException:
            for s in staged:
                _discard(s.span)
            raise
        self._refused = len(staged) if result == "moved" else 0
        if result != "stored" and self._effects:
            # its handlings had effects (runs started): never decided again — each record's
            # outputs as decided, appended one record at a time (the one-by-one path's outcomes)
            self.stats.batch_fallbacks += 1
            try:
                for k, s in enumerate(staged):
                    self._count(await self._process(s.record, tracked, s), s.started)
                    staged[k] = replace(s, span=trace.INVALID_SPAN)  # ended by `_process`
            finally:
                for s in staged:
                    _discard(s.span)
            handler.end_batch(True)
            for outcome, started in done:
                self._count(outcome, started)
            return n, why
        if result != "stored":
            for s in staged:  # decided again, traced there
                _discard(s.span)
            handler.end_batch(False)
            self.stats.batch_fallbacks += 1
            return 0, result
        handler.end_batch(True)
        for outcome, started in done:
            self._count(outcome, started)
        return n, why

    async def _decide_staged(self, record: Record, env: Envelope, head: int | None
                             ) -> tuple[list[Envelope], int | None, trace.Span]:
        """The record's outputs (canonical payloads), pinned head and open CONSUMER span, or
        `_Abort` when the batch cannot take it (any handler error, pinned stream versions, a head
        that does not follow the staged outputs): it is then handled, and traced, on its own.

        The span stays open until the batch's append is known: a handling whose outputs were not
        stored (the batch fell back to one record at a time) is dropped with the spans under it,
        so a record's trace holds one handling, not the abandoned one beside the stored one."""
        tracer = self._tracer or default_tracer()
        attrs = {**self._attributes(record, env), "sextant.batched": True}
        span = (open_consumer_span(f"consume {record.topic}", record.header("traceparent"), attrs, tracer=tracer)
                if self._reacts is None or self._reacts(env) else trace.INVALID_SPAN)
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                result = await self._handler(env)
                outputs, expected = self._wrap(env, result)
            outputs = [e.model_copy(update={"payload": codec.loads(codec.dumps(e.payload))}) for e in outputs]
        except asyncio.CancelledError:
            _discard(span)
            raise
        except Exception as exc:  # FlushFirst, or a failure the one-by-one path retries
            _discard(span)
            if not isinstance(exc, FlushFirst):
                log.info("%s: %s leaves the batch (%r); handled on its own", self.name, env.id, exc)
            raise _Abort from exc
        expected_head = result.expected_head if isinstance(result, Outputs) else None
        if expected or (outputs and head is not None and expected_head != head):
            _discard(span)
            raise _Abort
        return outputs, expected_head, span

    async def _store_staged(self, store: BatchRecorder, staged: list[_Staged], head: int | None,
                            tracked: set[str]) -> Literal["stored", "moved", "failed"]:
        """ONE append for every staged record; "moved" or "failed" (nothing written) when it fails."""
        inputs = [TrackedInput(s.env.id, s.env.position, tuple(s.outputs)) for s in staged]
        try:
            stored = await self._with_patience("append", lambda: store.append_and_track_many(
                self.name, inputs, expected_head=head, durable=False))
        except asyncio.CancelledError:
            raise
        except HeadMovedError:
            self.stats.head_retries += 1
            metrics.record_head_moved(self.name, "batch")
            return "moved"
        except Exception as exc:  # one by one: a poison record is isolated there
            log.warning("%s: batched append of %d records failed (%r); handling them one by one",
                        self.name, len(staged), exc)
            return "failed"
        if stored is None:  # an input was tracked meanwhile: one by one skips it
            return "failed"
        self.stats.batches += 1
        for s, out in zip(staged, stored, strict=True):
            self._stage("stored", s.record)
            tracked.add(s.env.id)
            s.span.set_attribute(OUTPUTS_ATTRIBUTE, len(out))
            with trace.use_span(s.span, end_on_exit=True):  # the log line carries the record's trace
                if out:
                    metrics.record_outputs(self.name, s.env.time, (e.type for e in out), time.time())
                    log.info("%s: %s %s -> %s", self.name, s.env.type, s.env.stream,
                             ", ".join(e.type for e in out))
            self._count("processed", s.started)
        return "stored"

    # --- one record --------------------------------------------------------------------------

    def _tracks_empty(self, env: Envelope) -> bool:
        """Whether a handling of `env` that produced nothing leaves a tracking row."""
        return self._track_empty and (self._track_ignored or self._reacts is None or self._reacts(env))

    def _envelope(self, record: Record) -> Envelope:
        """The record's envelope, decoded once per fetch (`run_once`); raises when undecodable."""
        env = self._decoded.get((record.topic, record.partition, record.offset))
        return env if env is not None else Envelope.from_kafka(record.key, record.value, record.headers)

    def _attributes(self, record: Record, env: Envelope) -> dict[str, object]:
        """The CONSUMER span attributes of one record's handling."""
        return {"messaging.destination.name": record.topic, "messaging.kafka.partition": record.partition,
                "messaging.kafka.offset": record.offset, "messaging.message.id": env.id,
                "messaging.consumer.group.name": self.name, "sextant.event.type": env.type}

    async def _process(self, record: Record, tracked: set[str] | None,
                       decided: _Staged | None = None) -> Outcome:
        """One record to completion. `decided`: a record of a batch that was not stored, whose
        handler has effects (`effects=True`): its first attempt appends the outputs decided in the
        batch, inside the batch's span, instead of calling the handler again."""
        try:
            env = self._envelope(record)
        except (EnvelopeError, ValueError, UnicodeDecodeError) as exc:
            return await self._dead_letter(record, "undecodable", exc)
        if tracked is not None and env.id in tracked:
            if decided is not None:
                decided.span.end()
            return "skipped"
        if tracked is None and await self._with_patience("tracking",
                                                         lambda: self._store.is_tracked(self.name, env.id)):
            return "skipped"
        tracer = self._tracer or default_tracer()
        attrs = self._attributes(record, env)
        if decided is not None:
            opened: contextlib.AbstractContextManager[trace.Span] = trace.use_span(decided.span, end_on_exit=True)
        elif self._reacts is None or self._reacts(env):
            opened = consumer_span(f"consume {record.topic}", record.header("traceparent"), attrs, tracer=tracer)
        else:
            opened = contextlib.nullcontext(trace.INVALID_SPAN)
        with opened as span:
            attempt = 0
            expected: Mapping[str, int | None]
            while True:
                attempt += 1
                try:
                    if decided is not None:  # its handling's effects happened once: not again
                        result: Sequence[Event | Envelope] | Outputs = Outputs(items=decided.outputs,
                                                                               expected_head=decided.head)
                        outputs, expected, decided = list(decided.outputs), {}, None
                    else:
                        result = await self._handler(env)
                        outputs, expected = self._wrap(env, result)
                        self._stage("handled", record)
                    head = result.expected_head if isinstance(result, Outputs) else None
                    if not outputs and not self._tracks_empty(env):
                        span.set_attribute(OUTPUTS_ATTRIBUTE, 0)
                        return "processed"  # a no-op reaction: re-handling it decides nothing new
                    stored = await self._append(env, outputs, expected, head)
                except asyncio.CancelledError:
                    raise
                except PoisonMessage as exc:
                    return await self._dead_letter(record, exc.reason, exc)
                except DuplicateEventError as exc:
                    return await self._dead_letter(record, "duplicate-output", exc)
                except HeadMovedError:
                    self.stats.head_retries += 1
                    metrics.record_head_moved(self.name, "one")
                    span.set_attribute(SUPERSEDED_ATTRIBUTE, time.time_ns())  # its spans are dropped
                    attempt -= 1  # another writer got there first: re-read and re-decide
                    continue
                except Exception as exc:
                    if is_transient(exc) and not isinstance(exc, ConcurrencyError):
                        self.stats.transient_waits += 1
                        await asyncio.sleep(self._retry.backoff(attempt))
                        attempt -= 1  # waiting for a dependency is not a failed attempt
                        continue
                    span.record_exception(exc)
                    if attempt >= self._retry.handler_attempts:
                        return await self._quarantine(record, env, exc)
                    self.stats.handler_retries += 1
                    log.warning("%s: handler attempt %d for %s failed: %r", self.name, attempt, env.id, exc)
                    await asyncio.sleep(self._retry.backoff(attempt))
                    continue
                self._stage("stored", record)
                if tracked is not None:
                    tracked.add(env.id)  # a second copy later in the same batch is skipped too
                span.set_attribute(OUTPUTS_ATTRIBUTE, len(stored or ()))
                if stored:
                    metrics.record_outputs(self.name, env.time, (e.type for e in stored), time.time())
                    log.info("%s: %s %s -> %s", self.name, env.type, env.stream, ", ".join(e.type for e in stored))
                return "processed" if stored is not None else "skipped"

    async def _append(self, env: Envelope, outputs: list[Envelope], expected: Mapping[str, int | None],
                      expected_head: int | None = None) -> list[Envelope] | None:
        return await self._with_patience("append", lambda: self._store.append_and_track(
            self.name, env.id, env.position, outputs, expected=expected, expected_head=expected_head,
            durable=False))

    def _wrap(self, env: Envelope, result: Sequence[Event | Envelope] | Outputs
              ) -> tuple[list[Envelope], Mapping[str, int | None]]:
        items, expected = (result.items, result.expected) if isinstance(result, Outputs) else (result, {})
        traceparent = current_traceparent()
        now = self._clock()
        out: list[Envelope] = []
        for i, item in enumerate(items):
            if isinstance(item, Envelope):
                out.append(item)
                continue
            out.append(Envelope.wrap(item, id=derive_id(self.name, env.id, i), source=self._output_source,
                                     stream_version=0, time=now, traceparent=traceparent,
                                     causation_id=env.id, correlation_id=env.correlation_id or env.id))
        if expected:  # pinned streams: number their envelopes from the expected version
            counters = {s: v for s, v in expected.items() if v is not None}
            renumbered = []
            for e in out:
                if e.stream in counters:
                    counters[e.stream] += 1
                    e = e.model_copy(update={"stream_version": counters[e.stream]})
                renumbered.append(e)
            out = renumbered
        return out, expected

    async def _quarantine(self, record: Record, env: Envelope, exc: BaseException) -> Outcome:
        """Set the record aside (`quarantine.py`) and go on: the quarantine event tracked under its
        id, then the dead letter."""
        out = quarantine(self.name, env.id, env.type, workload_of(env.payload), exc, at=self._clock(),
                         causation_id=env.id, correlation_id=env.correlation_id or env.id,
                         traceparent=current_traceparent())
        log.error("%s: quarantining %s (%s) after %d attempts: %r", self.name, env.id, env.type,
                  self._retry.handler_attempts, exc)
        try:
            await self._append(env, [out], {})
        except Exception as err:  # the log refuses even that: the dead letter is all that is left
            log.error("%s: could not record the quarantine of %s: %r", self.name, env.id, err)
        await self._dead_letter(record, REASON, exc)
        return "quarantined"

    async def _dead_letter(self, record: Record, reason: str, exc: BaseException) -> Outcome:
        headers = [*record.headers,
                   ("dlq_reason", reason.encode()), ("dlq_error", f"{type(exc).__name__}: {exc}"[:2000].encode()),
                   ("dlq_consumer", self.name.encode()), ("dlq_topic", record.topic.encode()),
                   ("dlq_partition", str(record.partition).encode()), ("dlq_offset", str(record.offset).encode())]
        log.error("%s: dead-lettering %s/%d@%d: %s (%r)", self.name, record.topic, record.partition,
                  record.offset, reason, exc)
        await self._with_patience("dead-letter", lambda: self._dlq.publish(self._dlq_topic, record.key,
                                                                           record.value, headers))
        return "dead_lettered"

    async def _with_patience(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`, retried forever with backoff while it fails transiently."""
        attempt = 0
        dependency = "kafka" if what in ("fetch", "dead-letter") else "postgres"
        while True:
            try:
                result = await call()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not is_transient(exc) or isinstance(exc, ConcurrencyError):
                    raise
                attempt += 1
                self.stats.transient_waits += 1
                dependency = dependency_of(exc) or dependency
                log.warning("%s: %s unavailable (%r); retry %d", self.name, what, exc, attempt,
                            extra={"dependency": dependency})  # once per outage (logs.OutageLog)
                await asyncio.sleep(self._retry.backoff(attempt))
            else:
                if attempt:
                    recovered(dependency)
                return result

    def _stage(self, stage: Stage, record: Record) -> None:
        if self._hook is not None:
            self._hook(stage, record, self.handled)
