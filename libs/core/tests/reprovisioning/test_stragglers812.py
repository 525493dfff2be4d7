"""Ladder 8.12's straggler rule: any task of a slowed node is tested (`task_views.straggling_nodes`,
`any_task`), and a reference probe is also read against the slowdown the task view measured
(`detection.straggler_likelihood`). Ladders 8.8–8.10 keep theirs."""

from __future__ import annotations

import math

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import CompletionTimeTarget, WorkloadKind
from sextant_core.decide import decide
from sextant_core.reprovisioning.adaptive import LADDERS, VERSION
from sextant_core.reprovisioning.detection import straggler_change, straggler_likelihood
from sextant_core.reprovisioning.task_views import straggling_nodes
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, server

from .test_adaptive import params, running

TWO = ("s0",) * 4 + ("s1",) * 4


@pytest.mark.parametrize(("s1_rates", "f", "slowest_only", "any_task"), [
    # progress rates (fraction of a task per second, × 1000); s0's four tasks at 1.0.
    # median of [0.05, 0.3, 0.6, 0.6, 1, 1, 1, 1] = 0.8: s1's shares 0.0625, 0.375, 0.75, 0.75.
    # The slowest (0.0625 × 3 = 0.19 < half) is slow anywhere (data skew); the next (0.375 × 3 =
    # 1.1 ≥ half) straggles because of the node: only `any_task` sees it.
    ((0.05, 0.3, 0.6, 0.6), 3.0, None, 0.375),
    # the straggler is the node's slowest task: both rules agree (0.3 / 0.8 = 0.375)
    ((0.3, 0.6, 0.6, 0.6), 3.0, 0.375, 0.375),
    # only the skewed task is below half: not the node's doing, for either rule
    ((0.05, 0.6, 0.6, 0.6), 3.0, None, None),
    # a node effect below the 1.5× bar: neither rule flags it
    ((0.05, 0.3, 0.6, 0.6), 1.4, None, None),
], ids=["skewed-slowest-hides-a-straggler", "straggler-is-the-slowest", "skew-only", "node-not-slow-enough"])
def test_any_task_of_a_slowed_node(s1_rates: tuple[float, ...], f: float, slowest_only: float | None,
                                   any_task: float | None) -> None:
    prates = [1.0] * 4 + list(s1_rates)
    for flag, want in ((False, slowest_only), (True, any_task)):
        got = straggling_nodes(TWO, prates, {"s1": f}, slowdown=1.5, half=0.5, any_task=flag)
        assert [(v.server, v.worst) for v in got] == ([] if want is None else [("s1", pytest.approx(want))])


@pytest.mark.parametrize(("measured", "reference", "f", "sign"), [
    # the twin's seed-5 probe of a true straggler (task view: 2.34× slower). Expected slowed:
    # 12.9 / 2.34 = 5.5 and 38.2 / 2.34 = 16.3; sd 7: var 98 healthy, 49 × (1 + 1/2.34²) = 57.9
    # slowed; per source -(m - r/f)²/(2 × 57.9) + (m - r)²/(2 × 98) + ½ ln(98 / 57.9):
    # memory_cap -0.19 + 0.75 + 0.26 = +0.82, l1i -0.38 + 1.19 + 0.26 = +1.08 — +1.9 nats: more
    # likely slowed, though no source fell 18 points
    ({"memory_cap": 0.8, "l1i": 22.9}, {"memory_cap": 12.9, "l1i": 38.2}, 2.34, 1),
    # a healthy node flagged 5.4× by its view (seed 18): 28.1 → 18.0 and 34.2 → 19.0 are falls,
    # but far short of the 5.2 and 6.3 a 5.4× node would tolerate: ≈ -0.85 nats
    ({"memory_cap": 18.0, "l1i": 19.0}, {"memory_cap": 28.1, "l1i": 34.2}, 5.41, -1),
    # the same scores as the reference: healthy
    ({"l1i": 60.0, "tlb": 40.0}, {"l1i": 60.0, "tlb": 40.0}, 2.0, -1),
], ids=["true-straggler-low-scores", "healthy-but-flagged", "unchanged"])
def test_straggler_likelihood(measured: dict[str, float], reference: dict[str, float], f: float, sign: int) -> None:
    nats = straggler_likelihood(measured, reference, f, 7.0)
    assert nats is not None and nats * sign > 0.5
    assert straggler_change(measured, reference, 0.2, 18.0) is None  # the 8.10 test says nothing here


