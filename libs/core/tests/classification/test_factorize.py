"""Training: exact recovery of noise-free low-rank data, determinism, order robustness."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sextant_core.classification.factorize import fit_biases, train
from sextant_core.classification.foldin import fold_in_many
from sextant_core.classification.params import FitParams

EXACT = FitParams(reg=1e-6, reg_bias=0.0, max_epochs=300, tol=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), m=st.integers(30, 80), n=st.integers(8, 13), rank=st.integers(1, 3))
def test_noise_free_low_rank_with_enough_entries_is_reconstructed(builders, seed: int, m: int, n: int,
                                                                   rank: int) -> None:
    # 8 dense rows; every other row has at least rank + 3 entries (bias + rank factors + 2 spare):
    # with a single spare entry some problems are so weakly identified that ALS needs thousands
    # of sweeps to reach 1 %
    y = np.log(builders.log_low_rank(seed, m, n, rank))
    mask = builders.sparse_mask(seed, m, n, 8, rank + 3, n - 1)
    fit = train(y, mask, EXACT, rank=rank)
    mean, _ = fold_in_many(fit.model, y, mask)
    err = np.abs(mean - y)[~mask]
    assert err.max() < 1e-2  # < 1 % relative on every hidden cell
    assert err.mean() < 1e-3


def test_training_is_bit_identical(builders) -> None:
    y = np.log(builders.log_low_rank(1, 60, 10, 2))
    mask = builders.sparse_mask(1, 60, 10, 6, 2, 4)
    a = train(y, mask, FitParams(rank=3))
    b = train(y.copy(), mask.copy(), FitParams(rank=3))
    assert a.model.content_hash() == b.model.content_hash()
    assert a.model.col_factors.tobytes() == b.model.col_factors.tobytes()
    assert a.row_factors.tobytes() == b.row_factors.tobytes()


def test_content_hash_changes_with_the_data(builders) -> None:
    y = np.log(builders.log_low_rank(2, 40, 8, 2))
    mask = builders.sparse_mask(2, 40, 8, 6, 2, 4)
    a = train(y, mask, FitParams(rank=2)).model.content_hash()
    y2 = y.copy()
    y2[0, 0] += 1e-9
    assert train(y2, mask, FitParams(rank=2)).model.content_hash() != a


def test_permuting_rows_permutes_the_fit(builders) -> None:
    # the algorithm itself only reorders sums, so the result matches to rounding
    y = np.log(builders.log_low_rank(3, 50, 9, 2))
    mask = builders.sparse_mask(3, 50, 9, 8, 2, 5)
    perm = np.random.default_rng(0).permutation(50)
    a = train(y, mask, FitParams(rank=2))
    b = train(y[perm], mask[perm], FitParams(rank=2))
    ma, _ = fold_in_many(a.model, y, mask)
    mb, _ = fold_in_many(b.model, y[perm], mask[perm])
    np.testing.assert_allclose(ma[perm], mb, rtol=0, atol=1e-8)


def test_rank_zero_is_the_bias_model(builders) -> None:
    # rank 0 = μ + b_u + c_i: on data that *is* a bias model it is exact
    r = np.random.default_rng(4)
    y = r.normal(size=(30, 1)) + r.normal(size=(1, 7))
    mask = builders.sparse_mask(4, 30, 7, 5, 2, 3)
    fit = train(y, mask, FitParams(rank=0, reg_bias=0.0, max_epochs=500, tol=1e-14))
    mean, _ = fold_in_many(fit.model, y, mask)
    assert fit.model.rank == 0
    assert np.abs(mean - y).max() < 1e-6


def test_bias_baseline_is_exact_on_dense_additive_data() -> None:
    r = np.random.default_rng(5)
    y = r.normal(size=(20, 1)) + r.normal(size=(1, 6))
    mask = np.ones_like(y, dtype=bool)
    mu, b, c = fit_biases(y, mask, reg_bias=0.0)
    np.testing.assert_allclose(mu + b[:, None] + c[None, :], y, atol=1e-12)


def test_every_column_needs_an_observation() -> None:
    y = np.ones((3, 3))
    mask = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0]], dtype=bool)
    with pytest.raises(ValueError, match="every column"):
        train(y, mask, FitParams(rank=1))


def test_rank_is_capped_by_columns() -> None:
    y = np.log(np.arange(1, 13, dtype=float).reshape(4, 3))
    fit = train(y, np.ones_like(y, dtype=bool), FitParams(rank=9))
    assert fit.model.rank == 2  # at most columns - 1
    assert fit.model.col_factors.shape == (3, 2)


def test_train_needs_a_rank() -> None:
    with pytest.raises(ValueError, match="rank"):
        train(np.ones((2, 2)), np.ones((2, 2), dtype=bool), FitParams())
