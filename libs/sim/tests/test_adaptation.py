"""Adaptation in the twin: the baselines' rules and the scoring of detections against truths."""

from __future__ import annotations

import pytest
from sextant_contracts import events as ev
from sextant_contracts.model import Allocation, Assignment, DecisionTrace
from sextant_core.testing.builders import record
from sextant_sim.adaptation import scoring
from sextant_sim.adaptation.baselines import hadoop_slow, late_slow


@pytest.mark.parametrize(("progress", "slow"), [
    ([0.5, 0.5, 0.5, 0.25], []),  # average 0.4375: 0.25 ≥ 0.2375, not 0.2 behind
    ([0.6, 0.6, 0.6, 0.2], [3]),  # average 0.5: 0.2 < 0.3
    ([0.6, 0.6, 0.6, 0.35], []),  # average 0.5375: 0.35 ≥ 0.3375
    ([1.0, 1.0, 1.0, 0.5], [3]),  # finished tasks raise the average (0.875): 0.5 < 0.675
], ids=["quarter", "behind", "not-enough", "finished"])
def test_hadoop_rule_is_progress_behind_the_average_by_0_2(progress: list[float], slow: list[int]) -> None:
    assert hadoop_slow([1.0] * len(progress), progress, 100.0) == slow


def test_late_picks_the_slowest_rates_longest_time_left_first_up_to_the_cap() -> None:
    progress = [0.5] * 16 + [0.4, 0.3, 0.2, 0.45]
    # LATE's rate = progress / 100 s: 25th percentile of 20 rates = 0.005 → candidates the last
    # four; cap 10 % of 20 = 2; time left (1 − p) / (p / 100): 0.2 → 400, 0.3 → 233, 0.4 → 150
    assert late_slow([9.9] * 20, progress, elapsed=100.0) == [18, 17]  # instantaneous rates unused
    assert late_slow([1.0] * 20, progress, elapsed=0.0) == []


def test_straggler_score_counts_detections_after_the_injection_only() -> None:
    injected = [("j1", "s1", 100.0, 3.0), ("j2", "s2", 200.0, 2.0)]
    detections = [("j1", "s1", 90.0), ("j1", "s1", 160.0), ("j3", "s9", 50.0)]
    sc = scoring.score_stragglers(injected, detections, extra_delay_s=10.0)
    # pairs detected: (j1,s1) true (first after the injection at 160), (j3,s9) false
    assert (sc.precision, sc.recall, sc.true_pairs, sc.injected) == (0.5, 0.5, 1, 2)
    assert sc.delays == {("j1", "s1"): 70.0}  # 160 − 100 + 10 (the probe)
    other = scoring.score_stragglers(injected, [("j1", "s1", 200.0), ("j2", "s2", 300.0)])
    assert other.mean_delay_s == 100.0
    assert scoring.lead(sc, other) == pytest.approx(1 - 70.0 / 100.0)
    assert scoring.lead(sc, scoring.score_stragglers(injected, [])) is None
    # censored: an injected straggler never relaunched counts until its job ended (j2 ended at 900)
    ends = {"j1": 1000.0, "j2": 900.0}
    ours = scoring.censored_delays(sc, injected, ends)
    assert ours == {("j1", "s1"): 70.0, ("j2", "s2"): 700.0}
    none = scoring.censored_delays(scoring.score_stragglers(injected, []), injected, ends)
    assert none == {("j1", "s1"): 900.0, ("j2", "s2"): 700.0}  # defined for a rule that finds nothing
    assert scoring.censored_lead(ours, none) == pytest.approx(1 - 385.0 / 800.0)
    assert scoring.censored_lead({}, none) is None


def adjusted(wid: str, at: float, servers: tuple[str, ...], action: str = "scale_out", reason: str = "") -> ev.AllocationAdjusted:
    a = Allocation(assignments=tuple(Assignment(server_id=s, cores=1, memory_gb=1.0) for s in servers))
    return ev.AllocationAdjusted(at=at, workload_id=wid, decision=record(), action=action, allocation=a,
                                 reason=reason, trace=DecisionTrace(notes=tuple(f"straggler:{s}" for s in servers)))


def test_server_hours_integrates_the_allocation_in_force() -> None:
    a2 = Allocation(assignments=(Assignment(server_id="a", cores=1, memory_gb=1.0),
                                 Assignment(server_id="b", cores=1, memory_gb=1.0)))
    events = [ev.WorkloadStarted(at=0.0, workload_id="m", allocation=a2),
              adjusted("m", 3600.0, ("a", "b", "c", "d")), adjusted("x", 3600.0, ("z",)),
              ev.WorkloadCompleted(at=5400.0, workload_id="m")]
    # 2 servers for 1 h + 4 servers for 0.5 h = 4 server-hours (the other workload does not count)
    assert scoring.server_hours(events, "m", end=9999.0) == pytest.approx(4.0)
    assert scoring.relaunches([adjusted("j", 5.0, ("s1",), action="relaunch")]) == [("j", "s1", 5.0)]


