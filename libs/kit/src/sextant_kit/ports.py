"""The kit's ports: small Protocols with a real in-memory twin each (STYLE example 6).

One contract suite (`tests/contracts/`) runs against every implementation: `MemoryEventStore` and
`PostgresEventStore` for the store ports, `MemoryBus` and Kafka for the record ports.

Conventions shared by every implementation:

- **Stream versions** start at 1; a stream that has no event is at version 0.
- **Global positions** start at 1, are contiguous (no gaps, ever) and are assigned in commit
  order: once a reader has seen position p, no event with a position <= p can appear later.
  `from_position` arguments are exclusive ("after p"); `last_position()` is 0 on an empty log.
- **Appends are atomic**: all envelopes of one call (and the tracking row and outbox rows that go
  with them) are written together or not at all.
- **What is returned is durable**: an append returns, and a read or `pending()` hands out events,
  only once they would survive a database server crash.
- `expected_version=None` means "append at the end, whatever the version": the store numbers the
  envelopes itself. An integer means "the stream must be at exactly this version", and the
  envelopes must be numbered `expected_version + 1, + 2, ...` (a `ValueError` otherwise); a stream
  at another version raises `ConcurrencyError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from sextant_contracts.envelope import Envelope

# --- value types -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A disposable cache of a fold up to `position`, valid only for the same code and schema."""

    key: str
    code_version: str
    schema_version: int
    position: int
    blob: bytes


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """An event waiting to be published: the stored envelope, its topic, its trace context."""

    envelope: Envelope
    topic: str
    traceparent: str | None = None

    @property
    def position(self) -> int:
        assert self.envelope.position is not None
        return self.envelope.position


@dataclass(frozen=True, slots=True)
class Record:
    """One message as a transport delivers it (a Kafka record, or its in-memory twin)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = field(default_factory=tuple)

    def header(self, name: str) -> str | None:
        """The last header called `name`, decoded as UTF-8, or None."""
        for k, v in reversed(self.headers):
            if k == name:
                return v.decode("utf-8", errors="replace")
        return None


@dataclass(frozen=True, slots=True)
class Delivered:
    """Where a published message landed."""

    topic: str
    partition: int
    offset: int


# --- store ports -----------------------------------------------------------------------------


@runtime_checkable
class EventStore(Protocol):
    """The append-only log of envelopes."""

    async def append(self, stream: str, expected_version: int | None,
                     envelopes: Sequence[Envelope]) -> list[Envelope]:
        """Append to one stream atomically; returns the stored envelopes (positions set).

        Raises `ConcurrencyError` (stream at another version), `DuplicateEventError` (an id is
        already recorded), `ValueError` (envelopes of another stream, or badly numbered).
        """
        ...

    async def read_stream(self, stream: str, from_version: int = 0,
                          limit: int | None = None) -> list[Envelope]:
        """The stream's envelopes with version > `from_version`, in version order."""
        ...

    async def stream_version(self, stream: str) -> int:
        """The stream's current version (0 when it has no event)."""
        ...

    async def read_all(self, from_position: int = 0, limit: int = 1000) -> list[Envelope]:
        """At most `limit` envelopes with position > `from_position`, in position order."""
        ...

    def tail(self, from_position: int = 0, *, batch: int = 500) -> AsyncIterator[Envelope]:
        """Every envelope after `from_position`, in position order, waiting for new ones forever."""
        ...

    async def last_position(self) -> int:
        """The highest committed position (0 on an empty log)."""
        ...


