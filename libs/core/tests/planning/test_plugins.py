"""Table tests for the planner's placement plugins (STYLE 9): each case shows its arithmetic."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sextant_core.placement import PlacementRequest, plugin
from sextant_core.placement.plugins.quasar_sizing import interference_factor, saturation, size_rows

from .conftest import row10, table_of


def req(cores: int = 1, memory_gb: float = 1.0, *, tolerated: Any = None, caused: Any = None) -> PlacementRequest:
    return PlacementRequest(workload_id="new", cores=cores, memory_gb=memory_gb,
                            tolerated=np.full(10, 100.0) if tolerated is None else np.asarray(tolerated, float),
                            caused=np.zeros(10) if caused is None else np.asarray(caused, float))


def verdict(name: str, table: Any, r: PlacementRequest, **args: Any) -> list[str]:
    p = plugin(name)
    v = p.filter(table, r, p.Args(**args))
    return ["pass" if ok else p.REASONS[int(c)] for ok, c in zip(v.mask, v.codes, strict=True)]


def scores(name: str, table: Any, r: PlacementRequest, **args: Any) -> list[float]:
    p = plugin(name)
    return [float(x) for x in p.score(table, r, p.Args(**args))]


# --- paragon-d1-residual ---------------------------------------------------------------------


@pytest.mark.parametrize(("residual", "caused", "slack", "expected"), [
    (row10(100, llc_cap=30), row10(0, llc_cap=30), 0.0, "pass"),          # 30 − 30 = 0 ≥ 0
    (row10(100, llc_cap=30), row10(0, llc_cap=31), 0.0, "d1r_llc_cap"),   # 30 − 31 = −1 < 0
    (row10(100, llc_cap=30), row10(0, llc_cap=31), 1.0, "pass"),          # −1 ≥ −1 with slack 1
    # two violations: llc_bw (c = 40) is harder than llc_cap (c = 35), so it is reported
    (row10(100, llc_cap=30, llc_bw=30), row10(0, llc_cap=35, llc_bw=40), 0.0, "d1r_llc_bw"),
], ids=["exact", "short-by-one", "slack", "hardest-first"])
def test_d1_residual(residual: list[float], caused: list[float], slack: float, expected: str) -> None:
    t = table_of(1, extra={"residual": [residual]})
    assert verdict("paragon-d1-residual", t, req(caused=caused), slack=slack) == [expected]


def test_d1_residual_is_stricter_than_paragon_d1_with_two_residents() -> None:
    # residents A (t=50, c=20) and B (t=90, c=25) on llc_cap: t_server = 50, c_server = 45
    # Paragon D1 = 50 − 10 = 40 ≥ 0; residual = min(50+20, 90+25) − 45 = 25, 25 − 10 = 15 ≥ 0 passes;
    # a newcomer causing 30: Paragon 50 − 30 = 20 passes, residual 25 − 30 = −5 fails (A would feel 25+30 > 50)
    t = table_of(1, tolerated_min=[row10(100, llc_cap=50)], caused_sum=[row10(0, llc_cap=45)],
                 extra={"residual": [row10(100, llc_cap=25)]})
    r = req(caused=row10(0, llc_cap=30))
    assert verdict("interference-d1", t, r) == ["pass"]
    assert verdict("paragon-d1-residual", t, r) == ["d1r_llc_cap"]


def test_d1_residual_without_the_column_is_paragon_d1() -> None:
    t = table_of(2, tolerated_min=[row10(100, core=20), row10(100)])
    assert verdict("paragon-d1-residual", t, req(caused=row10(0, core=25))) == ["d1r_core", "pass"]  # 20−25 < 0


# --- paragon-arq-pool ----------------------------------------------------------------------------


@pytest.mark.parametrize(("pools", "below", "expected"), [
    ([3, 5, 9], 10, ["pass", "pass", "pass"]),                  # nothing reserved
    ([3, 5, 9], 5, ["pass", "reserved_pool", "reserved_pool"]),  # pools ≥ 5 kept for a waiting class
    ([3, 5, 9], 0, ["reserved_pool"] * 3),
], ids=["none", "above-5", "all"])
def test_arq_pool(pools: list[int], below: int, expected: list[str]) -> None:
    t = table_of(3, extra={"arq_pool": pools})
    assert verdict("paragon-arq-pool", t, req(), below=below) == expected


def test_arq_pool_without_the_column_passes_everything() -> None:
    assert verdict("paragon-arq-pool", table_of(2), req(), below=0) == ["pass", "pass"]


# --- quasar sizing arithmetic ------------------------------------------------------------------------


@pytest.mark.parametrize(("caused_sum", "tolerated", "alpha", "expected"), [
    (row10(0), row10(50), 3.0, 1.0),                             # no pressure: Π(1 − 0) = 1
    (row10(0, core=50), row10(50), 3.0, 0.95),                   # x = 50/50 = 1: 0.05·1³ → 0.95
    (row10(0, core=25), row10(50), 3.0, 1 - 0.05 / 8),           # x = 0.5: 0.05·0.125 = 0.00625
    (row10(0, core=25, tlb=50), row10(50), 2.0, (1 - 0.05 / 4) * 0.95),  # two sources multiply
    (row10(0, core=200), row10(50), 3.0, 0.2),                   # 0.05·4³ = 3.2 → capped at 0.8
    (row10(0, core=10), row10(0), 3.0, 1 - 0.8),                 # t = 0 → max(t, 1): x = 10 → capped
], ids=["none", "at-tolerance", "half", "two-sources", "capped", "zero-tolerance"])
def test_interference_factor(caused_sum: list[float], tolerated: list[float], alpha: float, expected: float) -> None:
    got = interference_factor(np.array([caused_sum]), np.array(tolerated), alpha)
    assert got[0] == pytest.approx(expected)


@pytest.mark.parametrize(("base", "required", "free", "sized", "ratio"), [
    # U = [4, 7, 9, 10, 10]; need U(c) ≥ R/base
    (1.0, 7.0, 8, 2, 1.0),         # R/base = 7 → c* = 2, ratio 7·1/7
    (0.5, 4.0, 8, 3, 9 * 0.5 / 4),  # 4/0.5 = 8 → c* = 3 (U = 9), ratio 4.5/4
    (1.0, 9.5, 2, 2, 7 / 9.5),     # c* = 4 > 2 free → sized 2, ratio 7/9.5 < 1
    (1.0, 12.0, 8, 4, 10 / 12),    # unreachable alone: sized c_sat = 4 (not 8), ratio 10/12
    (1.0, 3.0, 0, 0, 0.0),         # no free core
    (0.0, 3.0, 8, 4, 0.0),         # base 0: never meets; c_sat cores, ratio 0
], ids=["exact", "slow-platform", "short-of-cores", "saturated", "full", "zero-base"])
def test_size_rows(base: float, required: float, free: int, sized: int, ratio: float) -> None:
    curve = np.array([4.0, 7.0, 9.0, 10.0, 10.0])
    s, r = size_rows(np.array([base]), required, curve, np.array([free]))
    assert int(s[0]) == sized and r[0] == pytest.approx(ratio)


def test_size_rows_without_a_requirement_takes_one_core() -> None:
    s, r = size_rows(np.array([1.0, 1.0]), 0.0, np.array([1.0, 2.0]), np.array([4, 0]))
    assert s.tolist() == [1, 0] and r[0] == np.inf and r[1] == 0.0


def test_saturation() -> None:
    assert saturation(np.array([1.0, 2.0, 3.0, 3.0, 3.0])) == 3  # first c at the top
    assert saturation(np.array([])) == 0


# --- quasar filters ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("sized", "free_mem", "mem", "expected"), [
    (2, 32.0, 4.0, "pass"),
    (0, 32.0, 4.0, "no_free_cores"),              # sized 0: no core to give
    (2, 3.0, 4.0, "insufficient_memory"),          # 3 < 4
    (0, 3.0, 4.0, "no_free_cores"),                # cores reported first
], ids=["fits", "no-cores", "no-memory", "both"])
def test_quasar_fit(sized: int, free_mem: float, mem: float, expected: str) -> None:
    t = table_of(1, free_memory_gb=[free_mem], extra={"sized_cores": [sized], "predicted_ratio": [1.0]})
    assert verdict("quasar-fit", t, req(memory_gb=mem)) == [expected]


@pytest.mark.parametrize(("ratio", "min_ratio", "expected"), [
    (1.0, 1.0, "pass"), (0.99, 1.0, "below_target"), (0.5, 0.0, "pass"),
], ids=["meets", "short", "relaxed"])
def test_quasar_target(ratio: float, min_ratio: float, expected: str) -> None:
    t = table_of(1, extra={"sized_cores": [1], "predicted_ratio": [ratio]})
    assert verdict("quasar-target", t, req(), min_ratio=min_ratio) == [expected]


# --- quasar scores ---------------------------------------------------------------------------------


def test_quasar_quality() -> None:
    t = table_of(3, extra={"sized_cores": [1, 1, 1], "predicted_ratio": [0.55, 1.1, 2.0]})
    # cap 1.1: 100·0.55/1.1 = 50; 100·1.1/1.1 = 100; min(2, 1.1) → 100
    assert scores("quasar-quality", t, req(), cap=1.1) == pytest.approx([50.0, 100.0, 100.0])


def test_quasar_least_cores() -> None:
    t = table_of(3, extra={"sized_cores": [2, 4, 0], "predicted_ratio": [1, 1, 0]})
    # c_min = 2: 100·2/2 = 100, 100·2/4 = 50, sized 0 → 0
    assert scores("quasar-least-cores", t, req()) == pytest.approx([100.0, 50.0, 0.0])


def test_quasar_packing() -> None:
    t = table_of(3, cap_cores=[8, 8, 16], free_cores=[8, 3, 16], extra={"sized_cores": [2, 2, 0],
                                                                        "predicted_ratio": [1, 1, 0]})
    # (8 − (8−2))/8 = 25 %; (8 − (3−2))/8 = 87.5 %; sized 0 → 0
    assert scores("quasar-packing", t, req()) == pytest.approx([25.0, 87.5, 0.0])
