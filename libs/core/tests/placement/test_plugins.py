"""Table tests for every built-in plugin (STYLE 9): each case shows the arithmetic of its expected
value. Plugins are run through the registry on hand-made candidate tables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sextant_core.placement import plugin
from sextant_core.placement.plugins.interference import d1_order, d2_order, first_violation
from sextant_core.placement.plugins.random_score import uniform_scores

from .conftest import request, row10, src, table_of


def run_filter(name: str, table, req, **args) -> tuple[bool, str]:  # type: ignore[no-untyped-def]
    p = plugin(name)
    v = p.filter(table, req, p.Args(**args))
    ok = bool(v.mask[0])
    return ok, "pass" if ok else p.REASONS[int(v.codes[0])]


def run_score(name: str, table, req, **args) -> np.ndarray:  # type: ignore[no-untyped-def]
    p = plugin(name)
    return np.asarray(p.score(table, req, p.Args(**args)))


# --- schedulable ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("up", "drained", "expected"), [
    (True, False, "pass"),
    (False, False, "server_down"),
    (True, True, "server_drained"),
    (False, True, "server_down"),  # down wins over drained
], ids=["up", "down", "drained", "down-and-drained"])
def test_schedulable(up: bool, drained: bool, expected: str) -> None:
    assert run_filter("schedulable", table_of(1, up=[up], drained=[drained]), request())[1] == expected


# --- fit -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("free_cores", "free_mem", "cores", "mem", "expected"), [
    (4, 8.0, 4, 8.0, "pass"),                       # 4 ≥ 4 and 8 ≥ 8
    (3, 8.0, 4, 1.0, "insufficient_cores"),         # 3 < 4
    (8, 7.5, 4, 8.0, "insufficient_memory"),        # 8 ≥ 4 but 7.5 < 8
    (2, 1.0, 4, 8.0, "insufficient_cores"),         # both short: cores reported first
    (4, 8.0 - 1e-10, 4, 8.0, "pass"),               # 8 − 1e-10 + 1e-9 (rounding tolerance) ≥ 8
], ids=["exact", "cores-short", "memory-short", "both-short", "memory-rounding"])
def test_fit(free_cores: int, free_mem: float, cores: int, mem: float, expected: str) -> None:
    t = table_of(1, free_cores=[free_cores], free_memory_gb=[free_mem])
    assert run_filter("fit", t, request(cores, mem))[1] == expected


@pytest.mark.parametrize("best_effort_request", [False, True], ids=["guaranteed", "best-effort"])
def test_fit_counts_best_effort_residents_as_used(best_effort_request: bool) -> None:
    t = table_of(1, free_cores=[2], best_effort_cores=[3], best_effort_memory_gb=[6.0])
    req = request(4, 4.0, best_effort=best_effort_request)
    assert run_filter("fit", t, req)[1] == "insufficient_cores"  # free 2 < 4: nobody is evicted for it


# --- least-allocated -------------------------------------------------------------------------------


@pytest.mark.parametrize(("free_cores", "free_mem", "cores", "mem", "weights", "expected"), [
    (8, 32.0, 2, 8.0, (1, 1), 75.0),     # cores 100·(8−2)/8 = 75, memory 100·(32−8)/32 = 75
    (4, 16.0, 2, 8.0, (1, 1), 25.0),     # cores 100·(4−2)/8 = 25, memory 100·(16−8)/32 = 25
    (8, 8.0, 1, 4.0, (1, 1), 50.0),      # cores 87.5, memory 100·(8−4)/32 = 12.5 → (87.5+12.5)/2
    (8, 8.0, 1, 4.0, (3, 1), 68.75),     # (3·87.5 + 1·12.5)/4
    (1, 32.0, 2, 1.0, (1, 1), 48.4375),  # cores (1−2)/8 < 0 → 0, memory 100·31/32 = 96.875 → /2
], ids=["empty", "half-used", "memory-bound", "cores-weighted", "clipped-at-zero"])
def test_least_allocated(free_cores: int, free_mem: float, cores: int, mem: float,
                         weights: tuple[float, float], expected: float) -> None:
    t = table_of(1, free_cores=[free_cores], free_memory_gb=[free_mem])  # capacity 8 cores, 32 GiB
    got = run_score("least-allocated", t, request(cores, mem), cores_weight=weights[0], memory_weight=weights[1])
    assert got[0] == pytest.approx(expected)


def test_least_allocated_rejects_zero_weights() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        plugin("least-allocated").Args(cores_weight=0, memory_weight=0)


# --- random ----------------------------------------------------------------------------------------


def test_random_is_the_decision_stream() -> None:
    t = table_of(4)
    got = run_score("random", t, request(seed=42))
    # the same stream as DecisionContext.rng(): Generator(PCG64(SeedSequence(seed)))
    expected = 100.0 * np.random.Generator(np.random.PCG64(np.random.SeedSequence(42))).random(4)
    assert np.array_equal(got, expected)
    assert ((got >= 0) & (got < 100)).all()
    assert not np.array_equal(uniform_scores(43, 4), got)


# --- platform --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("perf", "unknown", "expected"), [
    ({"A": 2.0, "B": 1.0, "C": 0.5}, "mean", [100.0, 50.0, 25.0]),  # 100·2/2, 100·1/2, 100·0.5/2
    ({"A": 3.0, "B": 1.0}, "mean", [100.0, 100 / 3, 200 / 3]),      # C ← mean(3, 1) = 2 → 100·2/3
    ({"A": 3.0, "B": 1.0}, "zero", [100.0, 100 / 3, 0.0]),          # C ← 0
    ({"A": -1.0, "B": 2.0}, "mean", [0.0, 100.0, 25.0]),            # A clipped to 0; C ← mean(−1, 2) = 0.5 → 25
    ({}, "mean", [0.0, 0.0, 0.0]),                                  # no prediction: no preference
], ids=["ratio-to-best", "unknown-mean", "unknown-zero", "negative-clipped", "no-prediction"])
def test_platform(perf: dict[str, float], unknown: str, expected: list[float]) -> None:
    t = table_of(3, platforms=("A", "B", "C"), platform_code=[0, 1, 2])
    got = run_score("platform", t, request(performance=perf), unknown=unknown)
    assert got == pytest.approx(expected)


# --- interference filters --------------------------------------------------------------------------


@pytest.mark.parametrize(("t_server", "c_new", "slack", "expected"), [
    (row10(100, core=30), row10(0, core=20), 0.0, "pass"),          # D1 core = 30 − 20 = 10 ≥ 0
    (row10(100, core=30), row10(0, core=40), 0.0, "d1_core"),       # D1 core = 30 − 40 = −10 < 0
    (row10(100, core=30), row10(0, core=40), 10.0, "pass"),         # −10 ≥ −slack = −10
    # core and llc_cap both −20; c_new core 50 > llc_cap 40, so core is checked first
    (row10(100, core=30, llc_cap=20), row10(0, core=50, llc_cap=40), 0.0, "d1_core"),
    # tie c_new 40 = 40: canonical order, llc_cap (column 2) before core (column 7)
    (row10(100, core=30, llc_cap=20), row10(0, core=40, llc_cap=40), 0.0, "d1_llc_cap"),
    (row10(100), row10(100), 0.0, "pass"),                          # empty server: 100 − 100 = 0
    (row10(100), row10(0, tlb=100.5), 0.0, "d1_tlb"),               # 100 − 100.5 < 0
], ids=["tolerated", "violated", "within-slack", "difficulty-order", "tie-canonical", "empty-edge", "over-100"])
def test_interference_d1(t_server: list[float], c_new: list[float], slack: float, expected: str) -> None:
    t = table_of(1, tolerated_min=[t_server])
    assert run_filter("interference-d1", t, request(caused=c_new), slack=slack)[1] == expected


@pytest.mark.parametrize(("c_server", "t_new", "expected"), [
    (row10(0), row10(10), "pass"),                                      # D2 = 10 − 0 ≥ 0 everywhere
    (row10(0, memory_bw=60), row10(100, memory_bw=50), "d2_memory_bw"),  # 50 − 60 = −10
    # tlb 10 − 15 = −5 and core 20 − 25 = −5; t_new tlb 10 < core 20: least tolerant first → tlb
    (row10(0, tlb=15, core=25), row10(100, tlb=10, core=20), "d2_tlb"),
    (row10(30), row10(30), "pass"),                                     # 30 − 30 = 0
], ids=["tolerated", "violated", "least-tolerant-first", "edge-zero"])
def test_interference_d2(c_server: list[float], t_new: list[float], expected: str) -> None:
    t = table_of(1, caused_sum=[c_server])
    assert run_filter("interference-d2", t, request(tolerated=t_new))[1] == expected


def test_difficulty_orders_and_first_violation() -> None:
    c_new = np.array(row10(0, core=50, llc_cap=40, tlb=40))
    # decreasing c_new; ties (llc_cap, tlb) in canonical order; then the zeros in canonical order
    assert d1_order(c_new)[:3].tolist() == [src("core"), src("llc_cap"), src("tlb")]
    t_new = np.array(row10(100, l1i=5, network_bw=5, core=1))
    assert d2_order(t_new)[:3].tolist() == [src("core"), src("l1i"), src("network_bw")]
    margins = np.array([row10(1), row10(1, tlb=-1, core=-1)])
    mask, codes = first_violation(margins < 0, d1_order(c_new))
    assert mask.tolist() == [True, False] and codes.tolist() == [-1, src("core")]


@settings(max_examples=100, deadline=None)
@given(bad=hnp.arrays(bool, st.tuples(st.integers(0, 30), st.just(10))), perm=st.permutations(range(10)))
def test_first_violation_matches_the_sequential_filter(bad: np.ndarray, perm: list[int]) -> None:
    order = np.array(perm, dtype=np.int64)
    mask, codes = first_violation(bad, order)
    for i, row in enumerate(bad):
        # Paragon's sequential filter: walk the sources in order, drop the row at the first violation
        first = next((int(k) for k in order if row[k]), -1)
        assert codes[i] == first and mask[i] == (first == -1)


# --- interference scores ---------------------------------------------------------------------------


@pytest.mark.parametrize(("c_server", "c_new", "expected"), [
    (row10(0), row10(10), 90.0),                # (0+10)/100 = 0.1 on every source → 100·(1 − 0.1)
    (row10(50), row10(10), 40.0),               # 0.6 everywhere → 100·0.4
    (row10(0, core=95), row10(0, core=10), 90.0),  # core min(1, 1.05) = 1, others 0 → mean 0.1
    (row10(100), row10(20), 0.0),               # saturated: 1 everywhere
], ids=["empty", "loaded", "one-source-capped", "saturated"])
def test_least_added_pressure(c_server: list[float], c_new: list[float], expected: float) -> None:
    t = table_of(1, caused_sum=[c_server])
    assert run_score("least-added-pressure", t, request(caused=c_new))[0] == pytest.approx(expected)


@pytest.mark.parametrize(("t_server", "c_server", "t_new", "c_new", "expected"), [
    (100, 0, 100, 0, 0.0),    # D1 = 100, D2 = 100: |200|·10 = 2000 = the maximum → 0
    (50, 30, 30, 50, 100.0),  # D1 = 50 − 50 = 0, D2 = 30 − 30 = 0: perfect fit
    (60, 20, 40, 40, 80.0),   # D1 = 20, D2 = 20: 40·10 = 400 → 100·(1 − 400/2000)
    (20, 30, 40, 40, 95.0),   # D1 = −20, D2 = 10: |−10|·10 = 100 → 100·(1 − 100/2000)
], ids=["empty-server", "perfect", "slack-40", "violation-counts"])
def test_interference_fit(t_server: float, c_server: float, t_new: float, c_new: float, expected: float) -> None:
    t = table_of(1, tolerated_min=[row10(t_server)], caused_sum=[row10(c_server)])
    got = run_score("interference-fit", t, request(tolerated=row10(t_new), caused=row10(c_new)))
    assert got[0] == pytest.approx(expected)