def test_straggler_likelihood_needs_a_common_source() -> None:
    assert straggler_likelihood({"l1i": 10.0}, {"tlb": 40.0}, 2.0, 7.0) is None
    # a node that tolerates nothing where its peer tolerated 40 is what ∞ predicts (0)
    nats = straggler_likelihood({"l1i": 0.0}, {"l1i": 40.0}, math.inf, 7.0)
    assert nats is not None and nats > 0


def _observed(at: float, rates: tuple[float, ...], progress: tuple[float, ...]) -> ev.TaskAttemptsObserved:
    return ev.TaskAttemptsObserved(at=at, workload_id="job", servers=TWO, rates=rates, progress=progress,
                                   elapsed=(at,) * 8, attempts=(0,) * 8)


def test_a_probe_too_small_for_the_floor_confirms_the_viewed_slowdown() -> None:
    # two views of a two-node job: s1's work rate falls 2.5× between 120 s and 240 s (its large
    # tasks at 0.1 / 120 / 2.5 = 0.33 of the median progress rate, × 2.5 ≥ half)
    target = CompletionTimeTarget(seconds=1000.0)
    st = fold([server("s0"), server("s1"), server("s2"),
               *running("job", alloc(("s0", 4, 4.0), ("s1", 4, 4.0)), kind=WorkloadKind.ANALYTICS, target=target,
                        at=0.0),
               _observed(120.0, (1.0,) * 8, (0.2,) * 4 + (0.1,) * 4),
               _observed(240.0, (1.0,) * 4 + (0.4,) * 4, (0.4,) * 4 + (0.14,) * 4)])
    tasks = cmd.AssessTasks(workload_id="job", servers=TWO, rates=(1.0,) * 4 + (0.4,) * 4,
                            progress=(0.4,) * 4 + (0.14,) * 4, elapsed=(240.0,) * 8, attempts=(0,) * 8)
    new = params(LADDERS["8.12"])
    (probe,) = decide(st, tasks, params=new, seed=1, at=240.0).events
    assert isinstance(probe, ev.ProbeRequested) and probe.server_id == "s1" and "2.50x slower" in probe.reason
    # memory_cap 10 → 4 (6 points) and l1i 36 → 20 (16 points): no source clears the 18-point floor;
    # 2.5× predicts 4.0 and 14.4 — ≈ +1.8 nats
    c = cmd.AssessProbe(workload_id="job", probe_id=probe.probe_id, purpose="straggler", server_id="s1",
                        reference_server_id="s0", tolerated={"memory_cap": 4.0, "l1i": 20.0},
                        reference_tolerated={"memory_cap": 10.0, "l1i": 36.0})
    (adj,) = decide(st, c, params=new, seed=1, at=240.0).events
    assert isinstance(adj, ev.AllocationAdjusted) and adj.action == "relaunch"
    assert adj.allocation.servers == ("s0", "s2") and "memory_cap 10.0->4.0" in adj.reason  # the largest relative fall
    # 8.10 keeps its floor: nothing; the default (8.16) includes 8.12's rule
    assert decide(st, c, params=params(LADDERS["8.10"]), seed=1, at=240.0).events == ()
    assert VERSION == "8.16" and decide(st, c, params=params(LADDERS[VERSION]), seed=1, at=240.0).events
    # a probe whose scores held (a healthy node): nothing under 8.12 either
    calm = c.model_copy(update={"tolerated": {"memory_cap": 9.0, "l1i": 35.0}})
    assert decide(st, calm, params=new, seed=1, at=240.0).events == ()
