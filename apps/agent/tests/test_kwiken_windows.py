"""The agent reports Kwiken windows (`StageLatenciesObserved`) of the twin's services: a window's
samples are a pure function of (workload id, stage, window index); a plan in force cuts the tail
of its reissued stages; on the in-process platform with the twin's executor as its agent, a
service that declares its stages gets windows every 60 s of log time, reprovisioning records its
first `KwikenPlanDecided`, and replay re-derives every decision with 0 differences."""

from __future__ import annotations

import numpy as np
from sextant_agent.kwiken import SAMPLES, StageSampler, stage_law, stage_plan, window_samples
from sextant_agent.main import AgentCore
from sextant_agent.recurring import RunRecorder
from sextant_agent.testing import TwinCluster
from sextant_agent.twin import TwinExecutor
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import ThroughputLatencyTarget, TwinWorkloadRef, WorkloadKind
from sextant_core.kwiken.reissue import StagePlan
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, through_placement
from sextant_core.testing.kwiken import declared
from sextant_kit.eventstore.memory import MemoryEventStore

POLICY = policy_set("foundation")
FRONT = kw.StageSpec(name="front")


def test_a_window_is_the_same_twice_and_another_window_differs() -> None:
    a = window_samples("svc-1", FRONT, 7)
    assert len(a) == SAMPLES and all(v >= 0 for v in a)
    assert window_samples("svc-1", FRONT, 7) == a
    assert window_samples("svc-1", FRONT, 8) != a
    assert window_samples("svc-2", FRONT, 7) != a  # another service: another law and other draws
    assert stage_law("svc-1", FRONT) == stage_law("svc-1", kw.StageSpec(name="front", cost=5.0))
    assert stage_law("svc-1", FRONT) != stage_law("svc-1", kw.StageSpec(name="back"))


def test_a_plan_in_force_cuts_the_p99_of_a_reissued_stage() -> None:
    base = np.asarray(window_samples("svc-1", FRONT, 3))
    t = float(np.quantile(base, 0.95))
    planned = np.asarray(window_samples("svc-1", FRONT, 3, StagePlan("timeout", 0.05, t)))
    assert np.all(planned <= base)  # the same requests: a reissue only ever answers earlier
    assert np.percentile(planned, 99) < 0.9 * np.percentile(base, 99)
    assert np.array_equal(planned[base <= t], base[base <= t])  # below the timeout: untouched
    entry = kw.StagePlanEntry(stage="front", policy="timeout", fraction=0.05, timeout_ms=t, samples=512)
    assert stage_plan(entry) == StagePlan("timeout", 0.05, t)
    assert stage_plan(None).policy == stage_plan(entry.model_copy(update={"fraction": 0.0})).policy == "none"


class Cluster(TwinCluster):
    """The in-process platform with the twin's executor as its agent (speed 1), composed as
    `AgentCore` does: windows due before a command's facts go ahead of them, and the clock
    observes the boundaries up to each advance, in 60-s advances."""

    def __init__(self, sampling: bool = True, reissue_load: bool = False) -> None:
        self.sampler = StageSampler(enabled=sampling)
        super().__init__(POLICY, reissue_load)

    def agent(self, c: cmd.Command, at: float) -> list[ev.Event]:
        self._observe()
        due: list[ev.Event] = list(self.sampler.windows(at, self.state, inclusive=False))
        return due + self.ex.execute(c, self.state, at)

    def reported(self, facts: list[ev.Event]) -> list[ev.Event]:
        return [*self.sampler.windows(facts[0].at, self.state, inclusive=False), *facts]

    def boundary(self, wall: float) -> list[kw.StageLatenciesObserved]:
        return self.sampler.windows(wall, self.state)

    def run_service(self) -> None:
        truths = self.ex.setup.truths
        ref = max((w for w, t in truths.items() if t.kind == WorkloadKind.SERVICE), key=lambda w: truths[w].ideal_s)
        self.p.submit([ev.WorkloadSubmitted(at=0.0, workload_id="svc-1", tenant="acme", kind=WorkloadKind.SERVICE,
                                            target=ThroughputLatencyTarget(qps=100.0, p99_latency_ms=50.0),
                                            spec=TwinWorkloadRef(ref=ref), fast_path=True)])
        self.advance(30.0)
        self.p.submit([declared("svc-1", at=30.0)])
        self.advance(330.0)


