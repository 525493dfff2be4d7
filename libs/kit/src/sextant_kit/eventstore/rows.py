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
