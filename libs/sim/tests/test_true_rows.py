"""`sextant-true-rows`: `sextant` fed the true classification rows (the estimate port at noise 0)."""

from __future__ import annotations

import pytest
from sextant_core.planning import policysets
from sextant_core.planning.sextant import SextantPlanner
from sextant_sim import baselines
from sextant_sim.estimates import EstimateClassifier, EstimateSource
from sextant_sim.oracle import OracleView
from sextant_sim.runner import run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare


@pytest.fixture(scope="module")
def setup():  # type: ignore[no-untyped-def]
    return prepare(load_scenario("smoke"), 2)


def test_it_is_sextant_on_the_noise_free_port(setup) -> None:  # type: ignore[no-untyped-def]
    source = EstimateSource(setup.truths, setup.profiler, setup.cat, setup.gt, setup.seed, 1.0)
    ps = baselines.policy_set("sextant-true-rows", estimates=source, oracle=OracleView(setup), classifier="cf")
    assert "sextant-true-rows" in baselines.names()
    assert ps.profile == "sextant-true-rows" and ps.version == policysets.VERSION
    assert isinstance(ps.planner, SextantPlanner) and isinstance(ps.classifier, EstimateClassifier)
    plats = [p.platform_id for p in setup.cat.platforms]
    noisy = EstimateClassifier(source)
    for s in setup.subs[:5]:
        t = setup.truths[s.workload_id]
        got = ps.classifier._source.estimate(s.workload_id, 0)  # type: ignore[attr-defined]
        assert got.heterogeneity == {pid: round(float(t.speed[i]), 6) for i, pid in enumerate(plats)}
        # the same port with its noise differs (the true rows are not the estimates)
        assert noisy._source.estimate(s.workload_id, 0).heterogeneity != got.heterogeneity


def test_it_runs_deterministically(setup) -> None:  # type: ignore[no-untyped-def]
    one, two = run_profile(setup, "sextant-true-rows", 2), run_profile(setup, "sextant-true-rows", 2)
    assert one.summary["decisions"] > 0 and one.summary["policy_version"] == policysets.VERSION
    assert one.summary["qos_met_fraction"] == two.summary["qos_met_fraction"]
    assert one.summary["mean_normalized_performance"] == two.summary["mean_normalized_performance"]
