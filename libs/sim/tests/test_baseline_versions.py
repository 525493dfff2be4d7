"""The placement baselines' versions: `@2` classifies and profiles as `sextant` 9 (the acceptance's "best
baseline"); the unsuffixed name and `@1` keep the default engine and the papers' plan."""

from __future__ import annotations

import pytest
from sextant_core.classification.classifier import CollaborativeClassifier
from sextant_core.classification.engine import ENGINE_VERSIONS, EngineParams
from sextant_core.planning import policysets
from sextant_core.profiling.adaptive import AdaptiveProfilingPlan
from sextant_core.profiling.plan import DefaultProfilingPlan
from sextant_sim import baselines
from sextant_sim.estimates import EstimateClassifier, EstimateSource
from sextant_sim.oracle import OracleView
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare

PLACEMENT = ("least-loaded", "heterogeneity-oblivious", "interference-oblivious", "random")


@pytest.fixture(scope="module")
def ports():  # type: ignore[no-untyped-def]
    setup = prepare(load_scenario("smoke"), 2)
    return EstimateSource(setup.truths, setup.profiler, setup.cat, setup.gt, setup.seed, 1.0), OracleView(setup)


@pytest.mark.parametrize("name", PLACEMENT)
def test_version_2_uses_sextant_9s_engine_and_plan(ports, name: str) -> None:  # type: ignore[no-untyped-def]
    source, view = ports
    ps = baselines.policy_set(f"{name}@2", estimates=source, oracle=view)
    sextant = policysets.sextant_policy_set(version="9")
    assert ps.profile == f"{name}@2" and ps.version == "2+placement-framework"
    assert isinstance(ps.classifier, CollaborativeClassifier)
    assert ps.classifier.params == ENGINE_VERSIONS[policysets.ENGINE_OF["9"]] == sextant.classifier.params  # type: ignore[attr-defined]
    assert ps.classifier.params != EngineParams()  # type: ignore[attr-defined]
    assert ps.profiling is policysets.PROFILING_OF["9"] is sextant.profiling
    assert isinstance(ps.profiling, AdaptiveProfilingPlan)
    assert f"{name}@2" in baselines.names()
    # the same placement as version 1
    assert type(ps.planner) is type(baselines.policy_set(name, estimates=source, oracle=view).planner)


@pytest.mark.parametrize("name", PLACEMENT)
def test_version_1_and_the_plain_name_are_unchanged(ports, name: str) -> None:  # type: ignore[no-untyped-def]
    source, view = ports
    for n in (name, f"{name}@1"):
        ps = baselines.policy_set(n, estimates=source, oracle=view)
        assert ps.version == "1+placement-framework" and ps.profile == n
        assert isinstance(ps.classifier, CollaborativeClassifier) and ps.classifier.params == EngineParams()
        assert type(ps.profiling) is DefaultProfilingPlan
        assert ps.profiling.entries == 2 and ps.profiling.duration_s == 30.0


def test_estimate_port_still_overrides_and_unknown_versions_fail(ports) -> None:  # type: ignore[no-untyped-def]
    source, view = ports
    ps = baselines.policy_set("least-loaded@2", estimates=source, oracle=view, classifier="estimates")
    assert isinstance(ps.classifier, EstimateClassifier) and ps.profiling is policysets.PROFILING_OF["9"]
    with pytest.raises(KeyError):
        baselines.policy_set("least-loaded@7", estimates=source, oracle=view)
    assert "oracle@2" not in baselines.names() and "reservation-least-loaded@2" not in baselines.names()
