"""Corral's twin (sextant_sim/corral): max-min rates, the W1/W2/W3 statistics, replicas, schedulers."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_sim.corral import workloads as wl
from sextant_sim.corral.experiment import corral_latency, run_policy
from sextant_sim.corral.jobs import JobState, rack_replicas, random_replicas
from sextant_sim.corral.network import Topology, max_min
from sextant_sim.corral.schedulers import CorralRuntime, YarnCS
from sextant_sim.corral.twin import isolated_floor, run
from sextant_sim.corral.workloads import GB, MB, TB, Job

INF = np.inf


@pytest.mark.parametrize(
    ("links", "capacity", "expected"),
    [
        # one link of 10 shared by three flows: 10/3 each
        ([[0], [0], [0]], [10.0], [10 / 3] * 3),
        # the classic: link 0 (cap 10) has flows a, b; link 1 (cap 4) has b, c.
        # link 1 saturates first at 2 each (b, c frozen at 2); a rises to 10 − 2 = 8
        ([[0], [0, 1], [1]], [10.0, 4.0], [8.0, 2.0, 2.0]),
        # a flow's own cap (its container link 1, cap 1) frees bandwidth for the other: 1 and 9
        ([[0, 1], [0]], [10.0, 1.0], [1.0, 9.0]),
    ],
    ids=["equal-share", "two-bottlenecks", "capped-flow"],
)
def test_max_min_fair_rates(links: list[list[int]], capacity: list[float], expected: list[float]) -> None:
    cap = np.append(np.asarray(capacity, dtype=float), INF)
    pad = len(cap) - 1
    width = max(len(r) for r in links)
    rows = np.array([r + [pad] * (width - len(r)) for r in links])  # padded with the ∞ link
    np.testing.assert_allclose(max_min(rows, cap), expected, rtol=1e-9)


def test_max_min_never_exceeds_a_link_and_saturates_every_flow() -> None:
    rng = np.random.default_rng(3)
    n_links = 40
    cap = np.append(rng.uniform(1, 10, n_links), INF)
    rows = rng.integers(0, n_links, size=(300, 3))
    rate = max_min(rows, cap)
    load = np.bincount(rows.ravel(), weights=np.repeat(rate, 3), minlength=n_links + 1)[:n_links]
    assert (load <= cap[:n_links] * (1 + 1e-9)).all()
    saturated = load >= cap[:n_links] * (1 - 1e-9)
    assert saturated[rows].any(axis=1).all()  # max-min: every flow crosses a full link


def test_topology_paths() -> None:
    t = Topology(racks=3, machines=2, slots=1)
    assert t.path(0, 1) == [t.up(0), t.down(1)]  # same rack: NICs only
    assert t.path(0, 2) == [t.up(0), t.rack_up(0), t.rack_down(1), t.down(2)]
    assert t.path(None, 4, src_rack=0) == [t.rack_up(0), t.rack_down(2), t.down(4)]
    assert t.core_link == pytest.approx(2 * t.nic / 5)


def test_w1_sizes_and_selectivities() -> None:
    jobs = wl.w1(11)
    tasks = np.array([j.tasks for j in jobs])
    assert len(jobs) == 100
    assert ((tasks <= 50) | ((tasks > 50) & (tasks <= 500)) | (tasks >= 1000)).all()
    assert (tasks <= 50).sum() == 50 and ((tasks > 50) & (tasks <= 500)).sum() == 35 and (tasks >= 1000).sum() == 15
    s_map = np.array([j.input_bytes / j.shuffle_bytes for j in jobs])
    assert s_map.min() >= 0.25 - 1e-12 and s_map.max() <= 4 + 1e-12
    assert (s_map < 1).any() and (s_map > 1).any()


def test_w2_is_tiny_jobs_and_two_giants() -> None:
    jobs = wl.w2(11)
    inputs = np.array([j.input_bytes for j in jobs])
    shuffles = np.array([j.shuffle_bytes for j in jobs])
    assert len(jobs) == 400
    tiny = inputs < 200 * MB
    assert tiny.mean() == pytest.approx(0.9, abs=0.005)
    assert (shuffles[tiny] <= 75 * MB).all()
    giants = inputs > TB
    assert giants.sum() == 2 and np.allclose(inputs[giants], 5.5 * TB, rtol=0.04)


def test_w3_matches_table_4_1() -> None:
    jobs = wl.w3(11)
    assert len(jobs) == 200
    for values, (median, p95) in (
        (np.array([j.tasks for j in jobs], dtype=float), wl.W3_TABLE["tasks"]),
        (np.array([j.input_bytes for j in jobs]), wl.W3_TABLE["input"]),
        (np.array([j.shuffle_bytes for j in jobs]), wl.W3_TABLE["shuffle"]),
    ):
        assert np.median(values) == pytest.approx(median, rel=0.05)
        assert np.percentile(values, 95) == pytest.approx(p95, rel=0.10)


def test_generators_are_functions_of_the_seed_and_scale_keeps_bytes() -> None:
    assert wl.w3(4) == wl.w3(4) and wl.w3(4) != wl.w3(5)
    full, quick = wl.w1(4), wl.w1(4, task_scale=4.0)
    assert [j.input_bytes for j in full] == [j.input_bytes for j in quick]
    assert sum(j.tasks for j in quick) < sum(j.tasks for j in full) / 3


def test_replicas_three_racks_and_one_in_the_plan() -> None:
    t = Topology()
    rng = np.random.default_rng(0)
    for reps in (random_replicas(t, 500, rng), rack_replicas(t, 500, [2, 5], rng)):
        racks = reps // t.machines
        assert reps.shape == (500, 3) and all(len(set(r)) == 3 for r in racks.tolist())
    planned = rack_replicas(t, 500, [2, 5], rng) // t.machines
    assert np.isin(planned[:, 0], [2, 5]).all()
    assert set(np.unique(planned[:, 1:]).tolist()) - {2, 5}  # the others roam the cluster


def _job(i: int, maps: int, reducers: int, gb: float, shuffle_gb: float) -> Job:
    return Job(i, maps, reducers, gb * GB, shuffle_gb * GB, shuffle_gb * GB, 100 * MB, 100 * MB)


def test_delay_scheduling_waits_node_delay_offers_then_takes_any() -> None:
    t = Topology(racks=3, machines=4, slots=1)
    reps = np.array([[0, 4, 8]])  # the only block: machines 0, 4, 8
    js = JobState(_job(0, 1, 1, 1, 1), reps, t)
    yarn = YarnCS(t, [0])
    yarn.begin(0.0, [js])
    for _ in range(t.machines):  # machine 1 holds no replica: 4 missed opportunities
        assert yarn.offer(1, 0.0, [js]) is None
    assert yarn.offer(1, 0.0, [js]) == ("map", 0, 0)  # then rack-local (rack delay off)


def test_corral_runtime_keeps_tasks_in_the_plans_racks() -> None:
    t = Topology(racks=3, machines=4, slots=1)
    reps = rack_replicas(t, 1, [1], np.random.default_rng(0))
    js = JobState(_job(0, 1, 1, 1, 1), reps, t)
    corral = CorralRuntime(t, [[1]], [0], node_delay=0)
    corral.begin(0.0, [js])
    assert corral.offer(0, 0.0, [js]) is None and corral.offer(11, 0.0, [js]) is None  # racks 0 and 2
    assert corral.offer(5, 0.0, [js]) == ("map", 0, 0)


def test_a_shuffle_heavy_batch_corral_beats_yarn_and_keeps_shuffles_in_rack() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = [_job(i, 8, 4, 4, 8) for i in range(6)]
    yarn, corral = (run_policy(p, jobs, t, 1) for p in ("yarn", "corral"))
    assert corral["cross_rack_bytes"] < 0.5 * yarn["cross_rack_bytes"]
    assert corral["makespan"] < yarn["makespan"]
    assert corral["lp_batch"] <= corral["plan_objective"] + 1e-9


def test_the_twin_is_deterministic_and_conserves_work() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = wl.w3(2, task_scale=40.0, n_jobs=12)
    reps = [random_replicas(t, j.maps, np.random.default_rng([2, i])) for i, j in enumerate(jobs)]
    a = run(jobs, reps, YarnCS(t, range(len(jobs))), t, seed=2)
    b = run(jobs, reps, YarnCS(t, range(len(jobs))), t, seed=2)
    assert a.makespan == b.makespan and np.array_equal(a.completion, b.completion)
    assert a.cross_rack_bytes == b.cross_rack_bytes and a.rate_solves == b.rate_solves
    assert a.maps_local + a.maps_rack + a.maps_remote == sum(j.maps for j in jobs)
    # every byte a reducer fetches and every non-local map read crosses the network once
    assert a.total_network_bytes >= sum(j.shuffle_bytes for j in jobs) * (1 - 1e-9)
    assert (a.completion > 0).all()


def test_planned_latency_is_model_b_with_the_data_penalty() -> None:
    t = Topology()
    big = _job(0, 2000, 400, 500, 500)
    lat = corral_latency([big], t)
    assert lat.shape == (1, t.racks)
    assert lat[0, -1] < lat[0, 0]  # a big job gets faster on more racks
    tiny = corral_latency([_job(0, 1, 1, 0.1, 0.01)], t)
    assert tiny[0, 0] < corral_latency([_job(0, 480, 1, 0.1 * 480, 0.01)], t)[0, 0]  # area of a rack


def test_isolated_floor_is_exact_for_a_lone_local_job_and_a_bound_online() -> None:
    t = Topology(racks=3, machines=1, slots=1)
    job = Job(0, 1, 1, 1 * GB, 0.5 * GB, 0.5 * GB, 80 * MB, 50 * MB, arrival=0.3)
    alone = run([job], [np.array([[0, 1, 2]])], YarnCS(t, [0]), t, seed=1)  # every machine holds the block
    # first beat t = 1, map 1 GB at 80 MB/s until 13.5, reducer at the beat t = 14: fetch 0.5 GB at
    # 100 MB/s (its container; the core gives ≥ 125 MB/s), reduce at 50 MB/s: done at 29
    assert isolated_floor(job, t) == pytest.approx(29.0 - 0.3)
    assert alone.completion[0] == pytest.approx(isolated_floor(job, t))
    jobs = wl.with_arrivals(wl.w3(3, task_scale=40.0, n_jobs=30), 3, horizon=120.0)
    t = Topology(racks=3, machines=4, slots=2)
    floor = np.array([isolated_floor(j, t) for j in jobs])
    for policy in ("yarn", "corral"):
        res = run_policy(policy, jobs, t, 3, online=True)["result"]
        assert (res.completion >= floor - 1e-9).all()


def test_diagnostics_add_up_and_corral_stays_in_its_plan() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = wl.with_arrivals(wl.w1(5, task_scale=20.0, n_jobs=20), 5, horizon=200.0)
    yarn, corral = (run_policy(p, jobs, t, 5, online=True) for p in ("yarn", "corral"))
    for out in (yarn, corral):
        res = out["result"]
        assert res.job_cross_bytes.sum() == pytest.approx(res.cross_rack_bytes)
        assert 0 < res.busy_fraction <= res.peak_busy_fraction <= 1  # tasks start only at heartbeats
        assert 0 <= res.core_saturated_fraction <= 1 and 0 <= res.core_utilisation <= 1
        assert (res.first_start >= 0).all() and (res.map_phase >= res.first_start).all()
        assert res.job_racks.any(axis=1).all()
    allowed = np.zeros((len(jobs), t.racks), dtype=bool)
    for i, racks in enumerate(corral["plan"].racks):
        allowed[i, list(racks)] = True
    assert not (corral["result"].job_racks & ~allowed).any()  # the runtime follows the plan
    assert (yarn["result"].job_racks.sum(axis=1) > 1).any()  # while Yarn-CS spreads jobs
