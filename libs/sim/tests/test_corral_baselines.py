"""Corral twin: the ShuffleWatcher-like and LocalShuffle baselines, the SWIM mix, the size/jitter perturbation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sextant_sim.corral import workloads as wl
from sextant_sim.corral.baselines import cover_order, shufflewatcher, shufflewatcher_racks
from sextant_sim.corral.experiment import corral_plan, run_policy
from sextant_sim.corral.jobs import JobState, random_replicas
from sextant_sim.corral.network import Topology
from sextant_sim.corral.perturbation import perturb, run_corral_on
from sextant_sim.corral.schedulers import CorralRuntime, Task
from sextant_sim.corral.twin import Twin, isolated_floor
from sextant_sim.corral.workloads import GB, MB, Job, SwimTrace

T4 = Topology(racks=4, machines=2, slots=2)


def _job(i: int, maps: int, reducers: int, gb: float, shuffle_gb: float) -> Job:
    return Job(i, maps, reducers, gb * GB, shuffle_gb * GB, shuffle_gb * GB, 100 * MB, 100 * MB)


def _missing(*racks: int) -> np.ndarray:
    """Blocks × 3 machines on T4 (4 racks of 2): block i on machine 0 of every rack but `racks[i]`."""
    return np.array([[k * T4.machines for k in range(T4.racks) if k != miss] for miss in racks])


# racks 0, 1, 2 each hold 5 of the 6 blocks, rack 3 holds 3
BLOCKS = _missing(0, 1, 2, 3, 3, 3)


def test_cover_order_takes_the_rack_covering_most_uncovered_blocks() -> None:
    firsts = set()
    for seed in range(20):
        order, uncovered = cover_order(BLOCKS, T4, np.random.default_rng(seed))
        # one of the three 5-block racks first (1 block left), then any rack holding it: all covered
        assert order[0] in (0, 1, 2) and uncovered.tolist() == [1, 0, 0, 0]
        assert sorted(order) == [0, 1, 2, 3]
        firsts.add(order[0])
    assert firsts == {0, 1, 2}  # ties broken at random, not always to the lowest rack


@pytest.mark.parametrize(
    ("input_gb", "shuffle_gb", "width"),
    [
        # cross(k) = input × uncovered(k)/6 + shuffle × (k−1)/k: uncovered = 1, 0, 0, 0
        # shuffle-heavy: cross(1) = 6/6 = 1 < cross(2) = 0 + 12/2 = 6 → one rack
        (6.0, 12.0, 1),
        # input-heavy: cross(1) = 60/6 = 10 > cross(2) = 0.6/2 = 0.3 < cross(3) = 0.4 → two racks
        (60.0, 0.6, 2),
    ],
    ids=["shuffle-heavy-one-rack", "input-heavy-two-racks"],
)
def test_shufflewatcher_minimises_the_jobs_own_cross_rack_bytes(input_gb: float, shuffle_gb: float, width: int) -> None:
    job = _job(0, 6, 2, input_gb, shuffle_gb)
    racks = shufflewatcher_racks(job, BLOCKS, T4, np.random.default_rng(1))
    assert len(racks) == width
    order, _ = cover_order(BLOCKS, T4, np.random.default_rng(1))
    assert racks == sorted(order[:width])  # the first racks of the cover


def test_shufflewatcher_is_blind_to_other_jobs() -> None:
    """Ten shuffle-heavy jobs whose every block has a replica in rack 2 all land on rack 2 alone
    (a planner would spread them), and the data is HDFS's: the same replicas as Yarn-CS."""
    t = Topology(racks=4, machines=3, slots=2)
    jobs = [_job(i, 4, 2, 4, 16) for i in range(10)]

    replicas, runtime, racks = shufflewatcher(jobs, t, np.random.default_rng([7, 5]))
    yarn_rng = np.random.default_rng([7, 5])
    assert all(np.array_equal(r, random_replicas(t, j.maps, yarn_rng)) for r, j in zip(replicas, jobs, strict=True))
    assert all(len(r) == 1 for r in racks)  # shuffle 4× the input: one rack each
    # pin every block on rack 2: every job picks rack 2, whatever the others did
    pinned = np.array([[2, 0, 1], [2, 1, 3], [2, 0, 3], [2, 3, 1]]) * t.machines  # rack 2 holds all 4
    assert {tuple(shufflewatcher_racks(j, pinned, t, np.random.default_rng(i))) for i, j in enumerate(jobs)} == {(2,)}
    assert runtime.per_rack[racks[0][0]][0] == min(i for i, r in enumerate(racks) if r == racks[0])  # FIFO


def test_shufflewatcher_runs_each_job_in_its_racks() -> None:
    t = Topology(racks=5, machines=3, slots=2)
    jobs = [_job(i, 8, 4, 4, 8) for i in range(6)]
    out = run_policy("shufflewatcher", jobs, t, 1)
    assert [len(r) for r in out["racks"]] == [1] * 6  # 8 GB shuffle vs 4 GB input: one rack
    allowed = np.zeros((len(jobs), t.racks), dtype=bool)
    for i, r in enumerate(out["racks"]):
        allowed[i, r] = True
    assert not (out["result"].job_racks & ~allowed).any()
    assert out["maps_remote"] > 0  # random replicas: some blocks have none in the subset


class _Spy(CorralRuntime):
    """CorralRuntime recording the rack of every reducer it places."""

    def __init__(self, topo: Topology, racks: Sequence[Sequence[int]], priorities: Sequence[int]) -> None:
        super().__init__(topo, racks, priorities)
        self.reducer_racks: dict[int, set[int]] = {}

    def offer(self, machine: int, now: float, jobs: Sequence[JobState]) -> Task | None:
        task = super().offer(machine, now, jobs)
        if task is not None and task[0] == "reduce":
            self.reducer_racks.setdefault(task[1], set()).add(self.topo.rack_of(machine))
        return task


