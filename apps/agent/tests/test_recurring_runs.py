"""The agent reports recurring runs: the same named job submitted daily on the in-process platform,
run by the twin's executor, ends each day with a `RecurringRunObserved` the agent recorded, and
profiling detects the template from those alone (a daily period); replay re-derives every decision
with 0 differences. No reads of the output are known to the agent, so no contract is inferred."""

from __future__ import annotations

import math

from sextant_agent.main import AgentCore
from sextant_agent.recurring import RunRecorder, skyline
from sextant_agent.testing import TwinCluster
from sextant_agent.twin import TwinExecutor
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import (
    Allocation,
    Assignment,
    CompletionTimeTarget,
    TwinWorkloadRef,
    WorkloadKind,
)
from sextant_core.profiles import policy_set
from sextant_core.recurring.decisions import template_id
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_kit.eventstore.memory import MemoryEventStore

DAY_S = 86400.0
POLICY = policy_set("foundation")


class Cluster(TwinCluster):
    """The in-process platform with the twin's executor as its agent, on one time base (speed 1)."""

    def __init__(self, recording: bool = True) -> None:
        self.recorder = RunRecorder(enabled=recording)
        super().__init__(POLICY)

    def agent(self, c: cmd.Command, at: float) -> list[ev.Event]:
        self._observe()
        self.recorder.command(c, at)
        facts = self.ex.execute(c, self.p.agent_view.state, at)
        return facts + self.recorder.facts(facts, self.p.agent_view.state)

    def advance(self, until: float) -> None:
        wall = self.ex.now
        while wall < until:
            wall = min(wall + 600.0, until)
            self._observe()
            happenings, _samples = self.ex.advance(self.p.agent_view.state, wall)
            for _key, facts in happenings:
                self._observe()
                self.p.agent_view.fold(self.p.log[self.p.agent_view.position:])
                self.p.submit(facts + self.recorder.facts(facts, self.p.agent_view.state), source="agent")


def batch_ref(ex: TwinExecutor) -> str:
    return next(wid for wid, t in sorted(ex.setup.truths.items())
                if t.kind == WorkloadKind.BATCH and t.ideal_s < 3000)


def daily(c: Cluster, days: int, name: str = "nightly-etl-2026-11-{:02d}") -> None:
    ref = batch_ref(c.ex)
    for k in range(days):
        t = k * DAY_S + 3600.0
        c.advance(t)
        c.p.submit([ev.WorkloadSubmitted(at=t, workload_id=f"w{k}", tenant="acme", name=name.format(k + 1),
                                         kind=WorkloadKind.BATCH, target=CompletionTimeTarget(seconds=7200.0),
                                         spec=TwinWorkloadRef(ref=ref), fast_path=True)])
    c.advance(days * DAY_S)


def test_a_daily_named_job_is_detected_from_the_runs_the_agent_reported() -> None:
    c = Cluster()
    daily(c, 7)
    log = c.p.log
    runs = [e.event() for e in log if e.type == "RecurringRunObserved"]
    assert len(runs) == 7 and {e.source for e in log if e.type == "RecurringRunObserved"} == {"agent"}
    tid = template_id("acme", "nightly-etl-2026-11-01")
    for k, r in enumerate(runs):
        assert isinstance(r, rc.RecurringRunObserved)
        assert r.template_id == tid and r.succeeded and r.submit_s == k * DAY_S + 3600.0
        assert r.submit_s <= r.start_s < r.end_s and r.skyline and max(r.skyline) > 0
        assert len(r.skyline) == math.ceil((r.end_s - r.start_s) / 60)  # one step per started minute
        assert (r.input_available_s, r.first_read_s, r.reader_period_s) == (None, None, None)
    detected = [e.event() for e in log if e.type == "RecurringTemplateDetected"]
    assert [e.source for e in log if e.type == "RecurringTemplateDetected"] == ["profiling"]
    assert isinstance(detected[0], rc.RecurringTemplateDetected) and detected[0].template_id == tid
    assert detected[0].natural_period_s == DAY_S and abs(detected[0].period_s - DAY_S) < 60
    assert not any(e.type == "ContractInferred" for e in log)  # no reads known: no SLO to infer
    assert len(fold(log).recurring.get(tid).runs) == 7
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    assert report.state == fold(log)


