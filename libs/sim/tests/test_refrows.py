"""Reference rows (`sextant_sim.refrows`): the reference estimator's posterior rows from the
entries a plan measured — exact on a workload the prior holds, consistent with the measured
cells, wired as `sextant-reference-rows` / `sextant-reference-dense`."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_contracts.events import ProfileRun
from sextant_contracts.model import Classification
from sextant_core.planning import policysets
from sextant_sim import baselines, seeding
from sextant_sim.estimates import EstimateSource
from sextant_sim.groundtruth import SOURCES
from sextant_sim.oracle import OracleView
from sextant_sim.refrows import ReferenceRowsClassifier, prior_draws
from sextant_sim.runner import run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare

DRAWS = 300


@pytest.fixture(scope="module")
def setup() -> Setup:
    return prepare(load_scenario("smoke"), 1)


def _run(cls: Classification, column: str, platform: str, cores: int = 1, nodes: int = 1) -> ProfileRun:
    return ProfileRun(run_id=f"{cls.value}:{column}:{platform}:{cores}:{nodes}", classification=cls, column=column,
                      platform=platform, server_id="sandbox", cores=cores, nodes=nodes)


def _dense_runs(setup: Setup, kind: str) -> list[ProfileRun]:
    high = setup.cat.reference().platform_id
    runs = [_run(Classification.SCALE_UP, f"c{c}", high, c) for c in (1, 2, 4)]
    runs += [_run(Classification.HETEROGENEITY, p.platform_id, p.platform_id) for p in setup.cat.platforms]
    runs += [_run(Classification.INTERFERENCE, s, high) for s in SOURCES]
    if kind != "batch":
        runs += [_run(Classification.SCALE_OUT, f"n{n}", high, 1, n) for n in (2, 4, 8)]
    return runs


def test_the_prior_follows_the_scenario_mix(setup: Setup) -> None:
    kinds = {setup.gt.families[f].kind for g in setup.scenario.groups for f in g.mix}
    for kind in kinds:
        draws = prior_draws(setup, kind, 60)
        assert len(draws) == 60 and {t.kind.value for t in draws} == {kind}
        fams = {f for g in setup.scenario.groups for f in g.mix if setup.gt.families[f].kind == kind}
        assert {t.family for t in draws} <= fams
    with pytest.raises(ValueError):
        prior_draws(setup, "no-such-kind", 5)


@pytest.mark.parametrize("units", ["engine", "port"])
@pytest.mark.parametrize("kind", ["batch", "analytics", "service"])
def test_a_workload_the_prior_holds_is_recovered_exactly_from_dense_noise_free_entries(
        setup: Setup, kind: str, units: str) -> None:
    clf = ReferenceRowsClassifier(setup, DRAWS, units=units)
    est, _ = clf.prior(kind)
    j = 7
    t = est.prior[j]
    obs = []
    for r in _dense_runs(setup, kind):
        if r.classification is Classification.INTERFERENCE:
            tol, cau = est.scores(r.platform)
            k = SOURCES.index(r.column)
            obs.append((r, float(tol[j, k]), float(cau[j, k])))
        else:
            obs.append((r, float(est.performance(r.platform, r.cores, r.nodes)[j]), None))
    got, ess = clf.rows(kind, obs)
    assert min(ess.values()) < 1.5  # the posterior sits on draw j
    plats = [p.platform_id for p in setup.cat.platforms]
    prof, high = setup.profiler, setup.cat.index(setup.cat.reference().platform_id)
    tol, cau = prof.interference(t, high)
    assert got.tolerated == {s: round(float(tol[k]), 6) for k, s in enumerate(SOURCES)}
    assert got.caused == {s: round(float(cau[k]), 6) for k, s in enumerate(SOURCES)}
    assert bool(got.scale_out) == (kind != "batch")
    if units == "port":
        assert got.heterogeneity == {p: round(float(t.speed[i]), 6) for i, p in enumerate(plats)}
        assert got.scale_up["c1"] == round(t.scale_up(1) / t.scale_up(t.threads), 6)
        assert max(got.heterogeneity.values()) == pytest.approx(1.0)  # the fastest platform is 1
        if kind != "batch":
            assert got.scale_out["n1"] == pytest.approx(1.0)
    else:  # the run values at the reference configuration (1 core here), as the engine's rows hold them
        assert got.heterogeneity == pytest.approx({p: prof.performance(t, i, 1, 1) for i, p in enumerate(plats)},
                                                  rel=1e-6)
        assert got.scale_up["c2"] == pytest.approx(prof.performance(t, high, 2, 1), rel=1e-6)
        if kind != "batch":
            assert got.scale_out["n8"] == pytest.approx(prof.performance(t, high, 1, 8), rel=1e-6)


@pytest.mark.parametrize("units", ["engine", "port"])
def test_measured_cells_are_kept(setup: Setup, units: str) -> None:
    clf = ReferenceRowsClassifier(setup, DRAWS, units=units)
    high = setup.cat.reference().platform_id
    sd = setup.gt.noise.perf_sd * setup.profiler.noise_scale
    checked = 0
    for s in setup.subs:
        t = s.truth
        if t.kind.value != "batch":
            continue
        other = next(p.platform_id for p in setup.cat.platforms if p.platform_id != high)
        runs = [_run(Classification.SCALE_UP, "c1", high), _run(Classification.HETEROGENEITY, other, other)]
        meas = [setup.profiler.measure(s.workload_id, t, r).value for r in runs]
        got, _ = clf.rows("batch", [(r, v, None) for r, v in zip(runs, meas, strict=True)])
        if units == "engine":  # as measured (the reference run fills its platform's cell and c1)
            assert got.heterogeneity[high] == round(meas[0], 6) and got.heterogeneity[other] == round(meas[1], 6)
            assert got.scale_up["c1"] == round(meas[0], 6)
        else:  # the measured ratio of per-core speeds, the level from the posterior
            ratio = got.heterogeneity[other] / got.heterogeneity[high]
            assert ratio == pytest.approx(meas[1] / meas[0], rel=1e-5)
            assert 0.5 < got.heterogeneity[high] < 1.0 + 10 * sd
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_joint_and_split_likelihoods_differ(setup: Setup) -> None:
    high = setup.cat.reference().platform_id
    s = next(x for x in setup.subs if x.truth.kind.value == "batch")
    runs = [_run(Classification.SCALE_UP, "c1", high), _run(Classification.SCALE_UP, "c4", high, 4),
            _run(Classification.INTERFERENCE, SOURCES[0], high)]
    obs = [(r, m.value, m.caused) for r in runs for m in [setup.profiler.measure(s.workload_id, s.truth, r)]]
    joint, ess_j = ReferenceRowsClassifier(setup, DRAWS).rows("batch", obs)
    split, ess_s = ReferenceRowsClassifier(setup, DRAWS, joint=False).rows("batch", obs)
    # the split posterior of heterogeneity sees one entry only: broader than the joint one
    assert ess_s["heterogeneity"] > ess_j["heterogeneity"]
    assert joint.model_versions != split.model_versions
    with pytest.raises(ValueError):
        ReferenceRowsClassifier(setup, DRAWS, point="mode")


def test_profiles_are_wired_with_their_plans(setup: Setup) -> None:
    source = EstimateSource(setup.truths, setup.profiler, setup.cat, setup.gt, setup.seed, 1.0)
    view = OracleView(setup)
    assert {"sextant-reference-rows", "sextant-reference-dense"} <= set(baselines.names())
    rows = baselines.policy_set("sextant-reference-rows", estimates=source, oracle=view, setup=setup)
    dense = baselines.policy_set("sextant-reference-dense", estimates=source, oracle=view, setup=setup)
    assert isinstance(rows.classifier, ReferenceRowsClassifier) and isinstance(dense.classifier, ReferenceRowsClassifier)
    assert rows.profiling is policysets.PROFILING_OF[policysets.VERSION]
    assert dense.profiling is policysets.DENSE_PROFILING
    assert rows.profile == "sextant-reference-rows" and rows.version == policysets.VERSION
    with pytest.raises(ValueError):
        baselines.policy_set("sextant-reference-rows", estimates=source, oracle=view)


def test_a_run_classifies_every_workload_from_its_own_entries(setup: Setup) -> None:
    clf = ReferenceRowsClassifier(setup, 100)  # the profile's classifier, with a small prior (fast)
    res = run_profile(setup, "sextant", 1, classifier=clf)
    assert res.engine.params.classifier is clf
    assert res.summary["decisions"] > 0 and len(clf.stats) > 0
    assert all(s["entries"] > 0 for s in clf.stats)  # the plan's entries reached the classifier
    # the knowledge base is seeded as for the engine, so the adaptive plan has its prior
    assert seeding.learns_from_knowledge(res.engine.params) and seeding.events_for(setup, res.engine.params)
    summ = clf.summary()
    assert all(np.isfinite(v["interference_error_points"]) for v in summ.values())


def test_measured_scores_are_kept_on_request(setup: Setup) -> None:
    high = setup.cat.reference().platform_id
    s = next(x for x in setup.subs if x.truth.kind.value == "batch")
    runs = [_run(Classification.SCALE_UP, "c1", high), _run(Classification.INTERFERENCE, SOURCES[0], high)]
    obs = [(r, m.value, m.caused) for r in runs for m in [setup.profiler.measure(s.workload_id, s.truth, r)]]
    kept, _ = ReferenceRowsClassifier(setup, DRAWS, scores="measured").rows("batch", obs)
    post, _ = ReferenceRowsClassifier(setup, DRAWS).rows("batch", obs)
    assert kept.tolerated[SOURCES[0]] == round(obs[1][1], 6) and kept.caused[SOURCES[0]] == round(obs[1][2], 6)
    assert {k: v for k, v in kept.tolerated.items() if k != SOURCES[0]} == \
        {k: v for k, v in post.tolerated.items() if k != SOURCES[0]}  # the hidden scores: the posterior's
