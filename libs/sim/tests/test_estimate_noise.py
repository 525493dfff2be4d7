"""The estimate port's interference noise is unbiased (`sextant_sim.estimates.noisy_scores`).

Clipping N(0, sd) at 0 on scores near 0 had roughly doubled the mean caused score; the port's
noise must keep the mean of every score — including those near 0 and 100, where the old clip bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from sextant_sim.estimates import EstimateSource, noisy_scores
from sextant_sim.groundtruth import SOURCES
from sextant_sim.profiler import score_noise_sd
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare

DRAWS = 200_000


@pytest.mark.parametrize("value", [0.0, 0.05, 0.3, 0.9, 2.5, 7.0, 15.0, 40.0, 60.0, 88.0, 97.0, 99.8, 100.0])
def test_mean_of_noisy_scores_is_the_true_score(value: float) -> None:
    rng = np.random.default_rng(11)
    z = rng.normal(size=DRAWS)
    sd = 9.0  # Table III's sd for a low score, the case the old clip biased most
    got = noisy_scores(np.full(DRAWS, value), np.full(DRAWS, sd), z)
    old = np.clip(value + sd * z, 0.0, 100.0)
    assert got.min() >= 0.0 and got.max() <= 100.0
    # the standard error of the mean is at most sd / sqrt(DRAWS) = 0.02 points
    assert abs(got.mean() - value) <= 0.06
    if value < 5.0 and value > 0.0:  # the old clip's bias, for contrast (it is what this test guards)
        assert old.mean() - value > 1.0


def test_noise_is_the_table_iii_normal_where_the_scale_allows() -> None:
    rng = np.random.default_rng(12)
    z = rng.normal(size=DRAWS)
    got = noisy_scores(np.full(DRAWS, 50.0), np.full(DRAWS, 9.0), z)
    assert abs(float(np.std(got - 50.0)) - 9.0) < 0.1
    near = noisy_scores(np.full(DRAWS, 0.6), np.full(DRAWS, 9.0), z)
    assert float(np.std(near - 0.6)) <= 0.2 + 1e-9  # a third of the distance to 0


def test_the_port_keeps_the_mean_caused_and_tolerated_scores_of_a_scenario() -> None:
    """Over every workload of a scenario and many streams: the port's mean caused and tolerated
    score per source is within 4 standard errors of the noise-free ramp's mean (the old clip's
    bias on the caused scores is several times larger, checked too)."""
    st = prepare(load_scenario("smoke"), 3)
    src = EstimateSource(st.truths, st.profiler, st.cat, st.gt, st.seed, 1.0)
    ref = st.cat.index(st.cat.reference().platform_id)
    wids = [s.workload_id for s in st.subs]
    true_c = np.array([st.profiler.interference(st.truths[w], ref, 0)[1] for w in wids])
    true_t = np.array([st.profiler.interference(st.truths[w], ref, 0)[0] for w in wids])
    streams = range(60)
    est_c = np.array([[[src.estimate(w, k).caused[s] for s in SOURCES] for w in wids] for k in streams])
    est_t = np.array([[[src.estimate(w, k).tolerated[s] for s in SOURCES] for w in wids] for k in streams])
    assert (true_c < 1.0).mean() > 0.3  # the clipped case is exercised: many scores near 0
    for est, true in ((est_c, true_c), (est_t, true_t)):
        err = est - true[None]
        m_err = err.mean(axis=(0, 1))
        se = err.reshape(-1, len(SOURCES)).std(axis=0) / np.sqrt(err.shape[0] * err.shape[1])
        assert np.all(np.abs(m_err) <= 4.0 * se + 1e-3), (m_err, se)
    sd_c = np.array([score_noise_sd(st.gt, c, 1.0) for c in true_c])
    rng = np.random.default_rng(5)
    old_bias = (np.clip(true_c[None] + sd_c[None] * rng.normal(size=est_c.shape), 0, 100) - true_c[None]).mean()
    assert old_bias > 1.0 and abs(float((est_c - true_c[None]).mean())) < old_bias / 10
    # and the noise is really there (not a noise-free port)
    assert float(np.abs(est_t - true_t[None]).mean()) > 1.0


def test_noise_switches_of_the_ladder_variants() -> None:
    st = prepare(load_scenario("smoke"), 3)
    src = EstimateSource(st.truths, st.profiler, st.cat, st.gt, st.seed, 1.0)
    ref = st.cat.index(st.cat.reference().platform_id)
    w = st.subs[0].workload_id
    t = st.truths[w]
    tol, caused = st.profiler.interference(t, ref, 0)
    plat_only = src.variant(platform=True, interference=False).estimate(w, 0)
    inter_only = src.variant(platform=False, interference=True).estimate(w, 0)
    assert [plat_only.tolerated[s] for s in SOURCES] == [round(float(v), 4) for v in tol]
    assert [inter_only.caused[s] for s in SOURCES] != [round(float(v), 4) for v in caused] or \
        [inter_only.tolerated[s] for s in SOURCES] != [round(float(v), 4) for v in tol]
    speeds = {p.platform_id: round(float(t.speed[i]), 6) for i, p in enumerate(st.cat.platforms)}
    assert inter_only.heterogeneity == speeds
    assert plat_only.heterogeneity != speeds
    # noise x 2 moves a mid-scale score twice as far as x 1 (same draws)
    one, two = src.estimate(w, 0), src.variant(2.0).estimate(w, 0)
    sd = score_noise_sd(st.gt, tol, 1.0)
    mid = [i for i, v in enumerate(tol) if min(v, 100 - v) > 6 * sd[i]]
    for i in mid:
        s = SOURCES[i]
        assert two.tolerated[s] - tol[i] == pytest.approx(2 * (one.tolerated[s] - tol[i]), abs=2e-4)
