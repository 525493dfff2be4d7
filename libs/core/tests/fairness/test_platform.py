"""Virtual clusters on the platform: capacities as events, the allocation decided by planning at
every arrival, completion and capacity change (only while a tenant has a capacity), the history a
fold of the allocations, the placement gate, replay with 0 differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import vc
from sextant_contracts.envelope import Envelope
from sextant_core.decide import decide, seed_for
from sextant_core.fairness import History, HistoryParams, advance
from sextant_core.fairness.platform import GATE_REASON, allocate, tenant_load, usage
from sextant_core.fairness.vcstate import FIELDS, VcState, evolve_vc, history_at
from sextant_core.process import react
from sextant_core.profiles import policy_set, with_vc_policy
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, record, server, submitted, through_placement
from sextant_core.testing.loop import InProcessPlatform, steady_agent

POLICY = policy_set("foundation")


def job(wid: str, tenant: str, at: float) -> ev.WorkloadSubmitted:
    return submitted(wid, at=at, cores=8, memory_gb=16.0, tenant=tenant, fast_path=True)


def cap(tenant: str, servers: int, at: float = 1.0) -> vc.VcCapacitySet:
    return vc.VcCapacitySet(at=at, tenant=tenant, servers=servers, by="ops")


def run(capacities: bool, params: str = "foundation") -> InProcessPlatform:
    """4 whole-server jobs of `a`, then one of `b`, then `a0` completes; `a` and `b` own 1 server
    each of 4 (2 system machines) when `capacities`."""
    p = InProcessPlatform(policy_set(params), steady_agent)
    p.submit([server(f"s{i}") for i in range(4)])
    if capacities:
        p.submit([cap("a", 1), cap("b", 1)])
    for k in range(4):
        p.submit([job(f"a{k}", "a", 10.0 + k)])
    p.submit([job("b0", "b", 20.0)])
    p.submit([job("a4", "a", 30.0)])
    p.submit([ev.WorkloadCompleted(at=100.0, workload_id="a0")])
    return p


def shares(e: Envelope) -> list[tuple[str, int, int, int, int]]:
    x = e.event()
    assert isinstance(x, vc.VcAllocationDecided)
    return [(s.tenant, s.capacity, s.demand, s.held, s.allocation) for s in x.shares]


def test_without_capacities_nothing_new_is_decided() -> None:
    log = run(capacities=False).log
    assert not [e for e in log if e.type.startswith("Vc")]
    assert fold(log).vcs == VcState()


def test_with_capacities_planning_allocates_at_every_arrival_completion_and_capacity_change() -> None:
    log = run(capacities=True).log
    decided = [e for e in log if e.type == "VcAllocationDecided"]
    assert {e.source for e in decided} == {"planning"}
    reasons = [e.event().reason for e in decided]  # type: ignore[attr-defined]
    assert reasons == ["capacity"] * 2 + ["arrival"] * 6 + ["completion"]
    # (tenant, capacity, demand, held, allocation); 4 servers. b arrives: a's guarantee 1 + b's 1,
    # the 2 free servers to a (MaxMin-like on the excess, b has none): a 3, b 1 — a keeps the 4 it
    # holds (no preemption) and b0 waits for a server
    assert shares(decided[6]) == [("a", 1, 4, 4, 3), ("b", 1, 1, 0, 1)]
    # a4 arrives: a demands 5, holds 4 > its 3
    assert shares(decided[7]) == [("a", 1, 5, 4, 3), ("b", 1, 1, 0, 1)]
    # a0 completes: a holds 3 = its allocation, so the freed server goes to b0, a4 still waits
    last = decided[8]
    assert shares(last) == [("a", 1, 4, 3, 3), ("b", 1, 1, 0, 1)]
    placed = [e.event().workload_id for e in log[last.position:] if e.type == "PlacementDecided"]  # type: ignore[attr-defined]
    assert placed == ["b0"]
    gated = [e.event() for e in log if e.type == "PlacementDeferred"]
    assert [(g.workload_id, g.reasons) for g in gated] == [  # type: ignore[attr-defined]
        ("b0", ("fit/insufficient_cores", "scale_out/insufficient_capacity")), ("a4", (GATE_REASON,))]


def test_replay_rederives_every_allocation_with_0_differences_and_rebuilds_the_history() -> None:
    log = run(capacities=True).log
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    assert report.decisions == sum(1 for e in log if ev.decision_of(e.event()) is not None)
    assert sum(1 for e in log if e.type == "VcAllocationDecided") == 9
    assert report.state == fold(log)


def test_a_decider_restarted_from_a_snapshot_replays_the_same_allocations() -> None:
    import pickle

    log = run(capacities=True).log
    cut = next(i for i, e in enumerate(log) if e.type == "WorkloadSubmitted" and e.event().tenant == "b")  # type: ignore[attr-defined]
    snapshot = pickle.loads(pickle.dumps(fold(log[:cut]), protocol=5))
    assert snapshot == fold(log[:cut]) and snapshot.vcs.history["b"][0] > 0  # b has lent already
    by_id = {e.id: e.event() for e in log[:cut]}
    report = replay(log[cut:], policy_set, state=snapshot, lookup=by_id.get)
    assert report.ok, report.differences[:3]
    assert report.state == fold(log)
    assert sum(1 for e in log[cut:] if e.type == "VcAllocationDecided") == 3  # b0, a4, a0's completion


def test_explain_re_derives_an_allocation() -> None:
    from sextant_core.explain import explain_decision

    log = run(capacities=True).log
    d = next(e.event() for e in log if e.type == "VcAllocationDecided")
    lines = explain_decision(log, d.decision.decision_id)  # type: ignore[attr-defined]
    assert lines[0].startswith("VcAllocationDecided between virtual clusters (sextant, capacity)")
    assert "  re-derived: identical" in lines


def test_a_changed_capacity_is_a_difference() -> None:
    log = run(capacities=True).log
    i = next(i for i, e in enumerate(log) if e.type == "VcCapacitySet")
    log[i] = log[i].model_copy(update={"payload": {**log[i].payload, "servers": 2}})
    assert not replay(log, policy_set).ok


def test_the_policy_is_a_setting_named_in_the_profile_so_replay_rebuilds_it() -> None:
    name = with_vc_policy("foundation", "maxmin")
    assert name == "foundation~vc=maxmin" and with_vc_policy("foundation", "sextant") == "foundation"
    assert policy_set(name).vc_policy == "maxmin" and policy_set("foundation").vc_policy == "sextant"
    log = run(capacities=True, params=name).log
    decided = [e.event() for e in log if e.type == "VcAllocationDecided"]
    assert {d.policy for d in decided} == {"maxmin"}  # type: ignore[attr-defined]
    assert {d.decision.profile for d in decided} == {name}  # type: ignore[attr-defined]
    assert replay(log, policy_set).ok
    with pytest.raises(ValueError, match="unknown VC policy"):
        with_vc_policy("foundation", "fifo")


def test_the_history_is_the_fold_of_the_allocation_intervals() -> None:
    log = run(capacities=True).log
    decided = [e.event() for e in log if e.type == "VcAllocationDecided"]
    h = History.empty(2)
    for prev, nxt in zip(decided, decided[1:], strict=False):
        assert isinstance(prev, vc.VcAllocationDecided) and isinstance(nxt, vc.VcAllocationDecided)
        arr = [np.array([getattr(s, f) for s in prev.shares]) for f in ("capacity", "demand", "allocation")]
        h = advance(h, nxt.at - prev.at, *arr, prev.total, HistoryParams())
    rows = fold(log).vcs.history
    for k, f in enumerate(FIELDS):
        assert [rows[t][k] for t in ("a", "b")] == getattr(h, f).tolist()
    # b lent its idle server to a from a's second job (t=11) to b's arrival (t=20): 9 server-seconds
    assert rows["b"][0] == 9.0 and rows["a"][1] > 0


def test_usage_advances_the_history_to_now_and_reports_server_hours() -> None:
    state = fold(run(capacities=True).log)
    later = state.vcs.last.at + 3600.0  # type: ignore[union-attr]
    u = usage(state, "a", later)
    # over the last hour a held 3 of its allocation 3 with capacity 1: 2 servers borrowed
    before = state.vcs.history["a"][1]
    assert u.received_server_hours == round((before + 2 * 3600.0) / 3600.0, 6)
    assert (u.capacity, u.demand, u.held, u.allocation, u.load) == (1, 4, 3, 3, 4.0)
    # a0 ran from 10 s to 100 s: stretch (100 − 10) / max(90, 60) = 1
    assert (u.completed, u.stretch, u.policy) == (1, 1.0, "sextant")
    assert history_at(state.vcs, later)["a"] != state.vcs.history["a"]


def test_the_gate_holds_a_tenant_at_its_allocation_while_a_server_is_free() -> None:
    # 3 servers; a owns 1 and holds 1, b owns 1 and waits; the allocation gives a 1, b 1 (+1 free)
    events: list[ev.Event] = [server("s0"), server("s1"), server("s2"), cap("a", 1), cap("b", 1),
                              submitted("a0", tenant="a", fast_path=True), *through_placement("a0", alloc(("s0", 8, 16.0))),
                              submitted("a1", tenant="a", fast_path=True, at=3.0),
                              ev.WorkloadClassified(at=3.0, workload_id="a1", decision=record(4)),
                              ev.WorkloadAdmitted(at=3.0, workload_id="a1", decision=record(5), arq_class=0)]
    state = fold(events)
    a = vc.VcShare(tenant="a", capacity=1, demand=2, held=1, allocation=1)
    b = vc.VcShare(tenant="b", capacity=1, demand=1, held=0, allocation=1)
    decided = vc.VcAllocationDecided(at=3.0, decision=record(6), reason="arrival", policy="strict", total=3, shares=(a, b))
    place = cmd.PlaceWorkload(workload_id="a1")
    out = decide(fold([decided], state), place, params=POLICY, seed=1, at=3.0).events
    assert [(type(e).__name__, getattr(e, "reasons", ())) for e in out] == [("PlacementDeferred", (GATE_REASON,))]
    grown = decided.model_copy(update={"shares": (a.model_copy(update={"allocation": 2}), b)})
    out = decide(fold([grown], state), place, params=POLICY, seed=1, at=3.0).events
    assert [type(e).__name__ for e in out] == ["PlacementDecided"]
    assert tenant_load(state) == {"a": (2, 1)}


def test_a_capacity_change_reallocates_and_retries_deferred_placements() -> None:
    state = fold([server("s0"), cap("a", 1), submitted("w", tenant="a", fast_path=True)])
    state = state.with_(deferred=("w",))
    got = react(state, cap("a", 2))
    assert got == (vc.AllocateVcs(reason="capacity"), cmd.PlaceWorkload(workload_id="w", reason="capacity_freed"))
    assert react(fold([server("s0")]), ev.WorkloadCompleted(at=1.0, workload_id="x")) == ()


def test_the_allocation_decision_is_seeded_on_its_own_counter_and_pure() -> None:
    state = fold([server("s0"), server("s1"), cap("a", 1), submitted("w", tenant="a")])
    c = vc.AllocateVcs(reason="arrival")
    one = decide(state, c, params=POLICY, seed=seed_for(c, state), at=5.0)
    two = decide(state, c, params=POLICY, seed=seed_for(c, state), at=5.0)
    assert one == two and len(one.events) == 1
    e = one.events[0]
    assert isinstance(e, vc.VcAllocationDecided) and e.total == 2 and e.policy == "sextant"
    nxt = fold([e], state)
    assert nxt.vcs.decisions == 1 and seed_for(c, nxt) != seed_for(c, state)
    assert decide(fold([server("s0")]), c, params=POLICY, seed=1, at=5.0).events == ()


def test_capacity_then_allocation_fold_and_tenant_rows_are_kept() -> None:
    s = evolve_vc(VcState(), cap("a", 3))
    assert s.active and s.capacities["a"] == 3 and s.last is None
    st = fold([server("s0"), cap("a", 3), submitted("w", tenant="z")])
    e = allocate(st, "arrival", "maxmin", 2.0, record(1))
    assert [(x.tenant, x.capacity, x.demand, x.allocation) for x in e.shares] == [("a", 3, 0, 0), ("z", 0, 1, 1)]
    assert math.isclose(sum(x.allocation for x in e.shares), 1)
