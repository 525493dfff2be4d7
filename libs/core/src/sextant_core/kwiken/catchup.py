"""Catch-up: speed up the rest of a request that is already late (jalaparti.md §5.5).

A request whose elapsed time in the DAG exceeds a threshold `T_z` when one of its stages starts
runs that stage with `k` threads instead of one. Choices (the thesis only sketches them, §9
item 13):

- the check happens when a stage starts (a running stage keeps its thread count);
- speed-up model `S(k) = k / (1 + σ (k − 1))` with synchronisation overhead σ = 0.25, which gives
  the thesis's "3 threads ≈ 2X" (`S(3) = 2`); a sped-up stage takes `x / S(k)`;
- the extra work of a sped-up stage is `c_s (k / S(k) − 1)` (k threads for `1/S(k)` of the time),
  in the same normalised costs as reissues, so the extra share of a request set is
  `mean_requests Σ_{s sped up} c_s (k/S(k) − 1)` over `Σ c_s = 1`;
- `T_z` for a catch-up budget is the smallest threshold whose extra share on the training
  requests is within the budget (bisection: the share falls as `T_z` grows).

Global reissues (§5.5, item 3): a request still inside stage `s` when its *total* elapsed time
reaches `Z_s` is reissued there (an independent draw, first answer wins). The global budget is
split over the stages in proportion to the local reissue fractions (`global_fractions`), and `Z_s`
is the training quantile that reissues the fraction `g_s` of requests at `s`.
"""

from __future__ import annotations

import numpy as np

from .dag import StageDag, check_budget

SYNC_OVERHEAD = 0.25


def speedup(threads: int, sync: float = SYNC_OVERHEAD) -> float:
    """`S(k) = k / (1 + σ (k − 1))`; S(1) = 1, S(3) = 2 at σ = 0.25."""
    return threads / (1.0 + sync * (threads - 1))


def catch_up(dag: StageDag, latencies: np.ndarray, threshold: float, threads: int = 3) -> tuple[np.ndarray, float]:
    """End-to-end latencies with catch-up at `threshold` (ms), and the extra work share it used."""
    lat = np.asarray(latencies, dtype=float)
    c = dag.normalised_costs()
    s_k = speedup(threads)
    extra_per = threads / s_k - 1.0
    finish = np.zeros_like(lat)
    extra = np.zeros(lat.shape[0])
    for s in dag.order:
        ps = dag.preds[s]
        start = finish[:, list(ps)].max(axis=1) if ps else np.zeros(lat.shape[0])
        fast = start > threshold
        finish[:, s] = start + np.where(fast, lat[:, s] / s_k, lat[:, s])
        extra += fast * (c[s] * extra_per)
    return finish[:, dag.sinks()].max(axis=1), float(extra.mean())


def threshold_for_budget(dag: StageDag, latencies: np.ndarray, budget: float, threads: int = 3) -> float:
    """The smallest `T_z` whose extra work share on `latencies` is ≤ `budget`."""
    b = check_budget(budget)
    lo, hi = 0.0, float(np.asarray(latencies).sum(axis=1).max())
    if catch_up(dag, latencies, lo, threads)[1] <= b:
        return lo
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if catch_up(dag, latencies, mid, threads)[1] <= b:
            hi = mid
        else:
            lo = mid
    return hi


def global_fractions(local: np.ndarray, costs: np.ndarray, budget: float) -> np.ndarray:
    """Per-stage global-reissue fractions in proportion to the local ones, spending `budget`
    (`Σ c_s g_s = budget`, §5.5's rule of thumb); capped at 1; zeros when nothing is local."""
    b = check_budget(budget)
    spent = float(costs @ local)
    if spent <= 0:
        return np.zeros_like(local)
    return np.minimum(1.0, local * (b / spent))


def _global_stage(start: np.ndarray, x: np.ndarray, alt: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    late = start + x > z
    at = np.maximum(start, z) - start  # time in the stage when the elapsed time reaches z
    return np.where(late, np.minimum(x, at + alt), x), late


def global_thresholds(dag: StageDag, latencies: np.ndarray, alt: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """Per stage, the elapsed-time threshold `Z_s` (ms) past which a request still in stage `s` is
    reissued there: the `(1 − g_s)` quantile of the training finish times at `s`, stages taken in
    topological order with the upstream global reissues applied (`inf` where `g_s = 0`)."""
    lat = np.asarray(latencies, dtype=float)
    z = np.full(dag.n, np.inf)
    finish = np.zeros_like(lat)
    for s in dag.order:
        ps = dag.preds[s]
        start = finish[:, list(ps)].max(axis=1) if ps else np.zeros(lat.shape[0])
        if fractions[s] > 0:
            z[s] = float(np.quantile(start + lat[:, s], 1.0 - fractions[s], method="higher"))
            y, _ = _global_stage(start, lat[:, s], alt[:, s], z[s])
        else:
            y = lat[:, s]
        finish[:, s] = start + y
    return z


def global_reissues(dag: StageDag, latencies: np.ndarray, alt: np.ndarray, thresholds: np.ndarray
                    ) -> tuple[np.ndarray, float]:
    """End-to-end latencies with global reissues at `thresholds` on top of `latencies` (which may
    already include local reissues; `alt` is an independent draw per request and stage), and the
    reissue work used `Σ_s c_s · mean(reissued at s)`."""
    lat = np.asarray(latencies, dtype=float)
    c = dag.normalised_costs()
    finish = np.zeros_like(lat)
    used = 0.0
    for s in dag.order:
        ps = dag.preds[s]
        start = finish[:, list(ps)].max(axis=1) if ps else np.zeros(lat.shape[0])
        if np.isfinite(thresholds[s]):
            y, late = _global_stage(start, lat[:, s], alt[:, s], float(thresholds[s]))
            used += float(c[s] * late.mean())
        else:
            y = lat[:, s]
        finish[:, s] = start + y
    return finish[:, dag.sinks()].max(axis=1), used
