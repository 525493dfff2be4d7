"""Trusted builders (`sextant_contracts.builders`): the event of a trusted row (checksum matched) is
built without validation and is the validated event — equal, the same repr, canonical JSON,
fields set, `__dict__` order and the same Python types at every depth — for every envelope of the
committed fixture logs, every event type in them; a tampered row still goes through validation
(refused when invalid); a payload the builder cannot take falls back to validation."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from sextant_cli.demo import read_recorded
from sextant_contracts import builders, codec, trusted
from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.builders import Untrusted, builder
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import event_class
from sextant_contracts.upcasters import upcast
from sextant_kit.eventstore import rows

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("*.jsonl.gz"))


@pytest.fixture(scope="module")
def stored() -> list[str]:
    """Every fixture envelope as the event store holds it (one line each)."""
    assert FIXTURES
    return [rows.encode_line(env) for p in FIXTURES for env in read_recorded(p)]


def shape(x: Any) -> Any:
    """The Python types of a value at every depth (models by their `__dict__`, in order)."""
    if isinstance(x, BaseModel):
        return (type(x), tuple((k, shape(v)) for k, v in x.__dict__.items()))
    if isinstance(x, tuple | list):
        return (type(x), tuple(shape(v) for v in x))
    if isinstance(x, dict):
        return (type(x), tuple((shape(k), shape(v)) for k, v in x.items()))
    return type(x)


def assert_same(built: BaseModel, validated: BaseModel) -> None:
    assert built == validated
    assert repr(built) == repr(validated)
    assert codec.dumps(built) == codec.dumps(validated)
    assert built.model_dump() == validated.model_dump()
    assert built.__pydantic_fields_set__ == validated.__pydantic_fields_set__
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__
    assert shape(built) == shape(validated)
    assert pickle.loads(pickle.dumps(built)) == validated


def test_every_fixture_event_built_equals_the_validated_one(stored: list[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter[str] = Counter()
    real = builders.builder

    def counting(cls: type[BaseModel]) -> Any:
        b = real(cls)
        if b is None:
            return None

        def spy(d: dict[str, Any]) -> Any:
            calls[cls.__name__] += 1
            return b(d)
        return spy

    monkeypatch.setattr("sextant_contracts.envelope.builder", counting)
    types: Counter[str] = Counter()
    for env in rows.decode_lines(stored, events=True):
        cls = event_class(env.type)
        validated = cls.model_validate(upcast(env.type, env.schema_version, env.payload))
        assert_same(env.event(), validated)
        if env.schema_version == cls.SCHEMA_VERSION:  # older ones are upcast and validated
            types[env.type] += 1
    # every type of the logs with a builder took it, for every one of its events
    buildable = {t: n for t, n in types.items() if builder(event_class(t)) is not None}
    assert len(buildable) >= 15, types
    assert dict(calls) == buildable


def test_the_builders_cover_the_log_s_types_and_not_the_validated_classes() -> None:
    for cls in (ev.ProfileSampleRecorded, ev.ProfilingPlanned, ev.WorkloadClassified, ev.PlacementDecided,
                ev.WorkloadSubmitted, ev.WorkloadAdmitted, ev.PerformanceObserved, ev.QosVerdict):
        assert builder(cls) is not None, cls
    # a model validator or field validators: validation runs them, a builder would not
    assert rc.RecurringRunObserved.__pydantic_decorators__.model_validators
    assert builder(rc.RecurringRunObserved) is None
    assert builder(Envelope) is None  # private attributes


def tampered(line: str, change: dict[str, Any]) -> str:
    """`line` with its payload changed, the stored checksum kept (a row changed after writing)."""
    head, _, payload = line.partition("\t")
    return head + "\t" + codec.dumps({**json.loads(payload), **change})


def first(stored: list[str], type_name: str) -> str:
    """The first stored line of `type_name` with a checksum (at the type's current schema)."""
    return next(line for line in stored if f'"type":"{type_name}"' in line.partition("\t")[0]
                and json.loads(line.partition("\t")[0])["checksum"] is not None)


def test_a_tampered_row_is_validated_and_refused_when_invalid(stored: list[str]) -> None:
    line = first(stored, "ProfileSampleRecorded")
    bad = tampered(line, {"classification": "no-such-matrix"})
    env = rows.decode_line(bad)
    assert not env.__pydantic_private__["_memo"].trusted  # the checksum does not match
    with pytest.raises(ValidationError):
        env.event()
    bad = tampered(line, {"at": -1.0})  # a valid JSON type, an invalid value (at ≥ 0)
    with pytest.raises(ValidationError):
        rows.decode_line(bad).event()
    changed = rows.decode_line(tampered(line, {"value": 1.5, "caused": 2}))  # valid: validation decides
    assert changed.event() == ev.ProfileSampleRecorded.model_validate(changed.payload)
    assert changed.event().caused == 2.0 and type(changed.event().caused) is float  # coerced, as validated


def test_a_payload_the_builder_cannot_take_is_validated(stored: list[str]) -> None:
    line = first(stored, "WorkloadSubmitted")
    head, _, text = line.partition("\t")
    payload = json.loads(text)
    build = builder(ev.WorkloadSubmitted)
    assert build is not None
    # a field missing (a field added with a default since the row was written, same schema version)
    short = {k: v for k, v in payload.items() if k != "fast_path"}
    with pytest.raises(Untrusted):
        build(short)
    # an extra field, an unknown enum value, a union member no discriminator names
    for odd in ({**payload, "surplus": 1}, {**payload, "kind": "quantum"},
                {**payload, "target": {**payload["target"], "type": "nonsense"}}):
        with pytest.raises(Untrusted):
            build(odd)
    # through a trusted envelope: the validator decides (default filled in / refused)
    columns = json.loads(head)
    env = Envelope.trusted(**{k: columns[k] for k in ("id", "type", "source", "stream", "stream_version",
                                                      "position", "schema_version", "time", "traceparent",
                                                      "causation_id", "correlation_id")}, payload=short)
    assert env.__pydantic_private__["_memo"].trusted
    assert env.event() == ev.WorkloadSubmitted.model_validate(short)
    assert env.event().fast_path is False
    odd = Envelope.trusted(**{k: columns[k] for k in ("id", "type", "source", "stream", "stream_version",
                                                      "position", "schema_version", "time", "traceparent",
                                                      "causation_id", "correlation_id")},
                           payload={**payload, "kind": "quantum"})
    with pytest.raises(ValidationError):
        odd.event()


def test_only_trusted_envelopes_take_the_builders(stored: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(cls: type[BaseModel]) -> Any:
        raise AssertionError("a builder asked for an untrusted envelope")

    line = first(stored, "PlacementDecided")
    env = rows.decode_line(line)
    assert trusted.matches(json.loads(line.partition("\t")[0])["checksum"], env.type, env.schema_version,
                           line.partition("\t")[2])
    monkeypatch.setattr("sextant_contracts.envelope.builder", refuse)
    validated = Envelope(**{k: getattr(env, k) for k in Envelope.model_fields})  # built validated
    assert validated.event() == env.model_copy(update={"id": env.id + "x"}).event()  # a new memo: untrusted
    assert pickle.loads(pickle.dumps(env)).event() == validated.event()  # unpickled: untrusted
    with pytest.raises(AssertionError):
        env.event()
