"""The month's measurement: provenance feeds the core's SLO extractor, the baseline runs end to end."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.recurring.slo import SloVerdict
from sextant_sim.recurring.evaluation import (
    consumer_failed,
    deadlines,
    infer_contracts,
    measure_month,
    miss_failure_ratio,
    misses,
    month,
    run,
    slo_misses,
    training_skylines,
)
from sextant_sim.recurring.workload import DAY_S, WorkloadParams

SMALL = WorkloadParams(templates=30, days=8)


@pytest.fixture(scope="module")
def small_month():  # type: ignore[no-untyped-def]
    s = month(11, SMALL)
    return s, run(s, s.user, record=True)


def test_contracts_recover_the_consumers_read_time(small_month) -> None:  # type: ignore[no-untyped-def]
    s, out = small_month
    tp = s.workload.templates
    contracts = infer_contracts(s.workload, out, s.train_end_s)
    regular = [k for k, c in contracts.items() if c.actionable]
    assert len(regular) >= 0.5 * len(contracts)
    slower = (tp.reader >= 0) & (tp.period_s[np.maximum(tp.reader, 0)] > tp.period_s)
    for k in regular:
        if tp.read_irregular[k]:
            continue  # random reads may look regular in a handful of daily runs
        if slower[k]:  # a slower consumer: at most one period after the input (the next instance)
            c = contracts[k]
            assert c.deadline_s <= c.earliest_start_s + tp.period_s[k] + 1e-6
            continue
        assert contracts[k].deadline_s == pytest.approx(tp.read_offset_s[k], rel=0.03)
        assert contracts[k].period_s == tp.period_s[k]
    for k in np.flatnonzero(tp.read_irregular & ~slower & (tp.period_s <= 4 * 3600.0)):  # with ≥ 30 runs
        assert k not in contracts or not contracts[int(k)].actionable
    for k in np.flatnonzero(tp.period_s == 7 * DAY_S):  # at most two weekly runs in 7 training days
        assert k not in contracts or contracts[int(k)].verdict is SloVerdict.TOO_FEW_RUNS


def test_misses_are_runs_that_end_after_their_deadline(small_month) -> None:  # type: ignore[no-untyped-def]
    s, out = small_month
    contracts = infer_contracts(s.workload, out, s.train_end_s)
    dl = deadlines(s.workload, contracts)
    misses, scored = slo_misses(s.workload, out, dl, s.test)
    late = (out.end_s > dl) & s.test & s.workload.instances.succeeded
    assert scored > 0 and misses == int(late.sum())
    # halving every deadline's distance to its period start can only add misses
    half = np.floor(s.workload.instances.submit_s / 3600.0) * 3600.0
    tighter = np.where(np.isnan(dl), np.nan, half + (dl - half) / 2)
    assert slo_misses(s.workload, out, tighter, s.test)[0] >= misses


def test_the_baseline_month_runs_end_to_end(small_month) -> None:  # type: ignore[no-untyped-def]
    m = measure_month(small_month[0])
    assert 0.5 <= m["slo_derivable_share"] <= 0.95
    assert m["baseline_misses_worst_case"] >= m["baseline_misses_fair_share"]
    assert m["baseline_misses_worst_case"] > 0
    assert m["train_days"] == pytest.approx(0.7 * 8)


def test_training_skylines_are_the_successful_training_runs(small_month) -> None:  # type: ignore[no-untyped-def]
    s, out = small_month
    sky = training_skylines(s.workload, out, s.train_end_s)
    ins = s.workload.instances
    ok = (ins.submit_s < s.train_end_s) & ins.succeeded & ~np.isnan(out.end_s)
    assert sum(len(v) for v in sky.values()) == int(ok.sum())
    k = next(iter(sky))
    first = int(np.flatnonzero(ok & (ins.template == k))[0])
    assert sky[k][0].sum() == pytest.approx(ins.work[first].sum())  # a run uses exactly its work


def test_more_capacity_never_adds_worst_case_misses_of_the_baseline(small_month) -> None:  # type: ignore[no-untyped-def]
    s, out = small_month
    dl = deadlines(s.workload, infer_contracts(s.workload, out, s.train_end_s))
    small, big = misses(s, s.user, dl), misses(s, s.user, dl, capacity=10 * s.capacity)
    assert big["worst_case"] <= small["worst_case"]
    assert big["fair_share"] <= small["fair_share"]


def test_a_missed_slo_makes_the_consumer_fail_more_often(small_month) -> None:  # type: ignore[no-untyped-def]
    s, out = small_month
    ins = s.workload.instances
    failed = consumer_failed(s.workload, out)
    egress = s.workload.templates.reader[ins.template] < 0
    assert not failed[egress].any()
    late = (out.end_s > ins.read_s) & ~egress
    on_time = (out.end_s <= ins.read_s) & ~egress
    assert failed[late].mean() > 4 * failed[on_time].mean()  # world rule: 0.3 vs 0.02
    dl = deadlines(s.workload, infer_contracts(s.workload, out, s.train_end_s))
    r = miss_failure_ratio(s.workload, out, dl, np.ones(ins.count, bool))
    assert r["pairs_missed"] > 0 and r["p_fail_given_miss"] > r["p_fail_given_met"]
