"""The job resource model: the skyline LP (Morpheus §5; spec `morpheus.md` §3.3).

Given N past runs of one periodic job, each a skyline s_{i,k} (average containers in step k),
find the reservation skyline s_k that minimises

    α·A_o(s) + (1 − α)·A_u(s) + β·ε
    A_o = (1/N) Σ_i Σ_k (s_k − s_{i,k})⁺                       average over-allocation
    A_u = (1/N) Σ_i D_{i,K},  D_{i,k} = (D_{i,k−1} + s_{i,k} − s_k)⁺   average final debt
    (1/N) Σ_i Σ_k (s_{i,k} − s_k)⁺ / Σ_k s_{i,k} ≤ ε          no lazy under-provisioning

in two phases: phase 1 without β·ε and without the ε row gives V; phase 2 sets β = 0.1·V and
solves the whole LP. α defaults to 0.01 (the paper's "a value of 1%"); 0 < α < 1 is required
(α = 1 is degenerate: s ≡ 0; α = 0 leaves over-allocation free).

Formulation (exact, lossless; chosen for speed). Solved by SciPy's HiGHS dual simplex
(`linprog(method="highs-ds")` with HiGHS's `threads=1` and `random_seed=0`: serial and
seeded, so the same runs give the same skyline byte for byte).

- Over-allocation is not a variable: (s − r)⁺ = (s − r) + (r − s)⁺, so A_o is a linear term in s
  plus the instantaneous under-allocation u_{i,k} ≥ (s_{i,k} − s_k)⁺ that the ε row needs anyway;
  u carries the weight α/N, so it sits at its (·)⁺ value in both phases.
- The debt recursion is not unrolled: the final debt of run i is its largest uncovered suffix,
  D_{i,K} = max(0, max_j Σ_{k≥j} (s_{i,k} − s_k)), so with the suffix sums C_j = Σ_{k≥j} s_k as
  the skyline's variables (s_k = C_k − C_{k+1} ≥ 0) one variable D_i and K two-entry rows per
  run replace N·K debt variables. Size: K + N·K + N + 1 variables, 2·N·K + K rows.

Time resolution [choice; spec §8.5 leaves it open]. The runs are averaged over blocks of
`resolution` steps (default 5: five one-minute steps), the LP is solved on the blocks, and each
block's value is repeated over its steps. Cost of the default, measured on synthetic 30-run ×
1 440-minute skylines with stages (`bench/morpheus_speed.py`, seeds 6–10): the objective evaluated
minute by minute is 0.2–0.9 % above the one-minute fit's, for an LP five times smaller that solves
several times faster (figures: `docs/results/morpheus.md`); the area is the same, the
difference is debt inside a block (a run that peaks in the first minute of a block and idles in
the rest is covered on average, not minute by minute). `resolution=1` is the
exact minute-level LP.

Other choices [spec §8.5]: runs of different length are zero-padded to the longest (a run that
ended did not need containers); every given run is used with equal weight (the caller chooses
the window, about a month); the skyline is rounded up to whole containers with a 1e-6 tolerance
(`ceil(s − 1e-6)`), so rounding never lowers a step by more than solver noise, and since debt only
falls when s grows, the rounded skyline never leaves a run more debt than the fractional one;
when V = 0 (every run covered exactly, no over-allocation) phase 2 is skipped.

Coverage [follows from the LP; tested as a property]: raising the last step by δ costs at most
α·δ and removes δ of debt from every run that ends in debt, so at the optimum the number of runs
left with final debt is at most α·N / (1 − α) — with α = 0.01 and fewer than 100 runs, every run's
demand is covered in the debt sense (every suffix of every run fits under the skyline's suffix).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import OptimizeWarning, linprog

DEFAULT_ALPHA = 0.01
BETA_FACTOR = 0.1  # β = 0.1·V (Morpheus §5)
DEFAULT_RESOLUTION = 5  # steps per LP step
ROUNDING_TOLERANCE = 1e-6
# HiGHS's own options (checked by HiGHS): one thread, a fixed seed (highs-ds: serial dual simplex)
HIGHS_OPTIONS = {"threads": 1, "random_seed": 0}


class SkylineError(ValueError):
    """The runs or the parameters cannot define a skyline (empty, negative, α outside (0, 1))."""


@dataclass(frozen=True)
class SkylineFit:
    """A fitted reservation skyline.

    `skyline` is in whole containers per step, one value per step of the longest run
    (`resolution` steps share one LP value). `fractional` is the LP's solution at the same steps.
    `phase1_value` is V (the optimum without β·ε); `beta` = 0.1·V; `epsilon` the normalised
    instantaneous under-allocation of the final solution.
    """

    skyline: tuple[int, ...]
    fractional: tuple[float, ...]
    alpha: float
    beta: float
    epsilon: float
    phase1_value: float
    resolution: int
    runs: int


def as_matrix(runs: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """The runs as an (N, K) float matrix, zero-padded to the longest run."""
    rows = [np.asarray(r, dtype=np.float64).ravel() for r in runs]
    if not rows or max(len(r) for r in rows) == 0:
        raise SkylineError("no runs, or only empty runs")
    k = max(len(r) for r in rows)
    out = np.zeros((len(rows), k))
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    if not np.all(np.isfinite(out)) or (out < 0).any():
        raise SkylineError("a run has a negative or non-finite container count")
    return out


def _blocks(s: np.ndarray, resolution: int) -> np.ndarray:
    n, k = s.shape
    pad = (-k) % resolution
    if pad:
        s = np.concatenate([s, np.zeros((n, pad))], axis=1)
    return s.reshape(n, -1, resolution).mean(axis=2)


def _lp(s: np.ndarray, alpha: float, beta: float | None) -> tuple[np.ndarray, float, float]:
    """Solve one phase; returns (skyline, objective value of the original terms, ε).

    `beta=None` is phase 1 (no ε row, no β·ε term)."""
    n, k = s.shape
    nk = n * k
    iu, idebt = k, k + nk
    neps = 1 if beta is not None else 0
    nv = k + nk + n + neps
    c = np.zeros(nv)
    c[0] = alpha  # α·(1/N)Σ_iΣ_k s_k = α·C_0
    c[iu:iu + nk] = alpha / n
    c[idebt:idebt + n] = (1.0 - alpha) / n
    r = np.arange(nk)
    run, step = np.divmod(r, k)
    suffix = np.cumsum(s[:, ::-1], axis=1)[:, ::-1]
    nxt = step < k - 1
    kk = np.arange(k - 1)
    rows = [r, r, r[nxt], nk + r, nk + r, 2 * nk + kk, 2 * nk + kk]
    cols = [iu + r, step, step[nxt] + 1, idebt + run, step, kk, kk + 1]
    vals = [-np.ones(nk), -np.ones(nk), np.ones(int(nxt.sum())), -np.ones(nk), -np.ones(nk),
            -np.ones(k - 1), np.ones(k - 1)]
    # u + C_k − C_{k+1} ≥ s_ik ;  D_i + C_j ≥ suffix_ij ;  C_k − C_{k+1} ≥ 0
    b = [-s.ravel(), -suffix.ravel(), np.zeros(k - 1)]
    nrow = 2 * nk + k - 1
    if beta is not None:
        totals = s.sum(axis=1)
        weight = np.where(totals > 0, 1.0 / (n * np.where(totals > 0, totals, 1.0)), 0.0)
        rows += [np.full(nk, nrow), np.array([nrow])]
        cols += [iu + r, np.array([nv - 1])]
        vals += [weight[run], np.array([-1.0])]
        b.append(np.zeros(1))
        nrow += 1
        c[nv - 1] = beta
    a = sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nrow, nv))
    with warnings.catch_warnings():  # SciPy warns that it passes HiGHS-native options verbatim
        warnings.filterwarnings("ignore", message="Unrecognized options", category=OptimizeWarning)
        res = linprog(c, A_ub=a, b_ub=np.concatenate(b), bounds=(0, None), method="highs-ds", options=HIGHS_OPTIONS)
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded (s = max run)
        raise SkylineError(f"HiGHS did not solve the skyline LP: {res.message}")
    x = res.x
    cum = x[:k]
    sky = np.maximum(cum - np.append(cum[1:], 0.0), 0.0)
    eps = float(x[nv - 1]) + 0.0 if beta is not None else 0.0  # + 0.0: no −0.0
    value = float(res.fun) - alpha * float(s.sum()) / n - (beta or 0.0) * eps
    return sky, value, eps


def fit_skyline(runs: Sequence[Sequence[float]] | np.ndarray, *, alpha: float = DEFAULT_ALPHA,
                resolution: int = DEFAULT_RESOLUTION) -> SkylineFit:
    """Fit the reservation skyline of a periodic job from its successful runs (see module doc).

    `runs`: one container-per-step sequence per run, aligned at the run's start. `alpha` in
    (0, 1); `resolution` ≥ 1 steps per LP step. Raises `SkylineError` on bad input.
    """
    if not 0.0 < alpha < 1.0:
        raise SkylineError(f"alpha must lie in (0, 1), got {alpha}")
    if resolution < 1:
        raise SkylineError(f"resolution must be ≥ 1, got {resolution}")
    s = as_matrix(runs)
    k = s.shape[1]
    coarse = _blocks(s, resolution)
    sky, value, _ = _lp(coarse, alpha, None)
    beta, eps = 0.0, 0.0
    if value > ROUNDING_TOLERANCE:
        beta = BETA_FACTOR * value
        sky, _, eps = _lp(coarse, alpha, beta)
    frac = np.repeat(sky, resolution)[:k]
    whole = np.ceil(np.maximum(frac - ROUNDING_TOLERANCE, 0.0)).astype(np.int64)
    return SkylineFit(skyline=tuple(int(v) for v in whole), fractional=tuple(float(v) for v in frac),
                      alpha=alpha, beta=beta, epsilon=eps, phase1_value=value, resolution=resolution,
                      runs=s.shape[0])


def final_debts(runs: np.ndarray, skyline: Sequence[float]) -> np.ndarray:
    """D_{i,K} of every run under `skyline` (the debt model of Morpheus §5), runs as `as_matrix`."""
    sky = np.zeros(runs.shape[1])
    m = min(len(sky), len(skyline))
    sky[:m] = np.asarray(skyline, dtype=np.float64)[:m]
    debt = np.zeros(runs.shape[0])
    for k in range(runs.shape[1]):
        debt = np.maximum(debt + runs[:, k] - sky[k], 0.0)
    return debt
