"""Ladder 8.8's straggler rule (`reprovisioning.task_views`): a node effect read from two consecutive
task views, each task's progress rate from its own progress and age."""

from __future__ import annotations

import math

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import CompletionTimeTarget, WorkloadKind
from sextant_core.decide import decide
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.reprovisioning.task_views import (
    find,
    node_slowdowns,
    peer_slowdowns,
    progress_rates,
    straggling_nodes,
    view_of,
)
from sextant_core.state import fold
from sextant_core.state.evolve import TASK_VIEWS_KEPT
from sextant_core.state.model import TaskView
from sextant_core.testing.builders import alloc, server

from .test_adaptive import params, running

TWO = ("s0",) * 4 + ("s1",) * 4
AGE1, AGE2 = (120.0,) * 8, (240.0,) * 8


def _two(s1_rate_after: float, s0_rate_after: float = 1.0) -> tuple[TaskView, TaskView]:
    # at 120 s: every slot at work rate 1; s0's tasks of size 1 (progress 0.2), s1's twice as large
    # (0.1) — the nodes' median task sizes differ, which ladder 8.4 assumed they did not
    before = view_of(120.0, TWO, (1.0,) * 8, (0.2,) * 4 + (0.1,) * 4, AGE1)
    p0, p1 = 0.2 + 0.2 * s0_rate_after, 0.1 + 0.1 * s1_rate_after
    now = view_of(240.0, TWO, (s0_rate_after,) * 4 + (s1_rate_after,) * 4, (p0,) * 4 + (p1,) * 4, AGE2)
    return before, now


def test_progress_rates_from_each_tasks_own_progress() -> None:
    before, now = _two(0.4)  # s1 falls 2.5× within the window
    f = node_slowdowns(before, now)
    assert f == pytest.approx({"s0": 1.0, "s1": 2.5})
    pr = progress_rates(before, now, {"s1": 2.5}, 1.2)
    # s0: Δprogress / Δt = 0.2 / 120; s1: its mean rate until 120 s (0.1 / 120) / 2.5
    assert pr == pytest.approx([0.2 / 120] * 4 + [0.1 / 120 / 2.5] * 4)
    # no earlier view: progress / age
    assert progress_rates(None, now, {}, 1.2) == pytest.approx([p / 240.0 for p in now.progress])


@pytest.mark.parametrize(("s1_after", "s0_after", "flagged"), [
    # median of 4 × 1/600 and 4 × 1/3000 is 0.001; s1 at 1/3000 = 0.33 of it, × 2.5 = 0.83 ≥ half
    (0.4, 1.0, ["s1"]),
    # s1 unchanged: its large tasks are slow anywhere (data), not because of the node
    (1.0, 1.0, []),
    # both nodes fall 2.5× together (a phase of the job): no node effect of its own
    (0.4, 0.4, []),
], ids=["node-falls", "large-tasks-only", "whole-job-falls"])
def test_a_node_effect_that_makes_a_task_straggle(s1_after: float, s0_after: float, flagged: list[str]) -> None:
    before, now = _two(s1_after, s0_after)
    got = find([before], now, (1.0,) * 8, 0.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=True)
    assert [v.server for v in got] == flagged
    if flagged:
        assert got[0].factor == pytest.approx(2.5) and got[0].worst == pytest.approx((1 / 3000) / 0.001)


def test_a_task_slow_wherever_it_runs_is_not_the_nodes_doing() -> None:
    # one task of s1 8× the others: (1/9600 / 2.5) / median — still below half × 2.5: data skew
    before = view_of(120.0, TWO, (1.0,) * 8, (0.2,) * 4 + (0.2, 0.2, 0.2, 0.025), AGE1)
    now = view_of(240.0, TWO, (1.0,) * 4 + (0.4,) * 4, (0.4,) * 4 + (0.28, 0.28, 0.28, 0.035), AGE2)
    assert find([before], now, (1.0,) * 8, 0.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=True) == []


