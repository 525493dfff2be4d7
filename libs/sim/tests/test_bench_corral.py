"""`bench/corral.py`'s worst-of-seeds rule for the online part (synthetic rows; no simulation)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

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
