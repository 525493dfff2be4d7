"""A restarted agent reports a workload's profiling once.

`resume` re-launches the runs the log shows in flight (a `ProfilingPlanned` with no
`ProfilingCompleted`); the consumer then delivers that same `ProfilingPlanned` if the agent that
died had not handled it yet. Measured in the end-to-end run (tests/e2e/test_platform.py): about 30
of the ~50 workloads re-profiled after the agent's SIGKILL got a second `ProfilingCompleted` some
seconds after the first, and classification, seeing it while the workload already ran,
reclassified it in place and planning re-placed it (a second `WorkloadStarted`) for nothing.
"""

from __future__ import annotations

from sextant_agent.twin import TwinExecutor
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import CompletionTimeTarget, TwinWorkloadRef, WorkloadKind
from sextant_core.decide import decide
from sextant_core.profiles import policy_set
from sextant_core.workflow import Decider


class Agent:
    """The twin executor with the agent's fold of the log kept up to date, as the agent does."""

    def __init__(self) -> None:
        self.ex = TwinExecutor("platform-demo", 1, speed=1.0, wall0=0.0)
        self.view = Decider("agent", policy_set("sextant"))
        self.facts: list[ev.Event] = []
        self.append(self.ex.servers())

    def append(self, events: list[ev.Event] | list[ev.ServerRegistered]) -> None:
        for e in events:
            pos = self.view.position + 1
            env = Envelope.wrap(e, id=f"e{pos}", source="test", stream_version=0, time=e.at).with_position(pos)
            self.view.fold([env])
            self.ex.observe(e, self.view.state)
            self.facts.append(e)

    def run_until(self, wall: float) -> None:
        for t in range(int(wall) + 1):
            happenings, _samples = self.ex.advance(self.view.state, float(t))
            for _key, facts in happenings:
                self.append(facts)

    def completions(self) -> int:
        return sum(isinstance(f, ev.ProfilingCompleted) for f in self.facts)


def planned_workload(agent: Agent) -> cmd.ExecuteProfileRuns:
    ref = next(wid for wid, t in sorted(agent.ex.setup.truths.items()) if t.kind == WorkloadKind.BATCH)
    agent.append([ev.WorkloadSubmitted(at=0.0, workload_id="w1", tenant="t1", kind=WorkloadKind.BATCH,
                                       target=CompletionTimeTarget(seconds=600.0), spec=TwinWorkloadRef(ref=ref))])
    decision = decide(agent.view.state, cmd.PlanProfiling(workload_id="w1"), params=policy_set("sextant"),
                      seed=1, at=0.0)
    (planned,) = decision.events
    assert isinstance(planned, ev.ProfilingPlanned) and planned.runs
    agent.append([planned])
    return cmd.ExecuteProfileRuns(workload_id="w1", runs=planned.runs)


def test_a_resumed_profiling_is_not_run_again_when_its_command_comes_late() -> None:
    agent = Agent()
    command = planned_workload(agent)
    assert agent.ex.resume(agent.view.state, 0.0) == []  # re-launched: its facts come later
    horizon = max(r.duration_s for r in command.runs) + 2.0
    agent.run_until(horizon)
    assert agent.completions() == 1
    # the consumer now delivers the ProfilingPlanned the dead agent had not handled
    assert agent.ex.execute(command, agent.view.state, horizon) == []
    agent.run_until(3 * horizon)
    assert agent.completions() == 1


def test_another_profiling_plan_of_the_workload_still_runs() -> None:
    """A reclassification plans new runs (their ids come from its own decision): not a repeat."""
    agent = Agent()
    command = planned_workload(agent)
    agent.ex.execute(command, agent.view.state, 0.0)
    horizon = max(r.duration_s for r in command.runs) + 2.0
    agent.run_until(horizon)
    assert agent.completions() == 1
    again = command.model_copy(update={"runs": tuple(r.model_copy(update={"run_id": r.run_id + "-2"})
                                                     for r in command.runs)})
    agent.ex.execute(again, agent.view.state, horizon)
    agent.run_until(3 * horizon)
    assert agent.completions() == 2
