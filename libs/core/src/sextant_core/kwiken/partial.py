"""Partial answers at a high fan-out stage: latency against utility loss (jalaparti.md §3.2.3, §5.4).

A fan-out stage sends a request to `n` responders and may answer before all of them have. Utility
model (a choice, §3.2.3 offers two): the top-ranked document sits on a responder drawn uniformly, so
the *expected* loss of a request is the fraction of responders that had not answered when the stage
stopped; a stage's loss rate is that fraction averaged over requests (the "fraction of components"
utility gives the same number).

Kwiken's policy stops a request at `min(T_c, max(T_min, t_p + T_d), t_all)`: the cut-off `T_c`,
or `T_d` after a fraction `p` of the responders answered (`t_p`) but not before `T_min`, or when all
did. The thesis's triplet is `T_min = 0`; the floor `T_min` (with `T_d = 0`, `T_c = ∞`: "once
`T_min` has passed, stop as soon as `p` answered") is added so that the family holds all three
baselines' shapes. For a loss budget `r` the sweep (`candidates`) tries every `(p, T_d)` of a grid
with the cut-off `T_c` that meets the budget with equality on the training requests (bisection;
§9 item 12: "≤ budget, closest to it"), and every `p` with the fitted floor, and keeps the policy
of least training p99 (the tail the budget is bought for; the thesis's least variance is
`objective="variance"`). Grid (a choice; the thesis gives none): `p` in `P_GRID ∪ ALPHA_GRID` and
`p = (n − k)/n` for `k` in `K_GRID` responders left out (fractions alone collapse to "all" for a
few hundred responders at a 0.1 % budget), `T_d` in `TD_GRID` × the median responder latency.

Baselines (§5.4): `wait-for-fraction` (stop when a fraction `b` answered), `fixed-timeout` (stop at
`T`), `time-then-fraction` (stop once `T'` has elapsed and at least a fraction `α` answered); each
fitted to the same budget with equality, `α` chosen by variance. `oracle_quantile` is the bound
no rule can pass (it knows the test requests' latencies).

Inputs are responder latency matrices (requests × responders, ms).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .curves import Curve
from .dag import KwikenInputError

P_GRID = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
TD_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, np.inf)
ALPHA_GRID = (0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
LOSS_GRID = np.array([0.0, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1])
BASELINES = ("wait-for-fraction", "fixed-timeout", "time-then-fraction")
K_GRID = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
OBJECTIVES = ("p99", "p99-train", "variance")
MARGIN = 0.01


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
    return _least_within(lambda t: resp.loss(np.minimum(t, base)) <= budget, float(base.max()))


def _fit_floor(resp: Responders, t_p: np.ndarray, budget: float) -> float:
    """The smallest floor `T'` with `loss(min(max(T', t_p), t_all)) ≤ budget` (bisection to 1e-6
    relative). Always exists: at `T' = max t_all` every request waits for all its responders."""
    return _least_within(lambda t: resp.loss(np.minimum(np.maximum(t, t_p), resp.t_all)) <= budget,
                         float(resp.t_all.max()))


def _least_within(ok: Callable[[float], bool], hi: float) -> float:
    """The least `t` in [0, `hi`] with `ok(t)` (monotone; `ok(hi)` assumed): 0 if `ok(0)`, else
    bisection to 1e-6 relative, at most 50 halvings."""
    lo = 0.0
    if ok(lo):
        return lo
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-6 * hi:
            break
    return hi


def fractions(n: int, grid: tuple[float, ...] = P_GRID) -> tuple[float, ...]:
    """The fractions `p` swept for `n` responders: `grid` and `(n − k) / n` for `k` in `K_GRID`
    (a fraction grid alone collapses to "all" for the few hundred responders of a small fan-out:
    `ceil(0.999 · 300) = 300`), duplicates by responder count removed, ascending."""
    by_count: dict[int, float] = {}
    for p in (*grid, *((n - k) / n for k in K_GRID if k < n)):
        by_count.setdefault(max(1, int(np.ceil(p * n - 1e-9))), p)
    return tuple(by_count[k] for k in sorted(by_count) if k < n)


def _score(stop: np.ndarray, objective: str) -> tuple[float, float]:
    """The `p99` of the stop times (ties: the variance) or the variance (ties: the p99)."""
    v, t = float(np.var(stop)), float(np.percentile(stop, 99.0))
    return (t, v) if objective == "p99" else (v, t)


Shape = tuple[float, float, bool]  # (p, T_d in ms, floor shape?)


def shapes(resp: Responders) -> list[Shape]:
    """The shapes of Kwiken's sweep, in the order the sweep prefers them on near ties: the plain
    cut-off (`T_d = ∞`), then each finite `T_d` of `TD_GRID` × the median responder latency with
    each `p` of `fractions(n)` (a cut-off `T_c` to fit), then each `p` with `T_d = 0` and a floor
    `T_min` to fit ("once `T_min` has passed, stop as soon as `p` answered")."""
    med = float(np.median(resp.sorted))
    ps = fractions(resp.n, tuple(sorted({*P_GRID, *ALPHA_GRID})))
    out: list[Shape] = [(ps[0], np.inf, False)]  # the plain cut-off (T_d = ∞: p plays no part)
    for td in TD_GRID[:-1]:
        out.extend((p, td * med, False) for p in ps)
    out.extend((p, 0.0, True) for p in ps)
    return out


def fit(resp: Responders, shape: Shape, budget: float) -> PartialPolicy | None:
    """The policy of `shape` meeting `budget` on `resp` with equality (or with loss 0 when even
    that stops every request early); None when no cut-off brings the shape within the budget."""
    p, td, floor = shape
    if floor:
        return PartialPolicy("kwiken", np.inf, 0.0, p, _fit_floor(resp, resp.t_fraction(p), budget))
    base = resp.stop(PartialPolicy("kwiken", np.inf, td, p))
    tc = _fit_cutoff(resp, base, budget)
    if np.isnan(tc):
        return None
    return PartialPolicy("kwiken", tc if tc < base.max() else np.inf, td, p)


def candidates(resp: Responders, budget: float) -> list[PartialPolicy]:
    """Every policy of Kwiken's sweep for `budget`: each of `shapes(resp)` fitted on `resp`."""
    return [pol for sh in shapes(resp) if (pol := fit(resp, sh, budget)) is not None]


