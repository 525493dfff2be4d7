"""Twin v4's interference: latent resource demands shared across sources, drawn from a child stream
so that everything else a scenario draws stays v3's; v3 stays selectable as a named world."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from sextant_sim import groundtruth
from sextant_sim.arrivals import rng_for, submissions
from sextant_sim.platforms import catalogue
from sextant_sim.realism import band_stats
from sextant_sim.realism.colocation import interference_scores
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare
from sextant_sim.workloads.generate import DrawOptions, _phases, generate
from sextant_sim.workloads.performance import concept_matrix

V3, V4 = groundtruth.load("v3.yaml"), groundtruth.load("v4.yaml")


def _shuffled(x: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.permutation(x[:, j]) for j in range(x.shape[1])])


def _rank1_excess(world: str) -> float:
    """Rank-1 share of the interference-score matrix minus that of its column-shuffled null."""
    m = interference_scores(3, rows=160, world=world)
    real = band_stats(m.values, (71, 20))["r1"]
    null = np.mean([band_stats(_shuffled(m.values, k), (71, 20))["r1"] for k in range(3)])
    return float(real - null)


def test_v4_scores_have_cross_source_structure_and_v3_scores_do_not() -> None:
    # measured on seeds 1-2 (bench/realism.py): v4 ≈ 0.23 vs null ≈ 0.16; v3 equals its null
    assert _rank1_excess("v4") > 0.04
    assert abs(_rank1_excess("v3")) < 0.025


def test_the_latent_draw_leaves_every_other_draw_of_a_scenario_as_in_v3() -> None:
    # smoke (batch, analytics, service, failures) and the phases scenario: same arrivals, families,
    # targets, requests, durations and phase timings in both worlds; only interference differs
    for name in ("smoke", "paragon-local-phases"):
        sc = load_scenario(name)
        cat = catalogue(sc.catalogue)
        a = submissions(sc, 5, cat, concept_matrix(cat, V3), V3)
        b = submissions(sc, 5, cat, concept_matrix(cat, V4), V4)
        # every single-node submission byte for byte; a service's QPS target (the peak its
        # reference deployment serves) and, in a cluster without a job's reference allocation, an
        # analytics target (timed on the cluster's fastest servers, `arrivals.in_cluster`) move with
        # v4's performance model (test_twin_v4_performance.py)
        single = [(x.event, y.event) for x, y in zip(a, b, strict=True) if x.truth.shape == "single"]
        assert single and all(ex == ey for ex, ey in single)
        assert [(s.at, s.workload_id) for s in a] == [(s.at, s.workload_id) for s in b]
        for x, y in zip(a, b, strict=True):
            tx, ty = x.truth, y.truth
            # (`work` is ideal time × the reference speed, so v4's performance model moves it, and
            # so does an analytics job's in-cluster ideal, as above)
            assert (tx.footprint_gb, tx.threads, tx.activity) == (ty.footprint_gb, ty.threads, ty.activity)
            assert tx.shape != "single" or tx.ideal_s == ty.ideal_s
            assert [(p.start, p.speed, p.footprint) for p in tx.phases] == [
                (p.start, p.speed, p.footprint) for p in ty.phases]
        assert any(not np.allclose(x.truth.caused, y.truth.caused) for x, y in zip(a, b, strict=True))
    smoke = load_scenario("smoke")
    assert prepare(smoke, 5).failures == prepare(smoke.model_copy(update={"world": "v3"}), 5).failures


def test_a_scenario_selects_its_world_and_reports_its_version() -> None:
    from sextant_sim.runner import compare

    assert load_scenario("smoke").world == "v4"
    v3 = prepare(load_scenario("smoke", world="v3"), 1)
    v4 = prepare(load_scenario("smoke"), 1)
    assert v3.gt.latent is None and v4.gt.latent is not None
    assert v3.twin_version == groundtruth.twin_version("v3.yaml") != v4.twin_version == groundtruth.TWIN_VERSION
    doc = compare(load_scenario("smoke", world="v3"), ["least-loaded"], seed=1)
    assert (doc["world"], doc["twin_version"]) == ("v3", groundtruth.twin_version("v3.yaml"))
    with pytest.raises(ValidationError):
        load_scenario("smoke", world="v9")
    with pytest.raises(KeyError):
        groundtruth.world_file("v9")


def test_a_v4_phase_moves_several_sources_with_v3s_magnitude() -> None:
    cat = catalogue("paragon-local")
    concepts = concept_matrix(cat, V4)
    mem = [groundtruth.SOURCES.index(s) for s in V3.phases["memory"].sources]
    moved = []
    for j in range(200):
        fam = ("paragon-st", "paragon-mt", "paragon-mp", "paragon-io")[j % 4]
        opts = DrawOptions(phases="memory")
        w3 = generate("x", fam, rng_for(11, "phase-test", j), cat, concepts, V3, opts)
        w4 = generate("x", fam, rng_for(11, "phase-test", j), cat, concepts, V4, opts)
        p3, p4 = w3.phases[1], w4.phases[1]
        m = p3.caused[mem[0]] - 1.0  # v3: exactly 1 + m on its four memory sources
        assert p4.speed == p3.speed and p4.start == p3.start  # the same magnitude draw
        assert np.all(p4.caused >= 1.0) and np.all(p4.caused <= 1.0 + m + 1e-12)
        assert np.all(p4.tolerated <= 1.0) and np.all(p4.tolerated >= 1.0 / (1.0 + 0.5 * m) - 1e-12)
        moved.append(int(np.sum(p4.caused - 1.0 > 0.25 * m)))
    # the memory factor loads several sources: a phase shows on most of them at once
    assert np.median(moved) >= 4


def test_v3_phases_are_unchanged_by_the_latent_option() -> None:
    a = _phases(V3, "memory", np.random.default_rng(7))
    b = _phases(V3, "memory", np.random.default_rng(7), None)
    assert all(np.array_equal(x.caused, y.caused) and x.speed == y.speed for x, y in zip(a, b, strict=True))


def test_latent_parameters_are_validated() -> None:
    raw = V4.latent
    assert raw is not None
    with pytest.raises(ValidationError):
        groundtruth.Latent.model_validate({**raw.model_dump(), "phase_factor": {"memory": "gpu"}})
    with pytest.raises(ValidationError):
        groundtruth.Latent.model_validate({**raw.model_dump(), "loadings": {"memory_cap": [1.0, 0.0, 0.0]}})


def test_only_multi_node_families_get_the_smaller_caused_multiplier() -> None:
    from sextant_sim.workloads.generate import latent_interference, latent_rng

    cat = catalogue("paragon-ec2")
    concepts = concept_matrix(cat, V4)
    lat = V4.latent
    assert lat is not None and lat.multi_node_caused < 1.0
    for fam in ("paragon-io", "hadoop", "webserver"):
        w = generate("x", fam, rng_for(3, "mult", fam), cat, concepts, V4, DrawOptions())
        raw = latent_interference(fam, V4, latent_rng(rng_for(3, "mult", fam))).caused
        scale = V4.families[fam].interference.caused_scale
        assert scale is not None  # all three set a fixed per-node scale
        mult = scale * (lat.multi_node_caused if V4.families[fam].shape != "single" else 1.0)
        assert np.allclose(w.caused, np.clip(raw * mult, 0.0, 100.0))
