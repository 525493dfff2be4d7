"""Interference plugins (Paragon §3.2; spec paragon.md §3.2 and §9 items 3–6).

Per source k, for server s and newcomer n (scores 0..100, `INTERFERENCE_SOURCES` order;
t_server = min over residents of tolerated, c_server = Σ over residents of caused — the per-server
aggregates `evolve` maintains; an empty server has t = 100 and c = 0):

    D1(k) = t_server(k) − c_new(k)   can the residents tolerate what the newcomer causes?
    D2(k) = t_new(k) − c_server(k)   can the newcomer tolerate what the residents cause?

Filters `interference-d1` / `interference-d2` keep servers with D(k) ≥ −slack on every source
(`slack` ≥ 0, default 0: Paragon's strict filter; the planner's backtracking relaxes it in steps).
Paragon filters source by source in order of difficulty: D1 by decreasing c_new(k) ("most
difficult to satisfy first"); D2 [GAP, our choice] by increasing t_new(k) (least tolerant first);
ties by canonical source order. Without backtracking the surviving set does not depend on the
order (a server survives iff every source passes), so the filter is one columnar pass; the order
decides which constant reason a rejected server gets — the first violated source in difficulty
order, e.g. `d1_llc_cap` — exactly the SoI at which Paragon's sequential filter drops it.

Scores:
- `least-added-pressure`: the server where the newcomer adds to the least pressure
  ([IMPL CHOICE], a spreading score; pressure after placement is c_server(k) + c_new(k)):
      score = 100 · (1 − mean_k min(1, max(0, c_server(k) + c_new(k)) / 100))
- `interference-fit`: Paragon's final step (§3.2 step 6), best fit = least slack: minimise
  ‖D1 + D2‖_L1. With D1, D2 ≤ 100 per source, |D1 + D2| ≤ 200 on feasible servers, so
      score = 100 · (1 − min(1, Σ_k |D1(k) + D2(k)| / (200 · 10)))
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field
from sextant_contracts.model import INTERFERENCE_SOURCES

from ..framework import FilterVerdict, PluginArgs
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import BoolArray, CandidateTable, FloatArray, IntArray

S = len(INTERFERENCE_SOURCES)


def d1_margins(tolerated_min: FloatArray, caused_new: FloatArray) -> FloatArray:
    """D1 per (row, source): t_server − c_new, shape (n, S)."""
    out: FloatArray = tolerated_min - caused_new[None, :]
    return out


def d2_margins(tolerated_new: FloatArray, caused_sum: FloatArray) -> FloatArray:
    """D2 per (row, source): t_new − c_server, shape (n, S)."""
    out: FloatArray = tolerated_new[None, :] - caused_sum
    return out


def d1_order(caused_new: FloatArray) -> IntArray:
    """Sources by decreasing caused pressure of the newcomer (ties: canonical order)."""
    return np.argsort(-np.asarray(caused_new), kind="stable").astype(np.int64)


def d2_order(tolerated_new: FloatArray) -> IntArray:
    """Sources by increasing tolerance of the newcomer (ties: canonical order)."""
    return np.argsort(np.asarray(tolerated_new), kind="stable").astype(np.int64)


def d1_violations(tolerated_min: FloatArray, caused_new: FloatArray, slack: float = 0.0) -> BoolArray:
    """(n, S) True where D1 < −slack, i.e. t_server < c_new − slack (no margin array built)."""
    out: BoolArray = tolerated_min < (caused_new - slack)[None, :]
    return out


def d2_violations(tolerated_new: FloatArray, caused_sum: FloatArray, slack: float = 0.0) -> BoolArray:
    """(n, S) True where D2 < −slack, i.e. c_server > t_new + slack."""
    out: BoolArray = caused_sum > (tolerated_new + slack)[None, :]
    return out


# position in the difficulty order of the highest set bit of a packed row (S − bit length),
# and S (the index of the −1 appended to `order`) for a row with no bit set
_FIRST = np.array([S - v.bit_length() if v else S for v in range(1 << S)], dtype=np.int64)


def first_violation(bad: BoolArray, order: IntArray) -> tuple[BoolArray, IntArray]:
    """(pass mask, code) from the (n, S) violation matrix: a row passes iff it violates no
    source; a failing row's code is its first violated source (canonical index) in `order`,
    −1 on passing rows.

    Vectorised without per-row reductions: each row's violations are packed into one number
    with bit S−1−position(k) for source k, so the highest set bit is the first violation in
    `order` (exact, even in float32: sums of distinct powers of two below 2^10); a table of the 2^S
    packed values maps each to its code."""
    rank = np.empty(S, dtype=np.int64)
    rank[order] = np.arange(S)
    packed = (bad.astype(np.float32) @ np.ldexp(np.float32(1.0), S - 1 - rank)).astype(np.int64)  # < 2^10: exact
    codes: IntArray = np.append(np.asarray(order, dtype=np.int64), -1)[_FIRST][packed]
    passed: BoolArray = codes < 0
    return passed, codes


def added_pressure_scores(caused_sum: FloatArray, caused_new: FloatArray) -> FloatArray:
    after = caused_sum + caused_new[None, :]  # one (n, S) temporary, then in place (see fit_scores)
    after *= 0.01
    np.clip(after, 0.0, 1.0, out=after)
    out: FloatArray = 100.0 * (1.0 - after @ np.full(S, 1.0 / S))
    return out


def fit_scores(tolerated_min: FloatArray, caused_sum: FloatArray, tolerated_new: FloatArray,
               caused_new: FloatArray) -> FloatArray:
    """100 · (1 − min(1, ‖D1 + D2‖₁ / 2000)) per row, using D1 + D2 = (t_server − c_server) +
    (t_new − c_new). Computed with one (n, S) temporary updated in place: chains of fresh
    (n, S) temporaries cost several times more at 10 000 rows (allocator page faults)."""
    s = tolerated_min - caused_sum
    s += (tolerated_new - caused_new)[None, :]
    np.abs(s, out=s)
    l1 = s @ np.ones(S)
    out: FloatArray = 100.0 * (1.0 - np.minimum(1.0, l1 / (200.0 * S)))
    return out


class SlackArgs(PluginArgs):
    slack: float = Field(0.0, ge=0.0, le=100.0)


@register_plugin
class InterferenceD1:
    NAME: ClassVar[str] = "interference-d1"
    REASONS: ClassVar[tuple[str, ...]] = tuple(f"d1_{s.value}" for s in INTERFERENCE_SOURCES)
    Args: ClassVar[type[PluginArgs]] = SlackArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: SlackArgs) -> FilterVerdict:
        mask, codes = first_violation(d1_violations(table.tolerated_min, request.caused, args.slack),
                                      d1_order(request.caused))
        return FilterVerdict(mask, codes)


@register_plugin
class InterferenceD2:
    NAME: ClassVar[str] = "interference-d2"
    REASONS: ClassVar[tuple[str, ...]] = tuple(f"d2_{s.value}" for s in INTERFERENCE_SOURCES)
    Args: ClassVar[type[PluginArgs]] = SlackArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: SlackArgs) -> FilterVerdict:
        mask, codes = first_violation(d2_violations(request.tolerated, table.caused_sum, args.slack),
                                      d2_order(request.tolerated))
        return FilterVerdict(mask, codes)


@register_plugin
class LeastAddedPressure:
    NAME: ClassVar[str] = "least-added-pressure"
    Args: ClassVar[type[PluginArgs]] = PluginArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FloatArray:
        return added_pressure_scores(table.caused_sum, request.caused)


@register_plugin
class InterferenceFit:
    NAME: ClassVar[str] = "interference-fit"
    Args: ClassVar[type[PluginArgs]] = PluginArgs

    def score(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FloatArray:
        return fit_scores(table.tolerated_min, table.caused_sum, request.tolerated, request.caused)
