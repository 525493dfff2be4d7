"""Replay re-derives every adjustment decision of the ladder byte for byte, and never re-runs a
reactor: the agent (probes, resizes, starts) is not called by replay (DESIGN §4)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import (
    InstructionRateTarget,
    ThroughputLatencyTarget,
    TwinWorkloadRef,
    WorkloadKind,
)
from sextant_core.policies import PolicySet
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.reprovisioning.adaptive import Adaptive
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.testing.builders import server
from sextant_core.testing.loop import InProcessPlatform

BASE = policy_set("foundation")
POLICY = PolicySet(**{**{f: getattr(BASE, f) for f in BASE.__dataclass_fields__}, "profile": "test-adaptive",
                      "reprovisioner": Adaptive(planner=BASE.planner)})


class CountingAgent:
    """The cluster agent of the test: answers with facts and counts every command it executes."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, c: cmd.Command, at: float) -> list[ev.Event]:
        self.calls[c.TYPE] += 1
        if isinstance(c, cmd.ExecuteProfileRuns):
            return [ev.ProfileSampleRecorded(at=at + 1, workload_id=c.workload_id, run_id=r.run_id,
                                             classification=r.classification, column=r.column,
                                             value=1.0 + r.cores / 10, caused=10.0 if r.classification == "interference" else None)
                    for r in c.runs] + [ev.ProfilingCompleted(at=at + 1, workload_id=c.workload_id, samples=len(c.runs))]
        if isinstance(c, cmd.StartWorkload):
            return [ev.WorkloadStarted(at=at + 1, workload_id=c.workload_id, allocation=c.allocation)]
        if isinstance(c, cmd.ProbeInterference):  # the workload changed phase: it tolerates much less
            return [ev.InterferenceProbed(at=at + 1, workload_id=c.workload_id, probe_id=c.probe_id,
                                          purpose=c.purpose, tolerated={s: 1.0 for s in c.sources},
                                          caused={s: 90.0 for s in c.sources})]
        return []


def submitted(wid: str, at: float) -> ev.WorkloadSubmitted:
    return ev.WorkloadSubmitted(at=at, workload_id=wid, tenant="t", kind=WorkloadKind.BATCH,
                                target=InstructionRateTarget(ips=1.5), spec=TwinWorkloadRef(ref=wid),
                                requested_cores=1, requested_memory_gb=1.0)


def observed(wid: str, at: float, ratio: float) -> ev.PerformanceObserved:
    return ev.PerformanceObserved(at=at, workload_id=wid, value=ratio * 1.5, ratio_to_target=ratio)


def adaptive_log(agent: CountingAgent) -> list:  # type: ignore[type-arg]
    p = InProcessPlatform(POLICY, agent)
    p.submit([server("s1", cores=16), server("s2", cores=16, platform="B")])
    for i in range(4):
        p.submit([submitted(f"w{i}", at=10.0 + i)])
    for k, t in enumerate((1500.0, 1800.0, 2100.0)):
        p.submit([observed(f"w{i}", t + i, 0.6 + 0.1 * k) for i in range(4)])
    p.submit([ev.Tick(at=3000.0, seq=50, period_s=60.0)])  # a probe round
    p.submit([observed(f"w{i}", 3400.0 + i, 0.95) for i in range(4)])
    return p.log


def test_replay_rederives_every_adjustment_and_runs_no_reactor() -> None:
    agent = CountingAgent()
    log = adaptive_log(agent)
    kinds = Counter(e.type for e in log)
    # the ladder acted: adjustments, probes and reclassifications are in the log
    assert kinds["AllocationAdjusted"] + kinds["MigrationDecided"] >= 1, kinds
    assert kinds["ProbeRequested"] >= 1 and kinds["InterferenceProbed"] == kinds["ProbeRequested"], kinds
    assert kinds["ReclassificationRequested"] >= 1, kinds
    before = agent.calls.copy()
    assert before["ProbeInterference"] == kinds["ProbeRequested"] and before["ResizeWorkload"] >= 1

    report = replay(log, lambda name: POLICY)
    assert report.ok, report.differences[:3]
    assert report.decisions == sum(1 for e in log if isinstance(e.event(), ev.DecisionEvent))
    assert agent.calls == before  # replay re-decided everything and executed nothing


