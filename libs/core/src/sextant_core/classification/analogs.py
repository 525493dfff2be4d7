"""Analog fold-in: a new row's hidden cells from the known rows that look like it, with the point
estimate that minimises the relative error.

The factor model (`foldin`) predicts a hidden cell by the posterior *mean in log space*: the
median of a log-normal, which the benchmark's loss |estimate/truth − 1| punishes where the truth
can be far below it (a service whose QPS within its latency bound collapses on a slow platform;
an analytics job's scale-out knee). Measured on the twin (`bench/classification.py --source twin`,
seeds 1–5, docs/classification/reference.md), the losses came from the shape of the posterior,
not from its centre, so this estimator changes both:

* **Posterior from analogs.** Every known row that has all the new row's observed columns is an
  analog (in practice the dense rows: the offline seeds and any richly profiled workload). In the
  model space (``ln value``) an analog ``r`` is shifted by its level offset
  ``b_r = mean_o(z_o − y_ro)`` and weighted by how well its shape fits the observed entries and,
  optionally, by how close its level is::

      log w_r = −Σ_o (z_o − y_ro − b_r)² / (2 τ²) − b_r² / (2 β²)      (β = None: no level term)

  Its prediction of a hidden cell i is ``y_ri + b_r``. The level term is for matrices whose rows
  share one unit (`EngineParams.analog_level_matrices`): there the level says which kind of
  workload the row is, as the factor model's `FitParams.row_bias_prior` assumes.
* **Mixed with the factor model.** A share ``mix`` of the posterior is the factor model's Gaussian
  predictive ``N(m_i, s_i²)`` (16 quantiles), so a cell no analog covers, or a row unlike every
  analog, keeps the factor model's answer.
* **Relative-error point estimate.** For the loss Σ w |e − t| / t the minimiser is the median of t
  under the weights w/t (`weighted_relative_median`), the estimator of the reference
  (`sextant_sim.refestimator`); a plain median would sit above it whenever the posterior is wide.

Pure and deterministic (no randomness; fixed operation order). Cost: O(analogs × columns) per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri

from .normalise import FloatArray

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

_QUANTILES = 16
_Z = ndtri((np.arange(_QUANTILES) + 0.5) / _QUANTILES)  # standard-normal quantiles of the factor model's share


@dataclass(frozen=True, slots=True)
class AnalogParams:
    """τ (shape misfit scale, model units), β (level prior width; None = flat), mix (share of the
    factor model's predictive in the posterior, 0..1)."""

    tau: float = 0.02
    beta: float | None = None
    mix: float = 0.2

    def tag(self) -> str:
        return f"an:tau={self.tau!r}:beta={self.beta!r}:mix={self.mix!r}"


@dataclass(frozen=True, slots=True)
class AnalogBank:
    """The known rows usable as analogs (≥ `min_entries` entries), as a dense (rows, columns) block."""

    y: FloatArray
    mask: BoolArray


def bank(y: FloatArray, mask: BoolArray, min_entries: int = 3) -> AnalogBank:
    """The rows of (y, mask) with at least `min_entries` observed cells (a row needs its observed
    columns and the hidden one: a 2-entry row is never an analog of a 2-entry row)."""
    keep = mask.sum(axis=1) >= min_entries
    return AnalogBank(y=np.where(mask[keep], y[keep], 0.0), mask=mask[keep].copy())


def weighted_relative_median(z: FloatArray, w: FloatArray) -> float:
    """argmin_e Σ w_j |e − t_j| / t_j over t_j = exp(z_j), in model space (ln e): the weighted
    median of z under weights w_j / t_j (computed stably relative to the largest weight)."""
    lw = np.log(np.maximum(w, 1e-300)) - z
    ww = np.exp(lw - lw.max())
    o = np.argsort(z, kind="stable")
    c = np.cumsum(ww[o])
    return float(z[o][int(np.searchsorted(c, 0.5 * c[-1]))])


def estimate(b: AnalogBank, columns: IntArray, values: FloatArray, fm_mean: FloatArray, fm_std: FloatArray,
             params: AnalogParams) -> FloatArray:
    """Model-space estimate of every column of a new row observed at `columns` (`values`), given
    the factor model's predictive mean and std per column. Observed columns are returned as the
    factor model has them (the caller keeps the measured values)."""
    n = len(fm_mean)
    out = np.array(fm_mean, dtype=np.float64, copy=True)
    cols = np.asarray(columns, dtype=np.int64)
    if len(cols) == 0 or b.y.shape[0] == 0:
        return out
    uniq = np.unique(cols)
    obs = np.array([float(np.mean(values[cols == c])) for c in uniq])
    width = b.y.shape[1]
    inside = uniq < width
    if not inside.all():  # a column no analog has: no analog has all the observed columns
        return _fm_only(out, fm_mean, fm_std)
    ok = b.mask[:, uniq].all(axis=1)
    if not ok.any():
        return _fm_only(out, fm_mean, fm_std)
    ya, ma = b.y[ok], b.mask[ok]
    d = obs[None, :] - ya[:, uniq]
    off = d.mean(axis=1)
    lw = -((d - off[:, None]) ** 2).sum(axis=1) / (2.0 * params.tau ** 2)
    if params.beta is not None:
        lw = lw - off ** 2 / (2.0 * params.beta ** 2)
    seen = set(int(c) for c in uniq)
    for i in range(n):
        if i in seen:
            continue
        fz = fm_mean[i] + fm_std[i] * _Z if np.isfinite(fm_std[i]) else np.full(1, fm_mean[i])
        has = ma[:, i] if i < width else np.zeros(len(lw), dtype=bool)
        if not has.any():
            out[i] = weighted_relative_median(fz, np.full(len(fz), 1.0 / len(fz)))
            continue
        lh = lw[has]
        w = np.exp(lh - lh.max())
        w = w / w.sum()
        z = np.concatenate([ya[has, i] + off[has], fz])
        ww = np.concatenate([(1.0 - params.mix) * w, np.full(len(fz), params.mix / len(fz))])
        out[i] = weighted_relative_median(z, ww)
    return out


def _fm_only(out: FloatArray, fm_mean: FloatArray, fm_std: FloatArray) -> FloatArray:
    """No analog: the relative-error point of the factor model's own Gaussian predictive."""
    for i in range(len(out)):
        if np.isfinite(fm_std[i]):
            fz = fm_mean[i] + fm_std[i] * _Z
            out[i] = weighted_relative_median(fz, np.full(len(fz), 1.0 / len(fz)))
    return out