def test_phase_scoring_window_and_false_positives() -> None:
    cls = ev.WorkloadClassified(at=0.0, workload_id="w", decision=record(), tolerated={"llc_bw": 50.0})
    sample = ev.ProfileSampleRecorded(at=0.0, workload_id="w", run_id="r", classification="interference",
                                      column="llc_bw", value=50.0, caused=5.0)

    def react(at: float) -> ev.ReclassificationRequested:
        return ev.ReclassificationRequested(at=at, workload_id="w", decision=record(), reason="reactive below")

    def probe(at: float, tol: float) -> ev.InterferenceProbed:
        return ev.InterferenceProbed(at=at, workload_id="w", probe_id=f"p{at}", tolerated={"llc_bw": tol})

    obs = [ev.PerformanceObserved(at=t, workload_id="w", value=1.0, ratio_to_target=1.0) for t in (100.0, 400.0)]
    events = [cls, sample, *obs, probe(200.0, 49.0), probe(1500.0, 20.0), react(1300.0),
              ev.WorkloadCompleted(at=5000.0, workload_id="w")]
    # changes at 1000 (caught reactively at 1300, within 2 × 300 s) and 3000 (missed); the probe at
    # 1500 comes after the reactive detection, so it is not counted as proactive
    sc = scoring.score_phases(events, [("w", 1000.0, 1), ("w", 3000.0, 2)], period_s=300.0).as_json()
    assert sc["reactive_detection"] == 0.5 and sc["observable_changes"] == 2
    assert sc["probed_changes"] == 0
    # the probe at 200 (unchanged, 50 → 49) is a true negative; observations before 1000 are unchanged
    assert sc["false_positive_rate"] == 0.0 and sc["probes_of_unchanged"] == 1
    assert sc["observations_of_unchanged"] == 2 and sc["reactive_false_positives"] == 0


def _service_state(nodes: int) -> tuple[object, str]:
    from sextant_contracts.model import ThroughputLatencyTarget, TwinWorkloadRef, WorkloadKind
    from sextant_core.state import fold
    from sextant_core.testing.builders import alloc, server

    a = alloc(*((f"s{i}", 4, 2.0) for i in range(nodes)))
    events = [server(f"s{i}", cores=8) for i in range(10)] + [
        ev.WorkloadSubmitted(at=1.0, workload_id="svc", tenant="t", kind=WorkloadKind.SERVICE,
                             target=ThroughputLatencyTarget(qps=1000.0, p99_latency_ms=1.0),
                             spec=TwinWorkloadRef(ref="svc"), fast_path=True),
        ev.WorkloadClassified(at=1.0, workload_id="svc", decision=record(1)),
        ev.WorkloadAdmitted(at=1.0, workload_id="svc", decision=record(2), arq_class=0),
        ev.PlacementDecided(at=1.0, workload_id="svc", decision=record(3), allocation=a),
        ev.WorkloadStarted(at=1.0, workload_id="svc", allocation=a)]
    return fold(events), "svc"


@pytest.mark.parametrize(("nodes", "util", "expect"), [
    (1, 0.75, ("scale_out", 2)),  # 0.75 > 0.7: one more server
    (8, 0.95, None),  # at the 8-server ceiling
    (3, 0.30, ("scale_in", 2)),  # 0.30 × 3/2 = 0.45 < 0.8 × 0.7 = 0.56
    (3, 0.40, None),  # 0.40 × 3/2 = 0.60 ≥ 0.56: stays
    (1, 0.10, None),  # never below one server
], ids=["grow", "ceiling", "shrink", "hold", "floor"])
def test_autoscaling_rule(nodes: int, util: float, expect: tuple[str, int] | None) -> None:
    from sextant_contracts import commands as cmd
    from sextant_core.decide import decide
    from sextant_sim.adaptation.baselines import policy_set

    st, wid = _service_state(nodes)
    params = policy_set("autoscaling-0.7", lambda w: util)
    c = cmd.AssessObservation(workload_id=wid, value=500.0, ratio_to_target=1.0)
    out = decide(st, c, params=params, seed=1, at=100.0).events  # type: ignore[arg-type]
    if expect is None:
        assert out == ()
    else:
        (adj,) = out
        assert isinstance(adj, ev.AllocationAdjusted)
        assert (adj.action, len(adj.allocation.assignments)) == expect
        if adj.action == "scale_out":  # the least-loaded server (most free cores, then id): s1
            assert adj.allocation.servers[-1] == f"s{nodes}"


