"""Envelope ↔ `events` row. The payload is stored as its canonical JSON text (contracts `codec`),
so the bytes written are the bytes read back.

A row carries the checksum the writer computed (`sextant_contracts.trusted.stored_checksum`,
column `checksum`, migration 0007): a row whose checksum matches its type, schema version and
payload text is built without validation (`Envelope.trusted`); a row without one (written before
the column existed, or a payload that was no valid canonical event) or with one that does not
match is validated, as before.

**Bulk decoding** (`envelopes_from_records`, `decode_lines`): a batch is decoded with Python's
cyclic garbage collector paused and restored after. Decoding allocates only acyclic objects
(JSON values, envelopes, pydantic models) that outlive the batch, so every collection the
allocations trigger finds nothing to free — but each traverses the young objects, and the full
ones everything already held (measured on the bench's 20 000-envelope log, decode + event, seed
6: about half of the decode's CPU time; docs/platform/replay.md, "Fourth round"). Garbage is
never held back beyond the batch: the collector runs again as soon as it is restored
(`sextant_contracts.collector`, re-exported here).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from sextant_contracts import codec, trusted
from sextant_contracts.collector import collector_paused as collector_paused  # re-exported
from sextant_contracts.envelope import Envelope


def row_values(env: Envelope) -> tuple[str, str | None]:
    """(payload text, checksum) a store writes for `env`."""
    text = codec.dumps(env.payload)
    return text, trusted.stored_checksum(env.type, env.schema_version, env.payload, text)


def stored_row(env: Envelope) -> tuple[Envelope, str | None]:
    """(`env` as a store reads it back after writing it, its checksum): the memory store's row."""
    text, checksum = row_values(env)
    return _envelope(env.id, env.type, env.source, env.stream, env.stream_version, env.position,
                     env.schema_version, env.time, text, env.traceparent, env.causation_id,
                     env.correlation_id, checksum), checksum


def _envelope(id: str, type: str, source: str, stream: str, stream_version: int, position: int | None,
              schema_version: int, time: float, payload: str, traceparent: str | None,
              causation_id: str | None, correlation_id: str | None, checksum: str | None) -> Envelope:
    data = codec.loads(payload)
    build = Envelope.trusted if trusted.matches(checksum, type, schema_version, payload) else Envelope
    return build(id=id, type=type, source=source, stream=stream, stream_version=stream_version,
                 position=position, schema_version=schema_version, time=time, payload=data,
                 traceparent=traceparent, causation_id=causation_id, correlation_id=correlation_id)


def envelope_from_row(row: Any) -> Envelope:
    """The envelope of an `events` row (any mapping-like row with the `events` columns)."""
    return _envelope(row.id, row.type, row.source, row.stream, row.stream_version, row.position,
                     row.schema_version, row.time, row.payload, row.traceparent, row.causation_id,
                     row.correlation_id, getattr(row, "checksum", None))


COLUMNS = ("position, id, type, source, stream, stream_version, schema_version, time, payload, traceparent, "
           "causation_id, correlation_id, checksum")
"""The `events` columns an envelope is made of, for raw SQL (`envelope_from_record`)."""


def envelope_from_record(r: Any) -> Envelope:
    """The envelope of an asyncpg Record selecting `COLUMNS` (indexed by name, not attribute)."""
    return _envelope(r["id"], r["type"], r["source"], r["stream"], r["stream_version"], r["position"],
                     r["schema_version"], r["time"], r["payload"], r["traceparent"], r["causation_id"],
                     r["correlation_id"], r["checksum"])


# --- the log as lines (a dump of the `events` table, one row per line) ---------------------------


def encode_line(env: Envelope) -> str:
    """A stored envelope as one line: its row's other columns as a JSON object, a tab, then the
    payload column's text as the store writes it (canonical JSON: it holds no raw tab)."""
    text, checksum = row_values(env)
    return json.dumps({"position": env.position, "id": env.id, "type": env.type, "source": env.source,
                       "stream": env.stream, "stream_version": env.stream_version,
                       "schema_version": env.schema_version, "time": env.time,
                       "traceparent": env.traceparent, "causation_id": env.causation_id,
                       "correlation_id": env.correlation_id, "checksum": checksum},
                      separators=(",", ":")) + "\t" + text


def decode_line(line: str) -> Envelope:
    """The envelope of an `encode_line` line, read as the store reads a row (trusted when its
    checksum matches)."""
    columns, _, payload = line.partition("\t")
    r = codec.loads(columns)
    return _envelope(r["id"], r["type"], r["source"], r["stream"], r["stream_version"], r["position"],
                     r["schema_version"], r["time"], payload, r["traceparent"], r["causation_id"],
                     r["correlation_id"], r["checksum"])


# --- bulk decoding (module doc) ------------------------------------------------------------------

_T = TypeVar("_T")


def _bulk(decode: Callable[[_T], Envelope], items: Iterable[_T], events: bool) -> list[Envelope]:
    with collector_paused():
        out = [decode(item) for item in items]
        if events:
            for env in out:
                env.event()  # decoded once and kept (`Envelope.event`)
    return out


def envelopes_from_records(records: Iterable[Any], *, events: bool = False) -> list[Envelope]:
    """`envelope_from_record` of every record, the collector paused (module doc); `events`: each
    envelope's event decoded too (kept by the envelope)."""
    return _bulk(envelope_from_record, records, events)


def decode_lines(lines: Iterable[str], *, events: bool = False) -> list[Envelope]:
    """`decode_line` of every line, the collector paused (module doc); `events` as above."""
    return _bulk(decode_line, lines, events)
