"""Sextant against the baseline on a small month (recurring/comparison.py): the floor bounds
every policy, DRA never loses to the plan alone in the worst case, the bisection's arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_sim.recurring import comparison
from sextant_sim.recurring.evaluation import month
from sextant_sim.recurring.workload import WorkloadParams


@pytest.fixture(scope="module")
def trained() -> comparison.Trained:
    return comparison.train(month(11, WorkloadParams(templates=12, days=3)))


def test_worst_case_rows_and_the_floor(trained: comparison.Trained) -> None:
    r = comparison.worst_case(trained)
    # the floor (every job gets all it can use from its start) bounds every policy from below
    for k in ("baseline_misses_worst_case", "sextant_misses_worst_case", "sextant_no_dra_misses_worst_case",
              "baseline_misses_fair_share", "sextant_misses_fair_share"):
        assert r[k] >= r["floor_misses"], k
    # DRA only adds capacity to reservations, so it cannot miss more than the plan alone
    assert r["sextant_misses_worst_case"] <= r["sextant_no_dra_misses_worst_case"]
    assert r["worst_case_miss_reduction_x"] == round(r["baseline_misses_worst_case"]
                                                     / max(r["sextant_misses_worst_case"], 1), 3)
    assert r["placed"] > 0


def test_the_test_window_starts_a_day_before_the_test_weeks(trained: comparison.Trained) -> None:
    ins = trained.setup.workload.instances
    inc = trained.include
    assert inc[trained.setup.test].all()
    assert not inc[ins.submit_s < trained.setup.train_end_s - 86400.0].any()


def test_smallest_cluster_bisects_between_lo_and_one(trained: comparison.Trained) -> None:
    # target = a huge number of misses: every size passes, so the bisection walks down to lo
    r = comparison.smallest_cluster(trained, "both", steps=1, lo=0.5, target=10**9)
    assert r["fraction"] == 0.75  # 1.0 ok -> (0.5 + 1) / 2 = 0.75 ok
    assert r["reduction"] == 0.25 and list(r["tried"]) == ["1.0", "0.75"]
    # target = -1 miss: nothing passes, not even the nominal size
    r = comparison.smallest_cluster(trained, "both", steps=1, target=-1)
    assert (r["fraction"], r["reduction"]) == (1.0, 0.0)


def test_ablation_variants_plan_different_reservations(trained: comparison.Trained) -> None:
    both = comparison.plan(trained, "both")
    pinned = comparison.plan(trained, "modelling")
    user = comparison.plan(trained, "slo_packing")
    k = both.placed[0]
    assert both.plan.get(f"t{k}").request.skyline != user.plan.get(f"t{k}").request.skyline if k in user.placed \
        else k not in user.placed
    if k in pinned.placed:  # pinned at the earliest start, exactly as long as its skyline
        req = pinned.plan.get(f"t{k}").request
        assert req.deadline - req.earliest == len(req.skyline)
    with pytest.raises(ValueError):
        comparison.plan(trained, "nope")


def test_slack_ratios_are_sorted_and_finite(trained: comparison.Trained) -> None:
    r = comparison.slack_ratios(trained)
    assert r.size > 0 and np.all(np.isfinite(r)) and np.all(np.diff(r) >= 0)
