"""Trusted decoding (`sextant_contracts.trusted`, `sextant_kit.eventstore.rows`): a stored row whose
checksum matches is built without validation, and is equal to the validated envelope — on every
envelope of the committed fixture log, every event type in it; a row without a checksum, or with
one that does not match, is validated as before."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sextant_cli.demo import read_recorded
from sextant_contracts import codec, trusted
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_kit.eventstore import rows
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.testing.envelopes import make_envelope

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("*.jsonl.gz"))


@pytest.fixture(scope="module")
def logs() -> list[list[Envelope]]:
    assert FIXTURES
    return [read_recorded(p) for p in FIXTURES]


def columns(text: str) -> dict[str, Any]:
    """The row of an `encode_line` line, payload text included."""
    head, _, payload = text.partition("\t")
    return {**json.loads(head), "payload": payload}


def line(row: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in row.items() if k != "payload"}) + "\t" + row["payload"]


def trusted_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the envelopes `Envelope.trusted` builds from now on."""
    built: list[str] = []
    original = Envelope.trusted.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Envelope], **kw: Any) -> Envelope:
        built.append(kw["id"])
        return original(cls, **kw)  # type: ignore[no-any-return]

    monkeypatch.setattr(Envelope, "trusted", classmethod(spy))
    return built


def test_every_fixture_envelope_decodes_equal_both_ways(logs: list[list[Envelope]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    built = trusted_builds(monkeypatch)
    by_type: Counter[str] = Counter()
    for log in logs:
        for validated in log:
            line = rows.encode_line(validated)
            back = rows.decode_line(line)
            assert back == validated and back.model_dump() == validated.model_dump()
            assert back.event() == validated.event() and repr(back.event()) == repr(validated.event())
            assert codec.dumpb(back.event()) == codec.dumpb(validated.event())
            if columns(line)["checksum"] is not None:
                by_type[validated.type] += 1
    current = {e.type for log in logs for e in log if e.schema_version == ev.EVENT_TYPES[e.type].SCHEMA_VERSION}
    # every event type at its current schema version went through the trusted path
    assert set(by_type) == current and sum(by_type.values()) == len(built) > 900


def test_a_row_without_a_matching_checksum_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    env = Envelope.wrap(ev.Tick(at=1.0, seq=3, period_s=1.0), id="t3", source="telemetry",
                        stream_version=4, time=1.0).with_position(7)
    row = columns(rows.encode_line(env))
    assert row["checksum"] == trusted.checksum("Tick", 1, row["payload"])
    built = trusted_builds(monkeypatch)
    assert rows.decode_line(line(row)) == env and built == ["t3"]
    # no checksum (a row written before the column existed): validated, equal
    assert rows.decode_line(line({**row, "checksum": None})) == env and built == ["t3"]
    # a payload changed after it was written: its checksum no longer matches, validation decides
    bad = {**row, "payload": codec.dumps({"at": 1.0, "seq": "three", "period_s": 1.0})}
    with pytest.raises(ValidationError):
        rows.decode_line(line(bad)).event()
    with pytest.raises(ValidationError):  # without a checksum, the envelope's columns are validated too
        rows.decode_line(line({**row, "checksum": None, "stream_version": -1}))
    wrong_type = {**row, "type": "WorkloadCompleted"}  # the type is part of the checksum too
    with pytest.raises(ValidationError):
        rows.decode_line(line(wrong_type)).event()
    assert built == ["t3"]


@pytest.mark.parametrize("payload, schema_version", [
    ({"n": 1}, 1),  # not a valid Tick
    ({"at": 1, "seq": 3, "period_s": 1.0}, 1),  # valid, not canonical: `at` reads back an int
    ({"at": 1.0, "seq": 3, "period_s": 1.0}, 2),  # a schema version that is not the type's current
], ids=["invalid", "non-canonical", "other-schema-version"])
def test_no_checksum_is_written_for_what_could_not_be_trusted(payload: dict[str, Any], schema_version: int) -> None:
    assert trusted.stored_checksum("Tick", schema_version, payload, codec.dumps(payload)) is None
    assert trusted.stored_checksum("NoSuchType", 1, payload, codec.dumps(payload)) is None


async def test_the_memory_store_writes_the_checksum_and_reads_back_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryEventStore(topic_of=lambda s: None)
    built = trusted_builds(monkeypatch)
    tick = Envelope.wrap(ev.Tick(at=1.0, seq=0, period_s=1.0), id="t0", source="telemetry",
                         stream_version=0, time=1.0)
    await store.append("clock", 0, [tick.model_copy(update={"stream_version": 1}), make_envelope("clock", 2, 1)])
    a, b = await store.read_all()
    assert store.checksum(1) == trusted.checksum("Tick", 1, codec.dumps(tick.payload)) and store.checksum(2) is None
    assert built == ["t0"] and a.event() == tick.event() and b.payload == {"n": 1}


def test_the_decoded_event_is_kept_and_dropped_with_a_changed_payload() -> None:
    env = Envelope.wrap(ev.Tick(at=1.0, seq=0, period_s=1.0), id="t0", source="telemetry", stream_version=0, time=1.0)
    first = env.event()
    assert env.event() is first and env.with_position(3).event() is first
    changed = env.model_copy(update={"payload": {"at": 2.0, "seq": 1, "period_s": 1.0}})
    assert changed == changed.model_copy() and changed.event() == ev.Tick(at=2.0, seq=1, period_s=1.0)
    assert env == Envelope(**env.model_dump())  # the kept event takes no part in equality


def test_bulk_decoding_equals_one_line_at_a_time_and_restores_the_collector(logs: list[list[Envelope]]) -> None:
    import gc

    for log in logs:
        lines = [rows.encode_line(env) for env in log]
        one = [rows.decode_line(text) for text in lines]
        assert gc.isenabled()
        bulk = rows.decode_lines(lines, events=True)
        assert gc.isenabled()  # restored
        assert bulk == one
        for b, o in zip(bulk, one, strict=True):
            assert b.__pydantic_private__["_memo"].event is not None  # decoded and kept
            assert codec.dumps(b.event()) == codec.dumps(o.event())
        records = [columns(text) for text in lines]
        assert rows.envelopes_from_records(records) == one
    gc.disable()
    try:  # a caller that had it off keeps it off
        assert rows.decode_lines(lines[:3]) == one[:3]
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError):  # restored when a row fails too
        rows.decode_lines([lines[0], "{not json\t{}"])
    assert gc.isenabled()


def test_the_checksum_from_the_kept_prefix_state_is_the_digest_of_the_whole_text(logs: list[list[Envelope]],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    def whole(type_name: str, schema_version: int, text: str) -> str:  # as written before the fifth round
        h = hashlib.blake2b(digest_size=16)
        h.update(f"{type_name}\x00{schema_version}\x00".encode())
        h.update(text.encode("utf-8"))
        return h.hexdigest()

    cases = [(env.type, env.schema_version, codec.dumps(env.payload)) for log in logs for env in log[:300]]
    cases += [("T", 1, ""), ("T", 2, "{}"), ("Tick", 1, '{"é":"\u2603"}'), ("Tick", 1, '{"é":"\u2603"}')]
    for args in cases + cases:  # twice: the kept states are not advanced by a checksum
        assert trusted.checksum(*args) == whole(*args)
    assert len({(t, v) for t, v, _ in cases}) > 5
    monkeypatch.setattr(trusted, "_PREFIXES", {})
    monkeypatch.setattr(trusted, "_PREFIXES_KEPT", 2)
    for i in range(5):  # past the cap: computed, not kept
        assert trusted.checksum(f"T{i}", 1, "{}") == whole(f"T{i}", 1, "{}")
    assert len(trusted._PREFIXES) == 2
