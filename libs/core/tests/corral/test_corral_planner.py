"""The offline planner: prioritization, the provisioning loop and the LP-Batch lower bound."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.corral.mrcute import JobProfile, latency_b
from sextant_core.corral.planner import lp_batch_bound, plan, prioritize, with_data_penalty


def random_latency(rng: np.random.Generator, jobs: int, racks: int) -> np.ndarray:
    """Model B over random programs and sizes (7-rack, 30-machine, 5:1 planner testbed shape)."""
    out = np.empty((jobs, racks))
    for j in range(jobs):
        p = JobProfile(s_map=float(rng.choice([0.25, 1.0, 4.0])), s_reduce=1.0, b_map_p=float(rng.uniform(50, 200)) * 1e6,
                       b_reduce_p=float(rng.uniform(50, 200)) * 1e6, b_disk=500e6,
                       map_tasks=int(rng.integers(10, 2000)), reduce_tasks=int(rng.integers(5, 500)),
                       map_slots=16, reduce_slots=16)
        size = float(rng.lognormal(np.log(20e9), 1.5))
        out[j] = latency_b(p, size, np.arange(1, racks + 1), machines_per_rack=30, nic=1.25e9, oversubscription=5.0)
    return out


def test_prioritize_widest_first_and_racks_free_earliest() -> None:
    lat = np.array([[4.0, 3.0, 2.0], [6.0, 5.0, 4.0], [2.0, 2.0, 2.0]])
    p = prioritize(lat, np.array([1, 3, 1]))
    assert p.starts.tolist() == [4.0, 0.0, 4.0]  # the 3-rack job first, then the others side by side
    assert p.racks[0] == (0,) and p.racks[2] == (1,)  # the longer job takes the first free rack
    assert p.racks[1] == (0, 1, 2) and p.objective == 8.0
    assert p.priorities.tolist() == [1, 0, 2]


def test_online_order_respects_arrivals() -> None:
    lat = np.array([[5.0, 4.0], [1.0, 1.0]])
    p = prioritize(lat, np.array([2, 1]), np.array([3.0, 0.0]), online=True)
    assert p.starts.tolist() == [3.0, 0.0]
    assert p.objective == pytest.approx(((3 + 4 - 3) + 1) / 2)


def test_provisioning_spreads_a_long_job() -> None:
    lat = np.array([[100.0, 55.0, 40.0, 30.0], [10.0, 10.0, 10.0, 10.0]])
    best = plan(lat)
    assert best.objective < 100.0 and best.widths[0] > 1


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_lp_batch_bound_below_every_schedule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lat = random_latency(rng, 25, 7)
    bound = lp_batch_bound(lat)
    best = plan(lat)
    assert bound <= best.objective * (1 + 1e-9)
    for _ in range(30):  # any widths, any order of the same racks: never below the bound
        widths = rng.integers(1, 8, size=25)
        assert bound <= prioritize(lat, widths).objective * (1 + 1e-9)
    assert best.objective <= 1.5 * bound  # and the heuristic is not far from it


def test_data_penalty() -> None:
    lat = np.zeros((2, 3))
    pen = with_data_penalty(lat, np.array([60.0, 0.0]), 10.0)
    assert pen[0].tolist() == [6.0, 3.0, 2.0] and pen[1].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("online", [False, True])
def test_plan_fast_objective_matches_prioritize(online: bool) -> None:
    from sextant_core.corral.planner import _objective, _order

    rng = np.random.default_rng(11)
    lat = random_latency(rng, 12, 5)
    arr = rng.uniform(0, 3000, size=12) if online else np.zeros(12)
    for _ in range(20):
        w = rng.integers(1, 6, size=12)
        full = prioritize(lat, w, arr, online=online)
        fast = _objective(lat[np.arange(12), w - 1].tolist(), _order(lat, w, arr, online).tolist(), w.tolist(),
                          arr.tolist(), 5, online)
        assert fast == pytest.approx(full.objective)
    best = plan(lat, arr, online=online)
    assert best.objective <= prioritize(lat, np.ones(12, dtype=np.int64), arr, online=online).objective


@pytest.mark.parametrize("online", [False, True])
def test_fast_objective_with_tied_free_times(online: bool) -> None:
    """Whole-number latencies make many racks free at the same instant: the multiset of free times
    must merge and split those groups exactly as the rack-by-rack simulation does."""
    from sextant_core.corral.planner import _objective, _order

    rng = np.random.default_rng(5)
    for _ in range(30):
        n_jobs, n_racks = int(rng.integers(2, 15)), int(rng.integers(1, 8))
        lat = rng.integers(1, 4, size=(n_jobs, n_racks)).astype(float)
        arr = rng.integers(0, 4, size=n_jobs).astype(float) if online else np.zeros(n_jobs)
        w = rng.integers(1, n_racks + 1, size=n_jobs)
        full = prioritize(lat, w, arr, online=online)
        fast = _objective(lat[np.arange(n_jobs), w - 1].tolist(), _order(lat, w, arr, online).tolist(),
                          w.tolist(), arr.tolist(), n_racks, online)
        assert fast == pytest.approx(full.objective, rel=1e-12)
