"""Every (kind, target) pair the API accepts runs through the twin's agent as the platform runs it
(`TwinExecutor`): the workload starts, is observed with a finite ratio to its target, and ends —
the agent never raises on a target shape it was not written for."""

from __future__ import annotations

import math

from pydantic import ValidationError
from sextant_admission.schemas import WorkloadRequest
from sextant_agent.twin import TwinExecutor
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import TwinWorkloadRef, WorkloadKind
from sextant_core.profiles import policy_set
from sextant_core.testing.builders import alloc, through_placement
from sextant_core.workflow import Decider

# one target of each type, in the units a twin workload of the platform-demo scenario can meet or miss
TARGETS = {
    "throughput_latency": {"type": "throughput_latency", "qps": 100.0, "p99_latency_ms": 50.0},
    "completion_time": {"type": "completion_time", "seconds": 600.0},
    "instruction_rate": {"type": "instruction_rate", "ips": 5e8},
    "deadline": {"type": "deadline", "at": 900.0},
}


def accepted_pairs() -> list[tuple[WorkloadKind, str]]:
    """The (kind, target type) pairs `POST /v1/workloads` validates."""
    out = []
    for kind in WorkloadKind:
        for name, target in TARGETS.items():
            try:
                WorkloadRequest.model_validate({"kind": kind.value, "target": target,
                                                "spec": {"type": "twin", "ref": "x"}})
            except ValidationError:
                continue
            out.append((kind, name))
    return out


class Run:
    """One workload through the executor, the agent's fold kept up to date as the agent does."""

    def __init__(self, kind: WorkloadKind, target: dict[str, object]) -> None:
        self.ex = TwinExecutor("platform-demo", 1, speed=1.0, wall0=0.0)
        self.view = Decider("agent", policy_set("foundation"))
        self.facts: list[ev.Event] = []
        self.samples: list[float] = []
        ref = next(wid for wid, t in sorted(self.ex.setup.truths.items()) if t.kind == kind)
        truth = self.ex.setup.truths[ref]
        sid, plat = self.ex.setup.servers[0]
        self.append(self.ex.servers())
        request = WorkloadRequest.model_validate({"kind": kind.value, "target": target,
                                                  "spec": {"type": "twin", "ref": ref}})
        self.append([ev.WorkloadSubmitted(at=0.0, workload_id="w1", tenant="t1", kind=request.kind,
                                          target=request.target, spec=TwinWorkloadRef(ref=ref),
                                          fast_path=True)])
        a = alloc((sid, min(truth.requested_cores, plat.capacity.cores), plat.capacity.memory_gb / 2))
        self.append(through_placement("w1", a, at=1.0))
        self.append(self.ex.execute(cmd.StartWorkload(workload_id="w1", allocation=a), self.view.state, 1.0))
        self.horizon = 20 * truth.ideal_s + 600.0

    def append(self, events: list[ev.Event] | list[ev.ServerRegistered]) -> None:
        for e in events:
            pos = self.view.position + 1
            env = Envelope.wrap(e, id=f"e{pos}", source="test", stream_version=0, time=e.at).with_position(pos)
            self.view.fold([env])
            self.ex.observe(e, self.view.state)
            self.facts.append(e)

    def until_done(self) -> None:
        wall = 1.0
        while wall < self.horizon and not self.ended():
            wall += 10.0
            happenings, samples = self.ex.advance(self.view.state, wall)
            for _key, facts in happenings:
                self.append(facts)
            self.samples.extend(s.ratio_to_target for s in samples)

    def ended(self) -> bool:
        return any(isinstance(f, ev.WorkloadCompleted | ev.WorkloadFailed) for f in self.facts)


def test_every_accepted_kind_and_target_runs_through_the_agent() -> None:
    pairs = accepted_pairs()
    assert len(pairs) >= 3  # at least one target for each kind
    for kind, name in pairs:
        run = Run(kind, TARGETS[name])
        run.until_done()
        assert any(isinstance(f, ev.WorkloadStarted) for f in run.facts), (kind, name)
        assert any(isinstance(f, ev.WorkloadCompleted) for f in run.facts), (kind, name)
        assert run.samples, (kind, name)
        assert all(math.isfinite(r) and r >= 0 for r in run.samples), (kind, name, run.samples)


def test_a_twin_workload_submitted_as_another_kind_fails_with_the_reason() -> None:
    """The twin workload's kind decides what the agent measures: a service's ref submitted as a
    batch job fails at its first command instead of being judged against the wrong quantity."""
    ex = TwinExecutor("platform-demo", 1, speed=1.0, wall0=0.0)
    view = Decider("agent", policy_set("foundation"))
    ref = next(wid for wid, t in sorted(ex.setup.truths.items()) if t.kind == WorkloadKind.SERVICE)
    sub = ev.WorkloadSubmitted(at=0.0, workload_id="w1", tenant="t1", kind=WorkloadKind.BATCH,
                               target=WorkloadRequest.model_validate({"kind": "batch", "target": TARGETS["deadline"],
                                                                      "spec": {"type": "twin", "ref": ref}}).target,
                               spec=TwinWorkloadRef(ref=ref), fast_path=True)
    view.fold([Envelope.wrap(sub, id="e1", source="test", stream_version=0, time=0.0).with_position(1)])
    ex.observe(sub, view.state)
    (failed,) = ex.execute(cmd.ExecuteProfileRuns(workload_id="w1", runs=()), view.state, 1.0)
    assert isinstance(failed, ev.WorkloadFailed)
    assert failed.reason == "agent: the twin workload is a service (webserver), submitted as batch"


def test_a_happening_that_raises_quarantines_its_workload_and_the_clock_goes_on() -> None:
    """The agent's clock is no poison pill either: a workload whose happening raises (as a
    completion-time target once did) is quarantined — failed in the fold, out of the world — and
    the next advance runs."""
    run = Run(WorkloadKind.BATCH, TARGETS["completion_time"])

    def boom(kind: str, key: str, version: int) -> None:
        raise AttributeError("'CompletionTimeTarget' object has no attribute 'ips'")

    run.ex.agent.happening = boom  # type: ignore[method-assign]
    run.until_done()
    (q,) = [f for f in run.facts if isinstance(f, ev.RecordQuarantined)]
    assert (q.consumer, q.workload_id, q.record_type) == ("agent-clock", "w1", "observe")  # its first happening
    assert q.error.startswith("AttributeError")
    w = run.view.state.workloads["w1"]
    assert (w.phase.value, w.end_reason) == ("failed", "quarantined") and "w1" not in run.ex.world.active
    assert run.ex.advance(run.view.state, 10_000.0) == ([], [])  # nothing left to raise
