"""SumVar: split a budget across stages by greedy descent on the sum of variances (jalaparti.md §5.3).

Minimise `Σ_s V̄_s(r_s)` subject to `Σ_s c_s r_s ≤ B` (eq. 5.3) where `V̄_s` are the stages' hull
curves and `c_s` their costs. The budget is cut into `γN` equal chunks `δ = B / (γN)` (γ ∈ [2, 4]);
each chunk goes to the stage whose curve drops most when its fraction grows by `δ / c_s`. A heap of
gains makes an iteration O(log N): only the stage that received the chunk changes its gain.

Choices where the thesis is silent (each tested in `libs/core/tests/kwiken/test_sumvar.py`):

- `r_s` is capped at the end of its curve (1 for reissues, §9 item 11): a step that would pass it
  is shortened to reach it, spending only `c_s × (cap − r_s)`;
- a chunk is never spent on a non-positive gain: when the best gain is ≤ 0 the rest of the budget
  stays unspent (more work that does not lower the variance is not worth buying);
- ties break on the lower stage index (deterministic);
- stages with `eligible[s] = False` never receive budget (the multi-technique split, §5.2:
  reissues only off the high fan-out stages, partial answers only on them).

The result never spends more than `B` (up to float rounding of `γN·δ`, ≤ 1e-12 relative).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .curves import Curve
from .dag import KwikenInputError, check_budget

GAMMA_RANGE = (2.0, 4.0)


@dataclass(frozen=True)
class Allocation:
    """Per-stage budget fractions `r`, the work they spend `Σ c_s r_s`, and the predicted `Σ V̄_s(r_s)`."""

    r: np.ndarray
    spent: float
    sum_var: float


def check_costs(costs: Sequence[float] | np.ndarray, n: int) -> np.ndarray:
    c = np.asarray(costs, dtype=float)
    if c.shape != (n,) or not np.all(np.isfinite(c)) or np.any(c <= 0):
        raise KwikenInputError("costs", f"one positive finite cost per stage ({n}) is required")
    return c


def sumvar(curves: Sequence[Curve], costs: Sequence[float] | np.ndarray, budget: float, *, gamma: float = 3.0,
           eligible: Sequence[bool] | None = None) -> Allocation:
    """Allocate `budget` over the stages of `curves` with costs `costs` (used as given: pass
    normalised costs for a reissue budget, §5.2; composition weights for a loss budget, `budget.py`)."""
    n = len(curves)
    if n == 0:
        raise KwikenInputError("curves", "at least one stage is required")
    b = check_budget(budget)
    if not (GAMMA_RANGE[0] <= gamma <= GAMMA_RANGE[1]):
        raise KwikenInputError("gamma", f"must lie in [{GAMMA_RANGE[0]}, {GAMMA_RANGE[1]}], got {gamma}")
    c = check_costs(costs, n)
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
    spent = float(c @ r)
    return Allocation(r, spent, float(sum(float(cv(x)) for cv, x in zip(curves, r, strict=True))))


def uniform(costs: Sequence[float] | np.ndarray, budget: float) -> np.ndarray:
    """The uniform split: every stage gets the same fraction `B / Σ c_s` (= B for normalised costs)."""
    c = np.asarray(costs, dtype=float)
    return np.full(c.size, min(1.0, check_budget(budget) / float(c.sum())))


def random_allocations(costs: Sequence[float] | np.ndarray, budget: float, k: int, seed: int) -> np.ndarray:
    """`k` allocations (k × n) drawn uniformly on the budget simplex `Σ c_s r_s = B`, each `r_s` capped at 1."""
    c = np.asarray(costs, dtype=float)
    b = check_budget(budget)
    w = np.random.default_rng([seed, 10_000]).dirichlet(np.ones(c.size), size=k)
    return np.minimum(1.0, b * w / c)
