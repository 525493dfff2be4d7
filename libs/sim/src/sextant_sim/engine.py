"""The discrete-event engine of the twin: virtual time, one heap, the core's workflow, the world.

Happenings (arrivals, profiling ends, milestones, load segments, observations, ticks, server
failures) sit in one heap ordered by (time, priority, sequence) — SimPy's key — so ties resolve
the same way every run. Each happening becomes events; every event is folded into the immutable
`ClusterState` (`sextant_core.state.evolve`) at the next log position, then the core's process
manager (`react`) says which commands follow. Commands the core decides go to
`sextant_core.decide.decide` with that immutable snapshot; the twin applies the returned events and
never lets a policy touch the world. Agent commands (`ExecuteProfileRuns`, `StartWorkload`,
`ResizeWorkload`, `StopWorkload`) are executed here, playing the cluster agent (`agent.py`).

Between happenings nothing is simulated: the world's progress is analytic (`cluster.py`).
Determinism: no wall clock, no global RNG, derived event ids (`derive_id(run key, position)`); the
same scenario, profile and seed give a byte-identical JSONL log (`logsink.py`).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.ids import derive_id
from sextant_core.decide import DECIDED_COMMANDS
from sextant_core.policies import PolicySet
from sextant_core.state.evolve import evolve
from sextant_core.state.model import EMPTY, ClusterState
from sextant_core.workflow import react_and_decide

from . import seeding
from .agent import Agent
from .cluster import World
from .host import PRIORITY, AgentHost
from .ledger import Ledger, Record
from .logsink import LogSink
from .setup import Setup

Progress = Callable[[float, int, int], None]  # (now, ended workloads, total workloads)


@dataclass(slots=True)
class Counters:
    events: int = 0
    decisions: int = 0
    happenings: int = 0


class Engine(AgentHost):
    """One run of one profile on one prepared scenario."""

    def __init__(self, setup: Setup, params: PolicySet, *, log: LogSink | None = None,
                 progress: Progress | None = None, keep_heatmap: bool = False) -> None:
        self.setup = setup
        self.params = params
        self.log = log
        self.progress = progress
        self.run_key = f"{setup.scenario.name}/{params.profile}/{setup.seed}"
        self.state: ClusterState = EMPTY
        self.now = 0.0
        self.counters = Counters()
        self.ledger = Ledger()
        self._heap: list[tuple[float, int, int, str, str, int]] = []
        self._seq = 0
        self._pending: deque[tuple[ev.Event, str]] = deque()
        self._ended = 0
        self._arrived = 0
        self.heatmap: list[tuple[float, Any]] | None = [] if keep_heatmap else None
        sids = [sid for sid, _ in setup.servers]
        pidx = [setup.cat.index(p.platform_id) for _, p in setup.servers]
        self.world = World(setup.cat, sids, pidx, setup.model, setup.scale, self.schedule,
                           setup.gt.memory.oom_headroom)
        self.agent = Agent(self)
        for s in setup.subs:
            t = s.truth
            self.ledger.add(Record(workload_id=s.workload_id, family=t.family, group=s.group,
                                   kind=t.kind.value, best_effort=s.event.best_effort,
                                   submitted_at=s.at, ideal_s=t.ideal_s, needed_cores=t.needed_cores,
                                   requested_cores=t.requested_cores))

    # --- scheduling ----------------------------------------------------------------------------

    def schedule(self, at: float, kind: str, key: str, version: int, priority: int | None = None) -> None:
        prio = priority if priority is not None else PRIORITY[kind]
        self._seq += 1
        heapq.heappush(self._heap, (at, prio, self._seq, kind, key, version))

    # --- events --------------------------------------------------------------------------------

    def emit(self, e: ev.Event, cause: str | None = None) -> None:
        """Append one event: fold it, log it, queue it for the process manager."""
        pos = self.state.position + 1
        self.state = evolve(self.state, e, pos)
        eid = derive_id(self.run_key, pos)
        self.counters.events += 1
        if self.log is not None:
            self.log.write(pos, eid, e, cause)
        self.ledger.on_event(e)
        self.agent.on_event(e)
        if isinstance(e, ev.WorkloadCompleted | ev.WorkloadFailed | ev.WorkloadRevoked):
            self._ended += 1
        self._pending.append((e, eid))

    def drain(self) -> None:
        """Run the workflow until quiet: commands follow events, decisions produce events (the
        core's `react_and_decide`, every service's commands decided here, the agent's executed)."""
        while self._pending:
            e, eid = self._pending.popleft()
            host = _Reaction(self, eid)
            decided = react_and_decide(host, e, params=self.params, decides=_decided_here, causation=(eid,))
            self.counters.decisions += len(decided)

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> Engine:
        st = self.setup
        for i, s in enumerate(st.subs):
            self.schedule(s.at, "arrival", str(i), 0)
        for i, f in enumerate(st.failures):
            self.schedule(f.at, "fail", str(i), 0)
            self.schedule(f.repaired_at, "recover", str(i), 0)
        self.schedule(st.scenario.telemetry.tick_s, "tick", "0", 0)
        self._register_servers()
        total = len(st.subs)
        while self._heap:
            at, _prio, _seq, kind, key, version = heapq.heappop(self._heap)
            if at > st.horizon:
                break
            if kind == "tick" and self._arrived == total and self._ended >= total:
                break
            self.now = at
            self.counters.happenings += 1
            self._dispatch(kind, key, version)
            self.drain()
            if self.progress is not None and self.counters.happenings % 2000 == 0:
                self.progress(self.now, self._ended, total)
        self.agent.finish(self.now)
        if self.progress is not None:
            self.progress(self.now, self._ended, total)
        return self

    def _register_servers(self) -> None:
        for sid, p in self.setup.servers:
            self.emit(ev.ServerRegistered(at=0.0, server_id=sid, platform=p.platform_id, capacity=p.capacity))
        for e in seeding.events_for(self.setup, self.params):  # offline seeds of the classifier (seeding.py)
            self.emit(e)
        self.drain()

    def _dispatch(self, kind: str, key: str, version: int) -> None:
        st = self.setup
        if kind == "arrival":
            self._arrived += 1
            self.emit(st.subs[int(key)].event)
        elif kind == "tick":
            seq = int(key)
            self.emit(ev.Tick(at=self.now, seq=seq, period_s=st.scenario.telemetry.tick_s))
            if self.heatmap is not None:
                self.heatmap.append((self.now, self.world.busy / self.world.cores))
            self.schedule(self.now + st.scenario.telemetry.tick_s, "tick", str(seq + 1), 0)
        elif kind == "fail":
            f = st.failures[int(key)]
            self.agent.fail_server(f.server_id)
        elif kind == "recover":
            f = st.failures[int(key)]
            self.agent.recover_server(f.server_id)
        else:
            self.agent.happening(kind, key, version)

    @property
    def total_workloads(self) -> int:
        return len(self.setup.subs)


def _decided_here(c: cmd.Command) -> bool:
    """Every command the core decides, whatever service would handle it on the platform."""
    return c.HANDLER != "agent" and type(c) in DECIDED_COMMANDS


@dataclass(slots=True)
class _Reaction:
    """The engine as the core's `ReactionHost` for one event `eid`: decided events are emitted
    (caused by it); agent commands are executed by the twin's agent."""

    engine: Engine
    eid: str

    @property
    def state(self) -> ClusterState:
        return self.engine.state

    def apply(self, event: ev.Event) -> None:
        self.engine.emit(event, self.eid)

    def execute(self, command: cmd.Command) -> None:
        if command.HANDLER == "agent":
            self.engine.agent.execute(command, self.eid)
