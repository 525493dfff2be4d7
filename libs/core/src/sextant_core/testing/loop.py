"""An in-process log with every decider attached: the platform's workflow without any I/O.

Each appended envelope is offered to every service in a fixed order; a service catches up with
the log, reacts, and appends its outputs right after the state it saw — exactly what the real
services do with a head-conditional append. `agent` answers agent commands with facts. Used to
test replay and determinism without PostgreSQL or Kafka.

`follow(events, params)` is the same workflow without envelopes, on bare state: fold each event,
decide every command it causes, answer the agent commands with `steady_agent` (or the agent
given), until nothing is pending.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id

from ..decide import NotADecision, decide, seed_for
from ..policies import PolicySet
from ..process import react
from ..state import ClusterState, fold
from ..workflow import SERVICES, Decider

Agent = Callable[[cmd.Command, float], Sequence[ev.Event]]


class InProcessPlatform:
    def __init__(self, params: PolicySet, agent: Agent) -> None:
        self.log: list[Envelope] = []
        self.deciders = {s: Decider(s, params) for s in SERVICES}
        self.agent_view = Decider("agent", params)
        self.agent = agent

    def _append(self, events: Sequence[ev.Event], source: str, cause: str | None) -> list[Envelope]:
        out = []
        for i, e in enumerate(events):
            pos = len(self.log) + 1
            env = Envelope.wrap(e, id=derive_id(source, cause, i, pos), source=source, stream_version=0,
                                time=e.at, causation_id=cause).with_position(pos)
            self.log.append(env)
            out.append(env)
        return out

    def submit(self, events: Sequence[ev.Event], source: str = "edge") -> None:
        """Append edge facts, then let every service and the agent react until quiet."""
        queue = self._append(events, source, None)
        while queue:
            env = queue.pop(0)
            for name, d in self.deciders.items():
                d.fold(self.log[d.position:])  # positions are 1-based: the unseen tail
                result = d.handle(env)
                queue.extend(self._append(result.events, name, env.id))
            self.agent_view.fold(self.log[self.agent_view.position:])
            for c in self.agent_view.handle(env).agent_commands:
                queue.extend(self._append(self.agent(c, env.event().at), "agent", env.id))


def steady_agent(c: cmd.Command, at: float) -> list[ev.Event]:
    """A minimal cluster agent: every profiling run measures 1.0 (an interference run causes 20.0)
    and the runs complete at once; every start succeeds; other commands get no answer."""
    if isinstance(c, cmd.ExecuteProfileRuns):
        return [ev.ProfileSampleRecorded(at=at, workload_id=c.workload_id, run_id=r.run_id,
                                         classification=r.classification, column=r.column, value=1.0,
                                         caused=20.0 if r.classification == "interference" else None)
                for r in c.runs] + [ev.ProfilingCompleted(at=at, workload_id=c.workload_id, samples=len(c.runs))]
    if isinstance(c, cmd.StartWorkload):
        return [ev.WorkloadStarted(at=at, workload_id=c.workload_id, allocation=c.allocation)]
    return []


def follow(events: Sequence[ev.Event], params: PolicySet, state: ClusterState | None = None,
           agent: Agent = steady_agent) -> tuple[ClusterState, list[ev.Event]]:
    """Fold `events` into `state` (an empty cluster by default) one at a time and follow every
    reaction to quiescence, as the services and the agent do: a decision command is decided under
    `params` with the seed `seed_for` gives it, an agent command is answered by `agent`. Returns
    the final state and every event folded, in order (the position advances by one per event)."""
    st = fold([]) if state is None else state
    log: list[ev.Event] = []
    pending = list(events)
    while pending:
        e = pending.pop(0)
        st = fold([e], st).with_(position=st.position + 1)
        log.append(e)
        for c in react(st, e):
            try:
                pending.extend(decide(st, c, params=params, seed=seed_for(c, st), at=st.now).events)
            except NotADecision:
                pending.extend(agent(c, st.now))
    return st, log
