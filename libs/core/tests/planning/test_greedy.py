"""Paragon's greedy search with backtracking (planning/greedy.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.placement import Budget
from sextant_core.planning.greedy import D1, D2, GreedyParams, levels, search, select

from .conftest import SOURCES, row10

K = {s: i for i, s in enumerate(SOURCES)}


def test_levels_follow_difficulty() -> None:
    caused = np.array(row10(0, llc_cap=40, core=60))     # D1: core (60), llc_cap (40), then canonical order
    tolerated = np.array(row10(100, tlb=20, l1i=50))     # D2: tlb (20), l1i (50), then canonical order
    lv = levels(caused, tolerated)
    assert lv[:2] == [(D1, K["core"]), (D1, K["llc_cap"])] and lv[2] == (D1, 0)
    assert lv[10:12] == [(D2, K["tlb"]), (D2, K["l1i"])] and len(lv) == 20


def margins(n: int, **cols: list[float]) -> np.ndarray:
    m = np.full((n, 10), 50.0)
    for s, v in cols.items():
        m[:, K[s]] = v
    return m


def test_strict_search_without_backtracking() -> None:
    d1 = margins(3, core=[5, -1, 5])
    d2 = margins(3, tlb=[2, 2, -3])
    res = search(d1, d2, np.array(row10(0, core=10)), np.array(row10(100)), np.ones(3, bool),
                 GreedyParams(), Budget(10_000))
    assert res.candidates.tolist() == [True, False, False]
    assert res.backtracks == 0 and res.removed == {D1: {"d1_core": 1}, D2: {"d2_tlb": 1}}
    assert res.depth == 20 and not res.exhausted


def test_backtracking_relaxes_the_previous_level_first() -> None:
    # levels: D1 core first (c_new core = 30), then D1 llc_cap (20). Row 0 fails core by 4, row 1
    # fails llc_cap by 3 and passes core. At level 2 (llc_cap) only row 1 is left and fails → revert
    # to level 1 (core), relax 5: row 0 (−4 ≥ −5) comes back and passes llc_cap strictly.
    d1 = margins(2, core=[-4, 10], llc_cap=[5, -3])
    res = search(d1, margins(2), np.array(row10(0, core=30, llc_cap=20)), np.array(row10(100)),
                 np.ones(2, bool), GreedyParams(step=5, max_relax=25), Budget(10_000))
    assert res.candidates.tolist() == [False, False] or res.candidates.tolist() == [True, False]
    assert res.candidates.tolist() == [True, False]
    assert res.backtracks == 1 and res.relaxed == {"d1_core": 5.0}


def test_backtracking_relaxes_the_failing_level_when_earlier_ones_cannot_help() -> None:
    # one row, fails D1 core by 7: relaxing earlier levels is useless → the level itself: 5, then 10
    d1 = margins(1, core=[-7])
    res = search(d1, margins(1), np.array(row10(0, core=30)), np.array(row10(100)), np.ones(1, bool),
                 GreedyParams(step=5, max_relax=25), Budget(10_000))
    assert res.candidates.tolist() == [True] and res.relaxed == {"d1_core": 10.0}


def test_least_violation_beyond_the_relaxation_bound() -> None:
    d1 = margins(3, core=[-40, -30, -60])
    res = search(d1, margins(3), np.array(row10(0, core=90)), np.array(row10(100)), np.ones(3, bool),
                 GreedyParams(step=5, max_relax=10), Budget(100_000))
    assert res.candidates.tolist() == [False, True, False]  # −30 is the least violation
    assert res.least_violation


def test_a_second_least_violation_reproduces_the_first() -> None:
    # one row: level 0 (core, c_new 90) violates by 30 > max_relax 10 → least violation, slack 30;
    # level 1 (llc_cap, c_new 80) violates by 40 → least violation again, which recomputes level 0:
    # with slack 30 the row survives it (before the fix, slack 10 emptied it and the search indexed
    # a level that no longer existed — the IndexError of the paragon profile)
    d1 = margins(1, core=[-30], llc_cap=[-40])
    res = search(d1, margins(1), np.array(row10(0, core=90, llc_cap=80)), np.array(row10(100)), np.ones(1, bool),
                 GreedyParams(step=5, max_relax=10), Budget(100_000))
    assert res.candidates.tolist() == [True] and res.least_violation and res.depth == 20
    assert res.relaxed == {"d1_core": 30.0, "d1_llc_cap": 40.0}


def test_budget_exhaustion_keeps_the_rows_examined_so_far() -> None:
    d1 = margins(4, core=[5, 5, 5, 5], llc_cap=[5, -1, 5, 5])
    # a strict pass over 4 rows at every level: level 1 charges 4, level 2 charges 4 → 8 ≥ 6: stop
    res = search(d1, margins(4), np.array(row10(0, core=9, llc_cap=8)), np.array(row10(100)), np.ones(4, bool),
                 GreedyParams(), Budget(6))
    assert res.exhausted and res.depth == 2
    assert res.candidates.tolist() == [True, False, True, True]


def test_select_best_platform_then_best_fit_then_server_id() -> None:
    cand = np.array([True, True, True, True, False])
    code = np.array([0, 1, 1, 1, 1])
    perf = np.array([1.0, 2.0])             # platform 1 is better
    d1 = np.zeros((5, 10))
    d2 = np.zeros((5, 10))
    d1[1, 0], d1[2, 0], d1[3, 0] = 30, 10, 10  # L1 = 30, 10, 10 on platform 1 → rows 2 and 3 tie → 2
    assert select(cand, code, perf, d1, d2) == 2
    assert select(np.array([True, False, False, False, False]), code, perf, d1, d2) == 0  # fallback platform
    assert select(np.zeros(5, bool), code, perf, d1, d2) is None


@pytest.mark.parametrize("bad", [dict(step=0.0), dict(max_relax=-1.0)])
def test_params_are_validated(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        GreedyParams(**bad)
