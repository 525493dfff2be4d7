"""Hosting a decider in a process: Kafka says what happened, PostgreSQL says in what order.

A `DeciderHandler` is the `ConsumerLoop` handler of a deciding service. For each input envelope it

1. catches the decider's state up with the PostgreSQL log (global position order, each event
   folded exactly once — the log, not the Kafka partition order, defines the state);
2. asks the decider to react (a pure step of the core; the kit does not know what a decision is)
   — unless the decider says no reaction can follow from the record (`DeciderPort.reacts`), in
   which case steps 1–2 are skipped: most records of a busy log (profile samples, starts) are of
   such types, and they are folded at the next catch-up anyway;
3. returns the outputs with `expected_head` = the position its state was folded to, so the
   consumer loop appends them — with the tracking row and outbox rows, in one transaction —
   **right after the state they were decided on**. If another writer got there first, the loop
   calls the handler again, which catches up and decides again (DESIGN §4: "the state a decision
   saw" is exactly a prefix of the log).

**Batches** (`consumer.Staging`): within one fetched batch the consumer loop stages each record's
outputs — numbered right after the state they were decided on — and the handler folds them at
once, so the next record of the batch is decided on the log as it will be once the batch is
stored (one append for the batch instead of one per record, plus a refused append and a second
decision for every record after the first). A record past the staged state (it needs a catch-up:
the log grew under the batch) raises `FlushFirst`: the loop stores what it staged and handles that
record on its own. A batch that was not stored (most often: another writer moved the head) makes
the next decision catch up first, so the batch decided again is decided on the new head. The
batch works on a shallow copy of the decider (states are immutable: the
copy costs nothing), never on the shared one: another task of the process may fold the shared
decider meanwhile (admission's API and front door do), and it must only ever hold a prefix of the
log. A stored batch hands its state to the shared decider when it is further along; a batch that
is not stored is simply dropped.

Snapshots: the handler loads the newest valid snapshot at start (`restore`) and saves one every
`snapshot_every` folded events, but not more often than every `snapshot_min_interval_s` seconds
(pickling a large state costs a service a noticeable share of its CPU under load: measured with
py-spy at 25 submissions/s, 14 % of the planning service's samples with 5 000 events and no time
floor); they are disposable caches tagged with the code version. Both numbers are settings
(`SEXTANT_SNAPSHOT_EVERY`, `SEXTANT_SNAPSHOT_MIN_INTERVAL_S`).
"""

from __future__ import annotations

import copy
import hashlib
import logging
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event

from .consumer import Outputs
from .errors import FlushFirst, LogUnfoldable
from .ports import EventStore, Snapshot, SnapshotStore

log = logging.getLogger(__name__)
SNAPSHOT_SCHEMA = 1


class StepOutput(Protocol):
    @property
    def events(self) -> Sequence[Event]: ...


class DeciderPort(Protocol):
    """What the handler needs from a decider (the core's `workflow.Decider` satisfies it)."""

    @property
    def position(self) -> int: ...

    def fold(self, envelopes: Sequence[Envelope]) -> None: ...

    def reacts(self, envelope: Envelope) -> bool:
        """False when no output can follow from `envelope` (the handler skips catching up and
        handling it; it is folded at the next catch-up); True when it may."""
        ...

    def handle(self, envelope: Envelope) -> StepOutput: ...

    def snapshot(self) -> bytes: ...

    def restore(self, blob: bytes) -> None: ...

    state: Any
    """The folded state, immutable: a batch works on a shallow copy of the decider and hands its
    state over once stored (`DeciderHandler`)."""


