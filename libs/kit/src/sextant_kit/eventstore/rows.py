"""Envelope ↔ `events` row. The payload is stored as its canonical JSON text (contracts `codec`),
so the bytes written are the bytes read back."""

from __future__ import annotations

from typing import Any

from sextant_contracts import codec
from sextant_contracts.envelope import Envelope


def envelope_from_row(row: Any) -> Envelope:
    """The envelope of an `events` row (any mapping-like row with the `events` columns)."""
    return Envelope(
        id=row.id, type=row.type, source=row.source, stream=row.stream,
        stream_version=row.stream_version, position=row.position, schema_version=row.schema_version,
        time=row.time, payload=codec.loads(row.payload), traceparent=row.traceparent,
        causation_id=row.causation_id, correlation_id=row.correlation_id,
    )


COLUMNS = ("position, id, type, source, stream, stream_version, schema_version, time, payload, traceparent, "
           "causation_id, correlation_id")
"""The `events` columns an envelope is made of, for raw SQL (`envelope_from_record`)."""


def envelope_from_record(r: Any) -> Envelope:
    """The envelope of an asyncpg Record selecting `COLUMNS` (indexed by name, not attribute)."""
    return Envelope(
        id=r["id"], type=r["type"], source=r["source"], stream=r["stream"],
        stream_version=r["stream_version"], position=r["position"], schema_version=r["schema_version"],
        time=r["time"], payload=codec.loads(r["payload"]), traceparent=r["traceparent"],
        causation_id=r["causation_id"], correlation_id=r["correlation_id"],
    )
