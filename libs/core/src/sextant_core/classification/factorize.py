"""Training one utility matrix: initial SVD, then PQ-reconstruction with biases (Paragon §2.1,
Quasar §3.1), solved by alternating least squares.

Model, in normalised space (`normalise`)::

    x_ui ≈ μ + b_u + c_i + q_u · p_i

μ the global mean of the observed entries, b_u the row (workload) bias of Quasar §3.1, c_i a
column bias (on by default: it helps, see docs/classification.md), q_u and p_i rank-k factors.

**Initial SVD and missing data** ([GAP] Paragon §9.1). Missing entries are first filled with the
bias baseline ``μ + b_u + c_i`` (a few alternating bias-only sweeps), i.e. the residual matrix is
zero where nothing was observed; then, ``init_iters`` times, the truncated SVD of the residual is
taken and the missing cells are refilled with its rank-k reconstruction (hard-impute / EM-SVD).
Zero-filling alone biases the singular vectors toward the dense rows' pattern and can leave ALS
in a slow, degenerate valley (measured: noise-free rank-2 matrices with one sparse column were off
by 30× without it, exact to 1e-5 with it). The final ``U Σ Vᵀ`` gives ``Q = U Σ^½`` and
``P = V Σ^½``.
The papers write ``Q = U, Pᵀ = Σ Vᵀ``: the product ``Q Pᵀ`` is the same, the balanced split only
makes one ridge penalty treat both sides alike. The SVD is taken through the n × n Gram matrix
(`numpy.linalg.eigh`), which costs m·n² and is exact for the n ≤ a few hundred columns here.

**Refinement** ([IMPL CHOICE], Paragon §9.1 item 3): the SGD of the papers minimises the
regularised squared error over the *observed* entries only; ALS minimises the same objective
with vectorised exact half-steps (all rows at once, then all columns), which is deterministic,
needs no learning rate and converges in tens of sweeps. Penalties follow ALS-WR: row u's factor
costs ``reg·n_u·|q_u|²``, column i's ``reg·n_i·|p_i|²`` (n = number of observed entries); the
row bias is unpenalised (its units are arbitrary), the column bias costs ``reg_bias·n_i·c_i²``.
The penalty is annealed ([IMPL CHOICE], measured): sweep t uses ``max(reg, reg_start·2^-t)``, so the
factors first settle under a strong ridge and then relax to ``reg``. Without it ALS with a small
``reg`` stalled in poor local minima on 6 of 300 random noise-free sparse problems (both starts);
with it, on none. Stop (once annealed) when the training RMSE improves by less than ``tol`` (relative) or after ``max_epochs``.

**For the fold-in** the trained model keeps only the column side (μ, c, P) plus a Gaussian prior
for the factors of a new row, estimated from the rows that determine their factors well
(``n_u ≥ k + 2``; all rows if fewer than k + 2 such rows), and the residual variance σ² of those
rows (degrees-of-freedom corrected) — see `foldin`.

Deterministic: fixed operation order, no randomness; bit-identical across runs on one machine
with ``OPENBLAS_NUM_THREADS=1``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from numpy.linalg import _umath_linalg
from numpy.typing import NDArray
from sextant_contracts.events import LEGACY_FINGERPRINT, MODEL_FINGERPRINT, Fingerprint

from .normalise import FloatArray
from .params import FitParams

BoolArray = NDArray[np.bool_]

_BIAS_SWEEPS = 10
_PRIOR_JITTER = 1e-9
_MIN_NOISE_VAR = 1e-12


@dataclass(frozen=True, slots=True)
class FactorModel:
    """A trained matrix, column side only (what classifying a new row needs).

    Arrays are read-only. ``rank`` may be 0 (bias model). ``noise_var`` is in normalised units².
    """

    n_columns: int
    rank: int
    mu: float
    col_bias: FloatArray  # (n,)
    col_factors: FloatArray  # (n, k)
    prior_mean: FloatArray  # (k,)
    prior_cov: FloatArray  # (k, k)
    bias_mean: float  # mean row bias, used only for rows with no observation
    noise_var: float
    train_rmse: float
    epochs: int
    rows: int
    bias_prior: bool = False  # fold-in uses the joint prior of [b_u, q_u] below (else b_u flat)
    joint_mean: FloatArray | None = None  # (k + 1,) mean of [b_u, q_u] over well-determined rows
    joint_cov: FloatArray | None = None  # (k + 1, k + 1)

    def content_hash(self, fingerprint: Fingerprint = MODEL_FINGERPRINT) -> str:
        """sha256 over every parameter (little-endian float64): the `ModelRetrained` hash.

        `grid-1e-9` (the current scheme) rounds each parameter to 1e-9 in the normalised units
        first: BLAS kernels differ in the last bits (measured between OpenBLAS's Haswell and
        Prescott kernels on `smoke`'s models: at most 3.3e-16 absolute, parameters up to ~21), and
        the raw bytes made the hash, and so every log holding it, depend on the CPU that trained
        the model. A parameter within such a difference of a rounding boundary still flips the
        hash (about 1e-6 per parameter). `f8-bytes` hashes the raw bytes (logs written before).
        """
        h = hashlib.sha256()
        h.update(f"{self.n_columns}:{self.rank}:{self.rows}:{self.epochs}".encode())
        arrays = [np.array([self.mu, self.bias_mean, self.noise_var, self.train_rmse]),
                  self.col_bias, self.col_factors, self.prior_mean, self.prior_cov]
        joint = self.bias_prior and self.joint_mean is not None and self.joint_cov is not None
        for i, a in enumerate([*arrays, *((self.joint_mean, self.joint_cov) if joint else ())]):
            if joint and i == len(arrays):
                h.update(b"bias-prior")
            a = np.asarray(a, dtype=np.float64)
            if fingerprint != LEGACY_FINGERPRINT:
                a = np.round(a, 9) + 0.0  # + 0.0: -0.0 and 0.0 hash alike
            h.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Fit:
    """A model plus the row side of the training matrix (for `complete`; not kept by the
    knowledge base)."""

    model: FactorModel
    row_bias: FloatArray  # (m,)
    row_factors: FloatArray  # (m, k)


def _frozen(a: FloatArray) -> FloatArray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def fit_biases(y: FloatArray, mask: BoolArray, reg_bias: float = 0.01, column_bias: bool = True
               ) -> tuple[float, FloatArray, FloatArray]:
    """The bias-only model ``μ + b_u + c_i`` by alternating exact updates (`_BIAS_SWEEPS` sweeps).

    Also the "row-bias + column-bias fill" baseline. Returns (μ, b, c); rows or columns with no
    observation get bias 0.
    """
    m = mask.astype(np.float64)
    n_row = m.sum(axis=1)
    n_col = m.sum(axis=0)
    mu = float((y * m).sum() / max(m.sum(), 1.0))
    b = np.zeros(y.shape[0])
    c = np.zeros(y.shape[1])
    r = (y - mu) * m
    for _ in range(_BIAS_SWEEPS):
        b = (r - c[None, :] * m).sum(axis=1) / np.maximum(n_row, 1.0)
        if column_bias:
            c = (r - b[:, None] * m).sum(axis=0) / np.maximum(n_col * (1.0 + reg_bias), 1e-300)
            c[n_col == 0] = 0.0
    return mu, b, c


def _initial_factors(resid: FloatArray, mask: BoolArray, rank: int, iters: int,
                     eig: tuple[FloatArray, FloatArray] | None = None) -> tuple[FloatArray, FloatArray]:
    """Truncated SVD of the residual, missing cells imputed: first with 0 (the bias baseline),
    then `iters` times with the current rank-k reconstruction (hard-impute / EM-SVD). `eig`: the
    residual's Gram eigendecomposition when the caller has it (`Prepared`)."""
    q, p = _truncated_svd(resid, rank, eig)
    for _ in range(iters):
        q, p = _truncated_svd(np.where(mask, resid, q @ p.T), rank)
    return q, p


def _gram_eig(resid: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(eigenvalues ascending, eigenvectors) of the n × n Gram matrix of `resid`."""
    evals, evecs = np.linalg.eigh(resid.T @ resid)
    return evals, evecs


def _truncated_svd(resid: FloatArray, rank: int, eig: tuple[FloatArray, FloatArray] | None = None
                   ) -> tuple[FloatArray, FloatArray]:
    """(Q = U Σ^½, P = V Σ^½) of the rank-`rank` SVD, through the n × n Gram matrix (`eig`: its
    eigendecomposition, if already computed)."""
    evals, evecs = _gram_eig(resid) if eig is None else eig  # ascending
    order = np.arange(len(evals) - 1, len(evals) - 1 - rank, -1)
    s2 = np.maximum(evals[order], 0.0)
    v = evecs[:, order]
    # fix the sign of each singular vector (largest |component| positive) for a canonical start
    flip = np.sign(v[np.argmax(np.abs(v), axis=0), np.arange(rank)])
    v = v * np.where(flip == 0, 1.0, flip)[None, :]
    s = np.sqrt(s2)
    safe = np.where(s > 1e-12, s, 1.0)
    q = (resid @ v) / np.sqrt(safe)[None, :]
    p = v * np.sqrt(s)[None, :]
    q[:, s <= 1e-12] = 0.0
    return q, p


def _solve_side(mask_f: FloatArray, target: FloatArray, feats: FloatArray, n_obs: FloatArray,
                penalty: FloatArray, floor: FloatArray | None = None) -> FloatArray:
    """For every row r of `target` solve ``(Σ_j m_rj f_j f_jᵀ + diag(penalty)·n_r) z = Σ_j m_rj t_rj f_j``.

    `feats` (J, d) are the features of the other side, `target` (R, J) zero where unobserved;
    `floor` is ``max(n_obs, 1)`` as an (R, 1) column when the caller has it already.
    """
    d = feats.shape[1]
    outer = (feats[:, :, None] * feats[:, None, :]).reshape(feats.shape[0], d * d)
    gram = (mask_f @ outer).reshape(-1, d, d)
    if floor is None:
        floor = np.maximum(n_obs, 1.0)[:, None]
    gram.reshape(-1, d * d)[:, :: d + 1] += floor * penalty[None, :]  # the diagonal, in place
    rhs = target @ feats
    return _solve(gram, rhs[:, :, None])[:, :, 0]


def _solve(a: FloatArray, b: FloatArray) -> FloatArray:
    """`numpy.linalg.solve(a, b)` for stacks of square float64 systems and (…, M, 1) right-hand
    sides: the same LAPACK gufunc under the same error state (a singular system raises
    `LinAlgError`), without the wrapper's checks and conversions (most of its cost on the small
    systems here); bit-identical results."""
    with np.errstate(call=_raise_singular, invalid="call", over="ignore", divide="ignore", under="ignore"):
        return np.asarray(_umath_linalg.solve(a, b, signature="dd->d"))


def _inv(a: FloatArray) -> FloatArray:
    """`numpy.linalg.inv(a)` for a (stack of) square float64 matrices: the same LAPACK gufunc under
    the same error state (a singular matrix raises `LinAlgError`), without the wrapper's checks and
    conversions; bit-identical results."""
    with np.errstate(call=_raise_singular, invalid="call", over="ignore", divide="ignore", under="ignore"):
        return np.asarray(_umath_linalg.inv(a, signature="d->d"))


def _raise_singular(err: object, flag: object) -> None:
    raise np.linalg.LinAlgError("Singular matrix")


@dataclass(frozen=True, slots=True)
class Prepared:
    """What `train` computes from the observed entries before the rank and reg matter: the masked
    values, the observation counts, the bias baseline (`fit_biases`), its residual and the Gram
    eigendecomposition of the first SVD. Rank cross-validation trains every candidate on the same
    fold's matrix: `prepare` it once, and each `train` starts from these same arrays (read-only)."""

    source: FloatArray  # the `y` and `mask` objects it was prepared from (checked by identity)
    source_mask: BoolArray
    reg_bias: float
    column_bias: bool
    y: FloatArray
    mf: FloatArray
    n_row: FloatArray
    n_col: FloatArray
    mu: float
    b: FloatArray
    c: FloatArray
    resid: FloatArray
    eig: tuple[FloatArray, FloatArray] | None  # None until a rank > 0 asked for it (`train`)

    def fits(self, y: FloatArray, mask: BoolArray, params: FitParams) -> bool:
        return (self.source is y and self.source_mask is mask and self.reg_bias == params.reg_bias
                and self.column_bias == params.column_bias)


def prepare(y: FloatArray, mask: BoolArray, params: FitParams, *, eig: bool = True) -> Prepared:
    """`train`'s rank-independent start on (y, mask) under `params`' bias settings (`Prepared`)."""
    source = y
    y = np.where(mask, np.asarray(y, dtype=np.float64), 0.0)
    mf = mask.astype(np.float64)
    n_row = mf.sum(axis=1)
    n_col = mf.sum(axis=0)
    mu, b, c = fit_biases(y, mask, params.reg_bias, params.column_bias)
    resid = (y - mu - b[:, None] - c[None, :]) * mf
    arrays = [y, mf, n_row, n_col, b, c, resid]
    gram = _gram_eig(resid) if eig and y.shape[1] > 1 else None
    for a in (*arrays, *(gram or ())):
        a.setflags(write=False)
    return Prepared(source=source, source_mask=mask, reg_bias=params.reg_bias, column_bias=params.column_bias,
                    y=y, mf=mf, n_row=n_row, n_col=n_col, mu=mu, b=b, c=c, resid=resid, eig=gram)


def train(y: FloatArray, mask: BoolArray, params: FitParams, rank: int | None = None, *,
          prepared: Prepared | None = None) -> Fit:
    """Fit the model to the observed entries ``y[mask]`` (normalised space).

    `rank` overrides ``params.rank`` (which must then be set). Every column must have at least one
    observation; rows without one are allowed (they get b = 0, q = 0 and do not shape the prior).
    `prepared`: `prepare(y, mask, params)` of these same objects, if the caller has it (else it
    is computed here; one for other arrays or bias settings is not used).
    """
    k = params.rank if rank is None else rank
    if k is None:
        raise ValueError("train() needs a rank; use selection.select_rank to choose one")
    m_rows, n = np.shape(y)
    if n == 0 or not np.all(mask.any(axis=0)):
        raise ValueError("every column needs at least one observed entry")
    k = max(0, min(int(k), n - 1 if n > 1 else 0))
    if prepared is None or not prepared.fits(y, mask, params):
        prepared = prepare(y, mask, params, eig=False)
    y, mf, n_row, n_col = prepared.y, prepared.mf, prepared.n_row, prepared.n_col
    mu, b, c, resid = prepared.mu, prepared.b, prepared.c, prepared.resid
    if k > 0:
        q, p = _initial_factors(resid, mask, k, params.init_iters, prepared.eig)
    else:
        q, p = np.zeros((m_rows, 0)), np.zeros((n, 0))

    col_bias_pen = params.reg_bias if params.column_bias else 0.0
    mf_t = np.ascontiguousarray(mf.T)
    n_obs_total = mf.sum()
    row_floor = np.maximum(n_row, 1.0)[:, None]
    col_floor = np.maximum(n_col, 1.0)[:, None]
    y_mu = y - mu  # the first operation of both sides' targets, the same each sweep
    feats_n = np.empty((n, k + 1))  # [1, p_i] of each column
    feats_n[:, 0] = 1.0
    feats_m = np.empty((m_rows, k + 1))  # [1, q_u] of each row
    feats_m[:, 0] = 1.0
    prev = np.inf
    rmse = float(np.sqrt((resid**2).sum() / n_obs_total))
    epochs = 0
    for epochs in range(1, params.max_epochs + 1):  # noqa: B007 - epochs is reported
        lam = max(params.reg, params.reg_start * 0.5 ** (epochs - 1))  # continuation: large -> reg
        row_pen = np.full(k + 1, lam)
        row_pen[0] = 0.0
        col_pen = np.full(k + 1, lam)
        col_pen[0] = col_bias_pen
        # rows: z_u = [b_u, q_u] given [1, p_i]
        feats_n[:, 1:] = p
        zr = _solve_side(mf, (y_mu - c[None, :]) * mf, feats_n, n_row, row_pen, row_floor)
        b, q = zr[:, 0], zr[:, 1:]
        # columns: z_i = [c_i, p_i] given [1, q_u]
        target_t = ((y_mu - b[:, None]) * mf).T
        if params.column_bias:
            feats_m[:, 1:] = q
            zc = _solve_side(mf_t, target_t, feats_m, n_col, col_pen, col_floor)
            c, p = zc[:, 0], zc[:, 1:]
        elif k > 0:
            p = _solve_side(mf_t, target_t, q, n_col, col_pen[1:], col_floor)
        err = (y - (mu + b[:, None] + c[None, :] + q @ p.T)) * mf
        rmse = float(np.sqrt((err**2).sum() / n_obs_total))
        if lam > params.reg:
            continue  # still annealing the penalty
        if prev < np.inf and prev - rmse <= params.tol * prev:
            break
        prev = rmse
    model = _column_model(y, mf, n_row, mu, b, c, q, p, k, rmse, epochs, params.row_bias_prior)
    return Fit(model=model, row_bias=_frozen(b), row_factors=_frozen(q))


def _column_model(y: FloatArray, mf: FloatArray, n_row: FloatArray, mu: float, b: FloatArray,
                  c: FloatArray, q: FloatArray, p: FloatArray, k: int, rmse: float,
                  epochs: int, bias_prior: bool = False) -> FactorModel:
    """Prior of a new row's factors (and, with `bias_prior`, of [b_u, q_u] jointly) and the residual
    variance, from well-determined rows."""
    observed = n_row > 0
    good = n_row >= k + 2
    if good.sum() < k + 2:
        good = observed
    qg = q[good]
    prior_mean = qg.mean(axis=0) if len(qg) else np.zeros(k)
    prior_cov = np.atleast_2d(np.cov(qg, rowvar=False)) if k > 0 and len(qg) > 1 else np.eye(k)
    prior_cov = prior_cov + _PRIOR_JITTER * np.eye(k) * max(1.0, float(np.trace(prior_cov)) / max(k, 1))
    err = (y - (mu + b[:, None] + c[None, :] + q @ p.T)) * mf
    sse = float((err[good] ** 2).sum())
    n_obs = float(mf[good].sum())
    dof = n_obs - float(good.sum()) * (k + 1) - 0.5 * (k + 1) * p.shape[0]
    noise_var = max(sse / dof, _MIN_NOISE_VAR) if dof > 0 else max(sse / max(n_obs, 1.0), _MIN_NOISE_VAR)
    joint_mean = joint_cov = None
    if bias_prior:
        zg = np.hstack([b[good][:, None], qg])
        joint_mean = zg.mean(axis=0) if len(zg) else np.zeros(k + 1)
        joint_cov = np.atleast_2d(np.cov(zg, rowvar=False)) if len(zg) > 1 else np.eye(k + 1)
        joint_cov = joint_cov + _PRIOR_JITTER * np.eye(k + 1) * max(1.0, float(np.trace(joint_cov)) / (k + 1))
        joint_mean, joint_cov = _frozen(joint_mean), _frozen(joint_cov)
    return FactorModel(n_columns=p.shape[0], rank=k, mu=mu, col_bias=_frozen(c), col_factors=_frozen(p),
                       prior_mean=_frozen(prior_mean), prior_cov=_frozen(prior_cov),
                       bias_mean=float(b[observed].mean()) if observed.any() else 0.0,
                       noise_var=noise_var, train_rmse=rmse, epochs=epochs, rows=int(observed.sum()),
                       bias_prior=bias_prior, joint_mean=joint_mean, joint_cov=joint_cov)
