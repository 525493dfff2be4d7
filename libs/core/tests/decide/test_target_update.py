"""PATCH /v1/workloads/{id} (docs/api/README.md): a new target is the fact `TargetUpdated`; the process manager
asks for a re-plan (`PlaceWorkload(reason="target_updated")`) and the planner decides it against
the new target. Pure: same log, same decisions."""

from __future__ import annotations

from sextant_contracts import codec
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import CompletionTimeTarget
from sextant_core.decide import decide, seed_for
from sextant_core.domain.lifecycle import WorkloadPhase as P
from sextant_core.process import react
from sextant_core.profiles import policy_set
from sextant_core.state import ClusterState, fold
from sextant_core.testing import loop
from sextant_core.testing.builders import server, submitted

POLICY = policy_set("foundation")
NEW = CompletionTimeTarget(seconds=42.0)


def follow(st: ClusterState, events: list[ev.Event]) -> tuple[ClusterState, list[ev.Event]]:
    """Fold `events` and follow every reaction to quiescence (agent: profiling measures 1.0,
    starts succeed), as the services and the agent do."""
    return loop.follow(events, POLICY, st)


def running() -> ClusterState:
    st, _ = follow(fold([]), [server("s1", cores=8), server("s2", cores=8, platform="B"), submitted("w1", cores=2)])
    assert st.workloads["w1"].phase == P.RUNNING
    return st


def test_a_new_target_re_plans_a_running_workload() -> None:
    st = running()
    before = st.workloads["w1"]
    update = ev.TargetUpdated(at=st.now, workload_id="w1", target=NEW)
    assert react(fold([update], st), update) == (cmd.PlaceWorkload(workload_id="w1", reason="target_updated"),)
    after, log = follow(st, [update])
    types = [e.TYPE for e in log]
    assert types == ["TargetUpdated", "PlacementDecided", "WorkloadStarted"]
    w = after.workloads["w1"]
    assert w.target == NEW and w.phase == P.RUNNING and w.decisions == before.decisions + 1
    # the new allocation replaced the old one: cores in use equal what the workload holds now
    assert sum(s.used_cores for s in after.servers.values()) == w.allocation.total_cores


def test_a_new_target_before_placement_changes_the_target_only() -> None:
    st, _ = follow(fold([]), [server("s1", cores=8)])
    st = fold([submitted("w2", cores=2)], st).with_(position=st.position + 1)
    update = ev.TargetUpdated(at=st.now, workload_id="w2", target=NEW)
    seen = fold([update], st)
    (place,) = react(seen, update)
    assert decide(seen, place, params=POLICY, seed=seed_for(place, seen), at=seen.now).events == ()
    assert seen.workloads["w2"].target == NEW and seen.workloads["w2"].phase == P.SUBMITTED


def test_re_planning_is_deterministic() -> None:
    st = running()
    update = ev.TargetUpdated(at=st.now, workload_id="w1", target=NEW)
    _, a = follow(st, [update])
    _, b = follow(st, [update])
    assert [codec.dumpb(e) for e in a] == [codec.dumpb(e) for e in b]
