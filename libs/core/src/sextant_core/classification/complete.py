"""Completing an external matrix (the engine behind ``sextant classify-matrix``).

``complete_matrix(values, row_ids)`` takes a dense float array with NaN for unknown cells and
returns every cell filled, plus a confidence per cell. It runs the same engine as the
classification service — normalise, train (initial SVD + ALS), fold every row in with the
Bayesian fold-in — with the rank and the regularisation chosen by cross-validation
(`selection.select_rank`) unless given.

Contracts:
* Known cells are returned unchanged (the measurement is the best estimate of itself); unknown
  cells get the model's posterior mean, back in raw units.
* Rows are processed in the order of their ids (sorted), then put back: permuting the input rows
  permutes the output rows bit for bit, and the same input gives the same output bit for bit.
* ``normalisation`` LOG (default; values must be > 0) or LINEAR (any finite values; its confidence
  tolerance is 10 % of the observed values' standard deviation).
* Every column needs at least one known value (there is nothing to learn a column from
  otherwise); row ids must be unique. Violations raise `MatrixError` (naming the columns with no
  value by index) and nothing is computed.
* A row with no known value is allowed and gets the column-bias fill: ``μ + c_i`` in the
  normalised space (μ the global mean, c_i column i's bias, both from the trained model), back in
  raw units, with confidence 0. Such rows take no part in choosing the rank or in training (they
  carry no information), so adding or removing empty rows changes no other row's output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .factorize import train
from .foldin import confidence, fold_in_many
from .normalise import FloatArray, InvalidEntry, Normalisation, backward, forward, tolerance
from .params import FitParams
from .selection import REG_GRID, Selection, select_rank


class MatrixError(ValueError):
    """The input matrix cannot be completed; the message says why."""


@dataclass(frozen=True, slots=True)
class Completion:
    filled: FloatArray  # (m, n) raw units, no NaN
    confidence: FloatArray  # (m, n) in 0..1; 1.0 for known cells
    rank: int
    reg: float
    normalisation: Normalisation
    selection: Selection | None  # None when rank and reg were both given


def typical_known(mask: np.ndarray) -> int:
    """The number of known cells a typical sparse row has: the median over rows that are not
    full (2 if every row is full), at least 1."""
    n_obs = mask.sum(axis=1)
    sparse = n_obs[(n_obs < mask.shape[1]) & (n_obs > 0)]
    if len(sparse) == 0:
        return 2
    return max(1, int(np.median(sparse)))


def complete_matrix(values: FloatArray, row_ids: Sequence[str], *, rank: int | None = None,
                    reg: float | None = None, normalisation: Normalisation | str = Normalisation.LOG,
                    params: FitParams | None = None) -> Completion:
    """Fill every NaN of `values` (m × n, one id per row). See the module docstring."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise MatrixError("the matrix needs at least one row and one column")
    if len(row_ids) != x.shape[0]:
        raise MatrixError(f"{len(row_ids)} row ids for {x.shape[0]} rows")
    if len(set(row_ids)) != len(row_ids):
        raise MatrixError("row ids must be unique")
    kind = Normalisation(normalisation)
    mask = ~np.isnan(x)
    empty_cols = np.flatnonzero(~mask.any(axis=0))
    if len(empty_cols):
        raise MatrixError(f"column(s) {', '.join(str(int(i)) for i in empty_cols)} have no known value")
    if rank is not None and rank < 0:
        raise MatrixError("rank must be >= 0")
    if reg is not None and reg <= 0:
        raise MatrixError("reg must be > 0")
    order = sorted(range(len(row_ids)), key=lambda i: row_ids[i])
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.arange(len(order))
    x, mask = x[order], mask[order]
    keys = [row_ids[i] for i in order]
    try:
        y = np.zeros_like(x)
        y[mask] = forward(kind, x[mask])
    except InvalidEntry as e:
        raise MatrixError(str(e)) from None
    base = params or FitParams()
    selection: Selection | None = None
    seen = mask.any(axis=1)  # rows with at least one known value; the others get the column-bias fill
    ys, ms = y[seen], mask[seen]
    if rank is None or reg is None:
        selection = select_rank(ys, ms, [keys[i] for i in np.flatnonzero(seen)], base,
                                keep=typical_known(ms), ranks=None if rank is None else [rank],
                                regs=REG_GRID if reg is None else [reg])
        rank, reg = selection.rank, selection.reg
    fit = train(ys, ms, replace(base, rank=rank, reg=reg))
    mean = np.empty_like(y)
    std = np.full_like(y, np.inf)
    mean[seen], std[seen] = fold_in_many(fit.model, ys, ms)
    mean[~seen] = fit.model.mu + fit.model.col_bias[None, :]
    tol = tolerance(kind) if kind is not Normalisation.LINEAR else 0.1 * float(np.std(y[mask]) or 1.0)
    conf = confidence(std, tol)
    filled = np.where(mask, x, backward(kind, mean))
    conf = np.where(mask, 1.0, conf)
    return Completion(filled=filled[inverse], confidence=conf[inverse], rank=fit.model.rank, reg=float(reg),
                      normalisation=kind, selection=selection)
