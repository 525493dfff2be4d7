"""SumVar's precomputed per-stage paths decide exactly as the one-chunk-at-a-time loop did.

`_reference` is SumVar as it was before the paths (two `np.interp` calls per chunk): the same
curves, costs, budget, γ and eligible stages must give the same `r` bit for bit, the same spent
work and the same predicted variance, on reissue curves of several shapes and sizes and on
loss-like curves that end below 1.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import cache

import numpy as np
import pytest
from sextant_core.kwiken.curves import Curve
from sextant_core.kwiken.reissue import reissue_curve
from sextant_core.kwiken.sumvar import Allocation, sumvar


def _reference(curves: Sequence[Curve], c: np.ndarray, b: float, gamma: float,
               eligible: Sequence[bool] | None = None) -> Allocation:
    n = len(curves)
    ok = np.ones(n, bool) if eligible is None else np.asarray(eligible, bool)
    chunks = int(round(gamma * n))
    delta = b / chunks
    r = np.zeros(n)
    caps = np.array([cv.max_r for cv in curves])

    def step(s: int) -> tuple[float, float]:
        new = min(caps[s], r[s] + delta / c[s])
        return float(curves[s](r[s]) - curves[s](new)), new

    heap: list[tuple[float, int, float]] = []
    for s in range(n):
        if ok[s] and r[s] < caps[s]:
            g, new = step(s)
            heap.append((-g, s, new))
    heapq.heapify(heap)
    for _ in range(chunks):
        if not heap or -heap[0][0] <= 0:
            break
        _, s, new = heapq.heappop(heap)
        r[s] = new
        if r[s] < caps[s]:
            g, nxt = step(s)
            heapq.heappush(heap, (-g, s, nxt))
    return Allocation(r, float(c @ r), float(sum(float(cv(x)) for cv, x in zip(curves, r, strict=True))))


@cache
def _stages(n: int, seed: int) -> tuple[tuple[Curve, ...], np.ndarray]:
    """`n` reissue curves of lognormal stages with a slow mode of 0–5 % (400 samples each), and
    lognormal costs normalised to sum 1."""
    rng = np.random.default_rng([seed, n])
    curves = []
    for s in range(n):
        x = rng.lognormal(np.log(rng.uniform(1, 100)), rng.uniform(0.2, 1.2), 400)
        slow = rng.random(400) < rng.uniform(0, 0.05)
        curves.append(reissue_curve(np.where(slow, x * rng.uniform(5, 30), x), seed=s))
    c = rng.lognormal(0, 1, n)
    return tuple(curves), c / c.sum()


def _loss_like(n: int, seed: int) -> tuple[list[Curve], np.ndarray]:
    """Falling curves on [0, 0.002] (a loss grid) with flat stretches: caps far below 1, zero gains."""
    rng = np.random.default_rng([seed, 7])
    grid = np.array([0.0, 5e-4, 1e-3, 2e-3])
    curves = []
    for _ in range(n):
        drops = rng.choice([0.0, 1.0, 10.0, 100.0], size=3) * rng.random(3)
        v = 500.0 - np.concatenate(([0.0], np.cumsum(drops)))
        curves.append(Curve.of(grid, v, ("wait-all",) * 4))
    return curves, np.ones(n)


def _same(a: Allocation, b: Allocation) -> None:
    assert a.r.dtype == b.r.dtype and a.r.shape == b.r.shape
    assert a.r.tobytes() == b.r.tobytes()
    assert a.spent == b.spent and a.sum_var == b.sum_var


@pytest.mark.parametrize("n", [1, 3, 10, 40, 150])
@pytest.mark.parametrize("budget", [0.01, 0.05, 0.4, 1.0])
@pytest.mark.parametrize("gamma", [2.0, 3.0, 4.0])
def test_the_paths_give_the_one_chunk_loops_allocation_bit_for_bit(n: int, budget: float, gamma: float) -> None:
    curves, c = _stages(n, 6 + n % 5)
    _same(sumvar(curves, c, budget, gamma=gamma), _reference(curves, c, budget, gamma))


@pytest.mark.parametrize("seed", range(6, 11))
def test_the_paths_agree_with_ineligible_stages_and_unnormalised_costs(seed: int) -> None:
    curves, c = _stages(40, seed)
    rng = np.random.default_rng(seed)
    ok = list(rng.random(40) < 0.7)
    cost = c * rng.uniform(0.5, 50)
    for b in (0.03, 0.3):
        _same(sumvar(curves, cost, b, gamma=3.0, eligible=ok), _reference(curves, cost, b, 3.0, ok))


@pytest.mark.parametrize("seed", range(6, 11))
def test_the_paths_agree_on_loss_curves_that_end_below_one(seed: int) -> None:
    curves, c = _loss_like(12, seed)
    for b in (1e-4, 1e-3, 0.05):  # 0.05 runs every stage to its cap, 1e-4 stops on flat stretches
        got, want = sumvar(curves, c, b, gamma=2.5), _reference(curves, c, b, 2.5)
        _same(got, want)
    assert np.all(sumvar(curves, c, 0.05, gamma=2.5).r <= 2e-3)
