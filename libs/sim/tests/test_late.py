"""LATE as Zaharia et al. (OSDI'08 §4) define it, on the per-task view (`baselines.late`), and
Hadoop's rule on the same view (`baselines.hadoop_tasks`)."""

from __future__ import annotations

from sextant_sim.adaptation.baselines import hadoop_tasks, late


def _job(n: int = 20) -> tuple[list[str], list[float], list[float], list[int]]:
    """n tasks on n/4 servers of 4 slots, all 100 s old, progress 0.5 (rate 0.005/s)."""
    return [f"s{i // 4}" for i in range(n)], [0.5] * n, [100.0] * n, [0] * n


def test_only_tasks_below_the_25th_percentile_rate_are_candidates() -> None:
    servers, progress, elapsed, attempts = _job()
    progress[3], progress[7] = 0.1, 0.2  # rates 0.001 and 0.002: below the 25th percentile (0.005)
    pick = late(servers, progress, elapsed, attempts)
    assert pick.tasks == (3, 7)  # longest time left first: (1 − 0.1)/0.001 > (1 − 0.2)/0.002


def test_rate_is_progress_over_the_attempts_own_age_not_the_jobs() -> None:
    servers, progress, elapsed, attempts = _job()
    progress[5], elapsed[5] = 0.1, 20.0  # young: rate 0.005, not slow (and < 60 s old anyway)
    progress[6] = 0.3  # rate 0.003: slow
    assert late(servers, progress, elapsed, attempts).tasks == (6,)


def test_tasks_younger_than_a_minute_are_not_speculated() -> None:
    servers, progress, elapsed, attempts = _job()
    progress[2], elapsed[2] = 0.01, 59.0
    assert late(servers, progress, elapsed, attempts).tasks == ()
    elapsed[2] = 60.0
    assert late(servers, progress, elapsed, attempts).tasks == (2,)


def test_speculative_cap_is_ten_percent_of_the_slots_counting_running_copies() -> None:
    servers, progress, elapsed, attempts = _job(30)  # cap ⌊3.0⌋ = 3
    for i in (1, 5, 9, 13):
        progress[i] = 0.05 + 0.01 * i
    assert late(servers, progress, elapsed, attempts).tasks == (1, 5, 9)  # 4 slow, 3 allowed
    attempts[20] = 1  # a copy still running uses one of the three
    assert late(servers, progress, elapsed, attempts).tasks == (1, 5)
    attempts[21] = attempts[22] = 1
    assert late(servers, progress, elapsed, attempts).tasks == ()
    progress[20] = progress[21] = progress[22] = 1.0  # finished copies free the cap
    assert late(servers, progress, elapsed, attempts).tasks == (1, 5, 9)


def test_a_small_job_may_still_have_one_copy() -> None:
    servers, progress, elapsed, attempts = _job(8)  # ⌊0.8⌋ = 0 → at least one
    progress[0], progress[1] = 0.1, 0.2
    assert late(servers, progress, elapsed, attempts).tasks == (0,)


def test_a_copy_is_never_copied_again() -> None:
    servers, progress, elapsed, attempts = _job()
    progress[4], attempts[4] = 0.01, 1  # the slowest task is already a speculative copy
    progress[8] = 0.2
    pick = late(servers, progress, elapsed, attempts)
    assert pick.tasks == (8,)  # not the copy; and the running copy leaves one of the cap's two
    attempts[4] = 0
    assert late(servers, progress, elapsed, attempts).tasks == (4, 8)


def test_ties_are_broken_by_server_then_task_index() -> None:
    servers, progress, elapsed, attempts = _job()
    for i in (13, 2, 9):
        progress[i] = 0.1  # equal time left
    assert late(servers, progress, elapsed, attempts).tasks == (2, 9)  # s0 < s2 < s3, cap 2
    assert late(list(reversed(servers)), progress, elapsed, attempts).tasks == (13, 9)


def test_nodes_below_the_slow_node_threshold_get_no_copy() -> None:
    servers, progress, elapsed, attempts = _job()
    for i in range(4, 8):  # server s1's tasks: total progress 0.4 < the 25th percentile (2.0)
        progress[i] = 0.1
    pick = late(servers, progress, elapsed, attempts)
    assert pick.slow_nodes == ("s1",)
    assert set(pick.tasks) <= {4, 5, 6, 7} and len(pick.tasks) == 2


def test_nothing_to_do_without_two_running_tasks() -> None:
    assert late(["a", "b"], [1.0, 0.1], [100.0, 100.0], [0, 0]).tasks == ()
    assert late([], [], [], []).tasks == ()


def test_hadoop_rule_on_tasks_skips_copies_and_young_attempts() -> None:
    servers, progress, elapsed, attempts = _job()
    progress[1] = progress[2] = progress[3] = 0.1  # 0.4 behind the ~0.44 average
    attempts[2] = 1
    elapsed[3] = 30.0
    assert hadoop_tasks(servers, progress, elapsed, attempts).tasks == (1,)


# --- the per-task view in the twin and its path to the reprovisioner ---------------------------------


def test_task_attempts_reach_the_reprovisioner_and_old_commands_upcast() -> None:
    from sextant_contracts import commands as cmd
    from sextant_contracts import events as ev
    from sextant_contracts.upcasters import upcast
    from sextant_core.process import react
    from sextant_core.state.model import ClusterState

    e = ev.TaskAttemptsObserved(at=5.0, workload_id="w1", servers=("a", "b"), rates=(1.0, 0.5),
                                progress=(0.4, 0.1), elapsed=(100.0, 30.0), attempts=(0, 1))
    (c,) = react(ClusterState(), e)
    assert isinstance(c, cmd.AssessTasks) and c.elapsed == (100.0, 30.0) and c.attempts == (0, 1)
    (old,) = react(ClusterState(), ev.TasksObserved(at=5.0, workload_id="w1", servers=("a",), rates=(1.0,),
                                                    progress=(0.4,)))
    assert isinstance(old, cmd.AssessTasks) and old.elapsed == () and old.attempts == ()
    v1 = {"workload_id": "w1", "servers": ["a"], "rates": [1.0], "progress": [0.4]}
    assert upcast("AssessTasks", 1, v1) == {**v1, "elapsed": [], "attempts": []}


def test_the_v2_scenario_gives_tasks_their_own_progress_copies_and_true_stragglers() -> None:
    from sextant_contracts import events as ev
    from sextant_sim.adaptation.run import run
    from sextant_sim.scenarios import load_scenario
    from sextant_sim.setup import prepare

    r = run(prepare(load_scenario("quasar-hadoop-stragglers-v2"), 6), "late", 6)
    views = [e for e in r.events if isinstance(e, ev.TasksObserved)]
    assert views and all(isinstance(e, ev.TaskAttemptsObserved) for e in views)
    # tasks on one server differ in progress (their own sizes), not only between servers
    assert any(len({p for s, p in zip(e.servers, e.progress, strict=True) if s == e.servers[0]}) > 1 for e in views)
    relaunched = [e for e in r.events if isinstance(e, ev.AllocationAdjusted) and e.action == "relaunch"]
    assert relaunched  # LATE speculates in the twin
    assert any(1 in e.attempts for e in views)  # the relaunched node's tasks are copies
    injected = {(w, s, at) for w, s, at, _f in r.engine.world.stragglers}
    true = r.engine.agent.adaptation.true_stragglers
    assert true and {(w, s, at) for w, s, at, _f in true} <= injected
    # an injection on a node much faster than the job's median is no true straggler (the definition)
    assert len(true) < len(injected)
