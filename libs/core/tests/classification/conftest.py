"""Builders for the classification tests: low-rank matrices in the model's (log) space and in raw
space, generated here independently of the engine."""

from __future__ import annotations

import numpy as np
import pytest


def log_low_rank(seed: int, m: int, n: int, rank: int, *, scale: float = 0.3) -> np.ndarray:
    """exp(μ + b_u + c_i + U Vᵀ): positive, exactly low-rank after the log normalisation."""
    r = np.random.default_rng(seed)
    z = (r.normal(size=(m, rank)) @ r.normal(size=(rank, n))) * scale
    z += r.normal(size=(m, 1)) + 0.3 * r.normal(size=(1, n)) + 2.0
    return np.exp(z)


def raw_low_rank(seed: int, m: int, n: int, rank: int) -> np.ndarray:
    """U Vᵀ with positive (gamma) factors: low-rank and positive in raw space."""
    r = np.random.default_rng(seed)
    return r.gamma(2.0, 1.0, size=(m, rank)) @ r.gamma(2.0, 1.0, size=(rank, n))


def sparse_mask(seed: int, m: int, n: int, dense: int, lo: int, hi: int) -> np.ndarray:
    """`dense` full rows, the others with lo..hi known cells at random."""
    r = np.random.default_rng(seed + 10_000)
    mask = np.zeros((m, n), dtype=bool)
    mask[:dense] = True
    for i in range(dense, m):
        mask[i, r.choice(n, int(r.integers(lo, hi + 1)), replace=False)] = True
    return mask


@pytest.fixture(scope="session")
def builders() -> object:
    class B:
        log_low_rank = staticmethod(log_low_rank)
        raw_low_rank = staticmethod(raw_low_rank)
        sparse_mask = staticmethod(sparse_mask)

    return B
