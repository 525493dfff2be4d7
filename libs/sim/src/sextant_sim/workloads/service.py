"""Latency-critical services: a queueing knee per node and load traces (Quasar spec §8.2).

Per node, capacity μ (requests/s) = qps_per_core × per-core speed × scale-up(cores) × interference
× memory hit factor; the offered load λ is split evenly over the nodes (the load balancer of the
autoscaling baseline, Quasar §5). Response time is modelled as M/M/1 on the node's aggregate
capacity plus a base latency, so

    p99(λ) = base + 1000 · ln(100) / (μ − λ)   ms,    P(latency ≤ bound) = 1 − exp(−(μ − λ)(bound − base)/1000)

and latency explodes as λ → μ (the knee). A saturated node (λ ≥ μ) serves nothing within the bound.

Load traces are piecewise constant (segments of `segment_s`), as fractions of the peak QPS:
`flat`, `diurnal` (24 h sinusoid, trough 35 % of peak), `fluctuating`, `spike` (Quasar §5 HotCRP).
"""

from __future__ import annotations

import math

import numpy as np

LN100 = math.log(100.0)
SATURATED_P99_FACTOR = 10.0  # p99 reported for a saturated node: 10× the bound


def p99_ms(mu: float, lam: float, base_ms: float, bound_ms: float) -> float:
    if lam <= 0:
        return base_ms
    if lam >= mu:
        return SATURATED_P99_FACTOR * bound_ms
    return base_ms + 1000.0 * LN100 / (mu - lam)


def met_fraction(mu: float, lam: float, base_ms: float, bound_ms: float) -> float:
    """Fraction of requests answered within `bound_ms` on a node (0 when saturated)."""
    if lam <= 0:
        return 1.0
    if lam >= mu or bound_ms <= base_ms:
        return 0.0
    return 1.0 - math.exp(-(mu - lam) * (bound_ms - base_ms) / 1000.0)


def max_qps_at_bound(mu: float, base_ms: float, bound_ms: float) -> float:
    """The largest λ whose p99 stays within the bound (the knee Quasar sizes services by)."""
    if bound_ms <= base_ms:
        return 0.0
    return max(0.0, mu - 1000.0 * LN100 / (bound_ms - base_ms))


def trace(kind: str, lifetime_s: float, segment_s: float, rng: np.random.Generator,
          phase_offset_s: float | None = None) -> tuple[tuple[float, float], ...]:
    """Load segments (offset from start, fraction of peak) covering the lifetime."""
    n = max(1, int(math.ceil(lifetime_s / segment_s)))
    offset = float(rng.uniform(0, 86400.0)) if phase_offset_s is None else phase_offset_s
    jitter = rng.normal(0.0, 0.03, size=n)
    spike_at = float(rng.uniform(0.3, 0.6))
    out = []
    for i in range(n):
        t = i * segment_s
        if kind == "flat":
            f = 0.9
        elif kind == "diurnal":
            day = 2 * math.pi * (t + offset) / 86400.0
            f = 0.675 - 0.325 * math.cos(day)  # trough 0.35, peak 1.0
        elif kind == "fluctuating":
            f = 0.65 + 0.25 * math.sin(2 * math.pi * t / 5400.0) + 0.1 * math.sin(2 * math.pi * t / 1300.0)
        elif kind == "spike":
            x = t / max(lifetime_s, 1.0)
            f = 1.0 if spike_at <= x < spike_at + 0.08 else 0.45
        else:
            raise ValueError(f"unknown load trace {kind!r}")
        f = f + (0.0 if kind == "spike" else float(jitter[i]))
        out.append((t, float(min(1.0, max(0.05, f)))))
    return tuple(out)
