"""`bench/quality.py --ladder` and `bench/ladder_doc.py`: the information ladder's summary, its
named gaps and the generated markdown (synthetic runs; no simulation)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from sextant_kit.testing import load_script

BENCH = Path(__file__).resolve().parents[3] / "bench"


def _load(name: str) -> ModuleType:
    return load_script(BENCH / f"{name}.py", f"bench_{name}")


@pytest.fixture(scope="module")
def quality() -> ModuleType:
    return _load("quality")


@pytest.fixture(scope="module")
def doc() -> ModuleType:
    return _load("ladder_doc")


QOS = {"oracle": (0.9, 0.92), "oracle-estimates": (0.75, 0.71), "sextant-true-rows": (0.8, 0.9),
       "sextant-estimates": (0.6, 0.5),
       "sextant": (0.4, 0.44), "sextant-dense": (0.55, 0.5), "least-loaded": (0.2, 0.3),
       "heterogeneity-oblivious": (0.31, 0.33), "interference-oblivious": (0.3, 0.2), "random": (0.1, 0.1)}


def _runs() -> dict[str, dict[str, dict[int, dict[str, float]]]]:
    return {"paragon-ec2-2500": {row: {6: {"qos_met_fraction": a}, 7: {"qos_met_fraction": b}}
                                 for row, (a, b) in QOS.items()}}


def test_summary_means_worsts_best_baseline_and_named_losses(quality: ModuleType) -> None:
    out = quality.ladder_summary(_runs())
    t = out["ladder"]["paragon-ec2-2500"]
    assert t["oracle"] == {"per_seed": {"6": 0.9, "7": 0.92}, "mean": 0.91, "worst": 0.9}
    assert t["best-baseline"]["profile"] == "heterogeneity-oblivious" and t["best-baseline"]["mean"] == 0.32
    losses = out["losses"]["paragon-ec2-2500"]
    assert losses["planning_loss"] == pytest.approx(0.73 - 0.55)
    assert losses["information_loss"] == pytest.approx(0.55 - 0.42)
    assert losses["truth_to_estimates"] == pytest.approx(0.91 - 0.73)
    assert losses["planning_loss_true_rows"] == pytest.approx(0.91 - 0.85)
    assert out["worst"]["paragon-ec2-2500"]["sextant"] == 0.4


def test_the_scenarios_section_has_the_issues_shape_and_the_planning_ratios(quality: ModuleType) -> None:
    runs = {"paragon-ec2-2500": {row: {6: {"qos_met_fraction": a, "overprovisioning": 0.1},
                                       7: {"qos_met_fraction": b, "overprovisioning": 0.3}}
                                 for row, (a, b) in QOS.items()}}
    out = quality.scenarios_summary(runs)
    tr = out["scenarios"]["paragon-ec2-2500"]["sextant-true-rows"]
    assert tr["per_seed"] == {"6": {"qos_met_fraction": 0.8, "overprovisioning": 0.1},
                              "7": {"qos_met_fraction": 0.9, "overprovisioning": 0.3}}
    # QoS: worst = the lowest seed; over-provisioning: worst = the highest
    assert tr["worst"] == {"qos_met_fraction": 0.8, "overprovisioning": 0.3}
    assert tr["mean"]["qos_met_fraction"] == pytest.approx(0.85)
    r = out["ratios"]["paragon-ec2-2500"]
    # worst of sextant-true-rows / worst of oracle: 0.8 / 0.9; per seed: min(0.8/0.9, 0.9/0.92)
    assert r["sextant-true-rows/oracle"]["of_worsts"] == pytest.approx(0.8 / 0.9)
    assert r["sextant-true-rows/oracle"]["worst_per_seed"] == pytest.approx(0.8 / 0.9)
    # sextant on the estimate port / oracle-estimates: 0.5 / 0.71 (worsts); per seed min(0.6/0.75, 0.5/0.71)
    assert r["sextant-estimates/oracle-estimates"]["of_worsts"] == pytest.approx(0.5 / 0.71)
    assert r["sextant-estimates/oracle-estimates"]["worst_per_seed"] == pytest.approx(0.5 / 0.71)


def test_every_ladder_rung_is_a_known_profile(quality: ModuleType) -> None:
    from sextant_sim import baselines

    rows = {row for row, _, _ in quality.LADDER}
    assert {"oracle", "oracle-estimates", "sextant-true-rows", "sextant-estimates", "sextant", "sextant-dense",
            "sextant-adaptive-profiling",
            "oracle-estimates-x0.5", "oracle-estimates-x2", "oracle-estimates-platform",
            "oracle-estimates-interference", *quality.LADDER_BASELINES} == rows
    assert all(p in baselines.names() for _, p, _ in quality.LADDER)
    assert [p for row, p, est in quality.LADDER if est] == ["sextant"]


def test_the_markdown_is_generated_from_the_json_and_replaces_its_block(quality: ModuleType, doc: ModuleType,
                                                                        tmp_path: Path) -> None:
    data = {**quality.ladder_summary(_runs()), "seeds": [6, 7], "code_version": "abc", "twin_version": "4-x",
            "quick": False, "load_avg": [1.0, 1.0, 1.0]}
    (tmp_path / "l.json").write_text(json.dumps(data))
    body = doc.tables(json.loads((tmp_path / "l.json").read_text()))
    text = "\n".join(body)
    assert "| `oracle` (truth) | 0.910 | 0.900 |" in text and "docs/results/quality-ladder.md" in text
    assert "best baseline (`heterogeneity-oblivious`) | 0.320" in text
    assert "Planning loss" in text and "**0.180**" in text and "Information loss" in text and "**0.130**" in text
    # the true-rows rung and its planning loss against the oracle (0.91 − 0.85)
    assert "| `sextant-true-rows` (`sextant` fed the true rows) | 0.850 | 0.800 |" in text
    assert "`oracle` − `sextant-true-rows`: 0.060" in text
    md = tmp_path / "q.md"
    md.write_text("# Q\n\nbefore\n")
    doc.write(md, body)
    doc.write(md, ["replaced"])
    out = md.read_text()
    assert out.count(doc.BEGIN) == 1 and "replaced" in out and "Planning loss" not in out and "before" in out


def _part(quality: ModuleType, rows: set[str], version: str, tmp: Path, twin: str = "4-x") -> str:
    per_seed = {"paragon-ec2-2500": {row: {str(s): {"qos": r["qos_met_fraction"], "wall_seconds": 1.0}
                                           for s, r in seeds.items()}
                                     for row, seeds in _runs()["paragon-ec2-2500"].items() if row in rows}}
    path = tmp / f"{version}.json"
    path.write_text(json.dumps({"per_seed": per_seed, "code_version": version, "twin_version": twin,
                                "seeds": [6, 7], "quick": False, "load_avg": [1.0, 1.0, 1.0],
                                "elapsed_seconds": 2.0, "machine": {}}))
    return str(path)


def test_merged_parts_give_the_whole_ladder_with_each_rows_code_version(quality: ModuleType,
                                                                        tmp_path: Path) -> None:
    oracle_rows = {r for r in QOS if r.startswith("oracle")}
    a = _part(quality, oracle_rows, "new", tmp_path)
    b = _part(quality, set(QOS) - oracle_rows, "old", tmp_path)
    assert quality.merge_ladders([a, b], str(tmp_path / "m.json")) == 0
    merged = json.loads((tmp_path / "m.json").read_text())
    whole = quality.ladder_summary(_runs())
    assert merged["ladder"] == whole["ladder"] and merged["losses"] == whole["losses"]
    assert merged["code_versions"]["oracle"] == "new" and merged["code_versions"]["sextant"] == "old"
    assert merged["code_version"] == "new+old"
    assert merged["per_seed"]["paragon-ec2-2500"]["oracle"]["6"]["code_version"] == "new"
    # the planning ratios across parts: sextant-true-rows (old) over oracle (new), seeds 6–7
    assert merged["ratios"]["paragon-ec2-2500"]["sextant-true-rows/oracle"]["of_worsts"] == pytest.approx(0.8 / 0.9)


def test_a_row_may_run_at_different_versions_in_different_scenarios(quality: ModuleType, tmp_path: Path) -> None:
    a = json.loads(Path(_part(quality, {"oracle"}, "v1", tmp_path)).read_text())
    b = dict(a, code_version="v2", per_seed={"quasar-ec2-200": a["per_seed"]["paragon-ec2-2500"]})
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert quality.merge_ladders([str(tmp_path / "v1.json"), str(tmp_path / "b.json")], str(tmp_path / "m.json")) == 0
    merged = json.loads((tmp_path / "m.json").read_text())
    assert merged["code_versions"]["oracle"] == "v1+v2"
    assert merged["per_seed"]["quasar-ec2-200"]["oracle"]["6"]["code_version"] == "v2"


def test_merge_refuses_overlapping_rows_and_different_twins(quality: ModuleType, tmp_path: Path) -> None:
    a = _part(quality, {"oracle", "sextant"}, "a", tmp_path)
    b = _part(quality, {"sextant"}, "b", tmp_path)
    with pytest.raises(SystemExit, match="in two parts"):
        quality.merge_ladders([a, b], None)
    d = _part(quality, {"sextant"}, "d", tmp_path)  # sextant's seeds 6–7 again, at another version
    with pytest.raises(SystemExit, match="in two parts"):
        quality.merge_ladders([b, d], None)
    c = _part(quality, {"random"}, "c", tmp_path, twin="4-other")
    with pytest.raises(SystemExit, match="different twins"):
        quality.merge_ladders([a, c], None)


def test_a_part_may_give_only_some_rows_with_their_metrics_and_run_versions(quality: ModuleType,
                                                                           tmp_path: Path) -> None:
    old = json.loads(Path(_part(quality, {"oracle", "sextant"}, "old", tmp_path)).read_text())
    old["scenarios"] = {"paragon-ec2-2500": {"oracle": {"per_seed": {
        "6": {"qos_met_fraction": 0.9, "cpu_utilization": 0.5}, "7": {"qos_met_fraction": 0.92, "cpu_utilization": 0.4}}}}}
    for seed, v in old["per_seed"]["paragon-ec2-2500"]["oracle"].items():
        v["code_version"] = f"run{seed}"  # a merged part: each run's own version
    old["per_seed"]["paragon-ec2-2500"]["oracle"]["7"]["code_version"] = "run6"
    (tmp_path / "old.json").write_text(json.dumps(old))
    new = _part(quality, {"sextant", "sextant-true-rows"}, "new", tmp_path)
    assert quality.merge_ladders([f"{tmp_path / 'old.json'}:oracle", new], str(tmp_path / "m.json")) == 0
    merged = json.loads((tmp_path / "m.json").read_text())
    assert set(merged["ladder"]["paragon-ec2-2500"]) == {"oracle", "sextant", "sextant-true-rows"}
    assert merged["code_versions"] == {"oracle": "run6", "sextant": "new", "sextant-true-rows": "new"}
    oracle = merged["scenarios"]["paragon-ec2-2500"]["oracle"]
    assert oracle["worst"]["cpu_utilization"] == 0.4 and oracle["mean"]["cpu_utilization"] == pytest.approx(0.45)
    assert merged["scenarios"]["paragon-ec2-2500"]["sextant"]["worst"] == {"qos_met_fraction": 0.4}
    assert merged["scenarios_run"] == ["paragon-ec2-2500"]
    old["per_seed"]["paragon-ec2-2500"]["oracle"]["7"]["code_version"] = "run7"
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(SystemExit, match="two code versions"):
        quality.merge_ladders([f"{tmp_path / 'old.json'}:oracle", new], None)
