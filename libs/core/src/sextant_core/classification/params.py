"""Training parameters of the factor model, with the defaults chosen by measurement.

Paragon §2.1 / Quasar §3.1 give none of them ([GAP] Paragon §9.1, Quasar §9.3). The defaults below
come from the sweeps of ``bench/classification.py`` on synthetic low-rank catalogues (see
``docs/classification.md`` "Choosing the defaults"): on 2-entry rows ``reg`` 0.01 is best or tied
on every classification (0.1 and above shrink the factors and double the scale-up error; at 0.02+
the rank CV settles for the bias-only model of heterogeneity, +0.4 points), the column bias never
hurts and helps scale-up (8.4 % -> 6.3 %), and ALS reaches its fixed point within ~5–40 sweeps at
``tol`` 1e-5.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_AUTO_RANK = 8
"""Largest rank the automatic selection tries (never more than columns - 1)."""


@dataclass(frozen=True, slots=True)
class FitParams:
    """How one matrix is trained (`factorize.train`).

    rank         latent factors k; ``None`` = chosen by `selection.select_rank` (cross-validation)
    reg          λ, ridge on the factors, weighted by each row's/column's observation count
                 (ALS-WR: the penalty of row u is ``reg * n_u * |q_u|²``)
    reg_bias     ridge on the column biases (weighted the same way); row biases are unpenalised
    column_bias  fit a per-column bias c_i besides the global mean μ and row bias b_u
    init_iters   hard-impute rounds of the initial SVD (missing cells refilled each round)
    reg_start    continuation: sweep t uses max(reg, reg_start · 2^-t), so the first sweeps are
                 strongly regularised and the penalty decays to `reg` (avoids the poor local
                 minima ALS falls into with a tiny reg on sparse data)
    max_epochs   ALS sweeps (one sweep = all rows, then all columns)
    tol          stop when the training RMSE improves by less than this fraction in a sweep
    row_bias_prior  fold-in: a Gaussian prior on a new row's bias too (estimated jointly with the
                 factors' from the training rows), instead of a flat one. Set by the engine for
                 matrices whose rows share one unit (interference scores, `Normalisation.SCORE`):
                 there a flat prior lets one measured sensitive source drag every other estimate of
                 the row with it (measured on the twin: 16.4 -> see docs/classification.md).
                 Performance rows keep the flat prior (units per row, scale equivariance).
    """

    rank: int | None = None
    reg: float = 0.01
    reg_bias: float = 1e-6
    column_bias: bool = True
    init_iters: int = 10
    reg_start: float = 1.0
    max_epochs: int = 40
    tol: float = 1e-5
    row_bias_prior: bool = False

    def tag(self) -> str:
        """A compact, stable description (part of model hashes and versions)."""
        return (f"als:k={self.rank}:reg={self.reg!r}:rb={self.reg_bias!r}:cb={int(self.column_bias)}"
                f":ii={self.init_iters}:rs={self.reg_start!r}:ep={self.max_epochs}:tol={self.tol!r}"
                + (":rbp=1" if self.row_bias_prior else ""))
