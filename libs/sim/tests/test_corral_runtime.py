"""Corral's runtime in the twin: failures, the fall-back, ad hoc jobs, periodic re-planning."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from sextant_sim.corral import workloads as wl
from sextant_sim.corral.experiment import run_policy
from sextant_sim.corral.failures import Failure, down_fraction, rack_failure
from sextant_sim.corral.jobs import JobState, rack_replicas
from sextant_sim.corral.network import Topology
from sextant_sim.corral.schedulers import CorralRuntime, Scheduler, Task, YarnCS
from sextant_sim.corral.twin import run
from sextant_sim.corral.workloads import GB, MB, Job


def _job(i: int, maps: int, reducers: int, gb: float, shuffle_gb: float, arrival: float = 0.0) -> Job:
    return Job(i, maps, reducers, gb * GB, shuffle_gb * GB, shuffle_gb * GB, 100 * MB, 100 * MB, arrival)


def _fingerprint() -> str:
    t = Topology(racks=3, machines=4, slots=2)
    h = hashlib.sha256()
    for online in (False, True):
        jobs = wl.w1(5, task_scale=20.0, n_jobs=20)
        if online:
            jobs = wl.with_arrivals(jobs, 5, horizon=200.0)
        for p in ("yarn", "corral"):
            r = run_policy(p, jobs, t, 5, online=online)["result"]
            h.update(np.asarray(r.completion).tobytes())
            h.update(repr((r.makespan, r.cross_rack_bytes, r.total_network_bytes, r.maps_local, r.maps_rack,
                           r.maps_remote, r.rate_solves)).encode())
    return h.hexdigest()[:16]


def test_default_runs_are_unchanged_by_the_runtime_options() -> None:
    """Yarn-CS and Corral, batch and online, without failures, ad hoc jobs or re-planning: the
    digest below was computed with the twin before these options existed (commit ccd92cd)."""
    assert _fingerprint() == "0de54a2f34b2e351"


class _Watch:
    """A scheduler wrapper that records every task it hands out (machine, time, job)."""

    def __init__(self, inner: Scheduler) -> None:
        self.inner = inner
        self.given: list[tuple[int, float, int]] = []

    def machines_changed(self, down: Sequence[bool]) -> None:
        hook = getattr(self.inner, "machines_changed", None)
        if hook is not None:
            hook(down)

    def begin(self, now: float, jobs: Sequence[JobState]) -> None:
        self.inner.begin(now, jobs)

    def offer(self, machine: int, now: float, jobs: Sequence[JobState]) -> Task | None:
        task = self.inner.offer(machine, now, jobs)
        if task is not None:
            self.given.append((machine, now, task[1]))
        return task


def test_a_rack_failure_kills_its_tasks_reruns_its_map_outputs_and_every_job_finishes() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = wl.w3(2, task_scale=40.0, n_jobs=12)
    rng = np.random.default_rng(2)
    reps = [np.argsort(rng.random((j.maps, 3)), axis=1) * t.machines + rng.integers(0, 4, (j.maps, 3)) for j in jobs]
    base = run(jobs, reps, YarnCS(t, range(len(jobs))), t, seed=2)
    fail = rack_failure(t, 1, at=0.3 * base.makespan, duration=0.2 * base.makespan)
    watch = _Watch(YarnCS(t, range(len(jobs))))
    res = run(jobs, reps, watch, t, seed=2, failures=[fail])
    assert np.isfinite(res.completion).all() and (res.completion > 0).all()  # every job ends
    assert res.tasks_lost > 0 and res.maps_rerun > 0
    assert res.makespan > base.makespan
    # nothing is started on the failed rack while it is down, and it is used again after
    during = [(x, now) for x, now, _ in watch.given if fail.at <= now < fail.at + fail.duration]
    assert during and all(t.rack_of(x) != 1 for x, _ in during)
    assert any(t.rack_of(x) == 1 for x, now, _ in watch.given if now >= fail.at + fail.duration)
    # every map ran at least once more than it was lost
    assert res.maps_local + res.maps_rack + res.maps_remote >= sum(j.maps for j in jobs) + res.maps_rerun
    again = run(jobs, reps, YarnCS(t, range(len(jobs))), t, seed=2, failures=[fail])
    assert again.makespan == res.makespan and np.array_equal(again.completion, res.completion)


def test_a_map_reads_a_live_replica_when_its_local_one_is_down() -> None:
    t = Topology(racks=2, machines=2, slots=1)
    job = _job(0, 1, 1, 0.1, 0.01, arrival=2.0)
    reps = [np.array([[0, 2, 3]])]  # machine 0 (rack 0), machines 2, 3 (rack 1)
    down = Failure(0.0, (0, 2))  # rack 0 holds no live replica; machine 3 does
    res = run([job], reps, YarnCS(t, [0], node_delay=0), t, seed=1, failures=[down])
    # machine 3 reads locally, or machine 1 reads across the core: never "rack-local" from machine 0
    assert res.maps_rack == 0 and res.maps_local + res.maps_remote == 1
    assert (res.cross_rack_bytes > 0) == (res.maps_remote == 1)
    assert np.isfinite(res.completion).all()


def test_fallback_lifts_the_racks_only_while_a_majority_of_one_is_down() -> None:
    t = Topology(racks=3, machines=4, slots=1)
    js = JobState(_job(0, 4, 1, 0.4, 0.1), rack_replicas(t, 4, [1], np.random.default_rng(0)), t)
    corral = CorralRuntime(t, [[1]], [0], node_delay=0, fallback=0.5)
    down = np.zeros(t.n_machines, dtype=bool)
    down[4:6] = True  # half of rack 1: not a majority
    corral.machines_changed(down)
    corral.begin(0.0, [js])
    assert corral.offer(0, 0.0, [js]) is None
    down[6] = True  # three of four
    assert down_fraction(t, down)[1] == 0.75
    corral.machines_changed(down)
    corral.begin(0.0, [js])
    assert corral.offer(0, 0.0, [js]) is not None  # rack 0 now serves the job
    corral.machines_changed(np.zeros(t.n_machines, dtype=bool))  # repaired: back to its racks
    corral.begin(1.0, [js])
    assert corral.offer(8, 1.0, [js]) is None
    without = CorralRuntime(t, [[1]], [0], node_delay=0)
    without.machines_changed(down)
    without.begin(0.0, [js])
    assert without.offer(0, 0.0, [js]) is None  # no fall-back unless asked


def test_fallback_counts_the_machines_of_all_the_jobs_racks() -> None:
    t = Topology(racks=3, machines=4, slots=1)
    js = JobState(_job(0, 4, 1, 0.4, 0.1), rack_replicas(t, 4, [0, 1], np.random.default_rng(0)), t)
    corral = CorralRuntime(t, [[0, 1]], [0], node_delay=0, fallback=0.5)
    down = np.zeros(t.n_machines, dtype=bool)
    down[4:8] = True  # rack 1 whole: half of R_j, not a majority, the job keeps rack 0
    corral.machines_changed(down)
    corral.begin(0.0, [js])
    assert corral.offer(8, 0.0, [js]) is None
    down[0] = True  # 5 of R_j's 8 machines
    corral.machines_changed(down)
    corral.begin(0.0, [js])
    assert corral.offer(8, 0.0, [js]) is not None


def test_with_fallback_a_planned_job_does_not_wait_for_its_failed_rack() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = [_job(i, 8, 4, 2, 4) for i in range(3)]
    plain = run_policy("corral", jobs, t, 1)
    rack = plain["plan"].racks[0][0]
    fail = rack_failure(t, rack, at=1.5, duration=10 * plain["makespan"])
    stuck = run_policy("corral", jobs, t, 1, failures=[fail])
    saved = run_policy("corral", jobs, t, 1, failures=[fail], fallback=0.5)
    assert stuck["makespan"] >= fail.at + fail.duration  # its jobs wait for the repair
    assert saved["makespan"] < fail.at + fail.duration
    assert saved["makespan"] < stuck["makespan"]


def test_adhoc_jobs_take_any_rack_after_the_planned_jobs() -> None:
    t = Topology(racks=2, machines=2, slots=1)
    planned = JobState(_job(0, 2, 1, 0.2, 0.1), np.array([[0, 2, 3], [1, 2, 3]]), t)
    adhoc = JobState(_job(1, 2, 1, 0.2, 0.1), np.array([[2, 0, 1], [3, 0, 1]]), t)
    corral = CorralRuntime(t, [[0], ()], [0, 0], node_delay=0, adhoc=[1])
    corral.begin(0.0, [planned, adhoc])
    assert corral.offer(0, 0.0, [planned, adhoc]) == ("map", 0, 0)  # rack 0: the planned job first
    assert corral.offer(2, 0.0, [planned, adhoc]) == ("map", 1, 0)  # rack 1: only the ad hoc job
    assert 1 not in corral.rank


def test_adhoc_mix_runs_and_only_planned_jobs_stay_in_their_racks() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    rec = wl.with_arrivals(wl.w1(5, task_scale=20.0, n_jobs=15), 5, horizon=200.0)
    ad = [replace(j, id=15 + i) for i, j in enumerate(wl.w1(1005, task_scale=20.0, n_jobs=5))]
    jobs = rec + ad
    out = run_policy("corral", jobs, t, 5, online=True, adhoc=range(15, 20))
    res = out["result"]
    assert out["planned"] == list(range(15))
    assert np.isfinite(res.completion).all()
    allowed = np.zeros((15, t.racks), dtype=bool)
    for row, racks in enumerate(out["plan"].racks):
        allowed[row, list(racks)] = True
    assert not (res.job_racks[:15] & ~allowed).any()
    assert (res.job_racks[15:].sum(axis=1) > 1).any()  # ad hoc jobs spread like Yarn-CS's


def test_replanning_is_deterministic_and_moves_pending_jobs_off_a_failed_rack() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = wl.with_arrivals(wl.w1(7, task_scale=20.0, n_jobs=24), 7, horizon=300.0)
    fail = rack_failure(t, 0, at=20.0)
    runs = [run_policy("corral", jobs, t, 7, online=True, failures=[fail], fallback=0.5, replan_period=30.0)
            for _ in range(2)]
    a, b = (r["result"] for r in runs)
    assert np.array_equal(a.completion, b.completion) and a.makespan == b.makespan
    rp = runs[0]["replanner"]
    assert rp.replans > 0 and rp.moved > 0
    late = [j for j in range(len(jobs)) if jobs[j].arrival > 30.0 + t.racks]  # arrived after a re-plan
    assert late and not a.job_racks[late, 0].any()  # nobody starts on the dead rack after it
    assert np.isfinite(a.completion).all()


def test_replanning_moves_only_jobs_not_started_and_jobs_run_on_their_final_racks() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = [_job(i, 8 + 4 * (i % 3), 4, 2 + i % 3, 4) for i in range(9)]
    plain = run_policy("corral", jobs, t, 1)
    out = run_policy("corral", jobs, t, 1, replan_period=5.0)
    rp, res = out["replanner"], out["result"]
    assert rp.replans > 0
    final = rp.runtime.racks
    early = [j for j in range(len(jobs)) if res.first_start[j] < 5.0]  # started before the first re-plan
    assert early and all(final[j] == plain["plan"].racks[j] for j in early)
    allowed = np.zeros((len(jobs), t.racks), dtype=bool)
    for j, racks in enumerate(final):
        allowed[j, list(racks)] = True
    assert not (res.job_racks & ~allowed).any()