def test_a_node_alone_is_judged_by_its_own_fall() -> None:
    one = ("s0",) * 4
    before = view_of(120.0, one, (1.0,) * 4, (0.3, 0.3, 0.3, 0.1), (120.0,) * 4)
    now = view_of(240.0, one, (0.3,) * 4, (0.39, 0.39, 0.39, 0.13), (240.0,) * 4)
    # f = 1 / 0.3; the large task: (0.1/120 × 0.3) / median (0.3/120 × 0.3) = 0.33 < half, × 3.3 ≥ half
    (v,) = find([before], now, (1.0,) * 4, 0.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=False)
    assert v.server == "s0" and v.factor == pytest.approx(1 / 0.3) and v.worst == pytest.approx(1 / 3)
    # a fall of 1.3× is below the node-effect bar
    mild = view_of(240.0, one, (1 / 1.3,) * 4, now.progress, (240.0,) * 4)
    assert find([before], mild, (1.0,) * 4, 0.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=False) == []


def test_first_view_peers_or_the_probe() -> None:
    # s1 runs 2.5× below what the classification expects relative to s0 (normalised rates)
    assert peer_slowdowns(TWO, (1.0,) * 4 + (0.4,) * 4) == pytest.approx({"s0": 0.4, "s1": 2.5})
    now = view_of(120.0, TWO, (1.0,) * 4 + (0.4,) * 4, (0.2,) * 4 + (0.08, 0.08, 0.08, 0.04), AGE1)
    (v,) = find([], now, now.rates, 0.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=True)
    assert v.server == "s1"  # 0.04/120 over the median (0.2+0.08)/2/120 = 0.29, × 2.5 ≥ half
    one = view_of(120.0, ("s0",) * 4, (0.3,) * 4, (0.3, 0.3, 0.3, 0.1), (120.0,) * 4)
    # alone, no earlier view: unknown slowdown, left to the probe — only at the job's very first window
    (alone,) = find([], one, one.rates, 0.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=True)
    assert alone.factor == math.inf
    assert find([], one, one.rates, 0.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=False) == []


def test_a_node_resized_in_place_is_not_new() -> None:
    # an earlier view with 2 slots a node, now 4 (a scale-up): not comparable, and its attempts are
    # older than the window since that view, so its peer comparison is not a new node effect
    before = view_of(120.0, ("s0",) * 2 + ("s1",) * 2, (1.0,) * 4, (0.2,) * 4, (120.0,) * 4)
    # without the earlier view: progress / age, the large task at 0.08 / 0.25 of the median, × 2.5 ≥ half
    now = view_of(240.0, TWO, (1.0,) * 4 + (0.4,) * 4, (0.4,) * 4 + (0.1, 0.1, 0.1, 0.08), AGE2)
    assert find([before], now, now.rates, 200.0, slowdown=1.5, half=0.5, fall=1.2, alone_first=True) == []
    assert [v.server for v in find([], now, now.rates, 200.0, slowdown=1.5, half=0.5, fall=1.2,
                                   alone_first=True)] == ["s1"]


def test_straggling_nodes_needs_a_positive_median() -> None:
    assert straggling_nodes(TWO, [None] * 8, {"s1": 3.0}, slowdown=1.5, half=0.5) == []


def _observed(at: float, rates: tuple[float, ...], progress: tuple[float, ...]) -> ev.TaskAttemptsObserved:
    return ev.TaskAttemptsObserved(at=at, workload_id="job", servers=("s0",) * 4, rates=rates, progress=progress,
                                   elapsed=(at,) * 4, attempts=(0,) * 4)