def _halves(resp: Responders) -> tuple[Responders, Responders]:
    return Responders(resp.sorted[0::2]), Responders(resp.sorted[1::2])


def kwiken_policy(resp: Responders, budget: float, objective: str = "p99") -> PartialPolicy:
    """Kwiken's policy for `budget` on the training requests `resp` (budget 0: wait for all).

    `objective` says which fitted shape is kept. `"p99"` (default): the least *cross-fitted* p99
    — each shape fitted on one half of the requests (alternate rows), its p99 measured on the
    other, both ways, summed — and a shape replaces the one kept so far (starting from "wait for
    all", then the plain cut-off, `shapes` order) only when it is better by more than `MARGIN`
    (relative); the kept shape is then fitted on all of `resp` (fewer than 200 requests: no
    halves, the plain training p99). Why: a plain training p99 prefers, by a hair, rules that
    let the requests missing many responders wait; when the slow share drifts up in the next
    period more than 1 % of requests wait and the p99 is lost (measured on the tuning seeds at a
    1 % budget: p99 cut 0.446 against 0.455 for this rule). `"p99-train"`: the plain training
    p99; `"variance"`: the thesis's least variance (ties: the p99). With `"p99-train"` and
    `"variance"` Kwiken is never behind a baseline on `resp`: their fits are members of the sweep.
    """
    if objective not in OBJECTIVES:
        raise KwikenInputError("objective", f"unknown objective {objective!r}; known: {', '.join(OBJECTIVES)}")
    best = PartialPolicy("kwiken")
    if budget <= 0:
        return best
    if objective != "p99" or resp.m < 200:
        obj = "variance" if objective == "variance" else "p99"
        best_s = _score(resp.t_all, obj)
        for pol in candidates(resp, budget):
            sc = _score(resp.stop(pol), obj)
            if sc < best_s:
                best, best_s = pol, sc
        return best
    a, b = _halves(resp)

    def cross(sh: Shape | None) -> tuple[float, float]:
        t, v = 0.0, 0.0
        for fit_on, score_on in ((a, b), (b, a)):
            pol = PartialPolicy("kwiken") if sh is None else fit(fit_on, sh, budget)
            if pol is None:
                return (np.inf, np.inf)
            stop = score_on.stop(pol)
            t, v = t + float(np.percentile(stop, 99.0)), v + float(np.var(stop))
        return (t, v)

    best_sh: Shape | None = None
    best_s = cross(None)
    for sh in shapes(resp):
        sc = cross(sh)
        if sc[0] < best_s[0] * (1.0 - MARGIN):
            best_sh, best_s = sh, sc
    return best if best_sh is None else (fit(resp, best_sh, budget) or best)