def test_replay_notices_a_changed_observation() -> None:
    log = adaptive_log(CountingAgent())
    i = next(i for i, e in enumerate(log) if e.type == "AllocationAdjusted")
    cause = next(j for j, e in enumerate(log) if e.id == log[i].causation_id)
    assert log[cause].type == "PerformanceObserved"
    log[cause] = log[cause].model_copy(update={"payload": {**log[cause].payload, "ratio_to_target": 2.0}})
    report = replay(log, lambda name: POLICY)
    assert not report.ok


# --- a service sized on its load forecast ---------------------------------------------------------


# with a forecast, growth at u > 1.05 sized to 0.92 (the defaults run hotter: params.py): the
# forecast's lead shows on this small synthetic service
CLASSIC = AdaptationParams(forecast_scale_up_utilisation=1.05, forecast_target_utilisation=0.92,
                           forecast_hot_latency=0.95, forecast_cool_latency=0.7, forecast_scale_down_utilisation=0.92)


def _with(p: AdaptationParams) -> PolicySet:
    return PolicySet(**{**{f: getattr(POLICY, f) for f in POLICY.__dataclass_fields__},
                        "reprovisioner": Adaptive(planner=BASE.planner, params=p)})


FORECAST = _with(CLASSIC)


def service_log(agent: CountingAgent, policy: PolicySet = FORECAST) -> list:  # type: ignore[type-arg]
    """A service whose offered load climbs 0.25 requests/s every 10-minute window (the agent's
    profiling puts one 4-core node near 1.4 requests/s): the forecast's history is long enough
    from the 7th window on."""
    p = InProcessPlatform(policy, agent)
    p.submit([server(f"s{i}", cores=16) for i in range(6)])
    p.submit([ev.WorkloadSubmitted(at=10.0, workload_id="svc", tenant="t", kind=WorkloadKind.SERVICE,
                                   target=ThroughputLatencyTarget(qps=1.0, p99_latency_ms=1.0),
                                   spec=TwinWorkloadRef(ref="svc"), requested_cores=4, requested_memory_gb=4.0)])
    for k in range(12):
        load = 0.5 + 0.25 * k
        p.submit([ev.PerformanceObserved(at=1200.0 + 600.0 * k, workload_id="svc", value=load, ratio_to_target=1.0,
                                         p99_latency_ms=0.3, offered=load)])
    return p.log


def test_replay_rederives_the_adjustments_sized_on_the_load_forecast() -> None:
    agent = CountingAgent()
    log = service_log(agent)
    adjusted = [e.event() for e in log if e.type == "AllocationAdjusted"]
    ahead = [a for a in adjusted if "forecast" in a.reason]  # type: ignore[attr-defined]
    assert ahead, [a.reason for a in adjusted]  # type: ignore[attr-defined]
    # the forecast grew it while the load now was still below the growth threshold
    up = CLASSIC.forecast_scale_up_utilisation
    assert any(a.action in ("scale_up", "scale_out")  # type: ignore[attr-defined]
               and float(a.reason.split("utilisation ")[1].split(",")[0]) < up for a in ahead)  # type: ignore[attr-defined]
    before = agent.calls.copy()
    report = replay(log, lambda name: FORECAST)
    assert report.ok, report.differences[:3]
    assert report.decisions == sum(1 for e in log if isinstance(e.event(), ev.DecisionEvent))
    assert agent.calls == before  # replay executed nothing
    # the same log under the reactive rule alone (forecast off) decides differently: the forecast
    # is what replay re-derived
    reactive = _with(replace(CLASSIC, forecast_horizon_s=None))
    assert not replay(log, lambda name: reactive).ok
