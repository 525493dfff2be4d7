"""decide + react run the whole workflow; decisions are deterministic and record their inputs."""

from __future__ import annotations

import pytest
from sextant_contracts import codec
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.decide import NotADecision, decide, seed_for
from sextant_core.domain.lifecycle import WorkloadPhase as P
from sextant_core.process import react
from sextant_core.profiles import policy_set
from sextant_core.state import ClusterState, fold
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.loop import follow

POLICY = policy_set("foundation")


def run(events: list[ev.Event]) -> tuple[ClusterState, list[ev.Event]]:
    """Fold `events`, then follow every command to quiescence, as a service would."""
    return follow(events, POLICY)


def test_a_workload_goes_from_submission_to_running() -> None:
    st, log = run([server("s1", cores=4), server("s2", platform="B"), submitted("w1", cores=2)])
    assert st.workloads["w1"].phase == P.RUNNING
    types = [e.TYPE for e in log]
    for t in ("ProfilingPlanned", "ProfileSampleRecorded", "ProfilingCompleted", "WorkloadClassified",
              "WorkloadAdmitted", "PlacementDecided", "WorkloadStarted"):
        assert t in types
    assert types.index("ProfilingCompleted") < types.index("WorkloadClassified") < types.index("PlacementDecided")


def test_same_inputs_same_decisions_byte_for_byte() -> None:
    inputs = [server("s1"), server("s2", platform="B"), submitted("w1", cores=2), submitted("w2", cores=8)]
    _, a = run(inputs)
    _, b = run(inputs)
    assert [codec.dumpb(e) for e in a] == [codec.dumpb(e) for e in b]


def test_decision_records_state_position_and_causation() -> None:
    st = fold([server("s1"), submitted("w1", cores=1, fast_path=True)]).with_(position=7)
    st = fold([ev.WorkloadClassified(at=1, workload_id="w1", decision=_rec()),
               ev.WorkloadAdmitted(at=1, workload_id="w1", decision=_rec(), arq_class=0)], st)
    d = decide(st, cmd.PlaceWorkload(workload_id="w1"), params=POLICY, seed=11, at=3.0,
               causation=("e-admitted",))
    (placed,) = d.events
    assert isinstance(placed, ev.PlacementDecided)
    assert placed.decision.state_position == 7 and placed.decision.causation == ("e-admitted",)
    assert placed.decision.seed == 11 and placed.decision.profile == "foundation"


def test_no_capacity_defers_then_capacity_freed_retries() -> None:
    st, _ = run([server("s1", cores=2), submitted("big", cores=4), submitted("small", cores=1)])
    assert st.workloads["big"].phase == P.DEFERRED and st.deferred == ("big",)
    cmds = react(st, ev.ServerRegistered(at=9, server_id="s2", platform="A",
                                         capacity={"cores": 8, "memory_gb": 8}))
    assert cmd.PlaceWorkload(workload_id="big", reason="capacity_freed", freed=("s2",)) in cmds


def test_an_ending_workload_that_held_nothing_retries_no_deferred_placement() -> None:
    st, _ = run([server("s1", cores=2), submitted("big", cores=4), submitted("small", cores=1),
                 submitted("gone", cores=1)])
    assert st.deferred == ("big",)
    held = st.workloads["small"].allocation
    assert held is not None and held.servers == ("s1",)
    st = fold([ev.WorkloadRevoked(at=5, workload_id="gone")], st)  # it held s1 too
    revoke = react(st, ev.WorkloadRevoked(at=5, workload_id="gone"))
    assert cmd.PlaceWorkload(workload_id="big", reason="capacity_freed", freed=("s1",)) in revoke
    # a deferred workload revoked held nothing: nothing freed, no deferred placement retried
    st = fold([ev.WorkloadRevoked(at=6, workload_id="big")], run([server("s1", cores=2), submitted("big", cores=4),
                                                                  submitted("big2", cores=4)])[0])
    assert st.deferred == ("big2",)
    assert not any(isinstance(c, cmd.PlaceWorkload) for c in react(st, ev.WorkloadRevoked(at=6, workload_id="big")))


def test_a_retry_that_no_freed_server_fits_is_answered_without_search() -> None:
    st, _ = run([server("s1", cores=2), server("s2", cores=2), submitted("big", cores=8),
                 submitted("small", cores=1)])
    assert st.deferred == ("big",)
    # 8 cores cannot fit on s1 (2 cores), nor spread over 4 free cores in total
    d = decide(st, cmd.PlaceWorkload(workload_id="big", reason="capacity_freed", freed=("s1",)),
               params=POLICY, seed=1, at=5.0)
    assert d.events == () and d.detail == {"still_deferred": "no freed server fits it"}
    # without `freed` (the periodic retry) the planner searches: same outcome, by search
    d = decide(st, cmd.PlaceWorkload(workload_id="big", reason="capacity_freed"), params=POLICY, seed=1, at=5.0)
    assert d.events == () and "still_deferred" not in d.detail


def test_agent_commands_are_not_decisions() -> None:
    st = fold([server("s1"), submitted("w1")])
    with pytest.raises(NotADecision):
        decide(st, cmd.StopWorkload(workload_id="w1"), params=POLICY, seed=0, at=0.0)


def test_commands_for_finished_workloads_decide_nothing() -> None:
    st = fold([server("s1"), submitted("w1"), ev.WorkloadRevoked(at=2, workload_id="w1")])
    assert decide(st, cmd.PlanProfiling(workload_id="w1"), params=POLICY, seed=0, at=2.0).events == ()


def test_seed_is_stable_per_workload_and_attempt() -> None:
    """A decision's seed is a function of (workload, command type, decisions so far) only: the same
    in every process and on every replay (a pinned value: no salted `hash()`, no clock), different
    for another workload or command, and different for the workload's next attempt."""
    events = [server("s1"), submitted("w1"), submitted("w2")]
    st = fold(events)
    c1, c2 = cmd.PlanProfiling(workload_id="w1"), cmd.PlanProfiling(workload_id="w2")
    assert seed_for(c1, st) == seed_for(c1, fold(events)) == 8339247215138890353
    assert seed_for(c1, st) != seed_for(c2, st)
    assert seed_for(c1, st) != seed_for(cmd.ClassifyWorkload(workload_id="w1"), st)
    d = decide(st, c1, params=POLICY, seed=seed_for(c1, st), at=st.now)
    after = fold(d.events, st)
    assert after.workloads["w1"].decisions == st.workloads["w1"].decisions + 1
    assert seed_for(c1, after) != seed_for(c1, st)  # the next attempt draws anew ...
    assert seed_for(c2, after) == seed_for(c2, st)  # ... and another workload's seed is untouched


def test_server_failure_replans_its_residents() -> None:
    st, _ = run([server("s1", cores=4), server("s2", cores=4), submitted("w1", cores=2)])
    host = st.workloads["w1"].allocation.assignments[0].server_id  # type: ignore[union-attr]
    failed = ev.ServerFailed(at=10, server_id=host)
    st = fold([failed], st)
    assert react(st, failed) == (cmd.PlaceWorkload(workload_id="w1", reason="server_failed", server_id=host),)


def _rec():  # type: ignore[no-untyped-def]
    from sextant_core.testing.builders import record
    return record()
