"""The agent reports running instances of reserved templates (`RecurringInstanceObserved`, DRA's
input): on the in-process platform with the twin's executor as its agent, a template with a
contract signed off holds an hourly reservation; a named instance of it runs → the agent records
its used and pending containers every plan step → reprovisioning records `ReservationExtended`
with containers granted → the instance's run releases them; replay re-derives every decision with
0 differences. Without the setting nothing is recorded. Unit tests of used, pending and step."""

from __future__ import annotations

import math
from typing import TypeVar

from sextant_agent.main import AgentCore
from sextant_agent.recurring import RunRecorder, held_at, pending_of, plan_step
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
from sextant_core.state.model import ClusterState
from sextant_core.testing.builders import server, through_placement
from sextant_core.testing.loop import InProcessPlatform
from sextant_core.testing.recurring import runs
from sextant_kit.eventstore.memory import MemoryEventStore

POLICY = policy_set("foundation")
TID = template_id("acme", "etl-hourly-0")
HOUR_S = 3600.0


class Cluster(TwinCluster):
    """The in-process platform with the twin's executor as its agent (speed 1), composed as
    `AgentCore` does: a command's facts go with the observations due before it (`instances`,
    exclusive; `report`), and the clock observes the boundaries up to each advance, in 60-s
    advances (the real clock's are 0.02 s)."""

    def __init__(self, recording: bool = True) -> None:
        self.recorder = RunRecorder(enabled=recording)
        super().__init__(POLICY)

    def agent(self, c: cmd.Command, at: float) -> list[ev.Event]:
        self._observe()
        due: list[ev.Event] = list(self.recorder.instances(at, self.state, inclusive=False))
        self.recorder.command(c, at)
        facts = self.ex.execute(c, self.state, at)
        return due + self.recorder.report(facts, self.state)

    def reported(self, facts: list[ev.Event]) -> list[ev.Event]:
        return self.recorder.report(facts, self.state)

    def boundary(self, wall: float) -> list[ev.Event]:
        return list(self.recorder.instances(wall, self.state))

    def reserve(self) -> rc.PlannedReservation:
        """An hourly template (edge-recorded runs with reads: a contract) signed off: reserved."""
        self.p.submit(runs("acme", "etl-hourly", 6))
        self.p.submit([rc.ContractSignedOff(at=30000.0, template_id=TID, tenant="acme", version=1, verdict="accept")])
        planned = [e.event() for e in self.p.log if e.type == "ReservationPlanned"]
        assert len(planned) == 1 and isinstance(planned[0], rc.ReservationPlanned)
        return planned[0].reservation

    def run_instance(self, at: float, requested_cores: int, name: str = "etl-hourly-9") -> None:
        truths = self.ex.setup.truths
        longest = max((w for w, t in truths.items() if t.kind == WorkloadKind.BATCH), key=lambda w: truths[w].ideal_s)
        self.advance(at)
        self.p.submit([ev.WorkloadSubmitted(at=at, workload_id="w9", tenant="acme", name=name, kind=WorkloadKind.BATCH,
                                            target=CompletionTimeTarget(seconds=7200.0), spec=TwinWorkloadRef(ref=longest),
                                            fast_path=True, requested_cores=requested_cores)])
        self.advance(at + HOUR_S)


E = TypeVar("E", bound=ev.Event)


def of(log: list[Envelope], kind: type[E]) -> list[E]:
    return [x for e in log if e.type == kind.TYPE and isinstance(x := e.event(), kind)]


