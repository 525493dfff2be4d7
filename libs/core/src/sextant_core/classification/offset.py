"""Performance as capacity above a per-row offset: the model of services' entries.

A latency-critical service's performance entry is the highest load it serves within its latency
bound (Quasar §2.2). For a queue that is ``x = n·max(0, μ·s_p·U(c) − K)``: a capacity that *is*
multiplicative in the platform's speed and the configuration's scale-up, minus an offset ``K`` set
by the workload's own latency bound. Near the bound (one core, a slow platform) the truth is a few
per cent of the capacity, and the plain log-space model (`normalise`, ``ln x``) — right to a few
per cent elsewhere — is off by 10–100× there (docs/classification.md).

**[IMPL CHOICE] the offset model.** For the matrices the engine names (`EngineParams.offset_matrices`:
services' scale-up and heterogeneity) the low-rank model of `factorize` is fitted to
``ln(x_ui + K_u)`` instead of ``ln x_ui``, with a per-row offset ``K_u ≥ 0`` in the row's own
units. ``K_u`` is not a column constant: the services of one matrix differ 100× in level
(memcached vs. a web server) and in how far their bound sits below their capacity. It is
parametrised relative to the row's largest measured value, ``K_u = g·max_j x_uj`` with g on the
fixed grid `OFFSET_GRID` (0 = the plain log model), so the model stays scale-equivariant: every
measurement of a row times a constant gives its predictions times the same constant.

* **A row's offset** is inferred like its factors: for each grid value the Bayesian fold-in
  (`foldin`, same prior on the factors, flat prior on the row bias) gives the row's posterior and
  its evidence ``p(x | g)`` — the Gaussian evidence of ``t = ln(x + K)`` times the Jacobian
  ``Π 1/(x_j + K)`` (so that evidences of different g compare in raw units) — and the grid prior
  ``π(g)`` below gives posterior weights. Predictions are the posterior-weighted mean of
  ``exp(prediction) − K`` in raw units, floored at `FLOOR` × the row's largest measured value (a
  service that serves (almost) nothing there). With two measured entries the evidence alone
  barely tells g; the prior does most of the work, the evidence picks the knee out when the two
  entries are far apart.
* **Training** alternates `OFFSET_ROUNDS` times: train the factor model on ``ln(x + K)`` (starting
  with K = 0), re-infer every row's g (maximum a posteriori), and set the grid prior to the
  histogram of the MAP g of the rows with at least `RICH` entries (the densely profiled seeds)
  plus `PRIOR_PSEUDO` per grid value; then a last training at the final offsets. Deterministic
  (argmax ties go to the smaller g).
* **Confidence** of an estimated entry: the fold-in's predictive std in ``ln(x + K)`` space
  against the tolerance ±10 % of the estimate, ``ln(1 + 0.1·x̂/(x̂ + K̄))`` (K̄ the
  posterior-mean offset).

Not used by ``classify-matrix`` (external data keep the plain normalisations).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.special import erf

from .factorize import BoolArray, Fit, FactorModel, train
from .foldin import _prior_terms
from .normalise import FloatArray
from .params import FitParams

OFFSET_GRID: tuple[float, ...] = (0.0, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
"""Candidate offsets, as fractions of the row's largest measured value."""
OFFSET_ROUNDS = 3
RICH = 5
PRIOR_PSEUDO = 0.5
FLOOR = 1e-3
INIT = 0.0  # initial offset of every row (fraction of its largest value); 0 = the plain log model
_TOL = 0.10


def _frozen(a: FloatArray) -> FloatArray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _features(model: FactorModel) -> FloatArray:
    feats = np.empty((model.n_columns, model.rank + 1))
    feats[:, 0] = 1.0
    feats[:, 1:] = model.col_factors
    return feats


