"""CloudEvents 1.0 envelope, Kafka binary content mode.

The payload (the event model without its envelope) is the record value, in canonical JSON; the
attributes are headers `ce_specversion`, `ce_id`, `ce_source`, `ce_type`, `ce_time`, `ce_subject`
(the stream id), plus `traceparent` (W3C trace context) and Sextant's extensions
`ce_schemaversion`, `ce_position`, `ce_streamversion`, `ce_causationid`, `ce_correlationid`.
The record key is the stream id, so a workload's events share a partition and keep their order.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from . import codec
from .events import Event, event_class
from .model import Frozen
from .upcasters import upcast

SPECVERSION = "1.0"
CONTENT_TYPE = "application/json"


class EnvelopeError(ValueError):
    """A record is not a valid Sextant CloudEvent (missing header, bad JSON, unknown type)."""


class _Memo:
    """The envelope's decoded event, once `Envelope.event` has decoded it. Every memo equals every
    other: an envelope's equality, hash and dump are its fields', decoded or not."""

    __slots__ = ("event",)

    def __init__(self) -> None:
        self.event: Event | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Memo)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[_Memo], tuple[()]]:
        return _Memo, ()  # a pickled envelope decodes again


class Envelope(Frozen):
    """An event with its identity, position and metadata (what the event store holds).

    `event()` decodes the payload once per envelope and keeps the event (`_memo`): the payload is
    never changed in place (the envelope is frozen, and `model_copy` with any change but the
    position starts a new memo). An envelope read back from a store under a matching checksum is
    built by `trusted`, without validation (`sextant_contracts.trusted`).
    """

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
    _memo: _Memo = PrivateAttr(default_factory=_Memo)

    @classmethod
    def trusted(cls, id: str, type: str, source: str, stream: str, stream_version: int, position: int | None,
                schema_version: int, time: float, payload: dict[str, Any], traceparent: str | None,
                causation_id: str | None, correlation_id: str | None) -> Envelope:
        """The envelope of a stored row whose checksum matched (`sextant_contracts.trusted`): the
        columns as the store typed them, built without validation; equal to `Envelope(...)` of
        the same values."""
        env = _new(cls)
        _set_dict(env, {"id": id, "type": type, "source": source, "stream": stream,
                        "stream_version": stream_version, "position": position,
                        "schema_version": schema_version, "time": time, "payload": payload,
                        "traceparent": traceparent, "causation_id": causation_id,
                        "correlation_id": correlation_id})
        _set_fields_set(env, set(_ALL_FIELDS))
        _set_extra(env, None)
        _set_private(env, {"_memo": _Memo()})
        return env

    @classmethod
    def wrap(cls, event: Event, *, id: str, source: str, stream_version: int, time: float,
             traceparent: str | None = None, causation_id: str | None = None,
             correlation_id: str | None = None) -> Envelope:
        return cls(id=id, type=event.TYPE, source=source, stream=event.stream,
                   stream_version=stream_version, schema_version=event.SCHEMA_VERSION, time=time,
                   payload=event.model_dump(mode="json"), traceparent=traceparent,
                   causation_id=causation_id, correlation_id=correlation_id)

    def event(self) -> Event:
        """The typed event, upcast to the current schema (decoded on the first call, then kept)."""
        memo: _Memo | None = (self.__pydantic_private__ or {}).get("_memo")  # not `self._memo`: no __getattr__
        if memo is not None and memo.event is not None:
            return memo.event
        cls = event_class(self.type)
        if self.schema_version == cls.SCHEMA_VERSION:  # `upcast` would return the payload itself
            event = cls.__pydantic_validator__.validate_python(self.payload)  # = `model_validate`
        else:
            event = cls.model_validate(upcast(self.type, self.schema_version, self.payload))
        if memo is not None:
            memo.event = event
        return event

    def with_position(self, position: int) -> Envelope:
        return self.model_copy(update={"position": position})

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Envelope:
        """A copy; it keeps the decoded event only when nothing but the position changed."""
        new = super().model_copy(update=update, deep=deep)
        if deep or (update and update.keys() - {"position"}):
            object.__setattr__(new, "__pydantic_private__", {"_memo": _Memo()})
        return new

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


_ALL_FIELDS = frozenset(Envelope.model_fields)
_new = object.__new__
# `Envelope.trusted`: the slots pydantic's `BaseModel` declares, set through their descriptors
# (what `object.__setattr__` ends up calling, without its lookup)
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
