"""SumVar: split a budget across stages by greedy descent on the sum of variances (jalaparti.md §5.3).

Minimise `Σ_s V̄_s(r_s)` subject to `Σ_s c_s r_s ≤ B` (eq. 5.3) where `V̄_s` are the stages' hull
curves and `c_s` their costs. The budget is cut into `γN` equal chunks `δ = B / (γN)` (γ ∈ [2, 4]);
each chunk goes to the stage whose curve drops most when its fraction grows by `δ / c_s`. A heap of
gains makes an iteration O(log N): only the stage that received the chunk changes its gain. A
stage's fractions and gains along the way do not depend on the other stages, so they are computed
before the loop, vectorised (`_paths`); the allocation is the one of giving one chunk at a time
and evaluating the curves then, bit for bit (`test_kwiken_sumvar_paths.py`).

Choices where the thesis is silent (each tested in `libs/core/tests/kwiken/test_kwiken_sumvar.py`):

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
    caps = np.array([cv.max_r for cv in curves])
    path, value = _paths(curves, delta / c, caps, chunks)
    gain = value[:, :-1] - value[:, 1:]  # gain[s, k]: what the (k+1)-th chunk given to s takes off
    at = [0] * n  # chunks received so far: stage s is at r = path[s, at[s]]
    cap = caps.tolist()
    heap = [(-gain.item(s, 0), s, path.item(s, 1)) for s in range(n) if ok[s] and cap[s] > 0]
    heapq.heapify(heap)
    for _ in range(chunks):
        if not heap or -heap[0][0] <= 0:
            break
        _, s, new = heapq.heappop(heap)
        k = at[s] = at[s] + 1
        if new < cap[s]:
            heapq.heappush(heap, (-gain.item(s, k), s, path.item(s, k + 1)))
    rows = np.arange(n)
    r = path[rows, at]
    return Allocation(r, float(c @ r), float(sum(value[rows, at].tolist())))


def _paths(curves: Sequence[Curve], step: np.ndarray, caps: np.ndarray, chunks: int) -> tuple[np.ndarray, np.ndarray]:
    """Per stage (a row), the fractions it passes through as it receives chunks one at a time
    (`r_0 = 0`, `r_{k+1} = min(cap, r_k + δ/c_s)`, the additions made left to right as a loop giving
    one chunk at a time makes them) and `V̄_s` at each. A stage's path does not depend on the other
    stages, so all are computed at once (one `np.interp` call per stage: the same arithmetic as
    one call per point) and the greedy loop only reads them. Rows run until every stage has
    reached its cap or for `chunks + 1` steps (the loop looks one step past the last chunk)."""
    n = len(curves)
    need = np.minimum(chunks + 1, np.floor(np.maximum(caps, 0.0) / step) + 2)  # steps to the cap, and one
    for m in (int(need.max()), chunks + 1):
        path = np.zeros((n, m + 1))
        np.cumsum(np.broadcast_to(step[:, None], (n, m)), axis=1, out=path[:, 1:])
        np.minimum(path[:, 1:], caps[:, None], out=path[:, 1:])
        if m == chunks + 1 or np.all(path[:, -1] >= caps):  # else a rounding left a stage short
            break
    value = np.empty_like(path)
    for s, cv in enumerate(curves):
        value[s] = cv(path[s])
    return path, value


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
