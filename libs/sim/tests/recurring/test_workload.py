"""The generated month has the distribution facts of spec/morpheus.md §7 (asserted on the data)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.recurring.periodicity import NATURAL_PERIODS_S
from sextant_sim.recurring.workload import DAY_S, HOUR_S, MAX_STAGES, Workload, WorkloadParams, generate


def test_same_seed_same_month_other_seed_other_month() -> None:
    p = WorkloadParams(templates=20, days=3)
    a, b, c = generate(5, p), generate(5, p), generate(6, p)
    for name in ("template", "submit_s", "input_s", "read_s", "work", "par", "succeeded"):
        np.testing.assert_array_equal(getattr(a.instances, name), getattr(b.instances, name))
    assert not np.array_equal(a.instances.submit_s[:50], c.instances.submit_s[:50])


def test_too_few_templates_is_refused() -> None:
    with pytest.raises(ValueError, match="templates"):
        generate(1, WorkloadParams(templates=3))


def test_periods_are_mostly_natural_hourly_and_daily_with_a_tail(month_wl: Workload) -> None:
    period = month_wl.templates.period_s
    natural = np.isin(period, NATURAL_PERIODS_S)
    assert natural.mean() >= 0.85
    assert np.isin(period, (HOUR_S, DAY_S)).mean() >= 0.6
    assert (~natural & (period < DAY_S)).sum() >= 2  # off-kilter (58 min, 100 min)
    assert (period == 7 * DAY_S).sum() >= 2  # weekly: four runs a month
    weekly = np.isin(month_wl.instances.template, np.flatnonzero(period == 7 * DAY_S))
    assert np.bincount(month_wl.instances.template[weekly]).max() <= 5


def test_submissions_cluster_at_the_start_of_the_hour(month_wl: Workload) -> None:
    ins = month_wl.instances
    hourly_or_longer = month_wl.templates.period_s[ins.template] >= HOUR_S
    minute_of_hour = (ins.submit_s[hourly_or_longer] % HOUR_S) // 60
    share_minute0 = float((minute_of_hour == 0).mean())
    assert share_minute0 >= 0.4  # a uniform start would put 1/60 there
    assert share_minute0 <= 0.8  # ...and not everything


def test_stages_narrow_after_a_wide_first_stage(month_wl: Workload) -> None:
    tp = month_wl.templates
    n = (tp.stage_par > 0).sum(axis=1)
    assert n.min() >= 1 and n.max() == MAX_STAGES
    assert (np.diff(tp.stage_par, axis=1) <= 0).all()
    assert (tp.duration_min <= 0.25 * tp.period_s / 60 + MAX_STAGES).all()  # a run fits its period


def _clean_day0(wl: Workload) -> np.ndarray:
    """Instances before any code delta (day < 1), without straggler tails or failures."""
    ins, tp = wl.instances, wl.templates
    stages = (tp.stage_par > 0).sum(axis=1)[ins.template]
    return np.asarray((ins.submit_s < DAY_S) & (ins.phases == stages) & ins.succeeded)


def test_input_size_is_lognormal_and_hardware_costs_40_percent(month_wl: Workload) -> None:
    ins, tp = month_wl.instances, month_wl.templates
    nominal = (tp.stage_par * tp.stage_min).sum(axis=1)[ins.template]
    ratio = ins.work.sum(axis=1) / nominal
    clean = _clean_day0(month_wl)
    sku1 = np.log(ratio[clean & ~ins.sku2])
    assert abs(float(np.median(sku1))) < 0.05  # median input factor 1
    assert 0.08 < float(np.std(sku1)) < 0.3  # σ drawn in 0.05–0.3 per template
    assert 0.25 < float(ins.sku2.mean()) < 0.35
    sku2 = ratio[clean & ins.sku2]
    assert float(np.median(sku2)) == pytest.approx(1.4, rel=0.06)


def test_large_code_deltas_shift_a_fifth_of_the_templates(month_wl: Workload) -> None:
    ins, tp = month_wl.instances, month_wl.templates
    has = ~np.isnan(tp.delta_day)
    assert 0.12 <= has.mean() <= 0.24  # spec: 15–20 % of jobs with a large delta per month
    big = np.flatnonzero(has & (tp.period_s <= DAY_S) & (np.abs(np.log(tp.delta_factor)) > 0.2))
    assert big.size >= 5
    stages = (tp.stage_par > 0).sum(axis=1)[ins.template]
    clean = (ins.phases == stages) & ins.succeeded & ~ins.sku2
    checked = 0
    for k in big:  # the observed shift of the median work is the delta's (± a small delta, input noise)
        rows = (ins.template == k) & clean
        day = ins.submit_s[rows] / DAY_S
        w = ins.work[rows].sum(axis=1)
        before, after = w[day < tp.delta_day[k]], w[day >= tp.delta_day[k]]
        if before.size >= 8 and after.size >= 8:
            checked += 1
            assert np.log(np.median(after) / np.median(before)) == pytest.approx(np.log(tp.delta_factor[k]), abs=0.25)
    assert checked >= 3


def test_stragglers_and_failures_give_a_long_tail(month_wl: Workload) -> None:
    ins, tp = month_wl.instances, month_wl.templates
    stages = (tp.stage_par > 0).sum(axis=1)[ins.template]
    extra = ins.phases > stages
    assert 0.05 < float(extra.mean()) < 0.3  # straggler tails (5 % per stage) and retries
    assert 0.005 < float((~ins.succeeded).mean()) < 0.02
    nominal_min = tp.duration_min[ins.template]
    run_min = (ins.work / np.maximum(ins.par, 1)).sum(axis=1)  # at full parallelism
    rel = run_min / nominal_min
    assert float(np.percentile(rel, 99) / np.median(rel)) > 1.5


def test_late_inputs_are_rare_and_sometimes_long(month_wl: Workload) -> None:
    ins = month_wl.instances
    late = ins.input_s > ins.submit_s
    assert 0.005 < float(late.mean()) < 0.1
    assert (ins.start_s[late] > ins.submit_s[late]).all()
    assert float((ins.input_s[late] - ins.submit_s[late]).max()) > 600


def test_provenance_reads_at_a_fixed_time_by_consumers_of_equal_or_longer_period(month_wl: Workload) -> None:
    ins, tp = month_wl.instances, month_wl.templates
    readers = tp.reader[tp.reader >= 0]
    assert (tp.period_s[readers] >= tp.period_s[tp.reader >= 0]).all()
    assert 0.1 < float((tp.reader < 0).mean()) < 0.35  # egress
    period = tp.period_s[ins.template]
    rel = ins.read_s - np.floor(ins.submit_s / period) * period
    regular = ~tp.read_irregular & ~np.isnan(tp.read_offset_s)
    slower = np.zeros(tp.count, bool)
    slower[tp.reader >= 0] = tp.period_s[readers] > tp.period_s[tp.reader >= 0]
    cvs = []
    for k in np.flatnonzero(regular & ~slower):
        x = rel[ins.template == k]
        cvs.append(np.median(np.abs(x - np.median(x))) / np.median(x))
    assert np.percentile(cvs, 90) <= 0.02
    assert slower.sum() >= 5  # a daily report of an hourly job: reads after the job's period ends
    k = int(np.flatnonzero(slower & regular)[0])
    assert (rel[ins.template == k] >= tp.period_s[k] - 1e-6).mean() > 0.5
    assert np.isnan(tp.read_offset_s).sum() >= 1 and tp.read_irregular.sum() >= 5
