"""Bayesian fold-in: agreement with the batched form, scale equivariance, confidences."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.classification.factorize import train
from sextant_core.classification.foldin import confidence, fold_in, fold_in_many
from sextant_core.classification.params import FitParams


@pytest.fixture(scope="module")
def model(builders):  # type: ignore[no-untyped-def]
    y = np.log(builders.log_low_rank(11, 80, 10, 2)) + np.random.default_rng(1).normal(size=(80, 10)) * 0.02
    mask = builders.sparse_mask(11, 80, 10, 15, 2, 4)
    return train(y, mask, FitParams(rank=2)).model


def test_single_row_matches_batched(model) -> None:
    y = np.zeros((3, 10))
    mask = np.zeros((3, 10), dtype=bool)
    y[0, [1, 4]] = [2.0, 2.5]
    mask[0, [1, 4]] = True
    y[1, [0, 2, 9]] = [1.0, 1.2, 0.7]
    mask[1, [0, 2, 9]] = True
    mean, std = fold_in_many(model, y, mask)
    for u in range(3):
        cols = np.flatnonzero(mask[u])
        est = fold_in(model, cols, y[u, cols])
        np.testing.assert_allclose(est.mean, mean[u], rtol=0, atol=1e-10)
        np.testing.assert_allclose(est.std, std[u], rtol=0, atol=1e-10)


@pytest.mark.parametrize("factor", [1e-3, 7.0, 1e6], ids=["milli", "seven", "mega"])
def test_scaling_a_workload_scales_its_row(model, factor: float) -> None:
    # log normalisation + flat row-bias prior: x·factor -> prediction·factor, std unchanged
    cols = np.array([2, 7])
    vals = np.array([1.3, 0.4])
    a = fold_in(model, cols, vals)
    b = fold_in(model, cols, vals + np.log(factor))
    np.testing.assert_allclose(b.mean - a.mean, np.log(factor), rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.std, b.std, rtol=0, atol=1e-12)


def test_no_observation_gives_the_population_mean_and_no_confidence(model) -> None:
    est = fold_in(model, np.array([], dtype=np.int64), np.array([]))
    z = np.concatenate([[model.bias_mean], model.prior_mean])
    expected = model.mu + model.col_bias + np.hstack([np.ones((10, 1)), model.col_factors]) @ z
    np.testing.assert_allclose(est.mean, expected)
    assert np.all(np.isinf(est.std))
    assert np.all(confidence(est.std, 0.1) == 0.0)


def test_more_entries_mean_more_confidence(model) -> None:
    vals = np.full(10, 1.0)
    c = [confidence(fold_in(model, np.arange(s), vals[:s]).std, 0.0953).mean() for s in (1, 2, 4, 8)]
    assert all(0.0 <= x <= 1.0 for x in c)
    assert c == sorted(c) and c[0] < c[-1]


def test_confidence_is_the_gaussian_mass_within_tolerance() -> None:
    # erf(1/√2) = 0.6827: the ±1σ mass
    assert confidence(np.array([0.1]), 0.1)[0] == pytest.approx(0.682689, abs=1e-6)
    assert confidence(np.array([np.inf]), 0.1)[0] == 0.0


def _scores(seed: int, m: int = 200, n: int = 10) -> np.ndarray:
    """Scores in 0..1 with one shared level per column and small row effects (no row units)."""
    r = np.random.default_rng(seed)
    return np.clip(0.7 + 0.1 * r.normal(size=(1, n)) + 0.03 * r.normal(size=(m, 1))
                   + 0.05 * r.normal(size=(m, n)), 0.0, 1.0)


def test_row_bias_prior_keeps_one_extreme_cell_from_dragging_the_row() -> None:
    # rows share one unit: row biases are small (sd 0.03). One new row measures one source far
    # below its column (0.1 vs ~0.7): with a flat bias prior the whole row follows it; with the
    # joint prior the other columns stay near their population level.
    y = _scores(5)
    mask = np.ones_like(y, dtype=bool)
    flat = train(y, mask, FitParams(rank=1)).model
    prior = train(y, mask, FitParams(rank=1, row_bias_prior=True)).model
    assert prior.bias_prior and prior.joint_cov is not None and prior.joint_cov.shape == (2, 2)
    cols, vals = np.array([3, 6]), np.array([0.1, float(y[:, 6].mean())])
    other = np.setdiff1d(np.arange(10), cols)
    level = y.mean(axis=0)[other]
    drift_flat = np.abs(fold_in(flat, cols, vals).mean[other] - level).mean()
    drift_prior = np.abs(fold_in(prior, cols, vals).mean[other] - level).mean()
    # flat: b = the mean residual of the two cells, (−0.6 + 0)/2 ≈ −0.3, and every other column
    # follows it. Prior: τ² ≈ 0.001 (bias sd 0.03), σ² ≈ 0.0025 (noise sd 0.05), so
    # b = −0.3 · (2/σ²) / (2/σ² + 1/τ²) ≈ −0.3 · 800 / 1800 ≈ −0.13
    assert drift_flat > 0.28
    assert drift_prior < 0.18
    assert prior.content_hash() != flat.content_hash()  # the prior is part of the model's identity
