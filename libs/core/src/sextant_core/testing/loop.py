"""An in-process log with every decider attached: the platform's workflow without any I/O.

Each appended envelope is offered to every service in a fixed order; a service catches up with
the log, reacts, and appends its outputs right after the state it saw — exactly what the real
services do with a head-conditional append. `agent` answers agent commands with facts. Used to
test replay and determinism without PostgreSQL or Kafka.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id

from ..policies import PolicySet
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