@runtime_checkable
class TrackingRecorder(Protocol):
    """Effectively-once processing (eventsourcing's ProcessRecorder): output + tracking together."""

    async def append_and_track(self, consumer: str, input_event_id: str, input_position: int | None,
                               outputs: Sequence[Envelope], *,
                               expected: Mapping[str, int | None] | None = None,
                               expected_head: int | None = None,
                               durable: bool = True) -> list[Envelope] | None:
        """Record `outputs`, the tracking row (`consumer`, `input_event_id`, `input_position`) and
        the outputs' outbox rows in ONE transaction.

        Returns the stored outputs, or None when the input was already tracked for this consumer
        (nothing is written then). `expected` maps a stream to its expected version (streams not
        in it are appended at their end). With `expected_head`, the outputs must land right after
        position `expected_head` (the state the caller decided on): `HeadMovedError` otherwise.
        Raises like `EventStore.append`. With `durable=False` the call may return before the
        write survives a server crash; call `sync()` before acting on it outside the database
        (e.g. before committing a Kafka offset) — one `sync()` covers many such calls.
        """
        ...

    async def sync(self) -> None:
        """Return once everything this store appended is durable."""
        ...

    async def is_tracked(self, consumer: str, event_id: str) -> bool:
        ...

    async def tracked_ids(self, consumer: str, event_ids: Sequence[str]) -> set[str]:
        """Which of `event_ids` `consumer` has already tracked (one round trip per batch)."""
        ...

    async def max_tracked_position(self, consumer: str) -> int:
        """The highest input position tracked for `consumer` (0 when none)."""
        ...


@dataclass(frozen=True, slots=True)
class TrackedInput:
    """One input of a batched append: its event id and position, and the outputs decided for it
    (in order; they land right after the previous input's outputs)."""

    event_id: str
    position: int | None
    outputs: tuple[Envelope, ...]


@runtime_checkable
class BatchRecorder(Protocol):
    """A `TrackingRecorder` that also records a whole fetched batch in one transaction."""

    async def append_and_track_many(self, consumer: str, inputs: Sequence[TrackedInput], *,
                                    expected_head: int | None = None,
                                    durable: bool = True) -> list[list[Envelope]] | None:
        """Record every input's tracking row and outputs (and their outbox rows) in ONE
        transaction: the outputs of all inputs, concatenated in input order, land right after
        position `expected_head` (when given; `HeadMovedError` otherwise).

        Returns the stored outputs of each input, in input order; or None — with nothing
        written — when any input was already tracked for `consumer` (or appears twice): the
        caller then handles the inputs one by one (`append_and_track`), which skips those.
        All or nothing: every error of `append_and_track` writes nothing for any input.
        `durable` as in `append_and_track`.
        """
        ...


@runtime_checkable
class OutboxReader(Protocol):
    """What the relay needs: unsent events in position order, and a way to mark them sent."""

    async def pending(self, limit: int = 500) -> list[OutboxItem]:
        """At most `limit` unsent items, in position order."""
        ...

    async def mark_sent(self, positions: Sequence[int]) -> None:
        ...

    async def pending_count(self) -> int:
        """How many items are unsent (relay lag, readiness, tests)."""
        ...

    def notification_generation(self) -> int:
        """A counter of append notifications; read it BEFORE looking for rows."""
        ...

    async def wait_for_notification(self, seen_generation: int, timeout: float) -> None:
        """Return once an append newer than `seen_generation` committed, or after `timeout` s."""
        ...


@runtime_checkable
class SnapshotStore(Protocol):
    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep `snapshot` unless a newer one (higher position) exists for the same key/versions."""
        ...

    async def load_snapshot(self, key: str, code_version: str, schema_version: int) -> Snapshot | None:
        """The newest snapshot for `key` valid for these versions, or None."""
        ...


# --- transport ports -------------------------------------------------------------------------


@runtime_checkable
class Publisher(Protocol):
    """Sends records; `publish` returns once the transport acknowledged the record."""

    async def publish(self, topic: str, key: bytes | None, value: bytes | None,
                      headers: Sequence[tuple[str, bytes]] = ()) -> Delivered:
        ...

    async def publish_many(self, items: Sequence[tuple[str, bytes | None, bytes | None,
                                                       Sequence[tuple[str, bytes]]]]) -> list[Delivered]:
        """Send in order and wait for every acknowledgement; per-key order is preserved."""
        ...


@runtime_checkable
class RecordSource(Protocol):
    """Receives records for one consumer group and commits its progress."""

    async def fetch(self, timeout: float, max_records: int) -> list[Record]:
        """The next records (possibly none after `timeout` seconds), per partition in offset order."""
        ...

    async def commit(self, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commit, per (topic, partition), the offset of the NEXT record to read."""
        ...