def test_the_agent_closes_single_node_windows_at_resident_changes() -> None:
    """`telemetry.split_at_resident_changes`: a co-runner starting, moving or ending on a server
    closes the window of the single-node workloads there at that instant; off, windows follow the
    period from each workload's first start."""
    from sextant_sim.adaptation.run import run
    from sextant_sim.scenarios import load_scenario

    sc = load_scenario("smoke")

    def events(on: bool) -> list[ev.Event]:
        s = sc.model_copy(update={"telemetry": sc.telemetry.model_copy(update={"split_at_resident_changes": on})})
        return run(s, "least-loaded", 1).events

    def off_grid(es: list[ev.Event]) -> list[tuple[str, float]]:
        first: dict[str, float] = {}
        for e in es:
            if isinstance(e, ev.WorkloadStarted):
                first.setdefault(e.workload_id, e.at)
        period = sc.telemetry.period_s
        return [(e.workload_id, e.at) for e in es if isinstance(e, ev.PerformanceObserved) and e.workload_id in first
                and abs((k := (e.at - first[e.workload_id]) / period) - round(k)) > 1e-6]

    assert off_grid(events(False)) == []
    es = events(True)
    early = off_grid(es)
    assert early  # some windows closed early ...
    # ... each at an instant when another workload arrived on, left or ended on its own server
    servers: dict[str, tuple[str, ...]] = {}
    changes: dict[float, set[str]] = {}
    for e in es:
        if isinstance(e, ev.WorkloadStarted | ev.AllocationAdjusted | ev.MigrationDecided):
            old = servers.get(e.workload_id, ())
            servers[e.workload_id] = e.allocation.servers
            changes.setdefault(e.at, set()).update(set(old) ^ set(e.allocation.servers) or set(old))
        elif isinstance(e, ev.WorkloadCompleted | ev.WorkloadFailed | ev.WorkloadRevoked):
            changes.setdefault(e.at, set()).update(servers.pop(e.workload_id, ()))
    where: dict[str, tuple[str, ...]] = {}
    for e in es:
        if isinstance(e, ev.WorkloadStarted | ev.AllocationAdjusted | ev.MigrationDecided):
            where[e.workload_id] = e.allocation.servers
        elif isinstance(e, ev.PerformanceObserved) and (e.workload_id, e.at) in early:
            assert set(where[e.workload_id]) & changes.get(e.at, set()), (e.workload_id, e.at)


def test_phase_scoring_claim_shares_per_hour_and_probe_cost() -> None:
    """The phases study's claim measures: false claims as shares of each kind's claims and per workload-hour,
    and the server time spent probing (ladder 8.6's verdicts are its own reclassifications)."""
    a = Allocation(assignments=(Assignment(server_id="s", cores=1, memory_gb=1.0),))
    cls = ev.WorkloadClassified(at=0.0, workload_id="w", decision=record())

    def claim(at: float, reason: str) -> ev.ReclassificationRequested:
        return ev.ReclassificationRequested(at=at, workload_id="w", decision=record(), reason=reason)

    def probe(at: float) -> ev.InterferenceProbed:
        return ev.InterferenceProbed(at=at, workload_id="w", probe_id=f"p{at}",
                                     tolerated={"memory_cap": 40.0, "memory_bw": 40.0, "llc_cap": 40.0, "llc_bw": 40.0})

    events = [cls, ev.WorkloadStarted(at=0.0, workload_id="w", allocation=a),
              # a reactive claim before any change: false; one after the change at 1000: true
              claim(500.0, "reactive step"), ev.WorkloadClassified(at=530.0, workload_id="w", decision=record()),
              probe(800.0),  # not flagged
              probe(1100.0), claim(1100.0, "proactive probe p1100: combined"),  # flagged, after the change: true
              claim(1400.0, "reactive step"),  # the classification in force (530) predates the change: true
              ev.WorkloadCompleted(at=3600.0, workload_id="w")]
    sc = scoring.score_phases(events, [("w", 1000.0, 1)], period_s=300.0).as_json()
    assert sc["reactive_claims"] == 2 and sc["reactive_false_positives"] == 1
    assert sc["reactive_false_claim_share"] == 0.5
    assert sc["proactive_claims"] == 1 and sc["proactive_false_claim_share"] == 0.0
    # one workload-hour on one server: 1 false claim per workload-hour; 2 probes × 4 sources × 5 s
    assert sc["workload_hours"] == 1.0 and sc["false_claims_per_workload_hour"] == 1.0
    assert sc["probe_cost_share"] == round(40.0 / 3600.0, 5)
    # under ladder 8.5's rule the verdict is the probe's own largest change (none here: no record)
    from sextant_core.reprovisioning.adaptive import LADDERS

    old = scoring.score_phases(events, [("w", 1000.0, 1)], period_s=300.0, params=LADDERS["8.5"]).as_json()
    assert old["proactive_claims"] == 1  # the policy's own claim still counts
