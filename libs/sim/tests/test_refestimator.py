"""The reference estimator (`sextant_sim.refestimator`): exact posteriors on toy priors, the
profiler's noise model, determinism, and a bench run scoring it beside the engine."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sextant_contracts.events import ProfileRun
from sextant_contracts.model import Classification
from sextant_kit.testing import load_script
from sextant_sim.groundtruth import SOURCES
from sextant_sim.refestimator import (
    ReferenceEstimator,
    censored_normal_loglik,
    lognormal_loglik,
    posterior,
    weighted_median,
)
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare

BENCH = Path(__file__).resolve().parents[3] / "bench" / "classification.py"


@pytest.mark.parametrize(("values", "weights", "expected"), [
    ([1.0, 2.0, 3.0], [1, 1, 1], 2.0),  # the middle one
    ([3.0, 1.0, 2.0], [1, 1, 1], 2.0),  # order does not matter
    ([1.0, 2.0, 3.0], [1, 0, 3], 3.0),  # cumulative 1, 1, 4 of 4: half (2) is reached at 3
    ([1.0, 2.0, 3.0, 4.0], [1, 1, 1, 1], 2.0),  # even: the lower median (cumulative 2 = half)
], ids=["plain", "unsorted", "weighted", "even"])
def test_weighted_median(values: list[float], weights: list[float], expected: float) -> None:
    assert weighted_median(np.array(values), np.array(weights, dtype=float)) == expected


def test_gaussian_conjugate_posterior_is_recovered() -> None:
    # prior θ ~ N(0, 1), y = θ + N(0, σ²): posterior N(y / (1 + σ²), σ² / (1 + σ²))
    theta = np.random.default_rng(3).standard_normal(200_000)
    y, sd = 1.3, 0.5
    post = posterior(-0.5 * ((y - theta) / sd) ** 2)
    mean, var = y / (1 + sd ** 2), sd ** 2 / (1 + sd ** 2)
    tol = 5 * math.sqrt(var / post.ess)  # five Monte-Carlo standard errors
    assert post.ess > 10_000
    assert post.mean(theta) == pytest.approx(mean, abs=tol)
    assert post.median(theta) == pytest.approx(mean, abs=2 * tol)  # a normal's median is its mean
    assert post.mean((theta - mean) ** 2) == pytest.approx(var, rel=0.05)


def test_lognormal_posterior_and_the_relative_error_minimiser() -> None:
    # prior log t ~ N(0, 1), m = t·exp(σ ε): log t | m ~ N(μ, s²), μ = log m / (1 + σ²), s² = σ² / (1 + σ²);
    # the minimiser of E|e/t − 1| is the median of t under density / t: exp(μ − s²)
    t = np.exp(np.random.default_rng(4).standard_normal(200_000))
    m, sd = 2.0, 0.3
    post = posterior(lognormal_loglik(t, m, sd))
    mu, s2 = math.log(m) / (1 + sd ** 2), sd ** 2 / (1 + sd ** 2)
    assert post.median(np.log(t)) == pytest.approx(mu, abs=0.01)
    assert post.relative(t) == pytest.approx(math.exp(mu - s2), rel=0.01)
    # …which beats the posterior median on the expected relative error
    loss = lambda e: post.mean(np.abs(e / t - 1))  # noqa: E731
    assert loss(post.relative(t)) < loss(post.median(t))


def test_noise_model_edges() -> None:
    true = np.array([0.0, 1.0, 2.0])
    assert list(np.isfinite(lognormal_loglik(true, 0.0, 0.1))) == [True, False, False]  # 0 only from 0
    assert list(np.isfinite(lognormal_loglik(true, 1.0, 0.1))) == [False, True, True]
    # censored at 0: a true score far below 0 explains a measured 0 almost surely, one far above barely
    ll = censored_normal_loglik(np.array([-10.0, 10.0]), np.array([1.0, 1.0]), 0.0)
    assert ll[0] == pytest.approx(0.0, abs=1e-9) and ll[1] < -40
    assert posterior(np.full(4, -np.inf)).ess == 0.0  # nothing explains the data: flagged


@pytest.fixture(scope="module")
def setup() -> Setup:
    return prepare(load_scenario("smoke"), 1)


def _runs(est: ReferenceEstimator, high: str, cores: int) -> list[ProfileRun]:
    mk = lambda cls, col, c: ProfileRun(run_id=f"{cls.value}:{col}", classification=cls, column=col,  # noqa: E731
                                        platform=high, server_id="x", cores=c)
    return [mk(Classification.SCALE_UP, "c1", 1), mk(Classification.SCALE_UP, f"c{cores}", cores),
            mk(Classification.INTERFERENCE, "memory_bw", 1)]


def test_estimator_is_deterministic_and_finds_the_draw_that_made_the_data(setup: Setup) -> None:
    high = setup.cat.reference().platform_id
    cores = setup.cat.reference().cores
    a = ReferenceEstimator(setup, ["paragon-mt", "paragon-st"], 300)
    b = ReferenceEstimator(setup, ["paragon-mt", "paragon-st"], 300)
    runs = _runs(a, high, cores)
    j = 17
    tol, cau = a.scores(high)
    k = SOURCES.index("memory_bw")
    obs = [(runs[0], float(a.performance(high, 1, 1)[j]), None),
           (runs[1], float(a.performance(high, cores, 1)[j]), None),
           (runs[2], float(tol[j, k]), float(cau[j, k]))]
    pa, pb = a.posterior(obs), b.posterior(obs)
    assert np.array_equal(pa.weights, pb.weights)  # same world, families, draws: same posterior
    assert pa.weights[j] == pa.weights.max()  # noise-free entries of draw j: its likelihood is the peak
    assert 1.0 <= pa.ess < 300
    assert a.prior[0].family == "paragon-mt" and a.prior[1].family == "paragon-st"  # round-robin


def test_bench_scores_the_reference_beside_the_engine(setup: Setup) -> None:
    bench = load_script(BENCH, "bench_classification_ref")
    src = bench.TwinSource(1, scenario="smoke")
    refb = bench.ReferenceBench(src, 400)
    res = bench.run_accuracy(src, 2, 9, 0, 1, reference=refb)["results"]
    rows = bench.reference_rows(res)
    assert len(rows) == 9 and all(r["ess"]["scale_up"] >= 1.0 for r in res)
    part = bench.reference_part(src, res)
    for kind, row in part["bars"].items():
        for c, v in row.items():
            assert v["bar"] == max(6.0 if c == "interference" else 8.0, 1.25 * v["reference"])
            assert v["met"] == (v["engine"] <= v["bar"])
            assert v["reference"] == part["reference"][kind][c]["avg"]