def test_localshuffle_reducers_run_in_the_racks_holding_the_map_output() -> None:
    t = Topology(racks=4, machines=3, slots=2)
    jobs = wl.w1(3, task_scale=40.0, n_jobs=12)
    pl, _ = corral_plan(jobs, t)
    rng = np.random.default_rng([3, 5])
    replicas = [random_replicas(t, j.maps, rng) for j in jobs]  # HDFS's placement, as Yarn-CS
    spy = _Spy(t, pl.racks, pl.priorities.tolist())
    twin = Twin(jobs, replicas, spy, t, seed=3)
    res = twin.run()
    assert res.makespan == run_policy("localshuffle", jobs, t, 3)["makespan"]  # the policy is this
    for j, js in enumerate(twin.jobs):
        holding = set(np.flatnonzero(js.map_output > 0).tolist())
        assert holding <= set(pl.racks[j])  # maps ran in the plan's racks only
        assert spy.reducer_racks[j] <= set(pl.racks[j])
        assert int(np.argmax(js.map_output)) in spy.reducer_racks[j]
    corral = run_policy("corral", jobs, t, 3)
    assert res.maps_remote > corral["maps_remote"]  # no replica placed in the plan's racks


# --- SWIM ---------------------------------------------------------------------------------------


def _trace(n: int) -> SwimTrace:
    rng = np.random.default_rng(0)
    x = rng.lognormal(np.log(5 * MB), 4.0, size=n)
    return SwimTrace(x, x * rng.uniform(0, 1, n), x * 0.1, np.arange(n) % 7)


def test_swim_rows_take_one_job_per_input_band() -> None:
    trace = _trace(1000)
    rows = wl.swim_rows(3, 50, trace)
    assert len(set(rows.tolist())) == 50
    ranked = np.sort(trace.input)
    got = np.sort(trace.input[rows])
    for i in range(50):  # the i-th smallest draw lies in the i-th band of 20 jobs
        assert ranked[20 * i] <= got[i] <= ranked[20 * i + 19]
    assert (wl.swim_rows(3, 50, trace) == rows).all() and (wl.swim_rows(4, 50, trace) != rows).any()


def test_swim_batch_follows_the_file() -> None:
    trace = wl.load_swim()
    assert len(trace.input) == 25428
    for seed in (1, 2, 3):
        jobs = wl.swim(seed)
        rows = wl.swim_rows(seed)
        x = np.array([j.input_bytes for j in jobs])
        assert len(jobs) == 200 and x.min() >= wl.SWIM_MIN_BYTES
        # the stratified draw keeps the quantiles: median ≈ 5.1 MB, p95 ≈ 152 GB in the file
        assert np.median(x) == pytest.approx(np.median(trace.input), rel=0.10)
        assert np.percentile(x, 95) == pytest.approx(np.percentile(trace.input, 95), rel=0.20)
        # each job keeps its own row's bytes (above the 1 MB floor)
        big = trace.input[rows] > wl.SWIM_MIN_BYTES
        assert np.array_equal(x[big], trace.input[rows][big])
        shuffles = np.array([j.shuffle_bytes for j in jobs])
        assert np.array_equal(shuffles, np.maximum(trace.shuffle[rows], wl.SWIM_MIN_BYTES))
        # a third of the file shuffles nothing: about as many hit the floor here
        assert (shuffles == wl.SWIM_MIN_BYTES).mean() == pytest.approx((trace.shuffle < wl.SWIM_MIN_BYTES).mean(), abs=0.1)
        assert max(j.maps for j in jobs) <= wl.SWIM_MAX_MAPS and max(j.reducers for j in jobs) <= wl.SWIM_MAX_REDUCERS
    assert wl.swim(1) == wl.swim(1) and wl.swim(1) != wl.swim(2)


# --- perturbation -------------------------------------------------------------------------------


def test_perturb_errs_the_plans_sizes_and_shifts_half_the_starts() -> None:
    jobs = wl.with_arrivals(wl.w1(2, n_jobs=100), 2)
    planned, actual = perturb(jobs, 2)
    ratio = np.array([p.input_bytes / j.input_bytes for p, j in zip(planned, jobs, strict=True)])
    assert ratio.min() >= 0.5 and ratio.max() <= 1.5 and ratio.std() > 0.2  # U(0.5, 1.5): sd 0.29
    assert all(p.shuffle_bytes == pytest.approx(j.shuffle_bytes * r) for p, j, r in zip(planned, jobs, ratio, strict=True))
    assert [p.arrival for p in planned] == [j.arrival for j in jobs]
    shift = np.array([a.arrival - j.arrival for a, j in zip(actual, jobs, strict=True)])
    assert (shift != 0).sum() == 50 and np.abs(shift).max() <= 240.0
    assert all(a.arrival >= 0 and a.input_bytes == j.input_bytes for a, j in zip(actual, jobs, strict=True))
    assert perturb(jobs, 2) == (planned, actual)


def test_corral_on_its_own_plan_is_the_online_policy_and_perturbed_runs_finish() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = wl.with_arrivals(wl.w3(3, task_scale=40.0, n_jobs=20), 3, horizon=300.0)
    same = run_corral_on(jobs, jobs, t, 3)
    policy = run_policy("corral", jobs, t, 3, online=True)
    assert same["makespan"] == policy["makespan"] and same["median_jct"] == policy["median_jct"]
    planned, actual = perturb(jobs, 3, jitter=60.0)
    res = run_corral_on(planned, actual, t, 3)["result"]
    floor = np.array([isolated_floor(j, t) for j in actual])
    assert (res.completion >= floor - 1e-9).all() and np.isfinite(res.completion).all()
