"""Virtual-cluster events and their command: registered, on the tenants topic, round-tripping
byte for byte through the envelope, strict about bad values; the allocation is a decision."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sextant_contracts import codec, events, upcasters, vc
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import DecisionRecord
from sextant_contracts.topics import TENANT_EVENTS, topic_for_stream

REC = DecisionRecord(decision_id="d1", causation=("e1",), state_position=7, profile="p", policy_version="1", seed=3)
SAMPLES: list[events.Event] = [
    vc.VcCapacitySet(at=1.0, tenant="acme", servers=900, by="ops"),
    vc.VcAllocationDecided(at=2.0, decision=REC, reason="arrival", policy="sextant", total=4000,
                           shares=(vc.VcShare(tenant="acme", capacity=900, demand=1300, held=1000, allocation=1250),)),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.TYPE)
def test_round_trip_through_the_envelope_keeps_every_byte(event: events.Event) -> None:
    assert events.event_class(event.TYPE) is type(event)
    env = Envelope.wrap(event, id="e9", source="planning", stream_version=0, time=1.0).with_position(3)
    back = Envelope.from_kafka(*env.to_kafka())
    assert codec.dumpb(back.event()) == codec.dumpb(event)
    assert topic_for_stream(event.stream) is TENANT_EVENTS
    assert (events.decision_of(event) is REC) == isinstance(event, vc.VcAllocationDecided)


def test_streams() -> None:
    assert SAMPLES[0].stream == "tenant-acme" and SAMPLES[1].stream == vc.VC_STREAM
    assert vc.AllocateVcs(reason="completion").stream == vc.VC_STREAM


@pytest.mark.parametrize("bad", [{"servers": -1}, {"servers": 1.5}, {"servers": "many"}, {"tenant": ""},
                                 {"servers": 2_000_000}], ids=["negative", "fraction", "text", "no-tenant", "huge"])
def test_a_malformed_capacity_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        vc.VcCapacitySet(**{"at": 1.0, "tenant": "acme", "servers": 3, **bad})  # type: ignore[arg-type]


def test_the_command_names_no_workload_and_the_catalogue_reaches_every_version() -> None:
    with pytest.raises(ValidationError):
        vc.AllocateVcs(reason="arrival", workload_id="w1")
    with pytest.raises(ValidationError):
        vc.AllocateVcs(reason="whenever")  # type: ignore[arg-type]
    upcasters.check_upcasters()
