"""Test harness: the in-process platform with the twin's executor as its agent, on one time base
(speed 1, wall clock 0), as the agent's tests compose it. Subclasses give `agent` (what the agent
answers a command with) and, where they need one, their clock loop."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.policies import PolicySet
from sextant_core.state.model import ClusterState
from sextant_core.testing.loop import InProcessPlatform

from .twin import TwinExecutor


class TwinCluster:
    def __init__(self, policy: PolicySet, reissue_load: bool = False) -> None:
        self.ex = TwinExecutor("platform-demo", 1, speed=1.0, wall0=0.0, reissue_load=reissue_load)
        self.p = InProcessPlatform(policy, self.agent)
        self.seen = 0
        self.p.submit(self.ex.servers())

    @property
    def state(self) -> ClusterState:
        """The agent's view, caught up with the log."""
        self.p.agent_view.fold(self.p.log[self.p.agent_view.position:])
        return self.p.agent_view.state

    def _observe(self) -> None:
        """Show the executor every envelope it has not seen yet."""
        for env in self.p.log[self.seen:]:
            self.ex.observe(env.event(), self.p.agent_view.state)
        self.seen = len(self.p.log)

    def agent(self, c: cmd.Command, at: float) -> list[ev.Event]:
        raise NotImplementedError

    def reported(self, facts: list[ev.Event]) -> Sequence[ev.Event]:
        """What the agent appends for one happening's `facts` (subclasses add what the clock owes
        before them)."""
        return facts

    def boundary(self, wall: float) -> Sequence[ev.Event]:
        """What the clock owes at the 60-s boundary `wall` (nothing here)."""
        return ()

    def advance(self, until: float) -> None:
        """Run the twin to `until`, passing each 60-s boundary of log time (the real clock's
        advances are 0.02 s)."""
        wall = self.ex.now
        while wall < until:
            wall = min(60.0 * (math.floor(wall / 60.0) + 1), until)
            self._observe()
            happenings, _samples = self.ex.advance(self.state, wall)
            for _key, facts in happenings:
                self._observe()
                self.p.submit(self.reported(facts), source="agent")
            self.p.submit(self.boundary(wall), source="agent")
