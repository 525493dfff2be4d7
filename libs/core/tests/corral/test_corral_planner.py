"""The offline planner: prioritization, the provisioning loop and the LP-Batch and LP-Online bounds."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sextant_core.corral.mrcute import JobProfile, latency_b
from sextant_core.corral.planner import lp_batch_bound, lp_online_bound, plan, prioritize, with_data_penalty


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


def list_schedule(lat: np.ndarray, widths: np.ndarray, arrivals: np.ndarray, order: tuple[int, ...]) -> float:
    """Mean completion − arrival when the jobs, in `order`, each take the racks that free first and
    start when they are free and the job has arrived (any order: a policy need not follow arrivals)."""
    free = np.zeros(lat.shape[1])
    total = 0.0
    for j in order:
        chosen = np.argsort(free, kind="stable")[: widths[j]]
        start = max(float(free[chosen].max()), float(arrivals[j]))
        free[chosen] = start + lat[j, widths[j] - 1]
        total += start + lat[j, widths[j] - 1] - arrivals[j]
    return total / len(order)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_lp_online_bound_at_or_below_every_schedule_of_small_instances(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(4):
        n_jobs, n_racks = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        lat = rng.uniform(1.0, 10.0, size=(n_jobs, n_racks))
        arr = rng.uniform(0.0, float(rng.choice([0.5, 5.0, 20.0])), size=n_jobs)  # crowded to spread out
        bound = lp_online_bound(lat, arr, intervals=60)
        best = min(list_schedule(lat, np.array(w), arr, o)
                   for w in itertools.product(range(1, n_racks + 1), repeat=n_jobs)
                   for o in itertools.permutations(range(n_jobs)))
        assert lat.min(axis=1).mean() * (1 - 1e-9) <= bound <= best * (1 + 1e-9)


def test_lp_online_bound_sees_queueing() -> None:
    lat = np.tile([10.0, 6.0, 4.0], (6, 1))  # six identical jobs at t = 0 on 3 racks
    arr = np.zeros(6)
    bound = lp_online_bound(lat, arr)
    assert bound > 1.5 * 4.0  # d_jr = 0 would give the fastest time, 4
    assert bound <= plan(lat, arr, online=True).objective * (1 + 1e-9)
    apart = lp_online_bound(lat, np.arange(6) * 100.0)  # far apart: nobody waits, the bound is tight
    assert apart == pytest.approx(4.0, rel=1e-6)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lp_online_bound_below_plans_and_random_widths(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lat = random_latency(rng, 25, 7)
    arr = rng.uniform(0, 600, size=25)
    bound = lp_online_bound(lat, arr)
    for keep in (False, True):
        assert bound <= plan(lat, arr, online=True, keep_if_better=keep).objective * (1 + 1e-9)
    for _ in range(30):
        widths = rng.integers(1, 8, size=25)
        assert bound <= prioritize(lat, widths, arr, online=True).objective * (1 + 1e-9)


def test_keep_if_better_widens_a_job_that_is_never_the_longest() -> None:
    lat = np.array([[100.0, 120.0], [50.0, 10.0]])  # job 0 is slower on 2 racks, job 1 much faster
    arr = np.array([0.0, 1000.0])  # they never meet
    thesis = plan(lat, arr, online=True)  # (1,1) 75, (2,1) 85, (2,2) 65: job 1 widens only after job 0
    assert thesis.objective == pytest.approx(65.0)
    better = plan(lat, arr, online=True, keep_if_better=True)
    assert better.widths.tolist() == [1, 2] and better.objective == pytest.approx(55.0)
    rng = np.random.default_rng(7)
    for online in (False, True):  # never worse than the thesis's path alone
        lat = random_latency(rng, 20, 5)
        arr = rng.uniform(0, 300, size=20) if online else None
        assert plan(lat, arr, online=online, keep_if_better=True).objective <= plan(lat, arr, online=online).objective


@pytest.mark.parametrize("online", [False, True])
def test_initial_free_times_delay_starts_and_the_fast_objective_follows(online: bool) -> None:
    """Re-planning while jobs run: racks free at given times; zeros are the default plan."""
    from sextant_core.corral.planner import _objective, _order

    rng = np.random.default_rng(8)
    for _ in range(20):
        n_jobs, n_racks = int(rng.integers(2, 12)), int(rng.integers(1, 6))
        lat = rng.integers(1, 5, size=(n_jobs, n_racks)).astype(float)
        arr = rng.integers(0, 4, size=n_jobs).astype(float) if online else np.zeros(n_jobs)
        free = rng.integers(0, 6, size=n_racks).astype(float)
        w = rng.integers(1, n_racks + 1, size=n_jobs)
        full = prioritize(lat, w, arr, online=online, free=free)
        for j, racks in enumerate(full.racks):
            assert full.starts[j] >= free[list(racks)].max() and full.starts[j] >= arr[j]
        fast = _objective(lat[np.arange(n_jobs), w - 1].tolist(), _order(lat, w, arr, online).tolist(),
                          w.tolist(), arr.tolist(), n_racks, online, free.tolist())
        assert fast == pytest.approx(full.objective, rel=1e-12)
        zero = plan(lat, arr, online=online, free=np.zeros(n_racks))
        default = plan(lat, arr, online=online)
        assert zero.racks == default.racks and zero.objective == default.objective
        # the provisioning path depends on the latencies only, and for fixed widths and order later
        # free times never make a list schedule finish earlier (the sorted free times only rise)
        assert plan(lat, arr, online=online, free=free).objective >= default.objective - 1e-9
