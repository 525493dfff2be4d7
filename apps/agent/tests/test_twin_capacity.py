"""No placement ever over-commits a server: the in-process platform (`sextant-adaptive`) with the
twin's executor as its agent runs 150 platform-demo workloads, and folding the log event by event
no server's placed cores or memory ever exceed its capacity.

Seed 9 is the case that found a planner bug: a scale-out spread that ended on one node gave it the
whole request's memory, not the memory the spread had checked (planner versions before 6.1,
`SextantParams.scale_out_memory`); s0004 held 61.9 of its 48 GiB after position 1976."""

from __future__ import annotations

import pytest
from sextant_agent.testing import TwinCluster
from sextant_agent.twin import TwinExecutor
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import TwinWorkloadRef
from sextant_core.profiles import policy_set
from sextant_core.state import EMPTY, evolve
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare

WORKLOADS = 150


class Cluster(TwinCluster):
    def __init__(self, seed: int) -> None:
        super().__init__(policy_set("sextant-adaptive"))
        self.ex = TwinExecutor("platform-demo", seed, speed=1.0, wall0=0.0)  # the servers are the same

    def agent(self, c: cmd.Command, at: float) -> list[ev.Event]:
        self._observe()
        return self.ex.execute(c, self.state, at)


@pytest.mark.parametrize("seed", [9])
def test_no_server_is_ever_over_committed(seed: int) -> None:
    c = Cluster(seed)
    for i, s in enumerate(prepare(load_scenario("platform-demo"), seed).subs[:WORKLOADS]):
        c.advance(s.at)
        c.p.submit([s.event.model_copy(update={"workload_id": f"fz{i:05d}", "spec": TwinWorkloadRef(ref=s.workload_id)})])
    c.advance(c.ex.now + 3600.0)
    state, placements, peak = EMPTY, 0, 0.0
    for env in c.p.log:
        state = evolve(state, env.event(), env.position)
        placements += env.type == "PlacementDecided"
        for s in state.servers.values():
            assert s.used_cores <= s.capacity.cores, (env.position, env.type, s.server_id)
            assert s.used_memory_gb <= s.capacity.memory_gb + 1e-9, (env.position, env.type, s.server_id,
                                                                     s.used_memory_gb, s.capacity.memory_gb)
            peak = max(peak, s.used_memory_gb / s.capacity.memory_gb)
    assert placements >= WORKLOADS // 2  # not vacuous: the run placed work
    assert peak > 0.8  # and some server came close to full memory
