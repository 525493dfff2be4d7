"""Uncertainty-driven profiling (`profiling.adaptive`): the greedy's choice, the plan, the budget."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sextant_contracts import events as ev
from sextant_contracts.model import INTERFERENCE_SOURCES, Classification, WorkloadKind
from sextant_core.decide import DecisionContext
from sextant_core.profiling.adaptive import (
    AdaptiveProfilingPlan,
    Candidate,
    covering,
    greedy,
    weighted_variance,
)
from sextant_core.profiling.plan import DefaultProfilingPlan
from sextant_core.state import fold
from sextant_core.testing.builders import server

HET, ITF = Classification.HETEROGENEITY, Classification.INTERFERENCE
SOURCES = [s.value for s in INTERFERENCE_SOURCES]
PLATFORMS = {"H": 64.0, "M": 32.0, "S": 16.0, "T": 8.0}  # all 16 cores; H is the high end (most memory)


def _ctx(seed: int) -> DecisionContext:
    return DecisionContext(at=1.0, seed=seed, state_position=0, causation=(), profile="p", policy_version="1")


def _seeds(kind: str, het_sd: dict[str, float], itf_sd: dict[str, float], rows: int = 12) -> list[ev.Event]:
    """Dense seed rows: ln(perf_p / perf_H) ~ N(0, het_sd[p]²), scores 50 ± itf_sd[source] (tolerated
    and caused alike), from a fixed stream."""
    rng = np.random.default_rng(0)
    out: list[ev.Event] = []
    for i in range(rows):
        het = {"H": 1e9, **{p: 1e9 * float(np.exp(het_sd.get(p, 0.0) * rng.normal())) for p in "MST"}}
        tol = {s: float(np.clip(50 + itf_sd.get(s, 0.0) * rng.normal(), 0, 100)) for s in SOURCES}
        cau = {s: float(np.clip(50 + itf_sd.get(s, 0.0) * rng.normal(), 0, 100)) for s in SOURCES}
        out += [ev.KnowledgeSeeded(at=0, classification=HET, group=kind, row_id=f"h{i}", values=het),
                ev.KnowledgeSeeded(at=0, classification=ITF, group=kind, row_id=f"i{i}", values=tol, caused=cau)]
    return out


def _state(kind: WorkloadKind = WorkloadKind.BATCH, seeded: list[ev.Event] | None = None):  # type: ignore[no-untyped-def]
    events: list[ev.Event] = [server(f"{p.lower()}1", platform=p, cores=16, memory_gb=m) for p, m in PLATFORMS.items()]
    events += seeded or []
    events.append(ev.WorkloadSubmitted(at=1, workload_id="w", tenant="t", kind=kind,
                                       target={"type": "completion_time", "seconds": 9.0},
                                       spec={"type": "twin", "ref": "w"}))
    st = fold(events)
    return st, st.workloads["w"]


# --- the greedy on small priors ---------------------------------------------------------------


def _prior(cov: list[list[float]], names: str) -> tuple[np.ndarray, np.ndarray, list[Candidate]]:
    return np.array(cov), np.ones(len(names)), [Candidate(ITF, n, (i,)) for i, n in enumerate(names)]


def test_the_greedy_skips_a_redundant_column() -> None:
    # a and b are 97.5 % correlated (var 4 each), c is independent (var 1): U0 = 9.
    # measuring a removes ≈ 4 + 3.9²/4 = 7.80 of 9; then b has ≈ 0.2 left, c has 1 → c, not b.
    pri = {ITF: _prior([[4, 3.9, 0], [3.9, 4, 0], [0, 0, 1]], "abc")}
    assert greedy(pri, budget=2, min_gain=0.0, floors={}) == [(ITF, "a"), (ITF, "c")]


def test_the_greedy_stops_below_min_gain_and_at_the_budget() -> None:
    # independent variances 8, 1, 1 (U0 = 10): gains 0.8, 0.1, 0.1
    pri = {ITF: _prior([[8, 0, 0], [0, 1, 0], [0, 0, 1]], "abc")}
    assert greedy(pri, budget=3, min_gain=0.2, floors={}) == [(ITF, "a")]
    assert greedy(pri, budget=3, min_gain=0.05, floors={}) == [(ITF, "a"), (ITF, "b"), (ITF, "c")]
    assert greedy(pri, budget=2, min_gain=0.0, floors={}) == [(ITF, "a"), (ITF, "b")]  # b before c: the tie key


def test_floors_are_taken_even_without_gain_or_budget() -> None:
    pri = {ITF: _prior([[8, 0, 0], [0, 1, 0], [0, 0, 1]], "abc")}
    assert greedy(pri, budget=0, min_gain=0.5, floors={ITF: 2}) == [(ITF, "a"), (ITF, "b")]


def test_a_matrix_scale_trades_platforms_for_sources() -> None:
    # HET: one platform of var 1 (U0 = 1, gain 1.0); ITF: two sources of var 3 and 1 (U0 = 4):
    # gains 0.75 and 0.25. Scale 1: p, a, b; scale 0.5 on HET: a (0.75) before p (0.5).
    het = (np.array([[1.0]]), np.ones(1), [Candidate(HET, "p", (0,))])
    pri = {HET: het, ITF: _prior([[3, 0], [0, 1]], "ab")}
    assert greedy(pri, budget=3, min_gain=0.0, floors={}) == [(HET, "p"), (ITF, "a"), (ITF, "b")]
    assert greedy(pri, budget=3, min_gain=0.0, floors={}, scale={HET: 0.5}) == [(ITF, "a"), (HET, "p"), (ITF, "b")]


def test_weighted_variance_is_the_schur_complement() -> None:
    cov = np.array([[4.0, 2.0], [2.0, 2.0]])
    # Var(y | x measured exactly) = 2 − 2²/4 = 1; x's own variance drops to 0
    assert weighted_variance(cov, np.ones(2), [0], nugget=0.0) == pytest.approx(1.0)
    assert weighted_variance(cov, np.array([0.0, 3.0]), [], nugget=0.0) == pytest.approx(6.0)


# --- the plan ----------------------------------------------------------------------------------


def test_the_plan_buys_the_uncertain_platform_and_sources() -> None:
    # S's ratio to H varies (sd 0.5), M's and T's barely (0.01); two sources vary (sd 20), the rest
    # barely (0.5): the floors (1 platform, 2 sources) take the uncertain ones, nothing else gains 5 %
    seeded = _seeds("batch", {"S": 0.5, "M": 0.01, "T": 0.01}, {"memory_bw": 20.0, "llc_cap": 20.0})
    st, w = _state(seeded=seeded)
    runs = AdaptiveProfilingPlan().plan(st, w, _ctx(3))
    n = Counter(r.classification for r in runs)
    assert n == {Classification.SCALE_UP: 2, HET: 1, ITF: 2}
    assert [r.column for r in runs if r.classification is HET] == ["S"]
    assert sorted(r.column for r in runs if r.classification is ITF) == ["llc_cap", "memory_bw"]
    ref = runs[0]
    assert all(r.cores == ref.cores for r in runs[2:]) and all(r.platform == "H" for r in runs if r.classification is ITF)
    assert len({r.run_id for r in runs}) == len(runs)


def test_more_uncertainty_buys_more_runs_up_to_the_budget() -> None:
    sd = {s: 20.0 for s in SOURCES}  # every source uncertain, independent: each removes ~10 % of U0
    for kind, fixed in ((WorkloadKind.BATCH, 2), (WorkloadKind.ANALYTICS, 3)):  # scale-up (+ scale-out)
        st, w = _state(kind, _seeds(kind.value, {"S": 0.5, "M": 0.5, "T": 0.5}, sd))
        for max_runs in (6, 10):
            runs = AdaptiveProfilingPlan(max_runs=max_runs).plan(st, w, _ctx(1))
            assert len(runs) == max_runs  # the budget binds
            n = Counter(r.classification for r in runs)
            assert n[HET] >= 1 and n[ITF] >= 2 and n[HET] + n[ITF] == max_runs - fixed


def test_without_a_prior_the_plan_is_the_default_one() -> None:
    st, w = _state(WorkloadKind.ANALYTICS)
    base = DefaultProfilingPlan().plan(st, w, _ctx(5))
    runs = AdaptiveProfilingPlan().plan(st, w, _ctx(5))
    key = sorted((r.classification, r.column, r.platform, r.cores, r.nodes) for r in base)
    assert sorted((r.classification, r.column, r.platform, r.cores, r.nodes) for r in runs) == key


def test_the_plan_is_deterministic() -> None:
    seeded = _seeds("batch", {"S": 0.3, "M": 0.2, "T": 0.1}, {s: 5.0 + i for i, s in enumerate(SOURCES)})
    st, w = _state(seeded=seeded)
    plan = AdaptiveProfilingPlan()
    assert plan.plan(st, w, _ctx(4)) == plan.plan(st, w, _ctx(4))
    st2, w2 = _state(seeded=seeded)  # the same log folded again
    assert plan.plan(st2, w2, _ctx(4)) == plan.plan(st, w, _ctx(4))
    assert AdaptiveProfilingPlan().plan(st, w, _ctx(4)) == plan.plan(st, w, _ctx(4))  # a fresh memo: the same plan
    other = _seeds("batch", {"S": 0.01, "M": 0.6, "T": 0.01}, {"core": 20.0, "tlb": 20.0})
    st3, w3 = _state(seeded=other)  # other seed rows (another digest): another choice, not a remembered one
    assert [r.column for r in plan.plan(st3, w3, _ctx(4))][2:] == ["M", "core", "tlb"]


def test_the_registered_profile_uses_the_adaptive_plan() -> None:
    from sextant_core.planning.policysets import ADAPTIVE_PROFILING
    from sextant_core.profiles import policy_set

    assert policy_set("sextant-adaptive-profiling").profiling is ADAPTIVE_PROFILING
    assert ADAPTIVE_PROFILING.max_runs == 10 and ADAPTIVE_PROFILING.platform_weight == 20.0


def test_sextant_9_profiles_with_the_adaptive_plan_and_8_with_the_papers() -> None:
    from sextant_core.planning.policysets import ADAPTIVE_PROFILING, DENSE_PROFILING
    from sextant_core.profiles import policy_set

    now = policy_set("sextant")
    assert now.version == "9.4" and now.profiling is ADAPTIVE_PROFILING
    for old in ("8", "7", "6.1"):  # logs recorded under them replay with the papers' plan
        plan = policy_set(f"sextant@{old}").profiling
        assert type(plan) is DefaultProfilingPlan and plan.entries == 2
    assert policy_set("sextant-dense").profiling is DENSE_PROFILING  # a profile's own plan wins


def test_the_remembered_prefix_is_a_fresh_scan() -> None:
    from sextant_core.profiling.adaptive import dense_prefix

    st, _ = _state(seeded=_seeds("batch", {"S": 0.3}, {}, rows=9))
    kb, plan, cols = st.knowledge, AdaptiveProfilingPlan(), ["H", "M", "S", "T"]
    m = kb.matrix(HET, "batch")
    assert m is not None and plan.dense(m, cols) is not None and len(plan.dense(m, cols)[0]) == 9  # type: ignore[index]
    # a dense row appended after the seeds lengthens the prefix; a sparse one then stops it
    for row_id, values in (("x", {"H": 1.0, "M": 2.0, "S": 3.0, "T": 4.0}), ("y", {"H": 1.0}),
                           ("z", {"H": 1.0, "M": 2.0, "S": 3.0, "T": 4.0})):
        kb = kb.append(HET, "batch", row_id, values.items())
        m = kb.matrix(HET, "batch")
        assert m is not None
        got, fresh = plan.dense(m, cols), dense_prefix(m, cols)
        assert got is not None and got[1] == fresh[1] and np.array_equal(got[0], fresh[0])
        assert len(got[0]) == 10  # 9 seeds + x; y stops the scan, z comes after it


# --- coverage: platforms for the chance that one measured platform is good (sextant 9) ---------


def test_covering_takes_the_platform_good_where_the_high_end_is_not() -> None:
    # 4 prior rows, ln(perf / perf_high) on platforms a, b, c. The high end is the best (good) in
    # rows 0 and 1; row 2's best is b, row 3's best is c (a is close behind in both: within 5 %).
    rows = np.log(np.array([[0.5, 0.5, 0.5],
                            [0.6, 0.5, 0.5],
                            [1.18, 1.2, 0.5],
                            [1.18, 0.5, 1.2]]))
    # the variance greedy would buy b or c (each varies most); a alone covers rows 2 and 3
    assert covering(rows, [10, 10, 10], ["a", "b", "c"], coverage=1.0, good_within=0.05, most=3) == ["a"]
    # within 1 % a is good nowhere: b and c are both needed
    assert covering(rows, [10, 10, 10], ["a", "b", "c"], coverage=1.0, good_within=0.01, most=3) == ["b", "c"]
    assert covering(rows, [10, 10, 10], ["a", "b", "c"], coverage=1.0, good_within=0.01, most=1) == ["b"]
    # enough coverage already from the high end: nothing to buy
    assert covering(rows, [10, 10, 10], ["a", "b", "c"], coverage=0.5, good_within=0.05, most=3) == []


def test_covering_breaks_ties_by_the_cores_where_a_platform_is_good() -> None:
    rows = np.log(np.array([[0.5, 0.5], [1.2, 1.2]]))  # a and b are good in row 1 alike
    assert covering(rows, [10, 30], ["a", "b"], coverage=1.0, good_within=0.05, most=2) == ["b"]


def test_the_coverage_plan_measures_the_good_platform_and_spends_the_rest_on_sources() -> None:
    # S's ratio to H varies most (sd 0.5) but only M is ever better than H (+30 % in every row):
    # the variance plan takes S first, the coverage plan M, and then sources
    rng = np.random.default_rng(1)
    events: list[ev.Event] = []
    for i in range(12):
        het = {"H": 1e9, "M": 1.3e9, "S": 1e9 * float(np.exp(0.5 * rng.normal() - 1.0)), "T": 0.5e9}
        tol = {s: float(np.clip(50 + 20 * rng.normal(), 0, 100)) for s in SOURCES}
        events += [ev.KnowledgeSeeded(at=0, classification=HET, group="batch", row_id=f"h{i}", values=het),
                   ev.KnowledgeSeeded(at=0, classification=ITF, group="batch", row_id=f"i{i}", values=tol,
                                      caused=tol)]
    st, w = _state(seeded=events)
    variance = AdaptiveProfilingPlan(platform_weight=20.0).plan(st, w, _ctx(2))
    assert [r.column for r in variance if r.classification is HET][0] == "S"
    runs = AdaptiveProfilingPlan(platform_choice="coverage").plan(st, w, _ctx(2))
    assert [r.column for r in runs if r.classification is HET] == ["M"]
    n = Counter(r.classification for r in runs)
    # 2 scale-up runs, 1 platform, then sources while each removes ≥ 5 % (within the budget)
    assert n[Classification.SCALE_UP] == 2 and n[HET] == 1 and n[ITF] > 2 and len(runs) <= 10
