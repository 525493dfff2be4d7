"""`AgentHost`: what the twin's cluster agent (`agent.py`) needs from the process that runs it.

Two hosts run the agent: the simulator's `Engine` (virtual time, the core deciding in-process)
and the platform's `TwinExecutor` (`sextant_agent.twin`: scaled wall-clock time, decisions from
the log). Both declare `AgentHost`, so mypy checks each against what the agent uses and neither
has to pass for the other.

`PRIORITY` is the order of happenings at equal time (lower first), SimPy's `(time, priority,
sequence)` key: a host's heap uses it for every kind it does not get an explicit priority for.
"""

from __future__ import annotations

from typing import Protocol

from sextant_contracts import events as ev
from sextant_core.state.model import ClusterState

from .cluster import World
from .ledger import Ledger
from .setup import Setup

# priorities at equal time (lower first)
P_FAIL, P_RECOVER, P_MILESTONE, P_LOAD, P_PROFILED, P_ARRIVAL, P_OBSERVE, P_TICK = range(8)

PRIORITY: dict[str, int] = {
    "fail": P_FAIL, "recover": P_RECOVER, "milestone": P_MILESTONE, "service_end": P_MILESTONE,
    "load": P_LOAD, "profiled": P_PROFILED, "arrival": P_ARRIVAL, "observe": P_OBSERVE, "tick": P_TICK,
}


class AgentHost(Protocol):
    """The agent reads the world, the prepared scenario, the folded state and the time, schedules
    happenings and reports facts; it never decides.

    `state` is the host's current fold (the agent reads workloads' allocations from it), `now`
    the current time in the host's time base (seconds; virtual in the twin), `ledger` the per
    workload record of the run.
    """

    world: World
    setup: Setup
    ledger: Ledger
    state: ClusterState
    now: float

    def schedule(self, at: float, kind: str, key: str, version: int, priority: int | None = None) -> None:
        """Push happening `kind` of `key` at time `at`; `priority` None = `PRIORITY[kind]`."""
        ...

    def emit(self, e: ev.Event, cause: str | None = None) -> None:
        """Report the fact `e` (caused by the event id `cause`, when known)."""
        ...

    def host_time(self, log_time: float) -> float:
        """The host's time of the log's time `log_time` (an absolute time a target names, e.g. a
        deadline); the identity when the host reports facts in its own time base (the engine)."""
        return log_time
