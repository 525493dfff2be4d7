"""The ALS loop's faster form (`factorize.train`: the LAPACK gufunc called directly, features and
penalties built in place, loop invariants hoisted) computes what the straightforward loop below —
the previous implementation, kept here as the reference — computes, bit for bit: models recorded
in logs (`ModelRetrained.content_hash`) must rebuild exactly."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sextant_core.classification import factorize as F
from sextant_core.classification.params import FitParams


def _reference_solve_side(mask_f, target, feats, n_obs, penalty):  # type: ignore[no-untyped-def]
    d = feats.shape[1]
    outer = (feats[:, :, None] * feats[:, None, :]).reshape(feats.shape[0], d * d)
    gram = (mask_f @ outer).reshape(-1, d, d)
    idx = np.arange(d)
    gram[:, idx, idx] += np.maximum(n_obs, 1.0)[:, None] * penalty[None, :]
    rhs = target @ feats
    return np.asarray(np.linalg.solve(gram, rhs[:, :, None])[:, :, 0], dtype=np.float64)


def _reference_train(y, mask, params, k):  # type: ignore[no-untyped-def]
    """`factorize.train`'s previous loop (the same initial factors), returning (b, c, q, p, rmse, epochs)."""
    y = np.where(mask, np.asarray(y, dtype=np.float64), 0.0)
    m_rows, n = y.shape
    mf = mask.astype(np.float64)
    n_row, n_col = mf.sum(axis=1), mf.sum(axis=0)
    mu, b, c = F.fit_biases(y, mask, params.reg_bias, params.column_bias)
    resid = (y - mu - b[:, None] - c[None, :]) * mf
    if k > 0:
        q, p = F._initial_factors(resid, mask, k, params.init_iters)
    else:
        q, p = np.zeros((m_rows, 0)), np.zeros((n, 0))
    col_bias_pen = params.reg_bias if params.column_bias else 0.0
    ones_m, ones_n = np.ones((m_rows, 1)), np.ones((n, 1))
    mf_t = np.ascontiguousarray(mf.T)
    prev = np.inf
    rmse = float(np.sqrt((resid**2).sum() / mf.sum()))
    epochs = 0
    for epochs in range(1, params.max_epochs + 1):  # noqa: B007
        lam = max(params.reg, params.reg_start * 0.5 ** (epochs - 1))
        row_pen = np.concatenate([[0.0], np.full(k, lam)])
        col_pen = np.concatenate([[col_bias_pen], np.full(k, lam)])
        zr = _reference_solve_side(mf, (y - mu - c[None, :]) * mf, np.hstack([ones_n, p]), n_row, row_pen)
        b, q = zr[:, 0], zr[:, 1:]
        target_t = ((y - mu - b[:, None]) * mf).T
        if params.column_bias:
            zc = _reference_solve_side(mf_t, target_t, np.hstack([ones_m, q]), n_col, col_pen)
            c, p = zc[:, 0], zc[:, 1:]
        elif k > 0:
            p = _reference_solve_side(mf_t, target_t, q, n_col, col_pen[1:])
        err = (y - (mu + b[:, None] + c[None, :] + q @ p.T)) * mf
        rmse = float(np.sqrt((err**2).sum() / mf.sum()))
        if lam > params.reg:
            continue
        if prev < np.inf and prev - rmse <= params.tol * prev:
            break
        prev = rmse
    return b, c, q, p, rmse, epochs


@pytest.mark.parametrize("column_bias", [True, False])
@pytest.mark.parametrize("rank", [0, 1, 2, 4])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_train_is_bit_identical_to_the_straightforward_loop(builders, seed: int, rank: int,
                                                             column_bias: bool) -> None:
    y = np.log(builders.log_low_rank(seed, 40, 9, 2)) + np.random.default_rng(seed).normal(0, 0.05, (40, 9))
    mask = builders.sparse_mask(seed, 40, 9, 5, 2, 5)
    params = replace(FitParams(), column_bias=column_bias)
    fit = F.train(y, mask, params, rank=rank)
    b, c, q, p, rmse, epochs = _reference_train(y, mask, params, rank)
    assert fit.model.epochs == epochs > 1
    assert fit.model.train_rmse == rmse
    assert fit.row_bias.tobytes() == b.tobytes()
    assert fit.row_factors.tobytes() == q.tobytes()
    assert fit.model.col_bias.tobytes() == c.tobytes()
    assert fit.model.col_factors.tobytes() == p.tobytes()


def test_solve_equals_numpy_and_refuses_a_singular_system() -> None:
    r = np.random.default_rng(5)
    a = r.normal(size=(50, 4, 4)) + 4 * np.eye(4)
    b = r.normal(size=(50, 4, 1))
    assert F._solve(a, b).tobytes() == np.linalg.solve(a, b).tobytes()
    singular = a.copy()
    singular[7] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        F._solve(singular, b)
