"""Kwiken's request simulator: stage families, the DAG library, periods and policies (sextant_sim/kwiken)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.kwiken import reissue, sumvar
from sextant_core.kwiken.dag import end_to_end
from sextant_core.kwiken.reissue import NO_REISSUE, StagePlan
from sextant_sim.kwiken import families, library
from sextant_sim.kwiken import requests as rq


def test_the_library_has_the_documented_shapes() -> None:
    lib = library.library(7, 45)
    assert len(lib) == 45
    sizes = [s.dag.n for s in lib]
    assert min(sizes) >= 4 and max(sizes) <= 150 and sum(n <= 10 for n in sizes) >= 9
    for svc in lib:
        d = svc.dag
        assert max(len(p) for p in d.preds) <= library.MAX_FAN_IN
        assert d.sinks() == [d.n - 1] and d.order[0] == 0        # one front end, one aggregator
        for s, f in enumerate(svc.families):
            assert families.MEDIAN_MS[0] <= f.median <= families.MEDIAN_MS[1]
            assert families.SIGMA[0] <= f.sigma <= families.SIGMA[1]
            assert families.SLOW_PROB[0] <= f.slow_prob <= families.SLOW_PROB[1]
            assert 20 <= f.timeout / f.median <= 50
            assert f.responders == 1 or library.RESPONDERS[0] <= f.responders <= library.RESPONDERS[1]
            assert d.partial[s] == (f.responders > 1)
    big = library.dag_of_size(7, 0, 150)
    assert big.dag.n == 150 and max(len(p) for p in big.dag.preds) <= library.MAX_FAN_IN


def test_the_library_is_a_function_of_its_seed() -> None:
    a, b = library.library(3, 5), library.library(3, 5)
    assert [s.dag for s in a] == [s.dag for s in b]
    assert [s.dag for s in a] != [s.dag for s in library.library(4, 5)]


def test_a_fanout_stage_is_the_maximum_of_its_responders() -> None:
    f = families.StageFamily(10.0, 0.6, 0.01, 10.0, 300.0, responders=200)
    rng = np.random.default_rng(1)
    direct = families.draw(f, (4000, 200), rng).max(axis=1)
    sampled = families.draw_stage(f, 4000, np.random.default_rng(2))
    for q in (10, 50, 90):
        assert np.percentile(sampled, q) == pytest.approx(np.percentile(direct, q), rel=0.08)
    assert sampled.max() <= f.timeout


def test_draws_respect_the_truncation_and_the_slow_mode() -> None:
    f = families.StageFamily(10.0, 0.3, 0.05, 20.0, 250.0)
    x = families.draw(f, 100_000, np.random.default_rng(3))
    assert x.max() == 250.0                                     # the stage timeout is reached and not passed
    assert (x > 100).mean() == pytest.approx(0.05, abs=0.01)    # only the slow mode passes 10 × the median


def test_periods_are_seeded_and_no_mitigation_is_the_plain_dag() -> None:
    svc = library.library(5, 3)[2]
    a, b = rq.period(svc, 5, 0, 500), rq.period(svc, 5, 0, 500)
    assert a.lat.tobytes() == b.lat.tobytes() and a.alt.tobytes() == b.alt.tobytes()
    assert rq.period(svc, 5, 1, 500).lat.tobytes() != a.lat.tobytes()
    o = rq.run(a, [NO_REISSUE] * svc.dag.n)
    assert np.array_equal(o.e2e, end_to_end(svc.dag, a.lat)) and o.reissue_used == 0.0


def test_reissuing_everything_costs_the_whole_budget_and_cuts_the_tail() -> None:
    svc = library.library(5, 3)[0]
    per = rq.period(svc, 5, 1, 4000)
    base = rq.run(per, [NO_REISSUE] * svc.dag.n)
    full = rq.run(per, [StagePlan("immediate", 1.0, 0.0)] * svc.dag.n)
    assert full.reissue_used == pytest.approx(1.0) and rq.p99_cut(base, full) > 0.2


def test_the_vectorised_random_search_agrees_with_the_request_simulator() -> None:
    svc = library.library(5, 3)[0]
    tr = rq.period(svc, 5, 0, 3000)
    curves = [reissue.reissue_curve(tr.lat[:, s], seed=s) for s in range(svc.dag.n)]
    alloc = sumvar.random_allocations(svc.dag.normalised_costs(), 0.05, 4, seed=1)
    many = rq.p99_many(tr, alloc, curves, tr.lat, rows=3000)
    for k in range(4):
        plans = [reissue.plan_stage(tr.lat[:, s], float(alloc[k, s]), curves[s]) for s in range(svc.dag.n)]
        assert many[k] == pytest.approx(rq.run(tr, plans).p(99.0), rel=1e-12)