def test_the_fold_keeps_the_latest_views_and_the_ladder_probes_the_node() -> None:
    target = CompletionTimeTarget(seconds=1000.0)
    st = fold([server("s0"), server("s1"),
               *running("job", alloc(("s0", 4, 4.0)), kind=WorkloadKind.ANALYTICS, target=target, at=0.0),
               _observed(60.0, (1.0,) * 4, (0.15,) * 4), _observed(120.0, (1.0,) * 4, (0.3, 0.3, 0.3, 0.1))])
    views = st.workloads["job"].task_views  # type: ignore[attr-defined]
    assert TASK_VIEWS_KEPT == 2 and [v.at for v in views] == [60.0, 120.0]
    tasks = cmd.AssessTasks(workload_id="job", servers=("s0",) * 4, rates=(0.3,) * 4,
                            progress=(0.39, 0.39, 0.39, 0.13), elapsed=(240.0,) * 4, attempts=(0,) * 4)
    (probe,) = decide(st, tasks, params=params(AdaptationParams()), seed=1, at=240.0).events
    assert isinstance(probe, ev.ProbeRequested) and probe.purpose == "straggler" and probe.server_id == "s0"
    assert "3.33x slower" in probe.reason
    # ladder 8.5's rule on the same state: no ratio history, so no verdict
    assert decide(st, tasks, params=params(AdaptationParams(straggler_rule="progress")), seed=1,
                  at=240.0).events == ()


@pytest.mark.parametrize(("measured", "contradicts"), [
    # reference 50 / 40 points: both fall > 10 % (half the 20 % change) → no contradiction
    ({"l1i": 20.0, "tlb": 30.0}, None),
    # l1i falls only 3 % although it had room (50 > the 18-point floor): noise on one source
    ({"l1i": 48.5, "tlb": 0.0}, "l1i"),
    # a source with no room to fall (reference 10 ≤ floor) says nothing
    ({"l1i": 20.0, "tlb": 30.0, "llc_bw": 12.0}, None),
], ids=["all-fall", "one-holds", "no-room"])
def test_a_degraded_node_tolerates_less_on_every_source(measured: dict[str, float], contradicts: str | None) -> None:
    from sextant_core.reprovisioning.detection import straggler_contradicted

    reference = {"l1i": 50.0, "tlb": 40.0, "llc_bw": 10.0}
    assert straggler_contradicted(measured, reference, 0.2, 18.0) == contradicts


def test_alone_a_second_probe_must_agree() -> None:
    from dataclasses import replace

    target = CompletionTimeTarget(seconds=1000.0)
    st = fold([server("s0"), server("s1"),
               *running("job", alloc(("s0", 4, 4.0)), kind=WorkloadKind.ANALYTICS, target=target, at=0.0)])
    w = replace(st.workloads["job"], samples=(("r1", "interference", "memory_bw", 60.0, None),))
    st = replace(st, workloads=st.workloads.set("job", w))
    first = cmd.AssessProbe(workload_id="job", probe_id="straggler-120-s0-0", purpose="straggler", server_id="s0",
                            tolerated={"memory_bw": 20.0}, caused={})
    (again,) = decide(st, first, params=params(AdaptationParams()), seed=1, at=121.0).events
    assert isinstance(again, ev.ProbeRequested) and again.probe_id == "straggler-120-s0-0-again"
    assert again.server_id == "s0" and again.sources == ("memory_bw",) and again.reference_server_id is None
    second = first.model_copy(update={"probe_id": again.probe_id})
    (adj,) = decide(st, second, params=params(AdaptationParams()), seed=1, at=121.0).events
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "relaunch" and adj.allocation.servers == ("s1",)
    # a confirmation that finds no fall (60 → 55: 8 %) relaunches nothing
    calm = second.model_copy(update={"tolerated": {"memory_bw": 55.0}})
    assert decide(st, calm, params=params(AdaptationParams()), seed=1, at=121.0).events == ()
    # ladder 8.5 relaunched on the first probe
    (old,) = decide(st, first, params=params(AdaptationParams(straggler_rule="progress", straggler_confirm_alone=False)),
                    seed=1, at=121.0).events
    assert isinstance(old, ev.AllocationAdjusted) and old.action == "relaunch"
