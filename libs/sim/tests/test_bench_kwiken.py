"""`bench/kwiken.py`'s summary of a seed and its worst-of-seeds rule (synthetic rows; no simulation)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from sextant_kit.testing import load_script

BENCH = Path(__file__).resolve().parents[3] / "bench"


def _load() -> ModuleType:
    return load_script(BENCH / "kwiken.py", "bench_kwiken")  # imports its sibling quality.py


def test_worst_takes_the_least_cut_and_the_most_budget_used() -> None:
    kw = _load()
    a = {"reissue_5pct_p99_cut_mean": 0.5, "budget_used_over_budget_max": 1.05, "sumvar_ms_150_stages": 3.0,
         "loss_0_1pct_p99_cut": 0.05, "loss_0_1pct_minus_best_baseline": 0.01, "global_reissues": {"x": 1},
         "partial_baselines": {"fixed-timeout": 0.1}, "catch_up": {"p99_cut": 0.2, "extra_threads_share": 0.05}}
    b = {"reissue_5pct_p99_cut_mean": 0.4, "budget_used_over_budget_max": 0.98, "sumvar_ms_150_stages": 9.0,
         "loss_0_1pct_p99_cut": 0.08, "loss_0_1pct_minus_best_baseline": -0.002, "global_reissues": {"x": 2},
         "partial_baselines": {"fixed-timeout": 0.3}, "catch_up": {"p99_cut": 0.3, "extra_threads_share": 0.06}}
    w = kw.worst({"6": a, "7": b})
    assert w["reissue_5pct_p99_cut_mean"] == 0.4 and w["budget_used_over_budget_max"] == 1.05
    assert w["sumvar_ms_150_stages"] == 9.0 and w["global_reissues"] == {"x": 2}  # the seed of the worst 5 % cut
    # Kwiken's 0.1 % cut at its worst seed, the baselines read on that same seed
    assert w["loss_0_1pct_p99_cut"] == 0.05 and w["partial_baselines"] == {"fixed-timeout": 0.1}
    assert w["loss_0_1pct_minus_best_baseline"] == -0.002
    assert w["catch_up"] == {"p99_cut": 0.2, "p99_cut_max": 0.2, "extra_threads_share": 0.06}


def test_the_summary_counts_small_dags_against_94_percent_of_random() -> None:
    kw = _load()
    rows = [{"cut_3_0.9": 0.50, "used_3_0.9": 1.0, "cut_100": 0.8, "cut_uniform": 0.4, "cut_fixed_rule": 0.0,
             "used_fixed_rule": 0.001, "kwiken_s_3_0.9": 0.01, "sumvar_s_3_0.9": 0.001},
            {"cut_3_0.9": 0.47, "used_3_0.9": 1.08, "cut_100": 0.8, "cut_uniform": 0.4, "cut_fixed_rule": 0.0,
             "used_fixed_rule": 0.001, "kwiken_s_3_0.9": 0.01, "sumvar_s_3_0.9": 0.001,
             "cut_random": 0.49, "random_s": 20.0}]
    s = kw.summarise(rows, 3.0, 0.9)
    # 0.47 ≥ 0.94 × 0.49 = 0.4606: the one small DAG counts
    assert s["sumvar_vs_random_share_ge_94pct"] == 1.0 and s["small_dags"] == 1
    assert s["budget_used_over_budget_max"] == 1.08
    # the allocation step: 20 s of random search against 1 ms of SumVar; with the 9 ms of curves
    # added to both sides: 20.009 / 0.01
    assert s["allocation_speedup_vs_random_min"] == 20000.0 and s["speedup_vs_random_with_curves_min"] == 2000.9
    assert s["reissue_5pct_p99_cut_mean"] == 0.485


def _speed() -> ModuleType:
    return load_script(BENCH / "kwiken_speed.py", "bench_kwiken_speed")  # imports kwiken.py and quality.py


def test_the_speed_worst_is_the_least_ratio_and_the_most_milliseconds() -> None:
    sp = _speed()
    a = {"allocation_speedup_vs_random_min": 1800.0, "sumvar_ms_150_stages": 2.0, "curve_ms_10000_samples": 30.0,
         "dags": [{"dag": "x"}]}
    b = {"allocation_speedup_vs_random_min": 1200.0, "sumvar_ms_150_stages": 3.5, "curve_ms_10000_samples": 20.0,
         "dags": [{"dag": "y"}]}
    w = sp.worst({"6": a, "7": b})
    assert w == {"allocation_speedup_vs_random_min": 1200.0, "sumvar_ms_150_stages": 3.5,
                 "curve_ms_10000_samples": 30.0}  # per-DAG rows stay in per_seed
    assert sp.bars(w) == {"sumvar_ms_150_stages_le_50": True, "curve_ms_10000_samples_le_200": True,
                          "allocation_speedup_ge_1000": True}
    assert sp.bars(w | {"allocation_speedup_vs_random_min": 999.9})["allocation_speedup_ge_1000"] is False
    assert "allocation_speedup_ge_1000" not in sp.bars({"sumvar_ms_150_stages": 60.0, "curve_ms_10000_samples": 1.0})


def test_the_speed_section_is_merged_and_kept_without_touching_the_other_keys(tmp_path: Path) -> None:
    sp, kw = _speed(), _load()
    path = tmp_path / "kwiken.json"
    path.write_text(json.dumps({"code_version": "old", "reissue_5pct_p99_cut_mean": 0.42, "speed": {"code_version": "x"}}))
    sp.merge_into(path, {"code_version": "new", "allocation_speedup_vs_random_min": 1500.0})
    doc = json.loads(path.read_text())
    assert doc == {"code_version": "old", "reissue_5pct_p99_cut_mean": 0.42,
                   "speed": {"code_version": "new", "allocation_speedup_vs_random_min": 1500.0}}
    # a later bench/kwiken.py run rewrites its own keys and keeps the speed section it did not measure
    fresh = {"code_version": "newer", "reissue_5pct_p99_cut_mean": 0.43}
    assert kw.keep_speed(path, fresh) == ["speed"] and fresh["speed"]["code_version"] == "new"
    assert kw.keep_speed(tmp_path / "absent.json", {}) == []
