"""One capacity ledger for QoS placements and reservations (`recurring/placements.py`), on the
in-process platform: placements see reservations, reservations see placements, replay agrees."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.recurring.decisions import PARAMS, RULES, build_plan, rules_of, template_id
from sextant_core.recurring.ledger import ClaimInfeasible
from sextant_core.recurring.placements import RESERVED_REASON
from sextant_core.recurring.plan import Plan, ReservationRequest
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.kwiken import declared, window
from sextant_core.testing.loop import InProcessPlatform, steady_agent
from sextant_core.testing.recurring import runs

POLICY = policy_set("foundation")
TID = template_id("acme", "etl-hourly-0")
ACCEPT = rc.ContractSignedOff(at=30000.0, template_id=TID, tenant="acme", version=1, verdict="accept")


def reserved(policy=POLICY) -> InProcessPlatform:  # type: ignore[no-untyped-def]
    """16 cores; an hourly job whose reservation peaks at 4 one-core containers."""
    p = InProcessPlatform(policy, steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 6))
    p.submit([ACCEPT])
    assert fold(p.log).recurring.get(TID).reservation is not None
    return p


def placement_of(log: list[Envelope], workload_id: str) -> ev.Event:
    return next(e.event() for e in reversed(log) if e.type in ("PlacementDecided", "PlacementDeferred")
                and e.payload["workload_id"] == workload_id)


def test_the_policy_set_runs_the_current_rules_and_every_recorded_one_is_kept() -> None:
    assert POLICY.recurring_rules == PARAMS.rules == "3"
    assert rules_of("") == "2" and rules_of("recurring-rules/3") == "3"
    assert not RULES["2"].placements_claim and RULES["2"].model_version == ""
    assert RULES["3"].model_version == "recurring-rules/3"


def peak(p: InProcessPlatform) -> int:
    r = fold(p.log).recurring.get(TID).reservation
    assert r is not None
    return max(r.containers)


def test_a_placement_that_would_take_reserved_cores_is_deferred_naming_the_step() -> None:
    p = reserved()
    room = 16 - peak(p)  # what the reservation leaves at its busiest minute
    p.submit([submitted("big", at=31000.0, cores=room + 1, memory_gb=8.0, fast_path=True)])
    out = placement_of(p.log, "big")
    assert isinstance(out, ev.PlacementDeferred)
    assert out.reasons[0].startswith(f"{RESERVED_REASON}: at step ") and "1 cores too few" in out.reasons[0]
    assert out.decision.model_version == "recurring-rules/3"
    p.submit([submitted("fits", at=31100.0, cores=room, memory_gb=8.0, fast_path=True)])
    ok = placement_of(p.log, "fits")
    assert isinstance(ok, ev.PlacementDecided) and ok.allocation.total_cores == room
    assert ok.decision.model_version == "recurring-rules/3"  # the gate was asked


def test_recurring_instances_and_best_effort_work_are_not_gated() -> None:
    p = reserved()
    p.submit([submitted("inst", at=31000.0, cores=16, memory_gb=8.0, fast_path=True, tenant="acme",
                        name="etl-hourly-99")])
    inst = placement_of(p.log, "inst")
    assert isinstance(inst, ev.PlacementDecided) and inst.decision.model_version == ""
    state = fold(p.log)
    plan, left_out = build_plan(state)
    assert left_out == () and "placements" not in plan.ledger.claims  # it runs in its reservation


def test_a_reservation_is_planned_around_placed_work_and_refused_when_none_is_left() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 6))
    p.submit([submitted("svc", at=29000.0, cores=16, memory_gb=8.0, fast_path=True)])
    assert isinstance(placement_of(p.log, "svc"), ev.PlacementDecided)
    plan, _ = build_plan(fold(p.log))
    claim = plan.ledger.claims["placements"]
    assert claim.steps.size == 1440 and claim.amount[0].min() == 16.0  # held at every step
    p.submit([ACCEPT])
    refused = p.log[-1].event()
    assert isinstance(refused, rc.ReservationRefused) and refused.field == "skyline"
    assert refused.decision.model_version == "recurring-rules/3"
    # under rules 2 placements were not in the plan: the same log then reserved the 4 cores
    legacy = replace(POLICY, recurring_rules="2")
    q = InProcessPlatform(legacy, steady_agent)
    q.submit([server("s1", cores=16, memory_gb=128.0)])
    q.submit(runs("acme", "etl-hourly", 6))
    q.submit([submitted("svc", at=29000.0, cores=16, memory_gb=8.0, fast_path=True)])
    q.submit([ACCEPT])
    assert isinstance(q.log[-1].event(), rc.ReservationPlanned)


def test_replay_rederives_under_the_rules_each_decision_recorded() -> None:
    new = reserved()
    new.submit([submitted("big", at=31000.0, cores=16, memory_gb=8.0, fast_path=True)])
    old = reserved(replace(POLICY, recurring_rules="2"))  # a log recorded before placements were claims
    old.submit([submitted("big", at=31000.0, cores=16, memory_gb=8.0, fast_path=True)])
    assert isinstance(placement_of(old.log, "big"), ev.PlacementDecided)  # no gate then
    for log in (new.log, old.log):
        report = replay(log, policy_set)
        assert report.ok, report.differences[:3]
    i = next(i for i, e in enumerate(new.log) if e.type == "PlacementDeferred")
    rec = {**new.log[i].payload["decision"], "model_version": "recurring-rules/9"}
    tampered = [*new.log[:i], new.log[i].model_copy(update={"payload": {**new.log[i].payload, "decision": rec}}),
                *new.log[i + 1:]]
    report = replay(tampered, policy_set)
    assert any("recurring rules 9 not kept" in d.what for d in report.differences)


def test_hold_fits_in_what_both_tiers_leave_and_changes_nothing_when_refused() -> None:
    plan = Plan.create(10.0, 100.0, steps=60)
    adhoc = plan.add(ReservationRequest("adhoc", (4, 4), earliest=0, deadline=2, period=None)).plan
    with pytest.raises(ClaimInfeasible) as refused:  # 8 would fit under guarantees, not beside the ad-hoc 4
        adhoc.hold("w", 8.0, 8.0)
    assert refused.value.resource == "cores"
    held = adhoc.hold("w", 6.0, 8.0)
    assert np.array_equal(held.ledger.headroom(1)[0] + 6.0, adhoc.ledger.headroom(1)[0])
    assert "adhoc" in held.reservations and "w" not in adhoc.ledger.claims


def test_dra_decides_nothing_for_an_instance_whose_run_is_recorded_under_rules_3() -> None:
    from sextant_core.context import DecisionContext
    from sextant_core.recurring.decisions import extend

    state = fold(reserved().log)
    t = state.recurring.get(TID)
    ctx = DecisionContext(at=31000.0, seed=1, state_position=state.position, causation=("x",), profile="foundation",
                          policy_version=POLICY.version)
    ended, live = t.runs[-1].instance, "still-running"
    assert t.reservation is not None
    step = t.reservation.offset + 1  # inside its reservation, one container held, 8 more wanted
    assert extend(state, t, ended, step, 1, 8, ctx, RULES["3"]) == ()
    assert len(extend(state, t, ended, step, 1, 8, ctx, RULES["2"])) == 1  # rules 2 decided it
    assert len(extend(state, t, live, step, 1, 8, ctx, RULES["3"])) == 1


def test_a_kwiken_plans_reissue_load_is_a_residual_claim_a_placement_must_leave_room_for() -> None:
    p = reserved()
    p.submit([submitted("svc-1", at=30500.0, cores=8, memory_gb=8.0, fast_path=True)])
    p.submit([declared(at=30600.0), window(30700.0, 1)])
    state = fold(p.log)
    svc = state.kwiken.get("svc-1")
    assert svc is not None and svc.plan is not None and svc.plan.reissue_spent > 0
    plan, left_out = build_plan(state)
    claim = plan.ledger.claims["reissue/svc-1"]
    assert left_out == () and claim.kind.tier == 1 and claim.steps.size == 1440
    assert claim.amount[0, 0] == pytest.approx(8 * svc.plan.reissue_spent) and claim.amount[1].max() == 0.0
    room = 16 - 8 - peak(p)  # what placements and the reservation leave; the reissues take a share of it
    p.submit([submitted("last", at=31000.0, cores=room, memory_gb=8.0, fast_path=True)])
    out = placement_of(p.log, "last")
    assert isinstance(out, ev.PlacementDeferred) and out.reasons[0].startswith(RESERVED_REASON)
    assert "reissue/svc-1" not in build_plan(state, RULES["2"])[0].ledger.claims


def test_a_resize_that_grows_past_the_reservations_is_dropped_whole_and_a_shrink_is_kept() -> None:
    from sextant_core.decide import within_ledger
    from sextant_core.testing.builders import alloc, record

    p = reserved()
    room = 16 - peak(p)
    p.submit([submitted("svc", at=31000.0, cores=room - 2, memory_gb=8.0, fast_path=True)])
    state = fold(p.log)
    assert state.workloads["svc"].allocation is not None

    def adjusted(cores: int) -> ev.AllocationAdjusted:
        return ev.AllocationAdjusted(at=31100.0, workload_id="svc", decision=record(), action="scale_up",
                                     allocation=alloc(("s1", cores, 8.0)), reason="test")

    kept, refused = within_ledger(state, [adjusted(room)], POLICY)  # up to the room left: fits
    assert refused is None and len(kept) == 1
    dropped, refused = within_ledger(state, [adjusted(room + 1)], POLICY)
    assert dropped == () and refused is not None and RESERVED_REASON in refused
    assert within_ledger(state, [adjusted(room + 1)], replace(POLICY, recurring_rules="2"))[1] is None
    assert within_ledger(state, [adjusted(1)], POLICY)[1] is None  # a shrink is never refused
