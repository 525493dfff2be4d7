"""`bench/quality.py --world`: the stress world (v3) reaches the twin, is cached apart and recorded;
`margins` (how far `sextant` is ahead of `paragon` and the best baseline) on synthetic runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from sextant_kit.testing import load_script

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def quality() -> ModuleType:
    return load_script(BENCH / "quality.py", "bench_quality_world")


def test_the_world_reaches_the_twin_and_is_cached_apart(quality: ModuleType, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from sextant_sim import setup as setup_mod
    from sextant_sim.groundtruth import world_version

    monkeypatch.setattr(quality, "CACHE", tmp_path)
    seen: list[str] = []
    real = setup_mod.prepare

    def spy(sc, seed):  # type: ignore[no-untyped-def]
        seen.append(sc.world)
        return real(sc, seed)

    monkeypatch.setattr(setup_mod, "prepare", spy)
    setups: dict = {}
    v3 = quality.run_one("smoke", None, None, "random", 1, "t", setups, world="v3")
    v4 = quality.run_one("smoke", None, None, "random", 1, "t", setups)
    assert seen == ["v3", "v4"]
    assert v3["world"] == "v3" and v3["twin_version"] == world_version("v3") and v3["scenario"] == "smoke@v3"
    assert v4["world"] == "v4" and v4["twin_version"] == world_version("v4") != v3["twin_version"]
    assert quality.cache_path("smoke", None, None, "random", 1, "t", world="v3").exists()
    assert quality.cache_path("smoke", None, None, "random", 1, "t").exists()
    # a second call reads the cache: no new Setup
    assert quality.run_one("smoke", None, None, "random", 1, "t", setups, world="v3") == v3
    assert seen == ["v3", "v4"]


def test_variant_keys_keep_the_default_worlds_cache(quality: ModuleType) -> None:
    assert quality.variant("paragon-ec2-2500", None, None) == "paragon-ec2-2500"
    assert quality.variant("paragon-ec2-2500", None, None, "v3") == "paragon-ec2-2500@v3"
    assert quality.variant("paragon-ec2-2500", "graded", 2.0, "v3") == "paragon-ec2-2500@gradedx2@v3"


def test_margins_against_paragon_and_the_best_baseline_per_seed(quality: ModuleType) -> None:
    q = {"sextant": (0.50, 0.40), "paragon": (0.30, 0.38), "least-loaded": (0.20, 0.10),
         "random": (0.10, 0.36), "oracle": (0.9, 0.9)}
    runs = {"s@v3": {p: {6: {"qos_met_fraction": a}, 7: {"qos_met_fraction": b}} for p, (a, b) in q.items()}}
    m = json.loads(json.dumps(quality.margins(runs)))["s@v3"]
    assert m["paragon"]["per_seed"] == {"6": pytest.approx(0.20), "7": pytest.approx(0.02)}
    assert m["paragon"]["worst"] == pytest.approx(0.02)
    # the best baseline is taken seed by seed: least-loaded on seed 6, random on seed 7
    assert m["best-baseline"]["per_seed"] == {"6": pytest.approx(0.30), "7": pytest.approx(0.04)}
    assert m["best-baseline"]["worst"] == pytest.approx(0.04)
    assert quality.margins({"s": {"paragon": runs["s@v3"]["paragon"]}}) == {}


def test_the_best_baseline_counts_versioned_baselines(quality: ModuleType) -> None:
    # the best baseline of the decision-quality bars runs sextant's engine and plan: `interference-oblivious@2` counts
    q = {"sextant": (0.45, 0.40), "least-loaded": (0.20, 0.10), "interference-oblivious@2": (0.43, 0.41),
         "sextant-true-rows": (0.9, 0.9)}
    runs = {"s": {p: {6: {"qos_met_fraction": a}, 7: {"qos_met_fraction": b}} for p, (a, b) in q.items()}}
    m = json.loads(json.dumps(quality.margins(runs)))["s"]["best-baseline"]
    assert m["per_seed"] == {"6": pytest.approx(0.02), "7": pytest.approx(-0.01)}
    assert quality.baseline_rows(q) == ["interference-oblivious@2", "least-loaded"]
    best = quality.ladder_summary(runs)["ladder"]["s"]["best-baseline"]
    assert best["profile"] == "interference-oblivious@2"
