"""Corral on the platform: racked servers and declared analytics profiles → a Corral round per
declaration (planning) → `CorralPlanDecided` with each job's racks and priority, the racks claimed
in the capacity ledger (a job it cannot hold deferred, placements gated); replay re-derives it with
0 differences, `explain` shows each job's racks and why, a daily round records only a
changed plan, and a log without profiles decides exactly as before."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.envelope import Envelope
from sextant_core.explain import explain_decision
from sextant_core.process import react
from sextant_core.profiles import policy_set
from sextant_core.recurring.decisions import build_plan, template_id
from sextant_core.recurring.ledger import Tier
from sextant_core.recurring.racks import claim_shares
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.state.evolve import evolve
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.corral import GB, profile, racked
from sextant_core.testing.loop import InProcessPlatform, steady_agent
from sextant_core.testing.recurring import runs

POLICY = policy_set("foundation")
JOBS = {"etl-hourly": 400.0, "agg-hourly": 40.0, "rep-hourly": 20.0}  # input GB
TID = {n: template_id("acme", f"{n}-0") for n in JOBS}


def recorded(racks: int = 4) -> InProcessPlatform:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit(racked(racks, 3) if racks else [server(f"s{i}", cores=16, memory_gb=64.0) for i in range(3)])
    for n in JOBS:
        p.submit(runs("acme", n, 2))
    for n, gb in JOBS.items():
        p.submit([profile(TID[n], gb)])
    return p


def plans(log: list[Envelope]) -> list[rc.CorralPlanDecided]:
    return [e.event() for e in log if e.type == "CorralPlanDecided"]  # type: ignore[misc]


def test_each_declaration_is_planned_by_planning_over_every_profiled_template() -> None:
    log = recorded().log
    assert [e.source for e in log if e.type == "CorralPlanDecided"] == ["planning"] * 3
    rounds = plans(log)
    assert [len(r.jobs) for r in rounds] == [1, 2, 3] and all(r.trigger == "profile" for r in rounds)
    last = rounds[-1]
    assert last.template_id == TID["rep-hourly"] and (last.model, last.decision.model_version) == ("corral/1", "recurring-rules/3")
    assert last.racks == ("rack-0", "rack-1", "rack-2", "rack-3") and last.machines_per_rack == 3
    jobs = {j.template_id: j for j in last.jobs}
    big = jobs[TID["etl-hourly"]]
    # the longest job is widened first: all four racks, first in line
    assert big.racks == last.racks and big.priority == 0 and big.start_s == 0.0
    assert sorted(j.priority for j in last.jobs) == [0, 1, 2]
    for j in last.jobs:
        assert set(j.racks) <= set(last.racks) and len(set(j.racks)) == len(j.racks)
        assert j.predicted_s == pytest.approx(j.model_b_s + j.penalty_s, abs=1e-5)
        # data balance α·D/r with α = 1 / (3 machines × 1.25 GB/s / 5)
        assert j.penalty_s == pytest.approx(JOBS[next(n for n, t in TID.items() if t == j.template_id)] * GB
                                            / (len(j.racks) * 0.75e9), rel=1e-6)
    # jobs sharing a rack do not overlap on it
    for a in last.jobs:
        for b in last.jobs:
            if a is not b and set(a.racks) & set(b.racks):
                assert a.start_s + a.predicted_s <= b.start_s + 1e-6 or b.start_s + b.predicted_s <= a.start_s + 1e-6
    assert last.makespan_s == pytest.approx(max(j.start_s + j.predicted_s for j in last.jobs), abs=1e-5)
    assert 0 < last.lp_bound_s <= last.makespan_s
    assert fold(log).recurring.corral == last


def test_replay_rederives_every_round_with_0_differences_and_a_changed_profile_is_a_difference() -> None:
    log = recorded().log
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    assert report.decisions == 3 and report.state == fold(log)
    i = next(i for i, e in enumerate(log) if e.type == "AnalyticsProfileDeclared")
    log[i] = log[i].model_copy(update={"payload": {**log[i].payload, "input_bytes": 900 * GB}})
    assert not replay(log, policy_set).ok


def test_explain_shows_each_job_s_racks_predicted_time_and_why() -> None:
    log = recorded().log
    last = plans(log)[-1]
    lines = explain_decision(log, last.decision.decision_id)
    assert lines[0].startswith(f"CorralPlanDecided for template {TID['rep-hourly']}")
    assert "  re-derived: identical" in lines
    assert any(x.startswith("  racks: 4 (rack-0, rack-1, rack-2, rack-3), 3 machines each") for x in lines)
    big = next(x for x in lines if x.startswith(f"  job {TID['etl-hourly']}: racks rack-0, rack-1, rack-2, rack-3 "
                                                f"(4 of 4), priority 0, starts at +0.0 s, predicted "))
    assert "(Model B " in big and " + data balance " in big
    after = lines[lines.index(big) + 1]
    # the widest job can only lose a rack: it would take longer, and so would the plan
    assert after.startswith("    one rack fewer: ") and "job +" in after and "makespan" in after
    assert any(x.startswith("    one more rack: ") for x in lines)
    assert any(x.startswith("  makespan ") and "LP-Batch bound" in x for x in lines)


def test_without_racks_every_profiled_template_is_deferred_with_the_reason() -> None:
    last = plans(recorded(racks=0).log)[-1]
    assert last.jobs == () and [d.template_id for d in last.deferred] == sorted(TID.values())
    assert all("no schedulable server has a rack" in d.reason for d in last.deferred)


def test_a_daily_round_records_only_a_changed_plan() -> None:
    p = recorded()
    p.submit([ev.Tick(at=86400.0 + 5, seq=1, period_s=60.0)])
    assert len(plans(p.log)) == 3  # nothing changed: nothing recorded
    p.submit([ev.ServerFailed(at=90000.0, server_id=f"r3m{m}") for m in range(3)])
    p.submit([ev.Tick(at=2 * 86400.0 + 5, seq=2, period_s=60.0)])
    daily = plans(p.log)[-1]
    assert daily.trigger == "daily" and daily.template_id == min(TID.values())
    assert daily.racks == ("rack-0", "rack-1", "rack-2") and all("rack-3" not in j.racks for j in daily.jobs)
    assert daily.start_step == plans(p.log)[0].start_step  # the batch keeps its time of day
    assert replay(p.log, policy_set).ok
    assert "  re-derived: identical" in explain_decision(p.log, daily.decision.decision_id)


def test_a_log_without_profiles_asks_for_no_round() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit(racked(2, 2))
    p.submit(runs("acme", "etl-hourly", 2))
    tick = ev.Tick(at=86400.0 + 5, seq=1, period_s=60.0)
    assert not any(isinstance(c, rc.PlanCorral) for c in react(fold(p.log), tick))
    p.submit([tick])
    assert not plans(p.log)


def test_racks_fold_onto_servers_and_survive_a_re_registration() -> None:
    events = [*racked(1, 1), server("r0m0", cores=32)]
    s = fold_events(events).servers["r0m0"]
    assert (s.rack, s.nic_bytes_s, s.oversubscription, s.capacity.cores) == ("rack-0", 1.25e9, 5.0, 32)


def fold_events(events: list[ev.Event]) -> ClusterState:
    st = ClusterState()
    for i, e in enumerate(events, start=1):
        st = evolve(st, e, i)
    return st


@pytest.mark.parametrize(("change", "field"), [
    ({"input_bytes": -1.0}, "input_bytes"),
    ({"shuffle_bytes": 0.0}, "shuffle_bytes"),
    ({"output_bytes": float("inf")}, "output_bytes"),
    ({"map_tasks": 0}, "map_tasks"),
    ({"disk_bytes_s": -5.0}, "disk_bytes_s"),
])
def test_a_bad_profile_fails_naming_the_field(change: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        profile("t1", 10.0, **change)
    assert err.value.errors()[0]["loc"][0] == field


def test_a_rack_needs_an_oversubscribed_uplink() -> None:
    with pytest.raises(ValidationError):
        ev.ServerRackAssigned(at=0.0, server_id="s1", rack="rack-0", oversubscription=1.0)


def test_the_racks_are_claimed_in_the_ledger_and_placements_see_them() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit(racked(4, 3))
    p.submit(runs("acme", "etl-hourly", 2))
    p.submit([profile(TID["etl-hourly"], 400.0)])
    e = plans(p.log)[-1]
    job = e.jobs[0]
    assert (job.racks, job.cores, job.memory_gb) == (e.racks, 192.0, 768.0)
    assert e.start_step == 134  # the first minute after the round (8000 s)
    plan, left_out = build_plan(fold(p.log))
    assert left_out == () and f"corral/{TID['etl-hourly']}" in plan.ledger.claims
    used = plan.ledger.used(Tier.RESIDUAL)[0]
    # 273.3 s from minute 134: four whole minutes, then 33.3 s of the fifth (the claim ends 1 ms early)
    assert used[133] == 0 and list(used[134:138]) == [192.0] * 4
    assert used[138] == pytest.approx(192.0 * (33.333333 - 1e-3) / 60) and used[139] == 0
    p.submit([submitted("w2", cores=16, memory_gb=16.0, at=9000.0)])
    deferred = p.log[-1].event()
    assert isinstance(deferred, ev.PlacementDeferred) and deferred.workload_id == "w2"
    assert deferred.reasons == ("reserved capacity: at step 134 the reservations and placements leave 16 cores too few",)
    assert replay(p.log, policy_set).ok


def test_a_job_the_ledger_cannot_hold_is_deferred_and_the_others_are_planned_without_it() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit(racked(4, 3))
    p.submit([submitted("w1", cores=64, memory_gb=64.0)])  # placed: 64 cores held at every minute
    for n in JOBS:
        p.submit(runs("acme", n, 2))
    p.submit([profile(TID[n], gb) for n, gb in JOBS.items()])
    last = plans(p.log)[-1]
    assert [d.template_id for d in last.deferred] == [TID["etl-hourly"]]
    assert last.deferred[0].reason == ("reserved capacity: at step 134 the reservations and placements leave 64 cores "
                                       "too few for its racks (rack-0, rack-1, rack-2, rack-3)")
    assert sorted(j.template_id for j in last.jobs) == sorted([TID["agg-hourly"], TID["rep-hourly"]])
    assert sorted(j.priority for j in last.jobs) == [0, 1]
    plan, left_out = build_plan(fold(p.log))
    assert left_out == () and {c for c in plan.ledger.claims if c.startswith("corral/")} == {
        f"corral/{TID['agg-hourly']}", f"corral/{TID['rep-hourly']}"}
    assert (plan.ledger.used(Tier.RESIDUAL)[0] <= 192.0 + 1e-9).all()
    assert replay(p.log, policy_set).ok


def _job(start_s: float, predicted_s: float) -> rc.CorralJob:
    return rc.CorralJob(template_id="t", racks=("rack-0",), priority=0, start_s=start_s, predicted_s=predicted_s,
                        model_b_s=predicted_s, penalty_s=0.0, cores=10.0, memory_gb=10.0)


def test_rack_claims_share_the_minute_two_jobs_meet_in_wrap_and_hold_a_long_run_once_per_step() -> None:
    a_steps, a_share = claim_shares(10, _job(0.0, 90.000001), 60, 1440)
    b_steps, b_share = claim_shares(10, _job(90.0, 30.0), 60, 1440)  # recorded start rounded 1 µs early
    assert list(a_steps) == [10, 11] and list(b_steps) == [11]
    assert a_share[0] == 1.0 and a_share[1] + b_share[0] <= 1.0
    steps, share = claim_shares(1439, _job(30.0, 60.0), 60, 1440)  # across the window's end
    assert list(steps) == [0, 1439] and share.sum() == pytest.approx((60.0 - 1e-3) / 60)
    steps, share = claim_shares(5, _job(0.0, 3 * 86400.0), 60, 1440)  # longer than the window
    assert len(steps) == 1440 and len(set(steps.tolist())) == 1440 and (share == 1.0).all()
