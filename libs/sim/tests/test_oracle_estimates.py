"""`oracle-estimates`: the oracle's planner fed the estimate port (`oracle.EstimatedOracleView`)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_sim import baselines
from sextant_sim.estimates import EstimateSource
from sextant_sim.oracle import EstimatedOracleView, OracleView
from sextant_sim.profiler import PINNED
from sextant_sim.runner import run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare


@pytest.fixture(scope="module")
def setup():  # type: ignore[no-untyped-def]
    return prepare(load_scenario("smoke"), 2)


def _source(st, factor: float = 1.0) -> EstimateSource:  # type: ignore[no-untyped-def]
    return EstimateSource(st.truths, st.profiler, st.cat, st.gt, st.seed, factor)


def test_without_noise_the_view_gives_back_the_truth(setup) -> None:  # type: ignore[no-untyped-def]
    """Noise 0: the ramp's scores inverted back give the true caused pressure and the true
    tolerance (where the ramp's score is below its scale end of 100), and the true speeds."""
    view = EstimatedOracleView(setup, _source(setup, 0.0))
    ref = setup.cat.index(setup.cat.reference().platform_id)
    checked = 0
    for s in setup.subs:
        w = s.workload_id
        t = setup.truths[w]
        c_t, t_t, f_t = t.caused, t.tolerated, t.footprint_gb
        c_e, t_e, f_e = view.pressure(w)
        tol_scores, _ = setup.profiler.interference(setup.truths[w], ref, 0)
        assert f_e == f_t
        np.testing.assert_allclose(c_e, c_t, rtol=1e-3, atol=1e-3)  # scores are rounded to 1e-4
        inside = tol_scores < 99.99
        np.testing.assert_allclose(t_e[inside], t_t[inside], rtol=2e-3, atol=1e-3)
        # at the scale end the inverse is a lower bound of the truth
        assert np.all(t_e[~inside] <= t_t[~inside] * (1 + 1e-6))
        np.testing.assert_allclose(view.speed(w), setup.truths[w].speed, rtol=1e-5)
        checked += int(inside.sum())
    assert checked > 100
    assert PINNED == 1.0


def test_with_noise_the_view_differs_from_the_truth_and_is_deterministic(setup) -> None:  # type: ignore[no-untyped-def]
    a, b = EstimatedOracleView(setup, _source(setup)), EstimatedOracleView(setup, _source(setup))
    w = setup.subs[0].workload_id
    assert all(np.array_equal(x, y) for x, y in zip(a.pressure(w)[:2], b.pressure(w)[:2], strict=True))
    t_t = setup.truths[w].tolerated
    assert not np.allclose(a.pressure(w)[1], t_t)


def test_profiles_run_and_need_their_view(setup) -> None:  # type: ignore[no-untyped-def]
    for p in baselines.ORACLE_ESTIMATES:
        assert p in baselines.names()
        res = run_profile(setup, p, 2)
        assert 0.0 <= res.summary["qos_met_fraction"] <= 1.0
        assert res.summary["decisions"] > 0
    with pytest.raises(ValueError, match="oracle_view"):
        baselines.policy_set("oracle-estimates", estimates=_source(setup), oracle=OracleView(setup))
    # same (scenario, profile, seed) -> the same result
    one, two = run_profile(setup, "oracle-estimates", 2), run_profile(setup, "oracle-estimates", 2)
    assert one.summary["qos_met_fraction"] == two.summary["qos_met_fraction"]
