"""The executor interface: what the cluster agent needs from whatever runs workloads.

The agent turns the platform's agent commands (`ExecuteProfileRuns`, `StartWorkload`,
`ResizeWorkload`, `StopWorkload`) into calls on an executor and reports what the executor says
happened: facts (events for the log) and raw performance samples (for the telemetry service).
`TwinExecutor` (twin.py) runs them on the cluster twin; a real executor (containers on real
servers) implements the same Protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import RawSample
from sextant_core.state.model import ClusterState


class Executor(Protocol):
    def servers(self) -> Sequence[ev.ServerRegistered]:
        """The servers this executor brings (registered once, at the agent's first start)."""
        ...

    def knowledge(self, profile: str) -> Sequence[ev.KnowledgeSeeded]:
        """The results of an offline profiling campaign the classifier of `profile` starts from
        (appended once, at the agent's first start); empty when there is none or it learns nothing."""
        ...

    def observe(self, event: ev.Event, state: ClusterState) -> None:
        """A log event the executor may need to know (submissions, revokes, deferrals)."""
        ...

    def resume(self, state: ClusterState, wall: float) -> list[ev.Event]:
        """After a restart: re-launch what the log says should be running or profiling."""
        ...

    def execute(self, command: cmd.Command, state: ClusterState, wall: float) -> list[ev.Event]:
        """Carry out an agent command now; returns the facts it produced at once."""
        ...

    def advance(self, state: ClusterState, wall: float) -> tuple[list[tuple[str, list[ev.Event]]], list[RawSample]]:
        """Let time pass up to `wall`: ([(happening key, facts)], samples)."""
        ...
