"""A service's capacity estimate calibrated on its own latency telemetry (ladder 8.7;
docs/adaptation/diurnal.md, "Ladder 8.7").

The classification estimates an allocation's capacity as k × its weakest node's performance
(`planning.model.PerformanceModel.aggregate`, the load split evenly over k nodes). What it cannot
see is the queueing knee: the p99 of a node rises as 1 / (μ − λ) when its load λ nears its
capacity μ, so every node needs a fixed headroom below μ to keep its p99 within the bound, and
k small nodes carry less within the bound than their summed μ says — the estimate is optimistic
on large allocations of small nodes and conservative on small ones.

Each `PerformanceObserved` of a service carries its offered load and p99; the state keeps the
latest of them with the allocation they were measured on (`WorkloadState.latency_history`). With
x = offered / k (a node's load) and m = the classification's estimate of the weakest node (the
allocation's estimate / k), the fit is the M/M/1 tail of the weakest node (p99 is the slowest
node's, the twin's and a load balancer's):

    p99 = b + K / (g · m − x)

g (the true capacity of a node per unit of the estimate) and b (the base latency) are fitted by
least squares — a grid over g, b linear at each — with K the M/M/1 tail's constant
(1000 · ln 100 ms · requests/s: the 99th percentile of an exponential sojourn time), or K fitted
too (`tail=None`), over the kept points below `SATURATED` × the bound (a saturated node reports a
clipped p99). Every node i of an allocation then has μᵢ = g · mᵢ and, with an exponential tail,
the share of its requests within the bound B is 1 − exp(−(μᵢ − x)(B − b) · ln 100 / K). The
calibrated capacity of an allocation is the largest load whose mean share over its nodes (the
twin's and a balancer's even split) is at least `share` (the target's 99 %): a weak node past
the bound is carried by strong ones, as the requests are counted. [IMPL CHOICE] the tail's shape
is M/M/1's, the twin's own (`sextant_sim.workloads.service`); on hardware the fit would want a
quantile regression on measured curves. Pure arithmetic on the folded history: replay re-derives
every calibration.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SATURATED = 3.0  # points with p99 above this many bounds are left out (a saturated node's p99 is clipped)
MM1_TAIL = 1000.0 * math.log(100.0)  # p99 − base = this / (μ − λ), ms × requests/s (M/M/1)


@dataclass(frozen=True, slots=True)
class LatencyFit:
    scale: float  # g: a node's capacity μ per unit of the classification's node estimate
    base_ms: float  # b: the latency at no load
    tail: float  # K: p99 − b = K / (μ − λ)
    points: int
    rms_ms: float  # the fit's residual

    def knee(self, estimate: float, nodes: int, level_ms: float) -> float:
        """The load at which an allocation of `nodes` nodes whose classification estimate is
        `estimate` (k × its weakest node) has its weakest node's p99 at `level_ms`."""
        if nodes <= 0 or level_ms <= self.base_ms:
            return 0.0
        return max(self.scale * estimate - nodes * self.tail / (level_ms - self.base_ms), 0.0)

    def share(self, node_estimates: Sequence[float], load: float, bound_ms: float) -> float:
        """The mean share of requests within `bound_ms` over nodes whose classification estimates
        are `node_estimates` (scale-out efficiency included), `load` split evenly."""
        k = len(node_estimates)
        if k == 0 or bound_ms <= self.base_ms:
            return 0.0
        x = load / k
        rate = (bound_ms - self.base_ms) * math.log(100.0) / self.tail
        return sum(1.0 - math.exp(-(self.scale * m - x) * rate) for m in node_estimates
                   if self.scale * m > x) / k

    def capacity(self, node_estimates: Sequence[float], bound_ms: float, share: float) -> float:
        """The largest load (bisection, 0.1 %) at which `share` of requests meet `bound_ms`."""
        if not node_estimates or self.share(node_estimates, 0.0, bound_ms) < share:
            return 0.0
        lo, hi = 0.0, self.scale * max(node_estimates) * len(node_estimates)
        while hi - lo > 1e-3 * hi:
            mid = (lo + hi) / 2.0
            if self.share(node_estimates, mid, bound_ms) >= share:
                lo = mid
            else:
                hi = mid
        return lo

    def describe(self) -> str:
        return (f"latency fit g {self.scale:.3f}, base {self.base_ms:.4f} ms, K {self.tail:.1f} "
                f"on {self.points} points (rms {self.rms_ms:.4f} ms)")


def fit(points: Sequence[tuple[float, float, float]], bound_ms: float, min_points: int = 6,
        min_spread: float = 0.05, tail: float | None = MM1_TAIL, grid: int = 400) -> LatencyFit | None:
    """Fit `p99 = b + K / (g·m − x)` on (x node load, m node estimate, p99 ms) points, K = `tail`
    (None: fitted); None with fewer than `min_points` usable points, a spread of x/m below
    `min_spread` (relative: the knee is not identifiable from one operating point), or no fit with
    K > 0 and 0 ≤ b < `bound_ms`."""
    use = [(x, m, y) for x, m, y in points if m > 0 and x > 0 and 0 < y <= SATURATED * bound_ms]
    if len(use) < min_points:
        return None
    xs = np.array([p[0] for p in use])
    ms = np.array([p[1] for p in use])
    ys = np.array([p[2] for p in use])
    rel = xs / ms
    if (rel.max() - rel.min()) < min_spread * rel.max():
        return None
    lo = float(rel.max()) * (1.0 + 1e-3)
    gs = lo * np.logspace(0.0, math.log10(8.0), grid)
    z = 1.0 / (gs[:, None] * ms[None, :] - xs[None, :])  # (grid, n)
    zm = z.mean(axis=1, keepdims=True)
    ym = float(ys.mean())
    dz = z - zm
    var = (dz * dz).sum(axis=1)
    if tail is None:
        k = np.where(var > 0, (dz * (ys - ym)[None, :]).sum(axis=1) / np.where(var > 0, var, 1.0), 0.0)
    else:
        k = np.full(len(gs), tail)
    b = ym - k * zm[:, 0]
    sse = ((ys[None, :] - b[:, None] - k[:, None] * z) ** 2).sum(axis=1)
    ok = (k > 0) & (b >= 0) & (b < bound_ms) & (var > 0)
    if not ok.any():
        return None
    i = int(np.argmin(np.where(ok, sse, np.inf)))
    return LatencyFit(scale=float(gs[i]), base_ms=float(b[i]), tail=float(k[i]), points=len(use),
                      rms_ms=math.sqrt(float(sse[i]) / len(use)))
