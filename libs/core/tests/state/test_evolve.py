"""The fold: accounting of resources, queues, and that a fold is order-exact and re-entrant."""

from __future__ import annotations

import pickle

import pytest
from sextant_contracts import events as ev
from sextant_core.domain.lifecycle import IllegalTransition
from sextant_core.domain.lifecycle import WorkloadPhase as P
from sextant_core.state import EMPTY, fold
from sextant_core.testing.builders import alloc, record, server, submitted, through_placement


def placed_cluster() -> list[ev.Event]:
    return [server("s1"), server("s2", platform="B"),
            submitted("w1", cores=3, memory_gb=4.0, fast_path=True),
            *through_placement("w1", alloc(("s1", 2, 3.0), ("s2", 1, 1.0)))]


def test_placement_takes_resources_on_every_server() -> None:
    st = fold(placed_cluster())
    assert st.workloads["w1"].phase == P.PLACED
    assert (st.servers["s1"].used_cores, st.servers["s1"].used_memory_gb) == (2, 3.0)
    assert (st.servers["s2"].used_cores, st.servers["s2"].residents) == (1, ("w1",))


@pytest.mark.parametrize("end", [
    ev.WorkloadCompleted(at=5, workload_id="w1"),
    ev.WorkloadFailed(at=5, workload_id="w1", reason="oom"),
    ev.WorkloadRevoked(at=5, workload_id="w1"),
], ids=["completed", "failed", "revoked"])
def test_ending_releases_everything(end: ev.Event) -> None:
    started = ev.WorkloadStarted(at=3, workload_id="w1", allocation=alloc(("s1", 2, 3.0)))
    st = fold([*placed_cluster(), started, end])
    assert st.servers["s1"].used_cores == 0 and st.servers["s1"].residents == ()
    assert st.servers["s2"].used_memory_gb == 0.0
    assert st.workloads["w1"].phase in (P.COMPLETED, P.FAILED, P.REVOKED)


def test_adjustment_swaps_allocation() -> None:
    events = [*placed_cluster(), ev.WorkloadStarted(at=3, workload_id="w1", allocation=alloc(("s1", 2, 3.0))),
              ev.AllocationAdjusted(at=4, workload_id="w1", decision=record(9), action="scale_up",
                                    allocation=alloc(("s2", 4, 8.0)), reason="qos")]
    st = fold(events)
    # old: s1 2 cores + s2 1 core; new: s2 4 cores only
    assert st.servers["s1"].used_cores == 0
    assert st.servers["s2"].used_cores == 4 and st.servers["s2"].used_memory_gb == 8.0


def test_queue_and_deferred_lists_follow_phases() -> None:
    st = fold([server("s1"), submitted("a", fast_path=True), submitted("b", fast_path=True),
               ev.WorkloadClassified(at=2, workload_id="a", decision=record(1)),
               ev.WorkloadClassified(at=2, workload_id="b", decision=record(2)),
               ev.WorkloadQueued(at=2, workload_id="a", decision=record(3), arq_class=2, position=0,
                                 expected_wait_s=10, reason="class full"),
               ev.WorkloadAdmitted(at=2, workload_id="b", decision=record(4), arq_class=1),
               ev.PlacementDeferred(at=2, workload_id="b", decision=record(5), reasons=("no_capacity",))])
    assert st.queued == ("a",) and st.deferred == ("b",)
    st = fold([ev.WorkloadAdmitted(at=3, workload_id="a", decision=record(6), arq_class=2),
               ev.PlacementDecided(at=3, workload_id="b", decision=record(7), allocation=alloc(("s1", 1, 1.0)))], st)
    assert st.queued == () and st.deferred == ()


def test_illegal_event_stops_the_fold() -> None:
    with pytest.raises(IllegalTransition):
        fold([server("s1"), ev.WorkloadStarted(at=1, workload_id="ghost", allocation=alloc(("s1", 1, 1.0)))])


def test_snapshot_then_tail_equals_full_fold() -> None:
    events = [*placed_cluster(), ev.WorkloadStarted(at=3, workload_id="w1", allocation=alloc(("s1", 2, 3.0))),
              ev.Tick(at=4, seq=0, period_s=1.0), ev.WorkloadCompleted(at=6, workload_id="w1")]
    for cut in range(len(events) + 1):
        snapshot = pickle.loads(pickle.dumps(fold(events[:cut])))
        assert fold(events[cut:], snapshot) == fold(events)


def test_fold_is_pure_earlier_states_unchanged() -> None:
    events = placed_cluster()
    before = fold(events[:3])
    copy = pickle.loads(pickle.dumps(before))
    fold(events[3:], before)
    assert before == copy and before.servers["s1"].used_cores == 0


def test_clock_and_position_advance() -> None:
    st = fold([server("s1", at=7.0)], EMPTY)
    assert st.now == 7.0 and st.position == -1


@pytest.mark.parametrize("late", [
    ev.WorkloadCompleted(at=9, workload_id="w1"),
    ev.WorkloadFailed(at=9, workload_id="w1", reason="oom"),
    ev.QosVerdict(at=9, workload_id="w1", met=True, ratio_to_target=1.0, window_s=1.0),
    ev.PerformanceObserved(at=9, workload_id="w1", value=1.0, ratio_to_target=1.0),
], ids=["completed", "failed", "verdict", "observed"])
def test_late_facts_after_the_end_are_no_ops(late: ev.Event) -> None:
    """A revoke races with the agent's last report: the report is folded as a no-op and the
    resources are not released twice."""
    started = ev.WorkloadStarted(at=3, workload_id="w1", allocation=alloc(("s1", 2, 3.0)))
    revoked = fold([*placed_cluster(), started, ev.WorkloadRevoked(at=8, workload_id="w1")])
    after = fold([late], revoked)
    assert after.servers == revoked.servers and after.workloads == revoked.workloads
    assert after.servers["s1"].used_cores == 0


def test_late_decisions_are_still_illegal() -> None:
    revoked = fold([*placed_cluster(), ev.WorkloadRevoked(at=8, workload_id="w1")])
    with pytest.raises(IllegalTransition):
        fold([ev.PlacementDecided(at=9, workload_id="w1", decision=record(5), allocation=alloc(("s1", 1, 1.0)))],
             revoked)


def test_repeated_profiling_facts_after_completion_are_no_ops() -> None:
    """A restarted agent reports a profiling run twice: the second batch changes nothing."""
    sample = ev.ProfileSampleRecorded(at=2, workload_id="w1", run_id="r1", classification="heterogeneity",
                                      column="A", value=1.0)
    events = [server("s1"), submitted("w1"),
              ev.ProfilingPlanned(at=1, workload_id="w1", decision=record(1), runs=()), sample,
              ev.ProfilingCompleted(at=2, workload_id="w1", samples=1)]
    st = fold(events)
    assert st.workloads["w1"].phase == P.PROFILED
    again = fold([sample, ev.ProfilingCompleted(at=3, workload_id="w1", samples=1)], st)
    assert again.workloads == st.workloads


def test_duplicate_start_is_a_no_op() -> None:
    started = ev.WorkloadStarted(at=3, workload_id="w1", allocation=alloc(("s1", 2, 3.0)))
    st = fold([*placed_cluster(), started])
    assert fold([started], st).workloads == st.workloads