def code_version(*packages: str) -> str:
    """A short hash of the source files of `packages`: snapshots of other code are ignored."""
    h = hashlib.sha256()
    for name in packages:
        root = resources.files(name)
        for path in sorted(_walk(root), key=str):
            h.update(str(path).rsplit(name, 1)[-1].encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _walk(root: resources.abc.Traversable) -> list[resources.abc.Traversable]:
    out = []
    for child in root.iterdir():
        if child.is_dir():
            out.extend(_walk(child))
        elif child.name.endswith(".py"):
            out.append(child)
    return out


def read_ends(batch: Sequence[Envelope], limit: int) -> bool:
    """Whether a catch-up's `read_all(position, limit)` that returned `batch` reached the head (as of
    its snapshot): fewer rows than asked for. Every catch-up loop stops there instead of reading
    once more to get an empty batch (one round trip per catch-up: decider, agent, front door)."""
    return len(batch) < limit


class DeciderHandler:
    def __init__(self, name: str, decider: DeciderPort, store: EventStore, *,
                 snapshots: SnapshotStore | None = None, code: str = "", snapshot_every: int = 5000,
                 snapshot_min_interval_s: float = 30.0, read_batch: int = 2000) -> None:
        self.name = name
        self.decider = decider
        self.store = store
        self.snapshots = snapshots
        self.code = code
        self.snapshot_every = snapshot_every
        self.snapshot_min_interval_s = snapshot_min_interval_s
        self._last_snapshot_at = float("-inf")
        self.read_batch = read_batch
        self._last_snapshot = 0
        self._retry_of: str | None = None  # the last input handled: seen again = a retry
        self.folded = 0
        self._shared: DeciderPort | None = None  # during a batch: the decider; self.decider its copy
        self._staged = 0  # outputs staged in the current batch
        self._upto = 0  # the current batch's highest record position (begin_batch)
        self._behind = False  # a batch was not stored: catch up before the next decision

    async def start(self) -> None:
        """Restore the newest valid snapshot, then fold the tail of the log.

        A snapshot behind the decider is not restored: another task of the process sharing the
        decider (admission's API and front door catch it up too) may have folded past it while it
        loaded, and may be reading the log after that position right now — moving the state back
        would make that read fold onto an older state, skipping the positions in between."""
        if self.snapshots is not None:
            snap = await self.snapshots.load_snapshot(self.name, self.code, SNAPSHOT_SCHEMA)
            if snap is not None and snap.position > self.decider.position:
                self.decider.restore(snap.blob)
                self._last_snapshot = snap.position
                log.info("%s: restored snapshot at position %d", self.name, snap.position)
        await self.catch_up()

    async def catch_up(self) -> int:
        """Fold the log past the decider's position. Its reads are not traced one statement each
        (polling the log; telemetry.py, sampling): the current span gets `sextant.folded` instead.

        A read shorter than `read_batch` reached the head its snapshot saw: the catch-up ends there,
        without a last, empty read (`read_ends`). Positions commit in order (`log_head` lock), so
        that head is a prefix of the log holding every record delivered before the call; what was
        appended since is what the head-conditional append is there for."""
        n = 0
        while True:
            with suppress_instrumentation():
                batch = await self.store.read_all(self.decider.position, limit=self.read_batch)
            if not batch:
                break
            try:
                self.decider.fold(batch)
            except Exception as exc:
                log.error("%s: cannot fold the log after position %d: %r", self.name, self.decider.position, exc)
                raise LogUnfoldable(f"{self.name}: folding after position {self.decider.position}: {exc!r}") from exc
            n += len(batch)
            if read_ends(batch, self.read_batch):
                break
        self.folded += n
        trace.get_current_span().set_attribute("sextant.folded", n)
        if (self.snapshots is not None and self.decider.position - self._last_snapshot >= self.snapshot_every
                and time.monotonic() - self._last_snapshot_at >= self.snapshot_min_interval_s):
            await self.save_snapshot()
        return n

    async def save_snapshot(self) -> None:
        assert self.snapshots is not None
        pos = self.decider.position
        await self.snapshots.save_snapshot(Snapshot(key=self.name, code_version=self.code,
                                                    schema_version=SNAPSHOT_SCHEMA, position=pos,
                                                    blob=self.decider.snapshot()))
        self._last_snapshot = pos
        self._last_snapshot_at = time.monotonic()

    def reacts(self, env: Envelope) -> bool:
        """False when no output can follow from `env` (the consumer loop opens no span for it)."""
        return self.decider.reacts(env)

    async def __call__(self, env: Envelope) -> Outputs:
        if not self.decider.reacts(env):
            return Outputs(items=())  # nothing can follow from it; folded at the next catch-up
        # Read the log only when this record is past what we folded. A state that is behind the
        # head otherwise is harmless: the head-conditional append refuses outputs decided on it
        # (HeadMovedError) and the consumer loop calls us again — then `retry` forces a catch-up.
        if (self._behind or self._retry_of == env.id or env.position is None
                or env.position > self.decider.position
                or (not self._staged and self._upto > self.decider.position)):
            if self._staged:  # the staged outputs are not in the log yet: store them first
                raise FlushFirst(env.id)
            await self.catch_up()
            self._behind = False
        self._retry_of = env.id
        result = self.decider.handle(env)
        if result.events and self._shared is None:
            # one record at a time: once these outputs are stored the head is past this state, and
            # a next decision on it would be refused for certain — the next record catches up first
            # (a retry of this one does anyway; a record dead-lettered instead costs one read)
            self._behind = True
        return Outputs(items=tuple(result.events), expected_head=self.decider.position)


    # --- consumer.Staging: one append per fetched batch -----------------------------------------

    def begin_batch(self, upto: int = 0) -> None:
        """`upto`: the batch's highest record position. The log's head is at least there: a first
        decision pinned to an earlier head is refused for certain (a wasted append, then the whole
        batch decided again), so the batch's first reacting record catches up first."""
        if self._shared is None:
            self._shared, self.decider = self.decider, copy.copy(self.decider)
        self._staged = 0
        self._upto = upto

    def stage(self, outputs: Sequence[Envelope]) -> None:
        """Fold the outputs just decided (positions right after the state): the next record of
        the batch is decided on the log as it will be once the batch is stored."""
        if outputs:
            self.decider.fold(outputs)
            self._staged += len(outputs)

    def end_batch(self, stored: bool) -> None:
        """Back to the shared decider: with the batch's state when the batch was stored and got
        further (both are prefixes of the log: the longer one is right), else as it is."""
        work, shared = self.decider, self._shared
        if shared is not None:
            if stored and work.position > shared.position:
                shared.state = work.state
            self.decider, self._shared = shared, None
        self._upto = 0
        if not stored:  # most often another writer moved the head: the next decision catches up first
            self._retry_of = None
            self._behind = True
        self._staged = 0


EVENT_TOPICS = ("sextant.events.workloads", "sextant.events.servers", "sextant.events.clock",
                "sextant.events.models", "sextant.events.recurring", "sextant.events.tenants")


def decider_task(decider: DeciderPort, *, code_packages: Sequence[str] = ("sextant_core", "sextant_contracts"),
                 topics: Sequence[str] = EVENT_TOPICS):  # type: ignore[no-untyped-def]
    """A `bootstrap.serve` task running `decider` as this process's consumer of the event topics."""
    import asyncio

    from . import metrics
    from .bootstrap import Runtime, with_patience
    from .consumer import ConsumerLoop

    async def run(rt: Runtime, stop: asyncio.Event) -> None:
        name = rt.settings.service_name
        handler = DeciderHandler(name, decider, rt.store, snapshots=rt.store, code=code_version(*code_packages),
                                 snapshot_every=rt.settings.snapshot_every,
                                 snapshot_min_interval_s=rt.settings.snapshot_min_interval_s)
        await with_patience(f"{name}: event store", handler.start, rt.settings.retry_backoff_s,
                            rt.settings.retry_backoff_max_s, stop)
        source = rt.source(name, topics)
        await with_patience(f"{name}: kafka consumer", source.start, rt.settings.retry_backoff_s,
                            rt.settings.retry_backoff_max_s, stop)
        loop = ConsumerLoop(name=name, source=source, store=rt.store, handler=handler, reacts=handler.reacts,
                            dead_letters=rt.publisher, tracer=rt.telemetry.tracer(name), track_empty=False,
                            batch_appends=True)
        rt.consumers[name] = loop
        rt.handlers[name] = handler
        metrics.watch_decider(name, decider)  # type: ignore[arg-type]  # the core's Decider has `state`
        await loop.run(stop)

    run.__name__ = "decider"
    return run
