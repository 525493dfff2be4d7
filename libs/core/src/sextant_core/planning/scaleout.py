"""Quasar's scale-out (Quasar §4.1 step 2–3, §4.2): when no single server meets the target, spread
the workload over the best-ranked servers — "scale up before scaling out", and "if there are not
enough top-ranked servers, lower-ranked servers are also allocated and increase their number".

Given the eligible rows (they fit a core and pass the exact D1 check), per row:

    c_full(s) = min(free cores, c_sat, ⌊free memory / GiB per core⌋)   scale up first: every useful core
    p(s)      = U(c_full(s)) · base(s)                                 its predicted node performance

where c_sat is the smallest core count reaching the top of the scale-up curve (more add nothing).
Rows are ranked by p (descending, ties by row = server id); the walk takes the top n for
n = 1, 2, … until the model's aggregate (`PerformanceModel.aggregate`: Σ for batch work, n · min
for services, times E(n)) reaches R, at most `max_servers` nodes and within the work budget. The
prefix is then trimmed to the least resources: the smallest per-node cap κ with
aggregate(U(min(cᵢ, κ)) · baseᵢ) ≥ R (bisection; the aggregate is non-decreasing in κ).

If no prefix reaches R, the prefix with the largest aggregate is returned with `met = False`
("as close as possible", Quasar §3.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..placement.framework import Budget
from ..placement.plugins.quasar_sizing import saturation
from .arrays import BoolArray, FloatArray, IntArray
from .model import PerformanceModel


@dataclass(frozen=True, slots=True)
class Spread:
    rows: tuple[int, ...]
    cores: tuple[int, ...]
    aggregate: float
    met: bool


def _aggregates(model: PerformanceModel, perfs: FloatArray) -> FloatArray:
    """Aggregate of every prefix 1..len(perfs) of per-node performances (ranked)."""
    n = np.arange(1, len(perfs) + 1, dtype=np.float64)
    eff = model.scale_outs(n)
    if model.service:
        out: FloatArray = eff * n * np.minimum.accumulate(perfs)
    else:
        out = eff * np.cumsum(perfs)
    return out


def spread(model: PerformanceModel, required: float, eligible: BoolArray, base: FloatArray, free_cores: IntArray,
           free_memory_gb: FloatArray, memory_per_core: float, max_servers: int, budget: Budget) -> Spread | None:
    """The scale-out allocation (see the module docstring); None when no row is eligible."""
    c_sat = saturation(model.curve)
    by_mem = np.floor((free_memory_gb + 1e-9) / max(memory_per_core, 1e-9)).astype(np.int64)
    full = np.minimum(np.minimum(free_cores, c_sat), by_mem)
    ok = eligible & (full >= 1)
    rows = np.flatnonzero(ok)
    if len(rows) == 0:
        return None
    perf = model.curve[full[rows] - 1] * base[rows]
    k = min(max_servers, len(rows))
    if k < len(rows):
        top = np.argpartition(-perf, k - 1)[:k]
        rows, perf = rows[top], perf[top]
    order = np.lexsort((rows, -perf))
    rows, perf = rows[order], perf[order]
    budget.charge(len(rows))
    agg = _aggregates(model, perf)
    reach = np.flatnonzero(agg >= required)
    if len(reach):
        n = int(reach[0]) + 1
        chosen = rows[:n]
        cores = _trim(model, required, full[chosen], base[chosen])
        return Spread(tuple(int(r) for r in chosen), tuple(int(c) for c in cores),
                      float(_aggregates(model, model.curve[cores - 1] * base[chosen])[-1]), True)
    n = int(np.argmax(agg)) + 1
    chosen = rows[:n]
    return Spread(tuple(int(r) for r in chosen), tuple(int(c) for c in full[chosen]), float(agg[n - 1]), False)


def _trim(model: PerformanceModel, required: float, full: IntArray, base: FloatArray) -> IntArray:
    """Per-node cores min(cᵢ, κ) for the smallest κ that still meets `required`."""
    def agg(kappa: int) -> float:
        c = np.minimum(full, kappa)
        return float(_aggregates(model, model.curve[c - 1] * base)[-1])

    lo, hi = 1, int(full.max())
    while lo < hi:
        mid = (lo + hi) // 2
        if agg(mid) >= required:
            hi = mid
        else:
            lo = mid + 1
    out: IntArray = np.minimum(full, lo)
    return out