def test_without_the_setting_or_a_name_nothing_recurring_is_recorded() -> None:
    off = Cluster(recording=False)
    daily(off, 2)
    unnamed = Cluster()
    daily(unnamed, 2, name="")
    for c in (off, unnamed):
        assert sum(e.type == "WorkloadCompleted" for e in c.p.log) == 2
        assert not any(e.type.startswith("Recurring") for e in c.p.log)


def test_a_skyline_follows_resizes_and_a_failed_run_is_reported_failed() -> None:
    sub = ev.WorkloadSubmitted(at=10.0, workload_id="w1", tenant="acme", name="report-42", kind=WorkloadKind.BATCH,
                               target=CompletionTimeTarget(seconds=600.0), spec=TwinWorkloadRef(ref="x"))
    state = fold([sub])
    rec = RunRecorder()
    two = Allocation(assignments=(Assignment(server_id="s1", cores=2, memory_gb=8.0),))
    six = Allocation(assignments=(Assignment(server_id="s1", cores=6, memory_gb=12.0),))
    assert rec.facts([ev.WorkloadStarted(at=100.0, workload_id="w1", allocation=two)], state) == []
    rec.command(cmd.ResizeWorkload(workload_id="w1", allocation=six), 190.0)
    (run,) = rec.facts([ev.WorkloadFailed(at=250.0, workload_id="w1", reason="crash")], state)
    assert isinstance(run, rc.RecurringRunObserved) and not run.succeeded
    assert (run.template_id, run.name) == (template_id("acme", "report-7"), "report-42")
    assert (run.instance, run.submit_s, run.start_s, run.end_s) == ("w1", 10.0, 100.0, 250.0)
    assert run.skyline == (2.0, 4.0, 6.0) and run.container_memory_gb == 2.0
    assert rec.facts([ev.WorkloadFailed(at=260.0, workload_id="w1", reason="again")], state) == []  # no start
    assert skyline(0.0, 150.0, [(0.0, 2), (90.0, 6)]) == (2.0, 4.0, 6.0)
    assert skyline(10.0, 10.0, [(10.0, 3)]) == (3.0,)  # an instant run still holds one step


def test_the_agent_process_appends_the_run_with_the_end_only_when_the_setting_is_on() -> None:
    sub = ev.WorkloadSubmitted(at=10.0, workload_id="w1", tenant="acme", name="report-42", kind=WorkloadKind.BATCH,
                               target=CompletionTimeTarget(seconds=600.0), spec=TwinWorkloadRef(ref="x"))
    two = Allocation(assignments=(Assignment(server_id="s1", cores=2, memory_gb=8.0),))
    def make(recorder: RunRecorder | None) -> AgentCore:
        return AgentCore(TwinExecutor("smoke", 1, speed=60.0, wall0=0.0), MemoryEventStore(), "foundation", recorder)

    cores = {"on": make(RunRecorder(enabled=True)), "off": make(RunRecorder(enabled=False)), "default": make(None)}
    for name, core in cores.items():
        core.decider.fold([Envelope.wrap(sub, id="e1", source="edge", stream_version=0, time=10.0).with_position(1)])
        started: list[ev.Event] = [ev.WorkloadStarted(at=20.0, workload_id="w1", allocation=two)]
        assert core.with_runs(started) == started
        facts = core.with_runs([ev.WorkloadCompleted(at=80.0, workload_id="w1")])
        assert [f.TYPE for f in facts] == (["WorkloadCompleted", "RecurringRunObserved"] if name == "on"
                                           else ["WorkloadCompleted"]), name
