"""Paragon's greedy server selection with backtracking (Paragon §3.2; spec paragon.md §3.2, §9
items 5–7), columnar: each level is one vectorised pass over the rows still in the running.

**Levels.** D1 per source in decreasing c_new ("most difficult to satisfy first"), then D2 per
source in increasing t_new ([GAP] item 5: the natural order, least tolerant first) — 20 levels.
At level i the survivors are the rows of level i−1 with margin(k_i) ≥ −slack_i.

**Backtracking** (when level i leaves no survivor; [GAP] item 6, the spec's proposal): revert to
the previous level i−1 and relax it by `step` points (5 % of full scale) until level i, strict
again, has survivors, up to `max_relax`; then extend to the level before (i−2, ... 0), each time
recomputing the levels in between; if every earlier level is at `max_relax`, relax level i itself
the same way; if that fails too, level i keeps its least-violating rows (those with the largest
margin) and the search continues ("best candidate found"); that level's slack is then the
violation it accepted (reported in `relaxed`, beyond `max_relax`), so that later backtracking,
which recomputes the levels before it, reproduces the same survivors. Every pass charges the rows it
examines to the work budget (DESIGN §5: candidates examined, never a clock).

**Budget exhausted** (Paragon's timeout, "[GAP] the timeout value"): the survivors of the deepest
level reached are the candidates — "the best server from the ones already examined is selected
in the way previously described".

**Selection** (§3.2 steps 5–6): among the candidates, the best predicted platform that has any
([GAP] item 7, the proposal: fall back down the predicted ranking), then the least
‖D1 + D2‖₁ over sources (best fit), then the smallest row (server id).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sextant_contracts.model import INTERFERENCE_SOURCES

from ..placement.framework import Budget
from ..placement.plugins.interference import d1_order, d2_order
from .arrays import BoolArray, FloatArray, IntArray

SOURCES = tuple(s.value for s in INTERFERENCE_SOURCES)
D1, D2 = "interference-d1", "interference-d2"


@dataclass(frozen=True, slots=True)
class GreedyParams:
    step: float = 5.0
    max_relax: float = 25.0

    def __post_init__(self) -> None:
        if self.step <= 0 or self.max_relax < 0:
            raise ValueError("step must be > 0 and max_relax >= 0")


@dataclass(slots=True)
class GreedyResult:
    row: int | None
    candidates: BoolArray
    backtracks: int = 0
    relaxed: dict[str, float] = field(default_factory=dict)  # level reason -> slack used (> 0 only)
    removed: dict[str, dict[str, int]] = field(default_factory=dict)  # filter -> reason -> rows
    exhausted: bool = False
    least_violation: bool = False  # some level kept only its least-violating rows
    depth: int = 0  # levels completed


def levels(caused_new: FloatArray, tolerated_new: FloatArray) -> list[tuple[str, int]]:
    """(filter, source index) in Paragon's order of difficulty."""
    return [(D1, int(k)) for k in d1_order(caused_new)] + [(D2, int(k)) for k in d2_order(tolerated_new)]


def _reason(level: tuple[str, int]) -> str:
    return ("d1_" if level[0] == D1 else "d2_") + SOURCES[level[1]]


class _Search:
    def __init__(self, d1: FloatArray, d2: FloatArray, order: list[tuple[str, int]], start: BoolArray,
                 params: GreedyParams, budget: Budget) -> None:
        self.m = [d1[:, k] if f == D1 else d2[:, k] for f, k in order]
        self.order = order
        self.slack = np.zeros(len(order))
        self.alive: list[BoolArray] = [start]
        self.params = params
        self.budget = budget
        self.backtracks = 0
        self.least = False

    def level(self, i: int, slack: float) -> BoolArray:
        cur = self.alive[i]
        self.budget.charge(int(np.count_nonzero(cur)))
        out: BoolArray = cur & (self.m[i] >= -slack)
        return out

    def redo(self, j: int, i: int) -> BoolArray | None:
        """Recompute levels j..i−1 with their slack; the strict survivors of level i (or None)."""
        del self.alive[j + 1:]
        for lv in range(j, i):
            nxt = self.level(lv, self.slack[lv])
            if not nxt.any():
                return None
            self.alive.append(nxt)
        cand = self.level(i, self.slack[i])
        return cand if cand.any() else None

    def backtrack(self, i: int) -> BoolArray | None:
        self.backtracks += 1
        p = self.params
        for j in [*range(i - 1, -1, -1), i]:
            while self.slack[j] < p.max_relax and not self.budget.exhausted:
                self.slack[j] = min(self.slack[j] + p.step, p.max_relax)
                cand = self.redo(j, i) if j < i else self.redo(i, i)
                if cand is not None:
                    return cand
            if self.budget.exhausted:
                return None
        # nothing within the relaxation bound: keep level i's least-violating rows
        self.redo(0, i)
        cur = self.alive[i] if len(self.alive) > i else self.alive[-1]
        if not cur.any():
            return None
        best = float(self.m[i][cur].max())
        self.least = True
        # the level's slack becomes the violation it accepted, so a later `redo` through this
        # level reproduces exactly these survivors (and never comes back empty)
        self.slack[i] = max(float(self.slack[i]), -best)
        out: BoolArray = cur & (self.m[i] >= -self.slack[i])
        return out


def search(d1: FloatArray, d2: FloatArray, caused_new: FloatArray, tolerated_new: FloatArray,
           start: BoolArray, params: GreedyParams, budget: Budget) -> GreedyResult:
    """The candidate set after the 20 interference levels (see the module docstring)."""
    order = levels(caused_new, tolerated_new)
    s = _Search(d1, d2, order, start, params, budget)
    exhausted = False
    i = 0
    while i < len(order) and s.alive[-1].any():
        if budget.exhausted:
            exhausted = True
            break
        cand = s.level(i, s.slack[i])
        if not cand.any():
            got = s.backtrack(i)
            if got is None:
                exhausted = budget.exhausted
                break
            cand = got
        del s.alive[i + 1:]
        s.alive.append(cand)
        i += 1
    final = s.alive[-1]
    removed: dict[str, dict[str, int]] = {D1: {}, D2: {}}
    for lv in range(len(s.alive) - 1):
        n = int(np.count_nonzero(s.alive[lv] & ~s.alive[lv + 1]))
        if n:
            removed[order[lv][0]][_reason(order[lv])] = n
    relaxed = {_reason(order[k]): float(s.slack[k]) for k in range(len(order)) if s.slack[k] > 0}
    return GreedyResult(row=None, candidates=final, backtracks=s.backtracks, relaxed=relaxed, removed=removed,
                        exhausted=exhausted, least_violation=s.least, depth=len(s.alive) - 1)


def select(candidates: BoolArray, platform_code: IntArray, perf_by_code: FloatArray, d1: FloatArray,
           d2: FloatArray) -> int | None:
    """Best predicted platform with candidates, then min ‖D1 + D2‖₁, then the smallest row."""
    rows = np.flatnonzero(candidates)
    if len(rows) == 0:
        return None
    perf = np.where(np.isfinite(perf_by_code), perf_by_code, -np.inf)
    rank = np.empty(len(perf), dtype=np.int64)
    rank[np.lexsort((np.arange(len(perf)), -perf))] = np.arange(len(perf))
    l1 = np.abs(d1[rows] + d2[rows]).sum(axis=1)
    order = np.lexsort((rows, l1, rank[platform_code[rows]]))
    return int(rows[order[0]])
