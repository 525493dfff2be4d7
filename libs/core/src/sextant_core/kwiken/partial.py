"""Partial answers at a high fan-out stage: latency against utility loss (jalaparti.md §3.2.3, §5.4).

A fan-out stage sends a request to `n` responders and may answer before all of them have. Utility
model (a choice, §3.2.3 offers two): the top-ranked document sits on a responder drawn uniformly, so
the *expected* loss of a request is the fraction of responders that had not answered when the stage
stopped; a stage's loss rate is that fraction averaged over requests (the "fraction of components"
utility gives the same number).

Kwiken's policy stops a request at `min(T_c, t_p + T_d, t_all)`: the cut-off `T_c`, or `T_d` after
a fraction `p` of the responders answered (`t_p`), or when all did. For a loss budget `r` the sweep
tries every `(p, T_d)` of a grid and, for each, the cut-off `T_c` that meets the budget with
equality on the training requests (bisection; §9 item 12: "≤ budget, closest to it"), and keeps
the triplet of lowest stage-latency variance. Grid (a choice; the thesis gives none): `p` in
`P_GRID`, `T_d` in `TD_GRID` × the median responder latency, ∞ included for both `T_c` and `T_d`.

Baselines (§5.4): `wait-for-fraction` (stop when a fraction `b` answered), `fixed-timeout` (stop at
`T`), `time-then-fraction` (stop once `T'` has elapsed and at least a fraction `α` answered); each
fitted to the same budget with equality, `α` chosen by variance like Kwiken's triplet.

Inputs are responder latency matrices (requests × responders, ms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .curves import Curve
from .dag import KwikenInputError

P_GRID = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
TD_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, np.inf)
ALPHA_GRID = (0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
LOSS_GRID = np.array([0.0, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1])
BASELINES = ("wait-for-fraction", "fixed-timeout", "time-then-fraction")


@dataclass(frozen=True)
class PartialPolicy:
    """One stopping rule in absolute ms: `min(T_c, max(T_min, t_p + T_d), t_all)`.

    Kwiken's triplet has `t_min = 0`; `time-then-fraction` is `T_c = ∞, T_d = 0, p = α, T_min = T'`.
    """

    kind: str
    t_c: float = np.inf
    t_d: float = np.inf
    p: float = 1.0
    t_min: float = 0.0


class Responders:
    """A responder matrix sorted per request, with O(m log) loss evaluation for any stop times."""

    def __init__(self, latencies: np.ndarray) -> None:
        lat = np.asarray(latencies, dtype=float)
        if lat.ndim != 2 or lat.shape[0] == 0 or lat.shape[1] == 0:
            raise KwikenInputError("responders", "a fan-out stage needs a (requests × responders) sample matrix")
        if not np.all(np.isfinite(lat)) or np.any(lat < 0):
            raise KwikenInputError("responders", "latency samples must be finite and non-negative")
        self.sorted = np.sort(lat, axis=1)
        self.m, self.n = self.sorted.shape
        self.t_all = self.sorted[:, -1]
        self._off = float(self.t_all.max()) * 2.0 + 1.0
        self._rows = np.arange(self.m) * self._off
        self._flat = (self.sorted + self._rows[:, None]).ravel()

    def t_fraction(self, p: float) -> np.ndarray:
        """Per request, the time the first `ceil(p·n)` responders had answered."""
        k = max(1, int(np.ceil(p * self.n - 1e-9)))
        return self.sorted[:, k - 1]

    def stop(self, pol: PartialPolicy) -> np.ndarray:
        t = np.maximum(pol.t_min, self.t_fraction(pol.p) + pol.t_d) if np.isfinite(pol.t_d) else np.full(self.m, np.inf)
        return np.minimum(np.minimum(pol.t_c, t), self.t_all)

    def loss(self, stop: np.ndarray) -> float:
        """Mean fraction of responders that had not answered by `stop` (ties count as answered)."""
        answered = np.searchsorted(self._flat, stop + self._rows, side="right") - np.arange(self.m) * self.n
        return float(1.0 - answered.mean() / self.n)


def _fit_cutoff(resp: Responders, base: np.ndarray, budget: float) -> float:
    """The smallest cut-off `T` with `loss(min(T, base)) ≤ budget` (bisection to 1e-6 relative)."""
    if resp.loss(base) > budget:
        return np.nan
    lo, hi = 0.0, float(base.max())
    if resp.loss(np.minimum(lo, base)) <= budget:
        return lo
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if resp.loss(np.minimum(mid, base)) <= budget:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-6 * hi:
            break
    return hi


def kwiken_policy(resp: Responders, budget: float) -> PartialPolicy:
    """The lowest-variance `(T_c, T_d, p)` meeting `budget` on `resp` (budget 0: wait for all)."""
    if budget <= 0:
        return PartialPolicy("kwiken")
    med = float(np.median(resp.sorted))
    best, best_v = PartialPolicy("kwiken"), float(np.var(resp.t_all))
    for p in P_GRID:
        for td in TD_GRID:
            pol = PartialPolicy("kwiken", np.inf, td * med, p)
            base = resp.stop(pol)
            tc = _fit_cutoff(resp, base, budget)
            if np.isnan(tc):
                continue
            pol = PartialPolicy("kwiken", tc if tc < base.max() else np.inf, td * med, p)
            v = float(np.var(resp.stop(pol)))
            if v < best_v:
                best, best_v = pol, v
    return best


def baseline_policy(resp: Responders, kind: str, budget: float) -> PartialPolicy:
    """A partial-answer baseline fitted to `budget` on `resp`."""
    if kind == "wait-for-fraction":
        k = int(np.floor(budget * resp.n + 1e-9))  # responders that may be dropped per request
        return PartialPolicy(kind, p=(resp.n - k) / resp.n, t_d=0.0)
    if kind == "fixed-timeout":
        return PartialPolicy(kind, t_c=_fit_cutoff(resp, resp.t_all, budget))
    if kind == "time-then-fraction":
        best, best_v = PartialPolicy(kind), float(np.var(resp.t_all))
        for a in ALPHA_GRID:
            t_a = resp.t_fraction(a)
            if resp.loss(t_a) > budget:
                continue
            # stop = max(T', t_α) capped at t_all: the smallest T' meeting the budget
            lo, hi = 0.0, float(resp.t_all.max())
            for _ in range(50):
                mid = 0.5 * (lo + hi)
                if resp.loss(np.minimum(np.maximum(mid, t_a), resp.t_all)) <= budget:
                    hi = mid
                else:
                    lo = mid
                if hi - lo <= 1e-6 * hi:
                    break
            pol = PartialPolicy(kind, t_d=0.0, p=a, t_min=hi)
            v = float(np.var(resp.stop(pol)))
            if v < best_v:
                best, best_v = pol, v
        return best
    raise KwikenInputError("policy", f"unknown partial-answer baseline {kind!r}; known: {', '.join(BASELINES)}")


def partial_curve(resp: Responders, grid: np.ndarray = LOSS_GRID) -> tuple[Curve, tuple[PartialPolicy, ...]]:
    """`V_s(r)` for loss budgets `grid` (Kwiken's policy at each) and the policy of each grid point."""
    pols = tuple(kwiken_policy(resp, float(b)) for b in grid)
    v = np.array([float(np.var(resp.stop(p))) for p in pols])
    return Curve.of(np.asarray(grid, float), v, tuple(p.kind for p in pols)), pols
