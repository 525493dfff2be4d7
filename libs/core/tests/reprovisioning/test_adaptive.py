"""The `Adaptive` reprovisioner's ladder as pure decisions: what each rung emits, in
which order, and that the process manager routes monitoring to it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import (
    InstructionRateTarget,
    ThroughputLatencyTarget,
    TwinWorkloadRef,
    WorkloadKind,
)
from sextant_core.decide import decide
from sextant_core.policies import PolicySet
from sextant_core.process import react
from sextant_core.profiles import policy_set
from sextant_core.reprovisioning.adaptive import LADDERS, Adaptive
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.state import fold
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import alloc, record, server

# performance per core count on platform A (c_ref = 1 without profiling runs): S(c) = U(c)/U(1)
UP = {"c1": 1.0e9, "c2": 1.9e9, "c4": 3.5e9, "c8": 6.0e9}


# the forecast's thresholds at the reactive ones, so these tests show their arithmetic on one set
# (with a forecast the defaults run hotter, tuned on the twin's conservative capacity estimates: params.py)
# (and ladder ≤ 8.5's probing: 8.6's in-place baseline probe after a reset is in test_phases86.py)
CLASSIC = AdaptationParams(forecast_scale_up_utilisation=1.05, forecast_target_utilisation=0.92,
                           forecast_hot_latency=0.95, forecast_cool_latency=0.7, forecast_scale_down_utilisation=0.92,
                           probe_policy="rotation")


# the straggler rule of ladders ≤ 8.3 (a task's work rate against the median), which these tests
# pin; 8.4's rule is in test_stragglers.py
RATE = AdaptationParams(straggler_rule="rate")


def params(p: AdaptationParams | None = None) -> PolicySet:
    base = policy_set("foundation")
    return PolicySet(**{**{f: getattr(base, f) for f in base.__dataclass_fields__}, "reprovisioner": Adaptive(params=p)})


def running(wid: str, a: Any, *, target: Any = None, kind: WorkloadKind = WorkloadKind.BATCH,
            best_effort: bool = False, at: float = 2.0) -> list[ev.Event]:
    target = target or InstructionRateTarget(ips=2.0e9)
    return [
        ev.WorkloadSubmitted(at=at, workload_id=wid, tenant="t", kind=kind, target=target,
                             spec=TwinWorkloadRef(ref=wid), fast_path=True, best_effort=best_effort),
        ev.WorkloadClassified(at=at, workload_id=wid, decision=record(1), scale_up=UP, heterogeneity={"A": 1.0e9},
                              tolerated={"memory_bw": 50.0}, caused={"memory_bw": 10.0}),
        ev.WorkloadAdmitted(at=at, workload_id=wid, decision=record(2), arq_class=0),
        ev.PlacementDecided(at=at, workload_id=wid, decision=record(3), allocation=a),
        ev.WorkloadStarted(at=at, workload_id=wid, allocation=a),
    ]


def observe(st: ClusterState, wid: str, ratio: float, value: float = 0.0, at: float = 3000.0,
            p99: float | None = None, p: AdaptationParams | None = None,
            offered: float | None = None) -> tuple[ev.Event, ...]:
    c = cmd.AssessObservation(workload_id=wid, value=value, ratio_to_target=ratio, p99_latency_ms=p99,
                              offered=offered)
    return decide(st, c, params=params(p or CLASSIC), seed=1, at=at).events


def test_below_target_scales_up_in_place_first() -> None:
    # 2 cores predict 1.9e9 / 2e9 = 0.95; 4 free cores on s1 → grow to the useful 8? only 6 are free
    st = fold([server("s1", cores=8), *running("w", alloc(("s1", 2, 4.0)))])
    (adj,) = observe(st, "w", ratio=0.94)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_up"
    assert adj.allocation.assignments[0].cores == 8 and adj.reason.startswith("reactive below_target")


def test_the_ladder_waits_a_period_after_an_allocation_change() -> None:
    # placed at 2: not adjusted again within adjust_gap_s (300 s) — the change is not measured yet
    st = fold([server("s1", cores=8), *running("w", alloc(("s1", 2, 4.0)))])
    assert observe(st, "w", ratio=0.94, at=200.0) == ()
    (adj,) = observe(st, "w", ratio=0.94, at=302.0)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_up"
    assert observe(st, "w", ratio=0.94, at=302.0, p=AdaptationParams(adjust_gap_s=400.0, probe_policy="rotation")) == ()


def test_far_below_the_estimate_reclassifies_instead() -> None:
    # estimate 0.95 × 0.85 = 0.81 > 0.5: the classification no longer describes it
    # (with the estimate rule on; off by default since the step detector, params.py)
    on = AdaptationParams(estimate_reclassify=True, probe_policy="rotation")
    st = fold([server("s1", cores=8), *running("w", alloc(("s1", 2, 4.0)))])
    (req,) = observe(st, "w", ratio=0.5, p=on)
    assert isinstance(req, ev.ReclassificationRequested) and "below_target" in req.reason
    # ... but not again within reclassify_gap_s of its last classification (at 2.0)
    assert observe(st, "w", ratio=0.5, at=500.0, p=on) == ()
    # off (the default): neither reclassified nor grown — the ladder is for a short allocation
    assert observe(st, "w", ratio=0.5) == ()


def test_no_room_in_place_evicts_best_effort_to_a_server_with_room() -> None:
    st = fold([server("s1", cores=8), server("s2", cores=8),
               *running("w", alloc(("s1", 2, 4.0))), *running("be", alloc(("s1", 6, 4.0)), best_effort=True)])
    moved, adj = observe(st, "w", ratio=0.94)
    assert isinstance(moved, ev.MigrationDecided) and moved.workload_id == "be"
    assert moved.allocation.servers == ("s2",)  # moved first: its cores leave s1 before w takes them
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "evict"
    assert adj.allocation.assignments[0].cores == 8 and adj.trace.notes == ("evict:be",)


def test_eviction_kills_best_effort_when_nowhere_else_fits() -> None:
    st = fold([server("s1", cores=8), *running("w", alloc(("s1", 2, 4.0))),
               *running("be", alloc(("s1", 6, 4.0)), best_effort=True)])
    adj, killed = observe(st, "w", ratio=0.94)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "evict"
    assert isinstance(killed, ev.WorkloadRevoked) and killed.workload_id == "be"
    assert react(fold([adj, killed], st), killed)[0] == cmd.StopWorkload(workload_id="be", reason=killed.reason)


def test_best_effort_workloads_are_never_adjusted() -> None:
    st = fold([server("s1", cores=8), *running("be", alloc(("s1", 2, 4.0)), best_effort=True)])
    assert observe(st, "be", ratio=0.1) == ()


def service(nodes: int, cores: int = 4) -> tuple[ClusterState, str]:
    servers = [server(f"s{i}", cores=8) for i in range(4)]
    a = alloc(*((f"s{i}", cores, 4.0) for i in range(nodes)))
    # capacity per node = S(cores) × 1e9 QPS at the bound (classification rows are max QPS)
    return fold([*servers, *running("svc", a, target=ThroughputLatencyTarget(qps=5.0e8, p99_latency_ms=1.0),
                                    kind=WorkloadKind.SERVICE)]), "svc"


def test_service_under_load_scales_out() -> None:
    st, wid = service(nodes=1, cores=8)  # 1 node × 6e9 capacity at 8 cores (useful max): no growth in place
    (adj,) = observe(st, wid, ratio=1.01, value=6.6e9, p99=0.3)  # u = 1.1 > 1.05
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_out"
    # sized for u ≈ 0.92: need 6.6e9 / 0.92 = 7.2e9 → 2 nodes (12e9)
    assert len(adj.allocation.assignments) == 2


def test_idle_service_gives_nodes_back() -> None:
    st, wid = service(nodes=3, cores=8)  # 18e9 capacity
    (adj,) = observe(st, wid, ratio=1.01, value=3.0e9, p99=0.2)  # u = 0.17 < 0.8, p99 cool (< 0.7 ms)
    # keep ≥ 3e9 / 0.92 = 3.3e9: one 6e9 node suffices
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_in"
    assert len(adj.allocation.assignments) == 1


def test_a_saturated_service_is_judged_by_its_offered_load() -> None:
    st, wid = service(nodes=1, cores=8)  # 6e9 capacity
    # saturated: 8e9 offered, only 2e9 served within the bound (ratio 0.25). By the served load
    # u = 2e9 / 6e9 = 0.33 would look idle; by the offered load u = 8e9 / 6e9 = 1.33 → add capacity:
    # 8e9 / 0.92 = 8.7e9 → 2 nodes (12e9)
    (adj,) = observe(st, wid, ratio=0.25, value=2.0e9, p99=5.0, offered=8.0e9)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_out"
    assert len(adj.allocation.assignments) == 2


def test_model_free_growth_reshapes_a_service_whose_node_size_no_server_has() -> None:
    # one 8-core node on s0 (the model's capacity 6e9 says 8e9 would fit at u = 1.33 with 2 nodes,
    # but every other server has 4 free cores only: no model-based rung can add an 8-core node)
    servers = [server(f"s{i}", cores=8) for i in range(4)]
    fillers = [e for i in (1, 2, 3) for e in running(f"f{i}", alloc((f"s{i}", 4, 4.0)))]
    a = alloc(("s0", 8, 4.0))
    st = fold([*servers, *fillers, *running("svc", a, target=ThroughputLatencyTarget(qps=5.0e8, p99_latency_ms=1.0),
                                            kind=WorkloadKind.SERVICE),
               ev.PerformanceObserved(at=2500.0, workload_id="svc", value=1.0e9, ratio_to_target=0.2)])
    (adj,) = observe(st, "svc", ratio=0.2, value=1.0e9, p99=5.0, offered=8.0e9)
    # serving under half its target: twice the nodes, in nodes of the largest size with enough
    # servers — 4 cores; a 4-core node counts for S(4) / S(8) = 3.5 / 6.0 of an 8-core one, so
    # 2 / 0.58 → 4 nodes of 4 cores (its own server keeps its place, resized)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_out" and "model-free" in adj.reason
    assert [(x.server_id, x.cores) for x in adj.allocation.assignments] == [("s0", 4), ("s1", 4), ("s2", 4), ("s3", 4)]
    # ladder 8.4 counted cores: twice the 8 cores, 16 / 4 → the same 4 nodes here
    (old,) = observe(st, "svc", ratio=0.2, value=1.0e9, p99=5.0, offered=8.0e9, p=LADDERS["8.4"])
    assert old.allocation == adj.allocation


# a scale-up curve flat beyond 8 cores (16 cores are 2 % above 8: the estimate's noise on a plateau)
FLAT = {"c1": 1.0e9, "c2": 1.9e9, "c4": 3.5e9, "c8": 6.0e9, "c16": 6.12e9}


def _wide_service() -> ClusterState:
    """`svc` on 2 nodes × 16 cores (s0, s1: 16-core servers); s2…s7 have 8 cores free of 16."""
    t = ThroughputLatencyTarget(qps=5.0e8, p99_latency_ms=1.0)
    a = alloc(("s0", 16, 4.0), ("s1", 16, 4.0))
    return fold([*(server(f"s{i}", cores=16) for i in range(8)),
                 *(e for i in range(2, 8) for e in running(f"f{i}", alloc((f"s{i}", 8, 4.0)))),
                 ev.WorkloadSubmitted(at=2.0, workload_id="svc", tenant="t", kind=WorkloadKind.SERVICE, target=t,
                                      spec=TwinWorkloadRef(ref="svc"), fast_path=True),
                 ev.WorkloadClassified(at=2.0, workload_id="svc", decision=record(1), scale_up=FLAT,
                                       heterogeneity={"A": 1.0e9}, tolerated={"memory_bw": 50.0},
                                       caused={"memory_bw": 10.0}),
                 ev.WorkloadAdmitted(at=2.0, workload_id="svc", decision=record(2), arq_class=0),
                 ev.PlacementDecided(at=2.0, workload_id="svc", decision=record(3), allocation=a),
                 ev.WorkloadStarted(at=2.0, workload_id="svc", allocation=a)])


def test_a_small_miss_reshapes_into_one_more_node_not_twice_the_servers() -> None:
    # a miss by 0.5 % with the model seeing spare capacity (u = 10e9 / 12.24e9 = 0.82) and no
    # server with 16 free cores: model-free growth by one node's worth. Ladder 8.5: 2 × 1.5 = 3
    # nodes — of 8 cores, as good as 16 by the curve (within 5 %); ladder 8.4: 32 cores × 1.5 = 48
    # cores in nodes of 8 = 6 nodes, twice the servers for the same growth
    st = _wide_service()
    (adj,) = observe(st, "svc", ratio=0.995, value=10.0e9, p99=1.1, offered=10.0e9)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_out" and "model-free" in adj.reason
    assert [(x.server_id, x.cores) for x in adj.allocation.assignments] == [("s0", 8), ("s1", 8), ("s2", 8)]
    assert "2x16 -> 3x8 cores" in adj.reason
    (old,) = observe(st, "svc", ratio=0.995, value=10.0e9, p99=1.1, offered=10.0e9, p=LADDERS["8.4"])
    assert len(old.allocation.assignments) == 6 and "2x16 -> 6x8 cores" in old.reason
    # without the tolerance a smaller node counts for less: 2 × 1.5 × 1.02 = 3.06 → 4 nodes
    (wider,) = observe(st, "svc", ratio=0.995, value=10.0e9, p99=1.1, offered=10.0e9,
                       p=replace(CLASSIC, blind_growth_size_tolerance=0.0))
    assert len(wider.allocation.assignments) == 4


def test_service_within_band_is_left_alone() -> None:
    st, wid = service(nodes=2, cores=8)  # 12e9
    assert observe(st, wid, ratio=1.01, value=11.0e9, p99=0.3) == ()  # u = 0.92: between 0.8 and 1.05


def test_reclaim_shrinks_cores_when_no_whole_node_can_go() -> None:
    st, wid = service(nodes=2, cores=8)  # 12e9
    (adj,) = observe(st, wid, ratio=1.01, value=8.0e9, p99=0.3)  # u = 0.67 < 0.8
    # one node (6e9) < 8e9 / 0.92 = 8.7e9 keeps both; cores (U interpolated between c4 and c8):
    # 6 → 2 × 4.75e9 = 9.5e9 ≥ 8.7e9, 5 → 2 × 4.125e9 = 8.25e9 < 8.7e9
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_down"
    assert [a.cores for a in adj.allocation.assignments] == [6, 6]


def test_recorded_ladders_replay_under_their_own_parameters() -> None:
    # a log recorded at ladder 8.4 is re-derived with 8.4's growth (in cores), the current one in nodes;
    # one recorded at 8.5 with 8.5's probing (the rotation), the current one with in-place baselines
    cur = policy_set("sextant-adaptive")
    old = policy_set(f"sextant-adaptive@{cur.version.partition('+')[0]}+8.4")
    v85 = policy_set(f"sextant-adaptive@{cur.version.partition('+')[0]}+8.5")
    assert isinstance(cur.reprovisioner, Adaptive) and isinstance(old.reprovisioner, Adaptive)
    assert isinstance(v85.reprovisioner, Adaptive)
    assert cur.version.endswith("+8.16") and cur.reprovisioner.params.blind_growth_in_nodes
    assert cur.reprovisioner.params.calibration_demonstrated_latency is not None
    assert LADDERS["8.8"] == replace(LADDERS["8.9"], calibration_demonstrated_latency=None)
    assert LADDERS["8.9"] == replace(LADDERS["8.10"], replan_min_gain=None, migrate_min_gain=LADDERS["8.8"].migrate_min_gain,
                                     scale_up_min_gain=LADDERS["8.8"].scale_up_min_gain)
    assert cur.reprovisioner.params.probe_policy == "baseline" and v85.reprovisioner.params.probe_policy == "rotation"
    assert v85.reprovisioner.params.neighbour_tolerated_margin is None and v85.reprovisioner.params.blind_growth_in_nodes
    assert cur.reprovisioner.params.latency_calibration and not old.reprovisioner.params.latency_calibration
    assert v85.reprovisioner.params == LADDERS["8.5"] and not LADDERS["8.5"].latency_calibration
    assert not old.reprovisioner.params.blind_growth_in_nodes and old.reprovisioner.params.demonstrated_capacity
    assert old.reprovisioner.params.straggler_rule == "progress" and cur.reprovisioner.params.straggler_rule == "views"


def test_latency_off_with_spare_capacity_evicts_best_effort_first() -> None:
    st, wid = service(nodes=1, cores=4)  # 3.5e9 capacity on s0 (4 of 8 cores)
    st = fold(running("be", alloc(("s0", 4, 4.0)), best_effort=True), st)
    moved, adj = observe(st, wid, ratio=0.95, value=1.0e9, p99=2.0)  # u = 0.29 but the bound is missed
    assert isinstance(moved, ev.MigrationDecided) and moved.workload_id == "be"
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "evict" and "interference" in adj.reason


def test_a_miss_at_a_load_the_allocation_served_evicts_best_effort_first() -> None:
    # 1 node × 8 cores on a 12-core s0: the model's capacity 6e9 (8 cores are the useful max, so
    # the filler's 4 cores would not let it grow in place). It served 7e9 offered with its QoS met
    # (the model underestimates it); a best-effort filler arrives and the bound is missed at 6.8e9:
    # u = 1.13 is above the target utilisation, so by the model alone it would grow — but this
    # allocation has served more: interference first
    st = fold([server("s0", cores=12), *(server(f"s{i}", cores=8) for i in (1, 2, 3)),
               *running("svc", alloc(("s0", 8, 4.0)), target=ThroughputLatencyTarget(qps=5.0e8, p99_latency_ms=1.0),
                        kind=WorkloadKind.SERVICE),
               ev.PerformanceObserved(at=2400.0, workload_id="svc", value=7.0e9, ratio_to_target=1.01,
                                      p99_latency_ms=0.6, offered=7.0e9),
               *running("be", alloc(("s0", 4, 4.0)), best_effort=True, at=2500.0)])
    moved, adj = observe(st, "svc", ratio=0.95, value=6.5e9, offered=6.8e9, p99=2.0)
    assert isinstance(moved, ev.MigrationDecided) and moved.workload_id == "be"
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "evict"
    assert "served 7000000000.0 with its QoS met on this allocation" in adj.reason
    # ladder 8.2 (kept for replay) grows instead
    (grow,) = observe(st, "svc", ratio=0.95, value=6.5e9, offered=6.8e9, p99=2.0,
                      p=replace(CLASSIC, demonstrated_capacity=False))
    assert isinstance(grow, ev.AllocationAdjusted) and grow.action == "scale_out"
    # a load above what it served is a capacity question: it grows
    (more,) = observe(st, "svc", ratio=0.95, value=6.5e9, offered=7.5e9, p99=2.0)
    assert isinstance(more, ev.AllocationAdjusted) and more.action == "scale_out"


def test_only_observations_since_the_latest_allocation_change_count() -> None:
    st, wid = service(nodes=1, cores=4)
    # served 4.2e9 before the allocation changed at 2500 s (a scale-down to 2 cores): it says
    # nothing about the new allocation
    st = fold([ev.PerformanceObserved(at=2400.0, workload_id=wid, value=4.2e9, ratio_to_target=1.01,
                                      p99_latency_ms=0.6, offered=4.2e9),
               ev.AllocationAdjusted(at=2500.0, workload_id=wid, decision=record(9), action="scale_down",
                                     allocation=alloc(("s0", 2, 4.0)), reason="test"),
               ev.PerformanceObserved(at=2800.0, workload_id=wid, value=1.5e9, ratio_to_target=1.01,
                                      p99_latency_ms=0.6, offered=1.5e9),
               ev.PerformanceObserved(at=2900.0, workload_id=wid, value=2.5e9, ratio_to_target=0.9,
                                      p99_latency_ms=0.6, offered=2.5e9)], st)
    w = st.workloads[wid]
    assert Adaptive._served(w, 3000.0) == 1.5e9  # not 4.2e9 (before), not 2.5e9 (missed)
    assert Adaptive._served(w, 2800.0) is None  # strictly before `at`


def test_probe_round_samples_a_fifth_and_probe_change_reclassifies() -> None:
    events = [server("s1", cores=64)]
    for i in range(20):
        events += running(f"w{i}", alloc(("s1", 1, 1.0)))
    st = fold(events)
    tick = ev.Tick(at=3600.0, seq=60, period_s=60.0)
    reviews = react(fold([tick], st), tick)
    assert len(reviews) == 20 and all(r == cmd.ReviewWorkload(workload_id=r.workload_id, reason="probe_round")
                                      for r in reviews)
    assert react(st, ev.Tick(at=3660.0, seq=61, period_s=60.0)) == ()  # not a round boundary
    rotation = params(LADDERS["8.5"])  # 8.6 probes every workload against an in-place baseline (test_phases86.py)
    probes = [e for r in reviews for e in decide(st, r, params=rotation, seed=1, at=3600.0).events]
    assert 1 <= len(probes) <= 8 and all(isinstance(p, ev.ProbeRequested) for p in probes)
    p = probes[0]
    assert isinstance(p, ev.ProbeRequested)
    (probe_cmd,) = react(fold([p], st), p)
    assert isinstance(probe_cmd, cmd.ProbeInterference) and probe_cmd.HANDLER == "agent"
    # the agent measures memory_bw tolerated 50 → 30 (−40 %, 20 points): a phase change
    fact = ev.InterferenceProbed(at=3601.0, workload_id=p.workload_id, probe_id=p.probe_id,
                                 tolerated={"memory_bw": 30.0}, caused={"memory_bw": 10.0})
    (assess,) = react(fold([p, fact], st), fact)
    (req,) = decide(fold([p, fact], st), assess, params=rotation, seed=1, at=3601.0).events
    assert isinstance(req, ev.ReclassificationRequested) and req.reason.startswith("proactive")


def test_straggler_probe_then_relaunch_elsewhere() -> None:
    st = fold([server("s0"), server("s1"), server("s2"),
               *running("job", alloc(("s0", 4, 4.0), ("s1", 4, 4.0)), kind=WorkloadKind.ANALYTICS)])
    tasks = cmd.AssessTasks(workload_id="job", servers=("s0",) * 4 + ("s1",) * 4,
                            rates=(1.0,) * 4 + (0.3,) * 4, progress=(0.4,) * 8)
    (probe,) = decide(st, tasks, params=params(RATE), seed=1, at=500.0).events
    assert isinstance(probe, ev.ProbeRequested) and probe.purpose == "straggler" and probe.server_id == "s1"
    same = cmd.AssessProbe(workload_id="job", probe_id=probe.probe_id, purpose="straggler", server_id="s1",
                           tolerated={"memory_bw": 48.0}, caused={"memory_bw": 10.0})
    assert decide(st, same, params=params(RATE), seed=1, at=501.0).events == ()  # ≤ 20 %: not a straggler
    changed = same.model_copy(update={"tolerated": {"memory_bw": 20.0}})
    (adj,) = decide(st, changed, params=params(RATE), seed=1, at=501.0).events
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "relaunch"
    assert adj.allocation.servers == ("s0", "s2")


def test_profiles_without_the_ladder_decide_nothing_on_monitoring_inputs() -> None:
    st = fold([server("s1", cores=8), *running("w", alloc(("s1", 2, 4.0)))])
    c = cmd.AssessObservation(workload_id="w", value=1.0, ratio_to_target=0.1)
    assert decide(st, c, params=policy_set("foundation"), seed=1, at=10.0).events == ()


def test_services_are_not_in_the_proactive_sample() -> None:
    st, wid = service(nodes=1)
    decisions = [decide(st, cmd.ReviewWorkload(workload_id=wid, reason="probe_round"), params=params(), seed=1,
                        at=600.0 * k).events for k in range(1, 6)]  # five rounds: every workload's turn comes
    assert decisions == [()] * 5


def test_service_scale_out_takes_best_effort_cores_and_kills_them_once() -> None:
    st, wid = service(nodes=1, cores=8)  # s0 full; s1..s3 are taken by one best-effort job
    st = fold(running("be", alloc(("s1", 8, 4.0), ("s2", 8, 4.0), ("s3", 8, 4.0)), best_effort=True), st)
    adj, *kills = observe(st, wid, ratio=1.01, value=6.6e9, p99=0.3)  # u = 1.1: needs 7.8e9 → one more node
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_out"
    assert adj.allocation.servers == ("s0", "s1") and adj.trace.notes == ("evict:be",)
    assert [k.workload_id for k in kills] == ["be"] and isinstance(kills[0], ev.WorkloadRevoked)


def test_a_node_of_a_slower_platform_is_not_a_straggler() -> None:
    # the classification predicts platform B at a third of A: B's tasks at 0.35 are as expected
    events = [server("s0"), server("s1", platform="B"),
              *running("job", alloc(("s0", 4, 4.0), ("s1", 4, 4.0)), kind=WorkloadKind.ANALYTICS)]
    events[-4] = events[-4].model_copy(update={"heterogeneity": {"A": 1.0e9, "B": 0.33e9}})
    st = fold(events)
    tasks = cmd.AssessTasks(workload_id="job", servers=("s0",) * 4 + ("s1",) * 4,
                            rates=(1.0,) * 4 + (0.35,) * 4, progress=(0.4,) * 8)
    assert decide(st, tasks, params=params(RATE), seed=1, at=500.0).events == ()
    # ... at 0.15 (less than half of what B should do) it is
    slow = tasks.model_copy(update={"rates": (1.0,) * 4 + (0.15,) * 4})
    (probe,) = decide(st, slow, params=params(RATE), seed=1, at=500.0).events
    assert isinstance(probe, ev.ProbeRequested) and probe.server_id == "s1"


def test_two_evicted_co_runners_do_not_land_on_the_same_server() -> None:
    st = fold([server("s1", cores=8), server("s2", cores=8), server("s3", cores=8),
               *running("w", alloc(("s1", 2, 4.0))), *running("be1", alloc(("s1", 3, 4.0)), best_effort=True),
               *running("be2", alloc(("s1", 3, 4.0)), best_effort=True)])
    m1, m2, adj = observe(st, "w", ratio=0.94)
    assert isinstance(m1, ev.MigrationDecided) and isinstance(m2, ev.MigrationDecided)
    assert {m1.allocation.servers, m2.allocation.servers} == {("s2",), ("s3",)}
    assert isinstance(adj, ev.AllocationAdjusted) and adj.allocation.assignments[0].cores == 8


def _service_on(a: Any, het: dict[str, float]) -> list[ev.Event]:
    t = ThroughputLatencyTarget(qps=5.0e8, p99_latency_ms=1.0)
    return [
        ev.WorkloadSubmitted(at=2.0, workload_id="svc", tenant="t", kind=WorkloadKind.SERVICE, target=t,
                             spec=TwinWorkloadRef(ref="svc"), fast_path=True),
        ev.WorkloadClassified(at=2.0, workload_id="svc", decision=record(1), scale_up=UP, heterogeneity=het,
                              tolerated={"memory_bw": 50.0}, caused={"memory_bw": 10.0}),
        ev.WorkloadAdmitted(at=2.0, workload_id="svc", decision=record(2), arq_class=0),
        ev.PlacementDecided(at=2.0, workload_id="svc", decision=record(3), allocation=a),
        ev.WorkloadStarted(at=2.0, workload_id="svc", allocation=a),
    ]


def test_extra_node_for_a_guarded_service_looks_past_best_effort_and_weaker_platforms() -> None:
    from sextant_core.reprovisioning import ladder
    from sextant_core.reprovisioning.estimate import performance_model

    # svc on a1 (platform A); a2 (A) holds a best-effort job pressing memory_bw 80 > svc's 50; b1 is
    # an empty server of platform B, where svc is half as fast
    events = [server("a1"), server("a2"), server("b1", platform="B"),
              *_service_on(alloc(("a1", 8, 4.0)), {"A": 1.0e9, "B": 0.5e9}),
              *running("be", alloc(("a2", 4, 4.0)), best_effort=True)]
    events[-4] = ev.WorkloadClassified(at=2.0, workload_id="be", decision=record(1), scale_up=UP,
                                       heterogeneity={"A": 1.0e9}, tolerated={"memory_bw": 50.0},
                                       caused={"memory_bw": 80.0})
    st = fold(events)
    w = st.workloads["svc"]
    m = performance_model(st, w)

    def pick(state: ClusterState, **kw: Any) -> str | None:
        n = ladder.extra_node(state, state.workloads["svc"], m, 8, 4.0, exclude=("a1",), over_best_effort=True, **kw)
        return None if n is None else n.server_id

    assert pick(st) == "b1"  # a2's best-effort pressure is more than svc tolerates: the weaker b1
    # a floor at svc's own node ranks weaker nodes last among compatible servers only: b1 still
    # beats a2, where svc would sit next to what it does not tolerate (a2 has room: no eviction)
    assert pick(st, at_least=m.node("A", 8)) == "b1"
    # guarded (after an eviction for it), svc evicts every best-effort resident of a new server:
    # their pressure no longer counts against a2
    guarded = fold([ev.AllocationAdjusted(at=3.0, workload_id="svc", decision=record(4), action="evict",
                                          allocation=w.allocation, reason="interference suspected")], st)
    assert guarded.workloads["svc"].guarded and pick(guarded) == "a2"
    # and with a server of A that is compatible, the floor puts it before b1
    st2 = fold([server("a3")], st)
    assert pick(st2, at_least=m.node("A", 8)) == "a3" and pick(st2) == "a3"


def test_a_guarded_service_scaling_out_evicts_best_effort_from_its_new_server() -> None:
    # a2 has room for both (16 cores): an unguarded service leaves the best-effort job there
    events = [server("a1"), server("a2", cores=16),
              *_service_on(alloc(("a1", 8, 4.0)), {"A": 1.0e9}),
              *running("be", alloc(("a2", 4, 4.0)), best_effort=True)]
    st = fold(events)
    adj, *rest = observe(st, "svc", ratio=1.01, value=6.6e9, p99=0.3)  # u = 1.1: one more node
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_out" and adj.allocation.servers == ("a1", "a2")
    assert rest == []
    w = st.workloads["svc"]
    guarded = fold([ev.AllocationAdjusted(at=3.0, workload_id="svc", decision=record(4), action="evict",
                                          allocation=w.allocation, reason="interference suspected")], st)
    adj, killed = observe(guarded, "svc", ratio=1.01, value=6.6e9, p99=0.3)
    assert adj.allocation.servers == ("a1", "a2")  # type: ignore[attr-defined]
    assert isinstance(killed, ev.WorkloadRevoked) and killed.workload_id == "be"


def test_the_ladder_does_not_size_on_a_window_split_seconds_long() -> None:
    # the same shortfall as `test_below_target_scales_up_in_place_first`, seen over a 10 s window
    # (split at a neighbour's change): too noisy to size on — over a 300 s window it grows
    base = [server("s1", cores=8), *running("w", alloc(("s1", 2, 4.0)))]
    short = fold([*base, ev.PerformanceObserved(at=2990.0, workload_id="w", value=1.9e9, ratio_to_target=0.94),
                  ev.PerformanceObserved(at=3000.0, workload_id="w", value=1.9e9, ratio_to_target=0.94)])
    assert observe(short, "w", ratio=0.94) == ()
    long = fold([*base, ev.PerformanceObserved(at=2700.0, workload_id="w", value=1.9e9, ratio_to_target=0.94),
                 ev.PerformanceObserved(at=3000.0, workload_id="w", value=1.9e9, ratio_to_target=0.94)])
    (adj,) = observe(long, "w", ratio=0.94)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_up"


# --- services: growth and reclaim sized on the load forecast (reprovisioning.forecast) ------------


def with_loads(st: ClusterState, wid: str, loads: list[float], start: float = 600.0) -> ClusterState:
    """`st` after one observation per 10-minute window with these offered loads."""
    return fold([ev.PerformanceObserved(at=start + 600.0 * i, workload_id=wid, value=x, ratio_to_target=1.01,
                                        p99_latency_ms=0.3, offered=x) for i, x in enumerate(loads)], st)


def test_a_rising_service_grows_before_its_utilisation_leaves_the_band() -> None:
    st, wid = service(nodes=2, cores=8)  # 12e9
    st = with_loads(st, wid, [2.5e9, 4.0e9, 5.5e9, 7.0e9, 8.5e9, 10.0e9])  # +1.5e9 a window, 600 … 3600 s
    # now 11.5e9: u = 0.96, inside the band (0.8 … 1.05) — the last window alone changes nothing
    off = replace(CLASSIC, forecast_horizon_s=None)
    assert observe(st, wid, ratio=1.01, value=11.5e9, offered=11.5e9, p99=0.3, at=4200.0, p=off) == ()
    # the trend (1.5e9 per 600 s, a straight line: no error, no margin) puts it at 13e9 in 600 s:
    # u ahead 1.08 > 1.05 → sized for 13e9 / 0.92 = 14.1e9 → 3 nodes (18e9)
    (adj,) = observe(st, wid, ratio=1.01, value=11.5e9, offered=11.5e9, p99=0.3, at=4200.0)
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "scale_out"
    assert "trend forecast" in adj.reason and len(adj.allocation.assignments) == 3


def test_a_short_history_is_not_forecast() -> None:
    st, wid = service(nodes=2, cores=8)
    st = with_loads(st, wid, [9.0e9, 10.0e9], start=3000.0)  # 600 s of history < forecast_min_history_s
    assert observe(st, wid, ratio=1.01, value=11.0e9, offered=11.0e9, p99=0.3, at=4200.0) == ()


def test_a_falling_service_keeps_what_the_load_now_needs() -> None:
    # past the peak the forecast is below the load now: capacity still covers the load now
    # (reclaim sizes on max(load now, upper forecast)), so a falling trend alone gives nothing back
    # that the last window would keep
    st, wid = service(nodes=2, cores=8)  # 12e9
    st = with_loads(st, wid, [16.0e9, 15.0e9, 14.0e9, 13.0e9, 12.0e9, 11.0e9])
    assert observe(st, wid, ratio=1.01, value=10.5e9, offered=10.5e9, p99=0.3, at=4200.0) == ()  # u = 0.875