def test_a_running_instance_short_of_containers_is_extended_by_reprovisioning() -> None:
    c = Cluster()
    r = c.reserve()
    start = 10 * HOUR_S + r.offset * 60.0 - 30.0  # during its reserved steps
    c.run_instance(start, requested_cores=64)
    log = c.p.log
    seen = of(log, rc.RecurringInstanceObserved)
    (started,) = of(log, ev.WorkloadStarted)
    (done,) = of(log, ev.WorkloadCompleted)
    assert {e.source for e in log if e.type == "RecurringInstanceObserved"} == {"agent"}
    # one per plan step while it runs, at each 60-s boundary of log time, its window step
    boundaries = [60.0 * k for k in range(math.ceil(started.at / 60), math.floor(done.at / 60) + 1)]
    assert [o.at for o in seen] == boundaries and len(seen) >= 3
    assert [o.step for o in seen] == [int(b // 60) % 1440 for b in boundaries]
    cores = started.allocation.total_cores
    assert all((o.template_id, o.instance, o.used, o.pending) == (TID, "w9", cores, max(64 - cores, 0)) for o in seen)
    extended = of(log, rc.ReservationExtended)
    assert [e.source for e in log if e.type == "ReservationExtended"] == ["reprovisioning"] * len(extended)
    assert extended and extended[0].granted > 0 and extended[0].demand == 64
    assert {x.step for x in extended} <= {o.step for o in seen}
    # each decided before the run ended, and released by it
    ends = [i for i, e in enumerate(log) if e.type == "RecurringRunObserved" and e.source == "agent"]
    assert len(ends) == 1 and all(i < ends[0] for i, e in enumerate(log) if e.type == "ReservationExtended")
    held = fold(log[:ends[0]]).recurring.get(TID).extensions
    assert held and {x[0] for x in held} == {"w9"} and sum(x[2] for x in held) == sum(x.granted for x in extended)
    assert fold(log).recurring.get(TID).extensions == ()
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    assert report.state == fold(log)


def test_without_the_setting_or_a_reservation_no_instance_is_recorded() -> None:
    off = Cluster(recording=False)
    r = off.reserve()
    off.run_instance(10 * HOUR_S + r.offset * 60.0 - 30.0, requested_cores=64)
    other = Cluster()
    other.reserve()
    other.run_instance(10 * HOUR_S, requested_cores=64, name="nightly-report-9")  # another template: none held
    for c in (off, other):
        assert len(of(c.p.log, ev.WorkloadCompleted)) == 1
        assert not of(c.p.log, rc.RecurringInstanceObserved) and not of(c.p.log, rc.ReservationExtended)
    assert not of(off.p.log, rc.RecurringRunObserved)[6:]  # the 6 edge runs only
    assert len(of(other.p.log, rc.RecurringRunObserved)) == 7  # its run is still recorded


def sub(requested: int | None = 6, name: str = "etl-hourly-9") -> ev.WorkloadSubmitted:
    return ev.WorkloadSubmitted(at=10.0, workload_id="w1", tenant="acme", name=name, kind=WorkloadKind.BATCH,
                                target=CompletionTimeTarget(seconds=600.0), spec=TwinWorkloadRef(ref="x"),
                                requested_cores=requested)


def alloc(cores: int) -> Allocation:
    return Allocation(assignments=(Assignment(server_id="s1", cores=cores, memory_gb=8.0),))


def reserved_state(*events: ev.Event) -> ClusterState:
    """A template reserved (edge runs, accept: planning's decisions) and `events` folded after."""
    p = InProcessPlatform(POLICY, lambda c, at: [])
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 6))
    p.submit([rc.ContractSignedOff(at=30000.0, template_id=TID, tenant="acme", version=1, verdict="accept")])
    assert fold(p.log).recurring.get(TID).reservation is not None
    return fold(p.log + [Envelope.wrap(e, id=f"x{i}", source="edge", stream_version=0, time=e.at)
                         .with_position(len(p.log) + i + 1) for i, e in enumerate(events)])


def running(cores: int, name: str = "etl-hourly-9") -> list[ev.Event]:
    """w1 submitted (6 cores requested), placed on `cores` and started at 31 010 s."""
    return [sub(6, name), *through_placement("w1", alloc(cores), at=31_000.0),
            ev.WorkloadStarted(at=31_010.0, workload_id="w1", allocation=alloc(cores))]