def posterior(model: FactorModel, x: FloatArray, mask: BoolArray
              ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """For rows ``x`` (raw, > 0 where `mask`), every grid offset: (weights (m, G), transformed-space
    predictions (G, m, n), offsets K (G, m), predictive std (m, n) — the same for every offset)."""
    grid = np.asarray(model.offset_grid if model.offset_grid is not None else OFFSET_GRID)
    logprior = (np.asarray(model.offset_logprior) if model.offset_logprior is not None
                else np.full(len(grid), -np.log(len(grid))))
    m_rows, n = x.shape
    feats = _features(model)
    d = feats.shape[1]
    mf = mask.astype(np.float64)
    lam, lz = _prior_terms(model)
    outer = (feats[:, :, None] * feats[:, None, :]).reshape(n, d * d)
    gram = (mf @ outer).reshape(m_rows, d, d) + lam[None, :, :]
    empty = mf.sum(axis=1) == 0
    gram[empty] = np.eye(d)
    a_inv = np.linalg.inv(gram)
    xmax = np.where(mask, x, 0.0).max(axis=1) if n else np.zeros(m_rows)
    safe_x = np.where(mask, x, 1.0)
    means = np.empty((len(grid), m_rows, n))
    offsets = np.empty((len(grid), m_rows))
    logw = np.empty((m_rows, len(grid)))
    for g, frac in enumerate(grid):
        k_u = frac * xmax
        z = np.log(safe_x + k_u[:, None])
        t = np.where(mask, z - model.mu - model.col_bias[None, :], 0.0)
        rhs = t @ feats + lz[None, :]
        zhat = np.einsum("rij,rj->ri", a_inv, rhs)
        zhat[empty] = np.concatenate([[model.bias_mean], model.prior_mean])  # no observation: the population
        fit = zhat @ feats.T
        resid = np.where(mask, t - fit, 0.0)
        pen = np.einsum("ri,ij,rj->r", zhat, lam, zhat) - 2.0 * zhat @ lz
        q = ((resid**2).sum(axis=1) + pen) / model.noise_var
        jac = (mf * z).sum(axis=1)
        logw[:, g] = -0.5 * q - jac + logprior[g]
        means[g] = model.mu + model.col_bias[None, :] + fit
        offsets[g] = k_u
    logw[empty] = logprior[None, :]
    logw -= logw.max(axis=1, keepdims=True)
    w = np.exp(logw)
    w /= w.sum(axis=1, keepdims=True)
    lev = np.einsum("ij,rjk,ik->ri", feats, a_inv, feats)
    std = np.sqrt(model.noise_var * (1.0 + lev))
    std[empty] = np.inf
    return w, means, offsets, std


def predict_raw(model: FactorModel, x: FloatArray, mask: BoolArray) -> tuple[FloatArray, FloatArray]:
    """(raw estimates (m, n), confidence (m, n)) of rows ``x`` (raw where `mask`)."""
    w, means, offsets, std = posterior(model, x, mask)
    raw_g = np.exp(np.clip(means, -700.0, 700.0)) - offsets[:, :, None]
    est = np.einsum("rg,grn->rn", w, raw_g)
    xmax = np.where(mask, x, 0.0).max(axis=1)
    est = np.maximum(est, FLOOR * xmax[:, None])
    kbar = (w * offsets.T).sum(axis=1)
    tol = np.log1p(_TOL * est / (est + kbar[:, None]))
    with np.errstate(divide="ignore"):
        conf = erf(tol / (np.maximum(std, 1e-300) * np.sqrt(2.0)))
    conf = np.where(np.isfinite(std), conf, 0.0)
    return est, conf


def fold_in_raw(model: FactorModel, columns: np.ndarray, values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """One new row from raw measured ``values`` at column indices ``columns`` (duplicates are
    averaged geometrically): (raw estimates (n,), confidence (n,))."""
    n = model.n_columns
    x = np.ones((1, n))
    mask = np.zeros((1, n), dtype=bool)
    if len(columns):
        logs = np.zeros(n)
        counts = np.zeros(n)
        np.add.at(logs, columns, np.log(np.asarray(values, dtype=np.float64)))
        np.add.at(counts, columns, 1.0)
        seen = counts > 0
        x[0, seen] = np.exp(logs[seen] / counts[seen])
        mask[0] = seen
    est, conf = predict_raw(model, x, mask)
    return est[0], conf[0]


def train_offset(y: FloatArray, mask: BoolArray, params: FitParams, rank: int | None = None) -> Fit:
    """Train on ``y = ln x`` with per-row offsets (module docstring). The returned model carries
    the grid and its prior; `Fit.row_offsets` the rows' MAP offsets (raw units)."""
    base = replace(params, row_offset=False)
    x = np.where(mask, np.exp(np.where(mask, y, 0.0)), 1.0)
    grid = np.array(OFFSET_GRID)
    logprior = np.full(len(grid), -np.log(len(grid)))
    xmax = np.where(mask, x, 0.0).max(axis=1)
    rich = mask.sum(axis=1) >= RICH
    k_u = INIT * xmax
    for _ in range(OFFSET_ROUNDS):
        fit = train(np.where(mask, np.log(x + k_u[:, None]), 0.0), mask, base, rank=rank)
        model = replace(fit.model, offset_grid=grid, offset_logprior=logprior)
        w, _, _, _ = posterior(model, x, mask)
        idx = np.argmax(w, axis=1)  # first maximum: ties go to the smaller offset
        k_u = grid[idx] * xmax
        if rich.any():
            counts = np.bincount(idx[rich], minlength=len(grid)) + PRIOR_PSEUDO
            logprior = np.log(counts / counts.sum())
    fit = train(np.where(mask, np.log(x + k_u[:, None]), 0.0), mask, base, rank=rank)
    model = replace(fit.model, offset_grid=_frozen(grid), offset_logprior=_frozen(logprior))
    return Fit(model=model, row_bias=fit.row_bias, row_factors=fit.row_factors, row_offsets=_frozen(k_u))
