"""Run-time prediction: the statistics, the plain baseline, and a model sharper than it."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.recurring.runtime import (
    Runs,
    RuntimeParams,
    burst_position,
    fit_runtime_model,
    plain_quantile,
    template_stats,
)

DAY = 86400.0


def test_template_stats_match_numpy():
    rt = np.array([10.0, 20.0, 30.0, 40.0, 1000.0, 5.0, 5.0, 5.0])
    keys, stats = template_stats(np.array([1, 1, 1, 1, 1, 2, 2, 2]), rt, min_runs=4)
    assert keys.tolist() == [1]  # template 2 has 3 runs < 4
    lr = np.log(rt[:5])
    med = np.median(lr)
    assert stats[0, 0] == pytest.approx(med)
    assert stats[0, 1] == pytest.approx(np.median(np.abs(lr - med)))
    assert stats[0, 4] == pytest.approx(lr[3] - med)  # P95 order statistic: index floor(0.95 · 4) = 3
    assert stats[0, 5] == pytest.approx(np.log(5))


def test_plain_quantile_is_the_per_template_percentile():
    train = Runs(np.array([1] * 6 + [2] * 2), np.zeros(8), np.array([1, 2, 3, 4, 5, 100, 7, 7.0]), np.zeros(8))
    test = Runs(np.array([2, 1, 3]), np.zeros(3), np.ones(3), np.zeros(3))
    out = plain_quantile(train, test, 0.95, min_runs=5)
    assert np.isnan(out[0]) and np.isnan(out[2])
    assert out[1] == pytest.approx(np.percentile([1, 2, 3, 4, 5, 100], 95))


def test_burst_position_counts_earlier_shards():
    pos = burst_position(np.array([1, 1, 1, 2, 1]), np.array([100.0, 130.0, 110.0, 100.0, 500.0]), 60.0)
    assert pos.tolist() == [0.0, 2.0, 1.0, 0.0, 0.0]


def synthetic(n_templates: int, days: float, seed: int) -> Runs:
    """Hourly templates; run time = base · (3 in the afternoon) · lognormal(0.15)."""
    rng = np.random.default_rng(seed)
    keys, t, rt = [], [], []
    for k in range(n_templates):
        base = rng.uniform(30, 600)
        sub = np.arange(0, days * DAY, 3600.0) + rng.uniform(0, 3600)
        hour = (sub % DAY) / 3600
        keys.append(np.full(len(sub), k))
        t.append(sub)
        rt.append(base * np.where((hour >= 12) & (hour < 18), 3.0, 1.0) * rng.lognormal(0, 0.15, len(sub)))
    n = sum(len(x) for x in t)
    return Runs(np.concatenate(keys), np.concatenate(t), np.concatenate(rt), np.zeros(n))


def test_the_model_is_sharper_than_the_plain_p95_at_similar_coverage():
    runs = synthetic(12, 21, seed=4)
    train_end = 14 * DAY
    tr, te = runs.submit_s < train_end, runs.submit_s >= train_end
    params = RuntimeParams(quantile=0.95, max_iter=60)
    model = fit_runtime_model(runs.take(tr), np.zeros(int(tr.sum())), train_end, params)
    test = runs.take(te)
    pred = model.predict(test, np.zeros(len(test.key)))
    base = plain_quantile(runs.take(tr), test, 0.95)
    cov, cov_base = (test.runtime_s <= pred).mean(), (test.runtime_s <= base).mean()
    ratio, ratio_base = np.median(pred / test.runtime_s), np.median(base / test.runtime_s)
    # the afternoon factor makes the plain P95 ≈ 3.9× a morning run; conditioning on the hour removes it
    assert cov >= 0.88 and ratio < 0.6 * ratio_base and cov_base >= 0.9


def test_fitting_is_deterministic_and_unknown_templates_get_nan():
    runs = synthetic(4, 10, seed=5)
    tr = runs.submit_s < 7 * DAY
    params = RuntimeParams(max_iter=20)
    a = fit_runtime_model(runs.take(tr), np.zeros(int(tr.sum())), 7 * DAY, params)
    b = fit_runtime_model(runs.take(tr), np.zeros(int(tr.sum())), 7 * DAY, params)
    probe = Runs(np.array([0, 99]), np.array([8 * DAY, 8 * DAY]), np.ones(2), np.zeros(2))
    pa, pb = a.predict(probe, np.zeros(2)), b.predict(probe, np.zeros(2))
    assert pa[0] == pb[0] and np.isfinite(pa[0]) and np.isnan(pa[1])
    with pytest.raises(ValueError):
        RuntimeParams(quantile=1.0)
