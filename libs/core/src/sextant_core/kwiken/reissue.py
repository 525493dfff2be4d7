"""Per-stage reissue policies and their variance-response curves (jalaparti.md §3.2.2, §5.3).

A stage reissues a fraction `r` of its requests; the reissue's latency is an independent draw from
the stage's own distribution (§2.1: reissue and original are uncorrelated) and the request takes the
first response. The cost of a reissue is a full request of the stage: the original is not cancelled
(§9 item 11), so the extra work of a stage is `r` × its per-request cost.

Policies (the richer per-stage variants of §5.3; `POLICIES`):

- `timeout`: reissue once at `T = quantile_{1-r}` of the stage's latencies; latency
  `x if x <= T else min(x, T + x')`.
- `two-after-timeout`: reissue twice at `T = quantile_{1-r/2}` (the same extra work `r`); latency
  `min(x, T + x', T + x'')` for the late ones.
- `immediate`: a fraction `r` of requests, picked independently of their latency, is sent twice at
  once (timeout 0); latency `min(x, x')` for those.

`T` is a sample order statistic: the smallest sample value with at most `floor(r·n)` samples above
it; `r = 1` gives `T = 0` (every request reissued at once). Curves are measured on empirical
samples with reissue draws resampled from the same samples under an explicit seed, so the same
samples and seed give the same curve byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .curves import Curve
from .dag import KwikenInputError

POLICIES = ("timeout", "two-after-timeout", "immediate")
# budgets measured: 0, 32 log-spaced points in [1e-3, 1], and the reissue-everything point 1
GRID = np.unique(np.concatenate(([0.0], np.geomspace(1e-3, 1.0, 32))))


def check_samples(samples: np.ndarray, name: str = "samples") -> np.ndarray:
    """A stage's latency samples: a non-empty 1-D array of finite non-negative values (ms)."""
    x = np.asarray(samples, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise KwikenInputError(name, "a stage needs at least one latency sample")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise KwikenInputError(name, "latency samples must be finite and non-negative")
    return x


def timeout_for(sorted_samples: np.ndarray, r: float) -> float:
    """The reissue timeout for fraction `r`: at most `floor(r·n)` samples lie above it; 0 at r ≥ 1."""
    n = sorted_samples.size
    k = int(np.floor(r * n + 1e-9))
    if k >= n:
        return 0.0
    return float(sorted_samples[n - k - 1])


def apply_policy(x: np.ndarray, alt: np.ndarray, policy: str, timeout: float, immediate_mask: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Latency after the policy and the number of reissues per request.

    `alt` is (2, n): independent draws for the first and second reissue. `immediate` uses
    `immediate_mask` (which requests are sent twice) and ignores `timeout`.
    """
    if policy == "timeout":
        late = x > timeout
        return np.where(late, np.minimum(x, timeout + alt[0]), x), late.astype(float)
    if policy == "two-after-timeout":
        late = x > timeout
        best = np.minimum(x, timeout + np.minimum(alt[0], alt[1]))
        return np.where(late, best, x), 2.0 * late
    if policy == "immediate":
        assert immediate_mask is not None
        return np.where(immediate_mask, np.minimum(x, alt[0]), x), immediate_mask.astype(float)
    raise KwikenInputError("policy", f"unknown reissue policy {policy!r}; known: {', '.join(POLICIES)}")


def reissue_draws(samples: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Independent reissue draws (2, n) resampled from `samples`, and a random rank (n,) for
    `immediate` (the requests of rank < floor(r·n) are sent twice: exactly that many)."""
    rng = np.random.default_rng([seed, 23])
    alt = rng.choice(samples, size=(2, samples.size), replace=True)
    return alt, rng.permutation(samples.size)


def _immediate(rank: np.ndarray, r: float) -> np.ndarray:
    return rank < int(np.floor(r * rank.size + 1e-9))


def stage_policy_latency(samples: np.ndarray, r: float, policy: str, alt: np.ndarray, rank: np.ndarray
                         ) -> tuple[np.ndarray, float]:
    """Latencies of `samples` under `policy` at reissue fraction `r`, and the extra work used (≤ r)."""
    xs = np.sort(samples)
    t = timeout_for(xs, r / 2.0) if policy == "two-after-timeout" else timeout_for(xs, r)
    y, reissues = apply_policy(samples, alt, policy, t, _immediate(rank, r))
    return y, float(reissues.mean())


def reissue_curve(samples: np.ndarray, *, seed: int = 0, grid: np.ndarray = GRID,
                  policies: tuple[str, ...] = POLICIES) -> Curve:
    """`V_s(r)`: per grid point, the lowest latency variance over `policies`, and its hull.

    A policy's point is only taken when its measured extra work does not exceed the grid budget
    (the order-statistic timeout guarantees it for `timeout`; ties at `T` can only lower it).
    """
    x = check_samples(samples)
    xs = np.sort(x)
    alt, rank = reissue_draws(x, seed)
    vs: list[float] = []
    names: list[str] = []
    for r in np.asarray(grid, dtype=float):
        best, name = float(np.var(x)), "none"
        if r > 0:
            for p in policies:
                t = timeout_for(xs, r / 2.0 if p == "two-after-timeout" else r)
                y, used = apply_policy(x, alt, p, t, _immediate(rank, r))
                v = float(np.var(y))
                if float(used.mean()) <= r + 1e-12 and v < best:
                    best, name = v, p
        vs.append(best)
        names.append(name)
    return Curve.of(np.asarray(grid, float), np.asarray(vs), tuple(names))


@dataclass(frozen=True)
class StagePlan:
    """What a stage does at run time: `policy` (`none` or one of `POLICIES`), the reissue fraction it
    was planned for, and the timeout in ms (0 for `immediate`)."""

    policy: str
    fraction: float
    timeout: float


NO_REISSUE = StagePlan("none", 0.0, float("inf"))


def plan_stage(samples: np.ndarray, r: float, curve: Curve | None = None) -> StagePlan:
    """The plan of a stage given its fraction `r`: the policy of the curve's grid point nearest to `r`
    (`timeout` when no curve is given or nothing helped there), its timeout from `samples`."""
    if r <= 0:
        return NO_REISSUE
    x = check_samples(samples)
    policy = curve.policy_at(r) if curve is not None else "timeout"
    if policy == "none":
        policy = "timeout"
    xs = np.sort(x)
    if policy == "immediate":
        return StagePlan(policy, float(r), 0.0)
    return StagePlan(policy, float(r), timeout_for(xs, r / 2.0 if policy == "two-after-timeout" else r))


def apply_plan(x: np.ndarray, alt: np.ndarray, u: np.ndarray, plan: StagePlan) -> tuple[np.ndarray, np.ndarray]:
    """Run-time latencies under `plan` and reissues per request; `u` (uniform, like `x`) picks the
    `immediate` requests (`u < fraction`)."""
    if plan.policy == "none":
        return x, np.zeros_like(x)
    return apply_policy(x, alt, plan.policy, plan.timeout, u < plan.fraction)
