"""CloudEvents 1.0 envelope, Kafka binary content mode.

The payload (the event model without its envelope) is the record value, in canonical JSON; the
attributes are headers `ce_specversion`, `ce_id`, `ce_source`, `ce_type`, `ce_time`, `ce_subject`
(the stream id), plus `traceparent` (W3C trace context) and Sextant's extensions
`ce_schemaversion`, `ce_position`, `ce_streamversion`, `ce_causationid`, `ce_correlationid`.
The record key is the stream id, so a workload's events share a partition and keep their order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from . import codec
from .events import Event, event_class
from .model import Frozen
from .upcasters import upcast

SPECVERSION = "1.0"
CONTENT_TYPE = "application/json"


class EnvelopeError(ValueError):
    """A record is not a valid Sextant CloudEvent (missing header, bad JSON, unknown type)."""


class Envelope(Frozen):
    """An event with its identity, position and metadata (what the event store holds)."""

    id: str = Field(min_length=1)
    type: str
    source: str
    stream: str
    stream_version: int = Field(ge=0)
    position: int | None = None  # global log position, assigned by the store
    schema_version: int = Field(ge=1)
    time: float  # when it was recorded, Unix seconds
    payload: dict[str, Any]
    traceparent: str | None = None
    causation_id: str | None = None
    correlation_id: str | None = None

    @classmethod
    def wrap(cls, event: Event, *, id: str, source: str, stream_version: int, time: float,
             traceparent: str | None = None, causation_id: str | None = None,
             correlation_id: str | None = None) -> Envelope:
        return cls(id=id, type=event.TYPE, source=source, stream=event.stream,
                   stream_version=stream_version, schema_version=event.SCHEMA_VERSION, time=time,
                   payload=event.model_dump(mode="json"), traceparent=traceparent,
                   causation_id=causation_id, correlation_id=correlation_id)

    def event(self) -> Event:
        """The typed event, upcast to the current schema."""
        cls = event_class(self.type)
        data = upcast(self.type, self.schema_version, self.payload)
        return cls.model_validate(data)

    def with_position(self, position: int) -> Envelope:
        return self.model_copy(update={"position": position})

    # --- Kafka binary mode ---------------------------------------------------------------------

    def to_kafka(self) -> tuple[bytes, bytes, list[tuple[str, bytes]]]:
        """(key, value, headers) for a Kafka record."""
        headers: dict[str, str | None] = {
            "ce_specversion": SPECVERSION,
            "ce_id": self.id,
            "ce_source": self.source,
            "ce_type": self.type,
            "ce_time": datetime.fromtimestamp(self.time, tz=UTC).isoformat().replace("+00:00", "Z"),
            "ce_subject": self.stream,
            "content-type": CONTENT_TYPE,
            "ce_schemaversion": str(self.schema_version),
            "ce_streamversion": str(self.stream_version),
            "ce_position": None if self.position is None else str(self.position),
            "ce_causationid": self.causation_id,
            "ce_correlationid": self.correlation_id,
            "traceparent": self.traceparent,
        }
        hdrs = [(k, v.encode("utf-8")) for k, v in headers.items() if v is not None]
        return self.stream.encode("utf-8"), codec.dumpb(self.payload), hdrs

    @classmethod
    def from_kafka(cls, key: bytes | None, value: bytes | None,
                   headers: list[tuple[str, bytes]] | tuple[tuple[str, bytes], ...]) -> Envelope:
        h = {k: v.decode("utf-8") for k, v in headers}
        for required in ("ce_specversion", "ce_id", "ce_source", "ce_type", "ce_time", "ce_subject"):
            if required not in h:
                raise EnvelopeError(f"missing header {required}")
        if h["ce_specversion"] != SPECVERSION:
            raise EnvelopeError(f"unsupported specversion {h['ce_specversion']}")
        if value is None:
            raise EnvelopeError("empty record value")
        try:
            payload = codec.loads(value)
        except ValueError as exc:
            raise EnvelopeError(f"payload is not JSON: {exc}") from None
        if not isinstance(payload, dict):
            raise EnvelopeError("payload is not a JSON object")
        try:
            t = datetime.fromisoformat(h["ce_time"].replace("Z", "+00:00")).timestamp()
            return cls(id=h["ce_id"], type=h["ce_type"], source=h["ce_source"], stream=h["ce_subject"],
                       stream_version=int(h.get("ce_streamversion", "0")),
                       position=int(h["ce_position"]) if "ce_position" in h else None,
                       schema_version=int(h.get("ce_schemaversion", "1")), time=t, payload=payload,
                       traceparent=h.get("traceparent"), causation_id=h.get("ce_causationid"),
                       correlation_id=h.get("ce_correlationid"))
        except (ValueError, TypeError) as exc:
            raise EnvelopeError(f"bad envelope attribute: {exc}") from None
