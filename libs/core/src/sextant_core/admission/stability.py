"""ARQ's stability check (Paragon §4.3): the queues as an open network of classes.

With class arrival rates λ, routing matrix P (P_ij = the share of class i's traffic diverted to
class j; diverted jobs join the tail of the new queue), the traffic equation
λ̄ = λ + Pᵀλ̄ gives the effective rates λ̄ = (I − Pᵀ)⁻¹ λ, and a pool S with service rates μ is
stable iff its load factor ρ_S = Σ_{i∈S} λ̄_i / μ_i < 1 (Poisson arrivals, no dropped jobs).

[GAP] the paper gives no procedure for estimating λ, μ and P online. What admission uses at a
decision is the same inequality read on the cores of the cell (`core_load`): the cores held by
running workloads plus those asked for by the queued and deferred ones, over the schedulable
capacity. ρ ≥ 1 means the queues cannot drain at the current demand; the decision records it
(trace note `unstable`) and then still bounds every wait by its slack — holding a workload past
its slack would only lengthen the queue it cannot leave (Paragon: ARQ "guarantees that the
application will be assigned to the best available server within the time window dictated by its
QoS constraints").
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]


def effective_rates(arrivals: npt.ArrayLike, routing: npt.ArrayLike) -> Array:
    """λ̄ = (I − Pᵀ)⁻¹ λ. Raises ValueError when a row of P sums above 1 (traffic created) or the
    system is singular (a closed routing loop)."""
    lam = np.asarray(arrivals, dtype=np.float64)
    p = np.asarray(routing, dtype=np.float64)
    n = len(lam)
    if p.shape != (n, n):
        raise ValueError(f"routing matrix must be {n}x{n}, got {p.shape}")
    if (p < 0).any() or (p.sum(axis=1) > 1.0 + 1e-12).any():
        raise ValueError("routing shares must be >= 0 and sum to at most 1 per class")
    try:
        out: Array = np.asarray(np.linalg.solve(np.eye(n) - p.T, lam), dtype=np.float64)
    except np.linalg.LinAlgError as e:
        raise ValueError("routing matrix has a closed loop (I − Pᵀ is singular)") from e
    return out


def load_factor(effective: npt.ArrayLike, service: npt.ArrayLike) -> float:
    """ρ = Σ λ̄_i / μ_i over the classes served by one pool (μ_i > 0)."""
    lam = np.asarray(effective, dtype=np.float64)
    mu = np.asarray(service, dtype=np.float64)
    if (mu <= 0).any():
        raise ValueError("service rates must be > 0")
    return float((lam / mu).sum())


def stable(effective: npt.ArrayLike, service: npt.ArrayLike) -> bool:
    return load_factor(effective, service) < 1.0


def core_load(used_cores: float, waiting_cores: float, capacity_cores: float) -> float:
    """ρ on the cell's cores: (used + asked for by waiting workloads) / schedulable capacity."""
    if capacity_cores <= 0:
        return float("inf")
    return (used_cores + waiting_cores) / capacity_cores
