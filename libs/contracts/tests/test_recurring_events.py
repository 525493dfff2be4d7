"""Recurring-job events and commands: registered, on their template's stream and topic,
round-tripping byte for byte through the envelope, strict about bad values; template decisions
carry a `DecisionRecord` that `decision_of` finds like a workload decision's."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from sextant_contracts import codec, events, upcasters
from sextant_contracts import recurring as rc
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import DecisionRecord
from sextant_contracts.topics import RECURRING_EVENTS, topic_for_stream

REC = DecisionRecord(decision_id="d1", causation=("e1",), state_position=7, profile="p", policy_version="1", seed=3)
PLANNED = rc.PlannedReservation(template_id="t1", earliest=1, deadline=30, period=60, skyline=(2, 4, 4),
                                cores=1.0, memory_gb=4.0, offset=5, containers=(2, 4, 4), periodic=True)

SAMPLES: list[rc.TemplateEvent] = [
    rc.RecurringRunObserved(at=10.0, template_id="t1", tenant="acme", name="etl-3", instance="i3", submit_s=1.0,
                            start_s=2.0, end_s=10.0, input_available_s=0.5, first_read_s=30.0, skyline=(1.0, 2.5)),
    rc.RecurringInstanceObserved(at=11.0, template_id="t1", instance="i4", step=3, used=4, pending=2),
    rc.ContractSignedOff(at=12.0, template_id="t1", tenant="acme", version=2, verdict="override", deadline_s=900.0,
                         skyline=(3, 3)),
    rc.RecurringTemplateDetected(at=13.0, template_id="t1", decision=REC, tenant="acme", template="etl-<n>",
                                 period_s=3600.0, natural_period_s=3600.0, arrivals=6, cv=0.0, slo="actionable"),
    rc.ContractInferred(at=14.0, template_id="t1", decision=REC, tenant="acme", version=1, trigger="detected",
                        period_s=3600.0, earliest_start_s=30.0, deadline_s=1800.0, instances=6, read_cv=0.0,
                        slack_ratio=1.9, skyline=(2, 4), skyline_peak=4, skyline_area=6),
    rc.ReservationPlanned(at=15.0, template_id="t1", decision=REC, contract_version=1, change="new",
                          reservation=PLANNED, replanned=(PLANNED.model_copy(update={"template_id": "t2"}),),
                          dropped=("t3",), peak_cost=0.25),
    rc.ReservationRefused(at=16.0, template_id="t1", decision=REC, contract_version=1, field="deadline_s",
                          reason="too tight"),
    rc.ReservationReleased(at=17.0, template_id="t1", decision=REC, reason="rejected"),
    rc.ReservationExtended(at=18.0, template_id="t1", decision=REC, instance="i4", step=3, allocated=4, demand=6,
                           cap=8, asked=2, granted=2, reason="granted"),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.TYPE)
def test_round_trip_through_the_envelope_keeps_every_byte(event: rc.TemplateEvent) -> None:
    assert events.event_class(event.TYPE) is type(event)
    env = Envelope.wrap(event, id="e9", source="profiling", stream_version=0, time=1.0).with_position(3)
    key, value, headers = env.to_kafka()
    back = Envelope.from_kafka(key, value, headers)
    assert back.event() == event
    assert codec.dumpb(back.event()) == codec.dumpb(event)
    assert event.stream == "template-t1" and topic_for_stream(event.stream) is RECURRING_EVENTS
    assert (events.decision_of(event) is REC) == isinstance(event, rc.TemplateDecision)


def test_the_catalogue_still_reaches_every_schema_version() -> None:
    upcasters.check_upcasters()  # new types start at v1; nothing existing changed shape


def test_workload_decisions_are_found_by_decision_of_too() -> None:
    e = events.ReclassificationRequested(at=1.0, workload_id="w1", decision=REC, reason="r")
    assert events.decision_of(e) is REC
    assert events.decision_of(events.Tick(at=1.0, seq=0, period_s=1.0)) is None


@pytest.mark.parametrize("bad", [
    {"verdict": "maybe"},
    {"version": 0},
    {"skyline": ()},
    {"period_s": 0.0},
    {"template_id": ""},
], ids=["verdict", "version", "empty-skyline", "period", "template"])
def test_a_malformed_sign_off_is_refused(bad: dict[str, Any]) -> None:
    base: dict[str, Any] = {"at": 1.0, "template_id": "t1", "tenant": "acme", "version": 1, "verdict": "accept"}
    with pytest.raises(ValidationError):
        rc.ContractSignedOff.model_validate({**base, **bad})


def test_template_commands_name_no_workload() -> None:
    c = rc.InferContract(template_id="t1", trigger="daily")
    assert c.workload_id == "" and c.stream == "template-t1" and c.HANDLER == "profiling"
    with pytest.raises(ValidationError):
        rc.PlanReservation(template_id="t1", workload_id="w1")
    assert {rc.PlanReservation.HANDLER, rc.ExtendReservation.HANDLER} == {"planning", "reprovisioning"}


@pytest.mark.parametrize("bad", [
    {"skyline": (1.0, -2.0)},
    {"start_s": 0.5},  # before its submission
    {"end_s": 1.5},  # before its start
    {"name": ""},
], ids=["negative-skyline", "start-before-submit", "end-before-start", "no-name"])
def test_a_malformed_run_is_refused(bad: dict[str, Any]) -> None:
    base: dict[str, Any] = {"at": 10.0, "template_id": "t1", "tenant": "acme", "name": "etl-3", "instance": "i3",
                            "submit_s": 1.0, "start_s": 2.0, "end_s": 10.0}
    rc.RecurringRunObserved.model_validate(base)
    with pytest.raises(ValidationError):
        rc.RecurringRunObserved.model_validate({**base, **bad})
