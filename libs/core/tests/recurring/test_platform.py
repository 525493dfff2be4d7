"""Recurring jobs on the platform: runs → detection and contract (profiling) → the owner's
sign-off → reservation (planning) → DRA extensions (reprovisioning) → daily re-inference; every
decision re-derived by replay with 0 differences, and a changed fact is a difference."""

from __future__ import annotations

from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.envelope import Envelope
from sextant_core.explain import explain_decision
from sextant_core.profiles import policy_set
from sextant_core.recurring.decisions import check_signoff, template_id
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.builders import server
from sextant_core.testing.loop import InProcessPlatform, steady_agent
from sextant_core.testing.recurring import runs

POLICY = policy_set("foundation")
TID = template_id("acme", "etl-hourly-0")


def types(log: list[Envelope], source: str | None = None) -> list[str]:
    return [e.type for e in log if source is None or e.source == source]


def signoff(verdict: str, version: int = 1, at: float = 30000.0, **fields: object) -> rc.ContractSignedOff:
    return rc.ContractSignedOff(at=at, template_id=TID, tenant="acme", version=version, verdict=verdict,  # type: ignore[arg-type]
                                **fields)  # type: ignore[arg-type]


def recorded() -> InProcessPlatform:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 6))
    p.submit([signoff("accept")])
    p.submit([rc.RecurringInstanceObserved(at=30100.0, template_id=TID, instance="i9", step=545, used=8, pending=4)])
    p.submit(runs("acme", "etl-hourly", 6, first=6, skyline=(3, 3, 5, 5, 5, 5, 3, 3, 1, 1)))
    p.submit([ev.Tick(at=86400.0 + 5, seq=1, period_s=60.0)])  # the daily re-inference
    p.submit([signoff("override", version=2, at=87000.0, deadline_s=1500.0)])
    p.submit([signoff("reject", version=2, at=88000.0)])
    return p


def test_the_whole_cycle_is_decided_by_the_owning_services() -> None:
    log = recorded().log
    assert types(log, "profiling") == ["RecurringTemplateDetected", "ContractInferred", "ContractInferred"]
    assert types(log, "planning") == ["ReservationPlanned", "ReservationPlanned", "ReservationPlanned",
                                      "ReservationReleased"]
    assert types(log, "reprovisioning") == ["ReservationExtended"]
    state = fold(log).recurring.get(TID)
    first, daily = [e.event() for e in log if e.type == "ContractInferred"]
    assert isinstance(first, rc.ContractInferred) and isinstance(daily, rc.ContractInferred)
    # a = P95 of inputs at +30 s, d = P50 of reads at +1800 s; the skyline covers the runs
    assert (first.version, first.trigger, first.period_s) == (1, "detected", 3600.0)
    assert (first.earliest_start_s, first.deadline_s) == (30.0, 1800.0)
    assert first.skyline_peak == 4 and first.skyline_area == 26
    assert (daily.version, daily.trigger, daily.skyline_peak) == (2, "daily", 5)
    planned = [e.event() for e in log if e.type == "ReservationPlanned"]
    assert [p.change for p in planned] == ["new", "reinferred", "override"]  # type: ignore[attr-defined]
    ext = next(e.event() for e in log if e.type == "ReservationExtended")
    assert isinstance(ext, rc.ReservationExtended) and ext.granted > 0 and ext.demand == 12
    assert state.reservation is None and state.signoff is not None and state.signoff.verdict == "reject"


def test_replay_rederives_every_recurring_decision_with_0_differences() -> None:
    log = recorded().log
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    decisions = sum(1 for e in log if ev.decision_of(e.event()) is not None)
    assert report.decisions == decisions == 8
    assert report.state == fold(log)


def test_a_changed_run_is_a_difference() -> None:
    log = recorded().log
    i = next(i for i, e in enumerate(log) if e.type == "RecurringRunObserved")
    log[i] = log[i].model_copy(update={"payload": {**log[i].payload, "input_available_s": 600.0}})
    report = replay(log, policy_set)
    assert not report.ok
    assert any("ContractInferred" in d.what for d in report.differences)


def test_a_steady_job_adds_nothing_on_its_daily_re_inference() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 8))
    before = len(p.log)
    p.submit([ev.Tick(at=86400.0 + 5, seq=1, period_s=60.0)])
    assert len(p.log) == before + 1  # the tick only


def test_an_infeasible_override_is_refused_naming_its_field_and_planning_agrees() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 6))
    state = fold(p.log)
    tight = signoff("override", deadline_s=300.0)  # 5 minutes for a 10-minute skyline
    refused = check_signoff(state, tight)
    assert refused is not None and refused.field == "deadline_s"
    big = signoff("override", skyline=(40,) * 10)  # 40 containers on a 16-core cluster
    refused = check_signoff(state, big)
    assert refused is not None and refused.field == "skyline"
    assert check_signoff(state, signoff("accept")) is None
    p.submit([big])  # recorded anyway (not through the API): planning refuses it the same way
    ev_ = p.log[-1].event()
    assert isinstance(ev_, rc.ReservationRefused) and ev_.field == "skyline"


def test_explain_re_derives_a_recurring_decision() -> None:
    log = recorded().log
    planned = next(e for e in log if e.type == "ReservationPlanned")
    lines = explain_decision(log, planned.payload["decision"]["decision_id"])
    assert lines[0].startswith(f"ReservationPlanned for template {TID}")
    assert any(line.startswith("  template: tenant acme, 6 runs, contract v1, sign-off accept v1") for line in lines)
    assert "  re-derived: identical" in lines


def test_a_decider_restarted_from_a_snapshot_replays_the_same() -> None:
    import pickle

    log = recorded().log
    cut = next(i for i, e in enumerate(log) if e.type == "ContractSignedOff")  # reservations come after
    snapshot = pickle.loads(pickle.dumps(fold(log[:cut]), protocol=5))
    assert snapshot == fold(log[:cut]) and snapshot.recurring.get(TID).contract is not None
    by_id = {e.id: e.event() for e in log[:cut]}
    report = replay(log[cut:], policy_set, state=snapshot, lookup=by_id.get)
    assert report.ok, report.differences[:3]
    assert report.decisions == 6 and report.state == fold(log)  # 8 in all, 2 before the sign-off


def test_an_extension_is_held_until_its_run_and_not_when_decided_after_it() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 6))
    p.submit([signoff("accept")])
    p.submit([rc.RecurringInstanceObserved(at=30100.0, template_id=TID, instance="i9", step=545, used=8, pending=4)])
    assert [x[0] for x in fold(p.log).recurring.get(TID).extensions] == ["i9"]
    (ended,) = runs("acme", "etl-hourly", 1, first=9)
    p.submit([ended.model_copy(update={"instance": "i9"})])  # its run ends: its extensions with it
    assert fold(p.log).recurring.get(TID).extensions == ()
    late = next(e.event() for e in p.log if e.type == "ReservationExtended")
    assert isinstance(late, rc.ReservationExtended) and late.granted > 0
    p.submit([late.model_copy(update={"at": 40000.0})])  # decided after the run: nothing held
    assert fold(p.log).recurring.get(TID).extensions == ()
    other = late.model_copy(update={"at": 40000.0, "instance": "i10"})
    p.submit([other])  # another instance, still running: held
    assert fold(p.log).recurring.get(TID).extensions == (("i10", other.step, other.granted),)
