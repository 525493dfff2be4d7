"""`bench/corral.py`: the worst-of-seeds rule for the online part and the selector's arrival rate (synthetic rows; no simulation)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
from sextant_kit.testing import load_script

BENCH = Path(__file__).resolve().parents[3] / "bench"


def _load() -> ModuleType:
    return load_script(BENCH / "corral.py", "bench_corral")  # imports its sibling quality.py


def _online(w1: float, w2: float, w3: float, gaps: tuple[float | None, ...]) -> dict[str, dict[str, float | None]]:
    return {w: {"median_jct_vs_yarn": m, "lp_gap": g} for w, m, g in zip(("W1", "W2", "W3"), (w1, w2, w3), gaps, strict=True)}


def test_online_worst_is_the_highest_median_and_lp_gap_over_seeds_and_workloads() -> None:
    corral = _load()
    rows = {"6": {"online": _online(-0.30, 0.01, -0.20, (0.02, 0.40, 0.05))},
            "7": {"online": _online(-0.10, -0.05, 0.03, (0.03, 0.10, None))}}
    worst = corral.worst_of(rows)["online"]
    assert worst["median_jct_vs_yarn"] == 0.03 and worst["lp_gap"] == 0.40
    assert worst["per_workload"] == {"W1": -0.10, "W2": 0.01, "W3": 0.03}
    assert worst["lp_gap_per_workload"] == {"W1": 0.03, "W2": 0.40, "W3": 0.05}  # a missing gap is skipped


def test_arrival_rate_reaches_the_target_offered_occupancy_over_the_window() -> None:
    corral = _load()
    rng = np.random.default_rng(1)
    unit = np.cumsum(rng.exponential(1.0, size=2000))
    light = [{"n": 10, "deadline": 100.0} for _ in range(2000)]
    lam = corral.arrival_rate(unit, light, 1000, 0.75)
    assert abs(corral.offered_occupancy(unit, light, 1000, lam) - 0.75) < 1e-6
    # light tail: close to λ = occupancy·M / mean(N·T) (short jobs barely cross the window's end)
    assert abs(lam / (0.75 * 1000 / 1000.0) - 1.0) < 0.02
    # one request holding half of Σ N·T for far longer than the window: the mean-based rate is
    # about half of what loads the cluster to 75 %
    heavy = [*light, {"n": 10, "deadline": 100.0 * 2000}]
    unit2 = np.cumsum(rng.exponential(1.0, size=2001))
    lam2 = corral.arrival_rate(unit2, heavy, 1000, 0.75)
    mean_nt = float(np.mean([r["n"] * r["deadline"] for r in heavy]))
    assert lam2 > 1.8 * (0.75 * 1000 / mean_nt)
    assert abs(corral.offered_occupancy(unit2, heavy, 1000, lam2) - 0.75) < 1e-6


def test_runtime_worst_is_the_highest_value_per_workload_and_key() -> None:
    corral = _load()
    keys_f = corral.RUNTIME_KEYS
    keys_a = corral.ADHOC_KEYS

    def row(base: float) -> dict[str, object]:
        return {"runtime": {"failure": {w: {k: base + i for i, k in enumerate(keys_f)} for w in ("W1", "W2", "W3")},
                            "adhoc": {k: base - i for i, k in enumerate(keys_a)}}}

    worst = corral.worst_of({"6": row(-0.5), "7": row(-0.2), "8": row(-0.4)})["runtime"]
    assert worst["failure"]["W2"] == {k: -0.2 + i for i, k in enumerate(keys_f)}
    assert worst["adhoc"] == {k: -0.2 - i for i, k in enumerate(keys_a)}
    assert corral.worst_of({"6": row(-0.5), "7": {}})["runtime"] is None  # a seed without the part


def test_busiest_rack_is_the_most_planned_rack_time_lowest_index_on_ties() -> None:
    corral = _load()

    class Plan:
        racks = ((0,), (1, 2), (2,))
        starts = np.array([0.0, 0.0, 5.0])
        finishes = np.array([10.0, 6.0, 10.0])

    assert corral.busiest_rack(Plan(), 3) == 2  # rack 2 holds 6 + 5 against 10 (rack 0) and 6 (rack 1)
    Plan.finishes = np.array([10.0, 6.0, 9.0])  # rack 2 at 6 + 4 = 10 ties rack 0
    assert corral.busiest_rack(Plan(), 3) == 0


def test_sweep_replan_and_swim_online_worst_rows() -> None:
    corral = _load()

    def row(m: float, gap: float | None, swim: float, rep: float) -> dict[str, object]:
        online = _online(-0.1, -0.1, -0.1, (0.01, 0.02, 0.03))
        online["SWIM"] = {"median_jct_vs_yarn": swim, "lp_gap": 0.1}
        sweep = {f"W1/{k}": {"median_jct_vs_yarn": m * k, "mean_jct_vs_yarn": m, "headroom_median": m - 0.01,
                             "lp_gap": gap} for k in (1, 10)}
        rp = {s: {k: rep + i for i, k in enumerate(corral.REPLAN_KEYS)} for s in corral.REPLAN_SCENARIOS}
        return {"online": online, "online_sweep": sweep, "runtime": {"replan_under_perturbation": rp}}

    worst = corral.worst_of({"6": row(-0.3, 0.5, 0.2, -0.4), "7": row(-0.2, None, -0.1, -0.3)})
    assert worst["online"]["median_jct_vs_yarn"] == -0.1  # SWIM is beside the bar, not in it
    assert worst["online"]["swim_median_jct_vs_yarn"] == 0.2
    assert list(worst["online_sweep"]) == ["W1/1", "W1/10"]  # by workload, then load
    assert worst["online_sweep"]["W1/10"]["median_jct_vs_yarn"] == -2.0 and worst["online_sweep"]["W1/1"]["lp_gap"] == 0.5
    assert worst["runtime"]["replan_under_perturbation"]["W1s10"] == {k: -0.3 + i for i, k in enumerate(corral.REPLAN_KEYS)}
    assert "failure" not in worst["runtime"]  # the failure study is another part's
    assert corral.worst_of({"6": row(-0.3, 0.5, 0.2, -0.4), "7": {}})["online_sweep"] is None