def test_a_declared_service_gets_windows_and_a_first_plan_that_replays() -> None:
    c = Cluster()
    c.run_service()
    log = c.p.log
    windows = [x for e in log if isinstance(x := e.event(), kw.StageLatenciesObserved)]
    assert {e.source for e in log if e.type == "StageLatenciesObserved"} == {"agent"}
    ats = [w.at for w in windows]
    assert len(windows) >= 3 and ats == sorted(ats) and all(a % 60.0 == 0 for a in ats)
    assert all(w.window_s == 60.0 and w.window_start_s == w.at - 60.0 for w in windows)
    assert all([s.stage for s in w.stages] == ["front", "lookup", "agg"]
               and all(len(s.samples_ms) == SAMPLES for s in w.stages) for w in windows)
    plans = [e for e in log if e.type == "KwikenPlanDecided"]
    assert plans and plans[0].source == "reprovisioning"
    first = plans[0].event()
    assert isinstance(first, kw.KwikenPlanDecided) and first.trigger == "first"
    assert log.index(plans[0]) > next(i for i, e in enumerate(log) if e.type == "StageLatenciesObserved")
    # the windows after the plan are served under it: the same requests, reissued stages only answer earlier
    after = [w for w in windows if w.at > first.at]
    assert after
    w = after[0]
    reissued = [e for e in first.stages if e.fraction > 0]
    assert reissued
    for entry in reissued:
        spec = next(s for s in declared().stages if s.name == entry.stage)
        got = np.asarray(next(s.samples_ms for s in w.stages if s.stage == entry.stage))
        bare = np.asarray(window_samples("svc-1", spec, int(w.window_start_s // 60)))
        assert np.all(got <= bare) and np.any(got < bare)
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    assert report.state == fold(log)


def test_without_the_setting_no_window_is_recorded() -> None:
    c = Cluster(sampling=False)
    c.run_service()
    assert not [e for e in c.p.log if e.type in ("StageLatenciesObserved", "KwikenPlanDecided")]
    assert any(e.type == "ServiceStagesDeclared" for e in c.p.log)


def test_the_agent_process_puts_the_windows_ending_before_a_fact_ahead_of_it_only_with_the_setting() -> None:
    sub = ev.WorkloadSubmitted(at=0.0, workload_id="svc-1", tenant="acme", kind=WorkloadKind.SERVICE,
                               target=ThroughputLatencyTarget(qps=100.0, p99_latency_ms=50.0),
                               spec=TwinWorkloadRef(ref="x"), fast_path=True)
    a = alloc(("s1", 2, 8.0))
    log = [sub, *through_placement("svc-1", a), ev.WorkloadStarted(at=5.0, workload_id="svc-1", allocation=a),
           declared("svc-1", at=6.0)]

    def make(sampler: StageSampler | None) -> AgentCore:
        core = AgentCore(TwinExecutor("smoke", 1, speed=60.0, wall0=0.0), MemoryEventStore(), "foundation",
                         RunRecorder(enabled=True), sampler)
        core.decider.fold([Envelope.wrap(e, id=f"e{i}", source="edge", stream_version=0, time=e.at).with_position(i + 1)
                           for i, e in enumerate(log)])
        return core

    on, off = make(StageSampler(enabled=True, samples=8)), make(None)
    for core in (on, off):
        assert core.instances(10.0) == []  # the first boundary observed is the first at or after 10 s
    done: list[ev.Event] = [ev.WorkloadCompleted(at=130.0, workload_id="svc-1")]
    facts = on.with_runs(done)
    assert [(f.TYPE, f.at) for f in facts] == [("StageLatenciesObserved", 60.0), ("StageLatenciesObserved", 120.0),
                                               ("WorkloadCompleted", 130.0)]
    assert all(isinstance(f, kw.StageLatenciesObserved) and all(len(s.samples_ms) == 8 for s in f.stages)
               for f in facts[:2])
    assert [f.at for f in on.instances(180.0)] == [180.0]  # the view still shows it running
    assert on.instances(180.0) == []  # a boundary is observed once
    assert off.with_runs(done) == done and off.instances(180.0) == []