def baseline_policy(resp: Responders, kind: str, budget: float) -> PartialPolicy:
    """A partial-answer baseline fitted to `budget` on `resp`."""
    if kind == "wait-for-fraction":
        k = int(np.floor(budget * resp.n + 1e-9))  # responders that may be dropped per request
        return PartialPolicy(kind, p=(resp.n - k) / resp.n, t_d=0.0)
    if kind == "fixed-timeout":
        return PartialPolicy(kind, t_c=_fit_cutoff(resp, resp.t_all, budget))
    if kind == "time-then-fraction":
        # stop = max(T', t_α) capped at t_all: for each α the smallest T' meeting the budget, the
        # α of least variance kept
        best, best_v = PartialPolicy(kind), float(np.var(resp.t_all))
        for a in ALPHA_GRID:
            pol = PartialPolicy(kind, t_d=0.0, p=a, t_min=_fit_floor(resp, resp.t_fraction(a), budget))
            v = float(np.var(resp.stop(pol)))
            if v < best_v:
                best, best_v = pol, v
        return best
    raise KwikenInputError("policy", f"unknown partial-answer baseline {kind!r}; known: {', '.join(BASELINES)}")


def oracle_quantile(resp: Responders, budget: float, q: float = 99.0) -> float:
    """The least `q`-th percentile (NumPy's linear rule) of stop times that *any* rule could reach
    on these requests with mean loss ≤ `budget`, knowing every latency in advance: a bound, not a
    policy. For a target `T`, a request finishing after `T` either stays above it (at most
    `m − 1 − ⌈q/100·(m − 1)⌉` may) or stops at `T` and loses its responders not yet answered; the
    cheapest requests are stopped. `T` by bisection (to 1e-9 relative)."""
    m = resp.m
    allow = m - 1 - int(np.ceil(q / 100.0 * (m - 1) - 1e-9))
    total = budget * resp.n * m

    def feasible(t: float) -> bool:
        above = resp.t_all > t
        cost = np.sort((resp.sorted[above] > t).sum(axis=1))
        return bool(cost[: max(0, cost.size - allow)].sum() <= total)

    lo, hi = 0.0, float(np.percentile(resp.t_all, q))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if feasible(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-9 * hi:
            break
    return hi


def partial_curve(resp: Responders, grid: np.ndarray = LOSS_GRID) -> tuple[Curve, tuple[PartialPolicy, ...]]:
    """`V_s(r)` for loss budgets `grid` (Kwiken's policy at each) and the policy of each grid point."""
    pols = tuple(kwiken_policy(resp, float(b)) for b in grid)
    v = np.array([float(np.var(resp.stop(p))) for p in pols])
    return Curve.of(np.asarray(grid, float), v, tuple(p.kind for p in pols)), pols
