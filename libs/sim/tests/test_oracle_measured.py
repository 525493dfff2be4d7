"""`oracle-measured-dense`: the oracle's planner fed the rows the classification engine returns
under the dense profiling plan (`oracle.MeasuredOracleView`), classifier and plan as `sextant-dense`."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core import profiles as core_profiles
from sextant_core.policies import AdmitAll, Classified, NoAdaptation
from sextant_sim import baselines
from sextant_sim.estimates import EstimateSource
from sextant_sim.oracle import MeasuredOracleView, OraclePlanner, OracleView, oracle_view
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare


@pytest.fixture(scope="module")
def setup():  # type: ignore[no-untyped-def]
    return prepare(load_scenario("smoke"), 2)


def _source(st) -> EstimateSource:  # type: ignore[no-untyped-def]
    return EstimateSource(st.truths, st.profiler, st.cat, st.gt, st.seed, 1.0)


def test_profile_is_the_oracle_placing_on_sextant_dense_rows(setup) -> None:  # type: ignore[no-untyped-def]
    assert "oracle-measured-dense" in baselines.names()
    view = oracle_view("oracle-measured-dense", setup, _source(setup), lambda: None)
    assert isinstance(view, MeasuredOracleView)
    ps = baselines.policy_set("oracle-measured-dense", estimates=_source(setup), oracle=view)
    dense = core_profiles.policy_set("sextant-dense")
    assert isinstance(ps.planner, OraclePlanner) and ps.planner.view is view
    assert type(ps.classifier) is type(dense.classifier)  # the classification engine, not the port
    assert type(ps.classifier).__name__ != "EstimateClassifier"
    assert ps.profiling == dense.profiling  # the dense plan
    assert isinstance(ps.admission, AdmitAll) and isinstance(ps.reprovisioner, NoAdaptation)
    with pytest.raises(ValueError, match="measured view"):
        baselines.policy_set("oracle-measured-dense", estimates=_source(setup), oracle=OracleView(setup))
    with pytest.raises(ValueError, match="state_of"):
        oracle_view("oracle-measured-dense", setup, _source(setup))


def test_the_view_reads_the_cores_rows_not_the_port(setup) -> None:  # type: ignore[no-untyped-def]
    """The measured view converts the core's classification row as the estimated view converts
    the port's: fed the port's own row through the state, both give the same interference arrays
    (and the speeds up to the division by the fastest platform's)."""
    src = _source(setup)
    w = setup.subs[0].workload_id
    row = src.estimate(w, 0)

    class _W:
        classification = row

    class _S:
        workloads = {w: _W()}

    measured = MeasuredOracleView(setup, src, lambda: _S())  # type: ignore[arg-type,return-value]
    estimated = oracle_view("oracle-estimates", setup, src)
    for x, y in zip(measured.pressure(w)[:2], estimated.pressure(w)[:2], strict=True):
        np.testing.assert_allclose(x, y)
    np.testing.assert_allclose(measured.speed(w), estimated.speed(w) / estimated.speed(w).max())  # relative
    # another row in the state -> another view (re-read when the classification object changes)
    _W.classification = Classified(caused={k: 0.0 for k in row.caused}, tolerated={k: 100.0 for k in row.tolerated},
                                   heterogeneity=dict(row.heterogeneity))
    assert not np.allclose(measured.pressure(w)[0], estimated.pressure(w)[0])
    assert np.all(measured.pressure(w)[0] == 0.0)


def test_profile_runs_on_the_engines_rows(setup) -> None:  # type: ignore[no-untyped-def]
    from sextant_sim.runner import run_profile

    res = run_profile(setup, "oracle-measured-dense", 2)
    assert res.summary["decisions"] > 0 and 0.0 <= res.summary["qos_met_fraction"] <= 1.0
    assert res.summary["policy_version"] == "1+oracle"
    # the dense plan profiled (more runs a workload than the papers' 5)
    assert res.summary["profiling_runs_per_workload"] > 5.0


def test_measured_levels_become_speeds_relative_to_the_fastest() -> None:
    from sextant_sim.oracle import relative_speeds

    np.testing.assert_allclose(relative_speeds([5e8, 2.5e8, 4e8]), [1.0, 0.5, 0.8])
    np.testing.assert_allclose(relative_speeds([4.0, None, 1.0]), [1.0, 0.5, 0.25])  # geometric mean 2
    np.testing.assert_allclose(relative_speeds([None, None]), [1.0, 1.0])
