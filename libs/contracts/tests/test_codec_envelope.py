"""Canonical codec and CloudEvents envelope: byte-stable, round-tripping, strict."""

from __future__ import annotations

import math

import pytest
from sextant_contracts import codec, events
from sextant_contracts.envelope import Envelope, EnvelopeError


def submitted(**kw: object) -> events.WorkloadSubmitted:
    base: dict[str, object] = dict(at=1.5, workload_id="w1", tenant="t1", kind="batch",
                                   target={"type": "completion_time", "seconds": 60},
                                   spec={"type": "twin", "ref": "spec-mcf"})
    base.update(kw)
    return events.WorkloadSubmitted.model_validate(base)


def test_canonical_json_sorts_keys_and_has_no_whitespace() -> None:
    assert codec.dumps({"b": 1, "a": [1.0, -0.0, 0.1]}) == '{"a":[1.0,0.0,0.1],"b":1}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_canonical_json_refuses_non_finite(bad: float) -> None:
    with pytest.raises(codec.CodecError):
        codec.dumps({"x": bad})


def test_same_event_same_bytes() -> None:
    assert codec.dumpb(submitted()) == codec.dumpb(submitted())
    assert codec.dumpb(submitted()) != codec.dumpb(submitted(priority=3))


def test_envelope_kafka_round_trip_preserves_everything() -> None:
    env = Envelope.wrap(submitted(), id="e1", source="admission", stream_version=0, time=1.7e9,
                        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                        causation_id="c1", correlation_id="r1").with_position(42)
    key, value, headers = env.to_kafka()
    names = {k for k, _ in headers}
    assert key == b"workload-w1"
    assert {"ce_specversion", "ce_id", "ce_source", "ce_type", "ce_time", "ce_subject",
            "traceparent"} <= names
    back = Envelope.from_kafka(key, value, headers)
    assert back == env
    assert back.event() == submitted()


@pytest.mark.parametrize("drop", ["ce_id", "ce_type", "ce_specversion", "ce_subject"])
def test_envelope_missing_required_header_is_rejected(drop: str) -> None:
    key, value, headers = Envelope.wrap(submitted(), id="e1", source="s", stream_version=0,
                                        time=0.0).to_kafka()
    with pytest.raises(EnvelopeError, match=drop):
        Envelope.from_kafka(key, value, [(k, v) for k, v in headers if k != drop])


def test_envelope_rejects_non_json_payload() -> None:
    key, _, headers = Envelope.wrap(submitted(), id="e1", source="s", stream_version=0,
                                    time=0.0).to_kafka()
    with pytest.raises(EnvelopeError, match="not JSON"):
        Envelope.from_kafka(key, b"{not json", headers)


def test_every_event_type_is_registered_once_with_a_stream() -> None:
    assert len(events.EVENT_TYPES) >= 25
    for name, cls in events.EVENT_TYPES.items():
        assert name == cls.TYPE
        assert cls.SCHEMA_VERSION >= 1
