"""Folding a new row into a trained model: the dense row and a confidence per entry.

A new workload brings a handful of measured entries (2 per classification by default, Quasar §3.2)
and must be classified in milliseconds against thousands of rows. Retraining is not needed for
that: with the column side (μ, c_i, p_i) fixed, the row's unknowns are ``z = [b_u, q_u]`` and the
best estimate is a small (k+1)×(k+1) linear solve (Paragon §2.1's SGD restricted to one row
converges to the same point).

**[IMPL CHOICE] Bayesian fold-in.** With 2 entries and k + 1 unknowns the system is under-determined,
so the regulariser decides the answer. Instead of an isotropic ridge we use the population the
model was trained on: ``q_u ~ N(m, S)`` with m, S the mean and covariance of the well-determined
training rows' factors (`factorize`), a flat prior on the row bias b_u (its units are arbitrary —
this keeps predictions exactly scale-equivariant, see `normalise`), and Gaussian residuals of
variance σ². The estimate is the posterior mean::

    A = σ² Λ₀ + Xᵀ X,   z = A⁻¹ (σ² Λ₀ z₀ + Xᵀ t),   Cov(z) = σ² A⁻¹
    X = [1, P_obs],  t = y_obs − μ − c_obs,  Λ₀ = diag(0, S⁻¹),  z₀ = [0, m]

and the predictive variance of entry i is ``σ² (1 + f_i A⁻¹ f_iᵀ)`` with ``f_i = [1, p_i]``.
This replaces the papers' vague "second SVD on R" confidence (Paragon §9.1): the *confidence* of
an entry is the model probability that the true value lies within the normalisation's tolerance
(±10 % for performance, ±10 points for scores): ``erf(tol / (std·√2))``.

With ``FactorModel.bias_prior`` (matrices whose rows share one unit: interference scores) the
prior is the joint Gaussian of ``[b_u, q_u]`` over the well-determined training rows instead:
``Λ₀ = Cov([b, q])⁻¹``, ``z₀ = mean([b, q])`` — one measured sensitive source then moves the row's
other estimates only as far as the population says sources go together.

A row with no observation gets the population mean (b = mean row bias, q = m) and confidence 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import erf

from .factorize import BoolArray, FactorModel, _inv
from .normalise import FloatArray

IntArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class RowEstimate:
    """Normalised-space estimate of one row: posterior mean and predictive std per column."""

    mean: FloatArray
    std: FloatArray


# per model (by identity; the model is kept so its id is not reused): its prior terms and its
# column features [1, p_i], the same arrays every fold-in computed from it, computed once (read-only)
_PER_MODEL: dict[int, tuple[FactorModel, FloatArray, FloatArray, FloatArray]] = {}
_PER_MODEL_SIZE = 64


def _model_terms(model: FactorModel) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(`_prior_terms(model)`, the (n, k + 1) features ``[1, p_i]``), remembered per model object."""
    hit = _PER_MODEL.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1], hit[2], hit[3]
    lam, lz = _prior_terms(model)
    feats = np.empty((model.n_columns, model.rank + 1))
    feats[:, 0] = 1.0
    feats[:, 1:] = model.col_factors
    for a in (lam, lz, feats):
        a.setflags(write=False)
    if len(_PER_MODEL) >= _PER_MODEL_SIZE:
        _PER_MODEL.pop(next(iter(_PER_MODEL)))  # the oldest
    _PER_MODEL[id(model)] = (model, lam, lz, feats)
    return lam, lz, feats


def _prior_terms(model: FactorModel) -> tuple[FloatArray, FloatArray]:
    """(σ²Λ₀, σ²Λ₀z₀) as a (d, d) matrix and a (d,) vector, d = k + 1."""
    k = model.rank
    d = k + 1
    lam = np.zeros((d, d))
    lz = np.zeros(d)
    if model.bias_prior and model.joint_cov is not None and model.joint_mean is not None:
        jprec: FloatArray = np.asarray(np.linalg.inv(model.joint_cov), dtype=np.float64)
        return model.noise_var * jprec, np.asarray(model.noise_var * (jprec @ model.joint_mean), dtype=np.float64)
    if k > 0:
        prec = np.linalg.inv(model.prior_cov)
        lam[1:, 1:] = model.noise_var * prec
        lz[1:] = model.noise_var * (prec @ model.prior_mean)
    return lam, lz


def fold_in(model: FactorModel, columns: IntArray, values: FloatArray) -> RowEstimate:
    """Estimate a full row from observed ``values`` (normalised) at column indices ``columns``.

    Duplicate columns are allowed (each is one measurement). Cost: O(n·k + s·k² + k³).
    """
    n = model.n_columns
    lam, lz, feats = _model_terms(model)
    if len(columns) == 0:
        z = np.concatenate([[model.bias_mean], model.prior_mean])
        mean = model.mu + model.col_bias + feats @ z
        return RowEstimate(mean=mean, std=np.full(n, np.inf))
    x = feats[columns]
    t = np.asarray(values, dtype=np.float64) - model.mu - model.col_bias[columns]
    a = lam + x.T @ x
    a_inv = _inv(a)
    z = a_inv @ (lz + x.T @ t)
    mean = model.mu + model.col_bias + feats @ z
    lev = np.einsum("ij,jk,ik->i", feats, a_inv, feats)
    std = np.sqrt(model.noise_var * (1.0 + lev))
    return RowEstimate(mean=mean, std=std)


def fold_in_many(model: FactorModel, y: FloatArray, mask: BoolArray) -> tuple[FloatArray, FloatArray]:
    """`fold_in` for every row of ``y`` (m, n) at once: (mean, std), both (m, n)."""
    m_rows, n = y.shape
    d = model.rank + 1
    feats = np.empty((n, d))
    feats[:, 0] = 1.0
    feats[:, 1:] = model.col_factors
    mf = mask.astype(np.float64)
    t = np.where(mask, y - model.mu - model.col_bias[None, :], 0.0)
    lam, lz = _prior_terms(model)
    outer = (feats[:, :, None] * feats[:, None, :]).reshape(n, d * d)
    gram = (mf @ outer).reshape(m_rows, d, d) + lam[None, :, :]
    empty = mf.sum(axis=1) == 0
    gram[empty] = np.eye(d)
    a_inv = np.linalg.inv(gram)
    rhs = t @ feats + lz[None, :]
    z = np.einsum("rij,rj->ri", a_inv, rhs)
    z[empty] = np.concatenate([[model.bias_mean], model.prior_mean])
    mean = model.mu + model.col_bias[None, :] + z @ feats.T
    lev = np.einsum("ij,rjk,ik->ri", feats, a_inv, feats)
    std = np.sqrt(model.noise_var * (1.0 + lev))
    std[empty] = np.inf
    return mean, std


def confidence(std: FloatArray, tol: float) -> FloatArray:
    """P(|true − estimate| ≤ tol) under the Gaussian predictive: ``erf(tol / (std √2))`` in 0..1."""
    s = np.asarray(std, dtype=np.float64)
    with np.errstate(divide="ignore"):
        out = erf(tol / (np.maximum(s, 1e-300) * math.sqrt(2.0)))
    return np.where(np.isfinite(s), out, 0.0)
