"""Ladder 8.4's straggler rule (`reprovisioning.stragglers`: a node effect that makes a task
straggle) and how it differs from the rule of ladders ≤ 8.3 (a task's work rate ≥ 1.5× below the
median), which stays for replay (`adaptive.LADDERS`)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import CompletionTimeTarget, WorkloadKind
from sextant_core.decide import decide
from sextant_core.profiles import policy_set
from sextant_core.reprovisioning.adaptive import LADDERS, VERSION
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.reprovisioning.stragglers import (
    job_slowdown,
    new_slowdown,
    progress_rates,
    straggling_nodes,
)
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, server

from .test_adaptive import RATE, params, running

PROGRESS = AdaptationParams(straggler_rule="progress")  # ladder 8.4's rule, pinned here
TWO = ("s0",) * 4 + ("s1",) * 4


def test_progress_rates_take_task_sizes_from_progress_on_the_same_node() -> None:
    # s0: same work done, one task twice as large → half the progress, half the progress rate
    pr = progress_rates(("s0",) * 3 + ("s1",) * 2, (1.0, 1.0, 1.0, 0.5, 0.5), (0.4, 0.4, 0.2, 0.3, 0.3))
    assert pr == pytest.approx([1.0, 1.0, 0.5, 0.5, 0.5])
    assert progress_rates(("s0",), (1.0,), (0.0,)) == [0.0]


def test_a_slow_node_whose_tasks_do_not_straggle_is_left_alone() -> None:
    # s1 runs 2.5× slower, equal tasks: its progress rate is 0.4 / median 0.7 = 0.57 ≥ half
    rates = (1.0,) * 4 + (0.4,) * 4
    assert straggling_nodes(TWO, rates, rates, (0.4,) * 4 + (0.16,) * 4, None, slowdown=1.5, half=0.5) == []
    # one task of s1 twice as large: 0.2 / 0.7 < half, and 0.29 × 2.5 ≥ half without the node
    (hit,) = straggling_nodes(TWO, rates, rates, (0.4,) * 4 + (0.16,) * 3 + (0.08,), None, slowdown=1.5, half=0.5)
    assert hit[0] == "s1" and hit[1] == pytest.approx(2.5) and hit[2] == pytest.approx(0.2 / 0.7)


def test_a_task_slow_wherever_it_runs_is_not_the_nodes_doing() -> None:
    # a task 8× the others on s1: 0.05 / 0.7 × 2.5 is still below half — data skew, not the node
    rates = (1.0,) * 4 + (0.4,) * 4
    assert straggling_nodes(TWO, rates, rates, (0.4,) * 4 + (0.16,) * 3 + (0.02,), None, slowdown=1.5,
                            half=0.5) == []


def test_a_node_alone_needs_the_jobs_own_slowdown() -> None:
    one = ("s0",) * 4
    rates, progress = (0.3,) * 4, (0.4, 0.4, 0.4, 0.1)  # one task 4× the others: 0.25 of the median
    assert straggling_nodes(one, rates, rates, progress, None, slowdown=1.5, half=0.5) == []
    assert straggling_nodes(one, rates, rates, progress, 1.2, slowdown=1.5, half=0.5) == []
    assert [h[0] for h in straggling_nodes(one, rates, rates, progress, 3.0, slowdown=1.5, half=0.5)] == ["s0"]
    assert straggling_nodes(one, rates, rates, progress, 1.9, slowdown=1.5, half=0.5) == []  # 0.25 × 1.9 < half
    assert [h[0] for h in straggling_nodes(one, rates, rates, progress, math.inf, slowdown=1.5, half=0.5)] == ["s0"]


def test_job_slowdown_from_the_projected_completion() -> None:
    # required 1000 s; ratio 0.5 → projected 2000, left 1880 at 120; 0.25 → 4000, left 3760 at 240
    f = job_slowdown([(120.0, 0.5, ()), (240.0, 0.25, ())], 1000.0, 0.0, 0.0, 0.9)
    assert f == pytest.approx(3760.0 / (1880.0 - 120.0))
    assert job_slowdown([(120.0, 0.5, ()), (240.0, 0.47, ())], 1000.0, 0.0, 0.0, 0.9) is None  # no fall
    assert job_slowdown([(120.0, 0.5, ()), (240.0, 0.25, ())], 1000.0, 0.0, 50.0, 0.9) is None  # changed within
    assert job_slowdown([(240.0, 0.25, ())], 1000.0, 0.0, 0.0, 0.9) is None
    # a rate target: the ratio is the rate
    assert job_slowdown([(120.0, 0.5, ()), (240.0, 0.25, ())], None, 0.0, 0.0, 0.9) == pytest.approx(2.0)


def test_new_slowdown_is_a_fall_or_the_first_window() -> None:
    obs = [(120.0, 0.5, ()), (240.0, 0.44, ())]
    assert new_slowdown(obs, 0.0, 0.9, first=True)
    assert not new_slowdown([(120.0, 0.5, ()), (240.0, 0.49, ())], 0.0, 0.9, first=True)
    assert new_slowdown(obs[:1], 0.0, 0.9, first=True) and not new_slowdown(obs[:1], 0.0, 0.9, first=False)
    assert not new_slowdown([], 0.0, 0.9, first=True)


def _job_alone() -> tuple[object, cmd.AssessTasks]:
    target = CompletionTimeTarget(seconds=1000.0)
    events = [server("s0"), server("s1"),
              *running("job", alloc(("s0", 4, 4.0)), kind=WorkloadKind.ANALYTICS, target=target, at=0.0),
              ev.PerformanceObserved(at=120.0, workload_id="job", value=2000.0, ratio_to_target=0.5),
              ev.PerformanceObserved(at=240.0, workload_id="job", value=4000.0, ratio_to_target=0.25)]
    tasks = cmd.AssessTasks(workload_id="job", servers=("s0",) * 4, rates=(0.3,) * 4, progress=(0.4, 0.4, 0.4, 0.1),
                            elapsed=(240.0,) * 4, attempts=(0,) * 4)
    return fold(events), tasks


def test_old_and_new_rules_differ() -> None:
    st, tasks = _job_alone()
    # ≤ 8.3: one node has no median to be slower than; 8.4: the job fell 2.1×, a task at 0.25 of the median
    assert decide(st, tasks, params=params(RATE), seed=1, at=240.0).events == ()
    (probe,) = decide(st, tasks, params=params(PROGRESS), seed=1, at=240.0).events
    assert isinstance(probe, ev.ProbeRequested) and probe.purpose == "straggler" and probe.server_id == "s0"
    assert probe.reference_server_id is None
    # a probe that finds its tolerated scores fallen > 20 % relaunches it elsewhere
    res = cmd.AssessProbe(workload_id="job", probe_id=probe.probe_id, purpose="straggler", server_id="s0",
                          tolerated={"memory_bw": 20.0}, caused={"memory_bw": 10.0})
    (adj,) = decide(st, res, params=params(PROGRESS), seed=1, at=241.0).events
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "relaunch" and adj.allocation.servers == ("s1",)
    # and the slow 2-node case the old rule probes, whose tasks do not straggle, the new one leaves
    st2 = fold([server("s0"), server("s1"),
                *running("j2", alloc(("s0", 4, 4.0), ("s1", 4, 4.0)), kind=WorkloadKind.ANALYTICS)])
    slow = cmd.AssessTasks(workload_id="j2", servers=TWO, rates=(1.0,) * 4 + (0.4,) * 4,
                           progress=(0.4,) * 4 + (0.16,) * 4)
    assert [e.server_id for e in decide(st2, slow, params=params(RATE), seed=1, at=500.0).events] == ["s1"]
    assert decide(st2, slow, params=params(PROGRESS), seed=1, at=500.0).events == ()


def test_ladder_versions_keep_their_straggler_rule() -> None:
    assert VERSION == "8.16" and LADDERS[VERSION].straggler_rule == LADDERS["8.8"].straggler_rule == "views"
    old_probes = {"straggler_confirm_alone": False, "straggler_every_source": False}
    rotation = {"probe_policy": "rotation", "probe_test": "largest", "neighbour_tolerated_margin": None}
    assert LADDERS["8.6"] == AdaptationParams(straggler_rule="progress", **old_probes)  # type: ignore[arg-type]
    assert LADDERS["8.5"] == AdaptationParams(straggler_rule="progress", **old_probes, **rotation)  # type: ignore[arg-type]
    assert LADDERS["8.7"] == replace(LADDERS["8.6"], latency_calibration=True)
    assert LADDERS["8.4"].straggler_rule == "progress"
    assert LADDERS["8.3"] == AdaptationParams(straggler_rule="rate", blind_growth_in_nodes=False,
                                              **old_probes, **rotation)  # type: ignore[arg-type]
    assert LADDERS["8.2"].straggler_rule == "rate" and not LADDERS["8.2"].demonstrated_capacity
    past = policy_set("sextant-adaptive@6.1+8.3")
    assert past.reprovisioner.params.straggler_rule == "rate"  # type: ignore[attr-defined]
