"""Placement that satisfices: among the servers predicted to meet the target with a margin, the
quietest and emptiest — not the best-ranked (the `sextant` planner's single-node choice).

Ranking every feasible server by predicted quality and packing sends every workload to the
best-predicted platform and fills its servers first; the predictions there are as uncertain as
anywhere, so the errors pile up on the same crowded servers. A server that meets the target is
good enough; what decides between the good-enough ones is what the prediction is least sure of
— interference — and what keeps the cell able to take the next workloads — room. This is the
order the twin's yardstick (the oracle, which places with the truth) uses; the planner applies
it to its own predictions only (the classification rows and the state's per-server aggregates).

For one workload with requirement R (`targets.py`) and per server s its predicted interference
factor f(s) and base(s) = H(platform) · f(s) (`assess.py`), with a margin

    m = margin + confidence_margin · (1 − confidence)     confidence: the lower of the workload's
                                                          heterogeneity and interference confidences

1. **Sure rows**: each feasible row (it passed every filter of the single-node pass: room, D1,
   ARQ pool, predicted ratio ≥ 1) is sized again for R · (1 + m) (`quasar_sizing.size_rows`);
   the rows where that size fits are *sure*, sized so. If no row is sure, every feasible row
   counts, at its size for R (the target is still predicted met, with less margin).
2. **Order** among them (a lexicographic sort):
   - quietest: f(s) in buckets of `quiet_bucket` (descending);
   - emptiest: cores in use (capacity − free, ascending);
   - best platform × interference: base(s) in relative buckets of `platform_bucket`
     (⌊ln base / ln(1 + platform_bucket)⌋, descending);
   - the row (server id): the deterministic tie-break.

Version 9.4 (`platform_tier`): with a heterogeneity confidence below 1 a first key comes before
these — the rows of platforms whose predicted level H(p) is more than `platform_tier` below the
best level among the rows ordered come last. Paragon's QoS bar is 95 % of the best platform's
performance: with estimated levels the workload's predicted best platform is the likeliest to
clear it, and a slower one predicted to meet the target with more cores mostly does not (the
twin's per-core speed caps what cores beyond the workload's threads give).

[IMPL CHOICE] the confidence enters as a wider margin, not as a different order: a workload
whose rows are uncertain asks for more predicted headroom before a server counts as sure. The
estimate port reports confidence 1 (margin = `margin`); the classification engine reports its
per-classification confidence (`classification/foldin.py`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..placement.plugins.quasar_sizing import size_rows
from .arrays import FloatArray, IntArray


@dataclass(frozen=True, slots=True)
class SatisficeParams:
    """Tunables of the satisficing choice. `margin` was chosen on paragon-ec2-2500 seeds 1–2 (QoS
    met, `sextant-true-rows` / `sextant` on the estimate port): 0 → 0.800, 0.806 / 0.737, 0.739;
    0.02 → 0.791, 0.786 / 0.734, 0.751; 0.05 → 0.768, 0.760 (true rows). Ordering by cores in use
    before interference measured 0.793, 0.782 (true rows, margin 0.02): the oracle's order stays.
    `confidence_margin` is not tuned yet (the port reports confidence 1; the engine's runs are to
    come)."""

    margin: float = 0.0  # predicted ratio ≥ 1 + margin for a sure row
    confidence_margin: float = 0.05  # + this × (1 − confidence)
    quiet_bucket: float = 0.005  # f(s) buckets
    platform_bucket: float = 0.02  # relative base(s) buckets
    # version 9.4: with a heterogeneity confidence below 1, the rows whose platform's predicted
    # level H(p) is below (1 − platform_tier) × the best level among the feasible rows come after
    # all the others (a first key of the order); 0: off
    platform_tier: float = 0.0

    def __post_init__(self) -> None:
        if self.margin < 0 or self.confidence_margin < 0:
            raise ValueError("margins must be >= 0")
        if not 0.0 <= self.platform_tier < 1.0:
            raise ValueError("platform_tier must be in [0, 1)")
        if self.quiet_bucket <= 0 or self.platform_bucket <= 0:
            raise ValueError("buckets must be > 0")


def margin_for(params: SatisficeParams, confidence: Mapping[str, float] | None) -> float:
    """m = margin + confidence_margin · (1 − c), c = min of the heterogeneity and interference
    confidences in 0..1 (1 when the classification reports none)."""
    c = 1.0
    if confidence:
        vals = [float(confidence[k]) for k in ("heterogeneity", "interference") if k in confidence]
        if vals:
            c = min(1.0, max(0.0, min(vals)))
    return params.margin + params.confidence_margin * (1.0 - c)


@dataclass(frozen=True, slots=True)
class Choice:
    rows: IntArray  # the first `k` candidate rows in satisficing order (best first)
    sized: IntArray  # their sized cores
    ratio: FloatArray  # their predicted ratio to R at that size
    sure: bool  # the rows met R · (1 + m)


def first_k(keys: tuple[FloatArray | IntArray, ...], k: int) -> IntArray:
    """The positions of the `k` smallest entries in the lexicographic order of `keys` (first key
    first; the last key must be unique) — what `np.lexsort(keys[::-1])[:k]` gives, by k rounds
    of successive minima (a few O(n) passes each, no O(n log n) sort of every row)."""
    n = len(keys[0])
    alive = np.ones(n, dtype=np.bool_)
    out: list[int] = []
    for _ in range(min(k, n)):
        idx = np.flatnonzero(alive)
        for key in keys:
            v = key[idx]
            idx = idx[v == v.min()]
            if len(idx) == 1:
                break
        out.append(int(idx[0]))
        alive[idx[0]] = False
    return np.array(out, dtype=np.int64)


def satisficing_order(feasible: IntArray, *, base: FloatArray, factor: FloatArray, used: IntArray,
                      free_cores: IntArray, sized: IntArray, ratio: FloatArray, required: float,
                      curve: FloatArray, margin: float, params: SatisficeParams, k: int = 5,
                      level: FloatArray | None = None, min_cores: int = 0) -> Choice | None:
    """The first `k` feasible rows (indices into the columns) in satisficing order; see the
    module docstring. None when `feasible` is empty. `level` (version 9.4): the predicted
    platform level H(p) per row, to put the rows of platforms more than `platform_tier` below the
    best feasible one last; `min_cores` (9.4): the sizing floor (`assess.floor_cores`), applied
    to the rows sized again for the margin."""
    if len(feasible) == 0:
        return None
    rows = feasible
    s_rows, r_rows = sized[rows], ratio[rows]
    sure = margin <= 0
    if margin > 0 and math.isfinite(required) and required > 0:
        s_m, r_m = size_rows(base[rows], required * (1.0 + margin), curve, free_cores[rows])
        if min_cores > 1:
            s_f = np.maximum(s_m, np.minimum(min_cores, np.maximum(free_cores[rows], 0)))
            r_m = np.where(s_f != s_m, np.concatenate(([0.0], curve))[np.minimum(s_f, len(curve))] * base[rows]
                           / (required * (1.0 + margin)), r_m)
            s_m = s_f
        ok = r_m >= 1.0
        if ok.any():
            rows, s_rows, r_rows = rows[ok], s_m[ok], r_m[ok] * (1.0 + margin)
            sure = True
    quiet = np.floor(factor[rows] / params.quiet_bucket + 1e-9)
    level_key = np.floor(np.log(np.maximum(base[rows], 1e-300)) / math.log1p(params.platform_bucket) + 1e-9)
    keys: tuple[FloatArray | IntArray, ...] = (-quiet, used[rows], -level_key, rows)
    if level is not None and params.platform_tier > 0:
        lv = level[rows]
        keys = ((lv < (1.0 - params.platform_tier) * float(lv.max())).astype(np.int64), *keys)
    top = first_k(keys, k)
    return Choice(rows=rows[top], sized=s_rows[top], ratio=r_rows[top], sure=sure)
