"""Detection rules: reactive deviation, the proactive rotation, probe significance,
stragglers, the migration cost rule — table tests showing their arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_contracts import events as ev
from sextant_core.reprovisioning import ladder
from sextant_core.reprovisioning.detection import (
    deviation,
    in_sample,
    probe_change,
    probe_round,
    probe_sources,
)
from sextant_core.reprovisioning.params import AdaptationParams
from sextant_core.reprovisioning.stragglers import slow_servers, slow_tasks
from sextant_core.testing.builders import alloc, record

P = AdaptationParams()


@pytest.mark.parametrize(("observed", "expected", "kind"), [
    (0.99, 1.5, "below_target"),  # under the target whatever the estimate
    (1.20, 1.50, "below_estimate"),  # 1.20 < 1.50 × 0.85 = 1.275
    (1.30, 1.50, None),  # 1.30 ≥ 1.275: within the margin
    (1.00, None, None),  # no estimate: only the target counts
    (1.05, 1.00, None),  # above the estimate
], ids=["below-target", "below-estimate", "within-margin", "no-estimate", "above"])
def test_reactive_deviation(observed: float, expected: float | None, kind: str | None) -> None:
    d = deviation(observed, expected, P)
    assert (d.kind if d else None) == kind


def test_rotation_probes_a_fifth_each_round_and_everyone_every_five_rounds() -> None:
    ids = [f"w{i}" for i in range(500)]
    per_round = [sum(in_sample(w, k, P) for w in ids) for k in range(5)]
    assert sum(per_round) == 500  # each workload exactly once in 5 rounds (⌈1/0.2⌉)
    assert all(80 <= n <= 120 for n in per_round), per_round  # ≈ 20 % per round
    assert all(sum(in_sample(w, k, P) for k in range(5)) == 1 for w in ids)


def test_probe_round_from_time() -> None:
    # 10-minute rounds: 599 s is round 0, 600 s round 1, 1 799 s round 2
    assert [probe_round(t, P) for t in (0.0, 599.0, 600.0, 1799.0)] == [0, 0, 1, 2]


def classified(tolerated: dict[str, float], caused: dict[str, float]) -> ev.WorkloadClassified:
    return ev.WorkloadClassified(at=1.0, workload_id="w", decision=record(), tolerated=tolerated, caused=caused)


@pytest.mark.parametrize(("recorded", "measured", "hit"), [
    (60.0, 40.0, True),  # |40 − 60| = 20 > 8 points and 20/60 = 33 % > 20 %
    (60.0, 50.0, False),  # 10 points but 17 % ≤ 20 %
    (10.0, 15.0, False),  # 50 % but only 5 points ≤ 8 (noise floor)
    (30.0, 40.0, True),  # 10 points, 33 %
], ids=["big", "under-20pct", "under-floor", "small-score"])
def test_probe_significance(recorded: float, measured: float, hit: bool) -> None:
    c = classified({"memory_bw": recorded}, {"memory_bw": 5.0})
    change = probe_change(c, {"memory_bw": measured}, {"memory_bw": 5.0}, 0.2, 8.0)  # the rule at 20 % / 8 points
    assert (change is not None) is hit


def test_probe_compares_with_the_profiled_measurement_and_only_the_chosen_scores() -> None:
    # the reconstructed row says 60, the profiling run measured 35: a probe of 33 is no change
    c = classified({"memory_bw": 60.0}, {"memory_bw": 5.0})
    measured = {"memory_bw": (35.0, 5.0)}
    assert probe_change(c, {"memory_bw": 33.0}, {}, 0.2, 8.0) is not None  # against the row: −45 %
    assert probe_change(c, {"memory_bw": 33.0}, {}, 0.2, 8.0, measured) is None  # against the measurement: −6 %
    # caused 5 → 30 is a change only when caused scores are compared
    assert probe_change(c, {}, {"memory_bw": 30.0}, 0.2, 8.0, measured) is not None
    assert probe_change(c, {}, {"memory_bw": 30.0}, 0.2, 8.0, measured, ("tolerated",)) is None


def test_probe_reports_the_largest_change_and_ignores_unprobed_sources() -> None:
    c = classified({"memory_bw": 60.0, "llc_cap": 50.0}, {"memory_bw": 20.0, "core": 10.0})
    # tolerated memory_bw −50 %, caused memory_bw +125 %; core and llc_cap were not probed
    change = probe_change(c, {"memory_bw": 30.0}, {"memory_bw": 45.0}, 0.2, 8.0)
    assert change is not None and (change.score, change.source) == ("caused", "memory_bw")


def test_probe_sources_include_the_most_sensitive_one() -> None:
    c = classified({"memory_bw": 80.0, "llc_bw": 12.0, "core": 40.0}, {})
    for seed in range(5):
        srcs = probe_sources(c, np.random.default_rng(seed), 2)
        assert len(srcs) == 2 and "llc_bw" in srcs


@pytest.mark.parametrize(("rates", "progress", "slow"), [
    ([1.0, 1.0, 1.0, 0.6], [0.3] * 4, [3]),  # median 1.0: 0.6 × 1.5 = 0.9 ≤ 1.0
    ([1.0, 1.0, 1.0, 0.7], [0.3] * 4, []),  # 0.7 × 1.5 = 1.05 > 1.0
    ([1.0, 1.0, 0.2, 0.6], [0.3, 0.3, 1.0, 0.3], [3]),  # the finished task is out of the median
    ([0.5], [0.1], []),  # one task: nothing to compare with
], ids=["slow", "not-slow-enough", "finished-excluded", "alone"])
def test_straggler_tasks(rates: list[float], progress: list[float], slow: list[int]) -> None:
    assert slow_tasks(rates, progress, 1.5) == slow


def test_slow_servers_are_distinct_in_order() -> None:
    # median of (.5 .5 .6 1 1 1 1) = 1: b (0.5) and c (0.6 × 1.5 = 0.9 ≤ 1) are slow
    servers = ["a", "b", "a", "c", "a", "a", "b"]
    assert slow_servers(servers, [1.0, 0.5, 1.0, 0.6, 1.0, 1.0, 0.5], [0.1] * 7, 1.5) == ["b", "c"]


def test_migration_cost_and_repay_rule() -> None:
    old, new = alloc(("s1", 4, 8.0)), alloc(("s2", 4, 8.0))
    cost = ladder.migration_cost(old, new, service=False, p=P)
    assert cost.seconds == pytest.approx(2.0 + 8.0 / 1.0) and cost.moved_fraction == 1.0  # fixed + 8 GB at 1 GB/s
    # gain (1.2 − 1.0) × (1 800 − 10) = 358 ≥ 2 × (1.0 × 10 × 1) = 20 → migrate
    ok, gain = ladder.repays(1.0, 1.2, cost, 1800.0, P)
    assert ok and gain == pytest.approx(0.2 * 1790)
    # 60 s left: 0.2 × 50 = 10 < 20 → stay
    assert not ladder.repays(1.0, 1.2, cost, 60.0, P)[0]


def test_stateful_services_move_microshards_of_the_changed_nodes_only() -> None:
    old = alloc(("s1", 8, 6.4), ("s2", 8, 6.4))
    new = alloc(("s1", 8, 6.4), ("s3", 8, 6.4))
    cost = ladder.migration_cost(old, new, service=True, p=P)
    # one of two nodes moves: 6.4 GB = 100 microshards × 5 ms = 0.5 s, half the state
    assert cost.moved_fraction == 0.5 and cost.seconds == pytest.approx(0.5)


@pytest.mark.parametrize(("slow", "ref", "hit"), [
    (20.0, 50.0, True),  # 30 points and 60 % below the healthy node
    (45.0, 50.0, False),  # 5 points: noise
    (60.0, 40.0, False),  # tolerates *more* than the control: not degraded (one-sided)
    (30.0, 40.0, True),  # 10 points, 25 %
], ids=["degraded", "noise", "better", "edge"])
def test_straggler_change_against_a_healthy_node(slow: float, ref: float, hit: bool) -> None:
    from sextant_core.reprovisioning.detection import straggler_change

    assert (straggler_change({"llc_bw": slow}, {"llc_bw": ref}, 0.2, 8.0) is not None) is hit


def test_reference_server_is_the_median_task() -> None:
    from sextant_core.reprovisioning.stragglers import reference_server

    assert reference_server(["a", "b", "c"], [1.0, 0.3, 0.9]) == "c"  # median 0.9