def test_used_pending_and_step_follow_the_run_and_the_submission() -> None:
    assert held_at([(100.0, 2), (190.0, 6)], 60.0) == 0 and held_at([(100.0, 2), (190.0, 6)], 100.0) == 2
    assert held_at([(100.0, 2), (190.0, 6)], 180.0) == 2 and held_at([(100.0, 2), (190.0, 6)], 190.0) == 6
    state = fold([sub(6)])
    w = state.workloads["w1"]
    assert (pending_of(w, 2), pending_of(w, 6), pending_of(w, 9)) == (4, 0, 0)  # never negative
    assert pending_of(fold([sub(None)]).workloads["w1"], 3) == 0  # nothing requested: nothing pending
    assert (plan_step(0.0), plan_step(59.9), plan_step(60.0), plan_step(86400.0 + 120.0)) == (0, 0, 1, 2)
    assert plan_step(1_764_000_000.0) == 960  # Unix time: the minute of the UTC day (16:00)

    state = reserved_state(*running(2))
    assert state.workloads["w1"].phase == "running"
    rec = RunRecorder()
    assert rec.instances(31_000.0, state) == []  # boundaries from the first call on
    rec.facts([ev.WorkloadStarted(at=31_010.0, workload_id="w1", allocation=alloc(2))], state)
    rec.command(cmd.ResizeWorkload(workload_id="w1", allocation=alloc(4)), 31_080.0)
    seen = rec.instances(31_140.0, state, inclusive=False)  # 31 020 and 31 080 (its own resize), not 31 140
    assert [(o.at, o.step, o.used, o.pending) for o in seen] == [(31_020.0, 517, 2, 4), (31_080.0, 518, 4, 2)]
    assert [o.at for o in rec.instances(31_140.0, state)] == [31_140.0]  # once each
    assert rec.instances(31_150.0, state) == []
    ended = rec.report([ev.WorkloadCompleted(at=31_230.0, workload_id="w1")], state)
    assert [type(e).__name__ for e in ended] == ["RecurringInstanceObserved", "WorkloadCompleted",
                                                 "RecurringRunObserved"]  # observations go before the end
    assert rec.instances(31_500.0, state) == []  # its run was reported: no more, though the state lags

    unnamed = reserved_state(*running(2, name=""))
    elsewhere = reserved_state(*running(2, name="other-job-9"))
    for st in (unnamed, elsewhere):
        rec = RunRecorder()
        rec.facts([ev.WorkloadStarted(at=31_010.0, workload_id="w1", allocation=alloc(2))], st)
        assert rec.instances(31_010.0, st) == [] and rec.instances(31_200.0, st) == []
    off = RunRecorder(enabled=False)
    off.facts([ev.WorkloadStarted(at=31_010.0, workload_id="w1", allocation=alloc(2))], state)
    assert off.instances(31_200.0, state) == []


def test_after_a_restart_a_running_instance_is_observed_from_the_log_and_a_gap_is_bounded() -> None:
    state = reserved_state(*running(5))
    rec = RunRecorder(window_steps=1440)
    rec.instances(31_010.0, state)
    (o,) = rec.instances(31_079.0, state)
    assert (o.at, o.used, o.pending) == (31_020.0, 5, 1)
    far = rec.instances(31_079.0 + 3 * 86400.0, state)  # a three-day gap: only the last day's boundaries
    assert len(far) == 1440 and far[-1].at == 60.0 * math.floor((31_079.0 + 3 * 86400.0) / 60)


def test_the_agent_process_observes_instances_only_when_the_setting_is_on() -> None:
    state = reserved_state(*running(5))

    def make(recorder: RunRecorder | None) -> AgentCore:
        core = AgentCore(TwinExecutor("smoke", 1, speed=60.0, wall0=0.0), MemoryEventStore(), "foundation", recorder)
        core.decider.state = state
        return core

    for name, core in {"on": make(RunRecorder()), "off": make(RunRecorder(enabled=False)), "default": make(None)}.items():
        core.instances(31_000.0)
        observed = core.instances(31_100.0)
        done: list[ev.Event] = [ev.WorkloadCompleted(at=31_230.0, workload_id="w1")]
        facts = core.with_runs(done)
        if name == "on":
            assert [(o.at, o.used) for o in observed if isinstance(o, rc.RecurringInstanceObserved)] == [
                (31_020.0, 5), (31_080.0, 5)] and len(observed) == 2
            assert [f.TYPE for f in facts] == ["RecurringInstanceObserved"] * 2 + ["WorkloadCompleted",
                                                                                   "RecurringRunObserved"]
            assert [f.at for f in facts[:2]] == [31_140.0, 31_200.0]
        else:
            assert observed == [] and facts == done, name
