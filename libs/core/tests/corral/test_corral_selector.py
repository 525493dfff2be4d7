"""The resource selector: Oktopus placement, the imbalance of §4.2.2's worked example, strategies."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.corral.mrcute import JobProfile, latency_a
from sextant_core.corral.selector import (
    Allocation,
    Candidate,
    Strategy,
    Tree,
    candidates,
    commit,
    imbalance,
    min_bandwidth,
    place,
    release,
    select,
    wave_breakpoints,
)

MB = 1e6


def example_rack() -> Tree:
    """Fig. 4.1: one rack of 4 machines × 2 VM slots, 1000 Mbps per machine link."""
    return Tree(pods=1, racks_per_pod=1, machines_per_rack=4, slots_per_machine=2, nic=1000.0, oversubscription=1.0)


def test_worked_example_imbalances_and_choice() -> None:
    t = example_rack()
    a = place(t, 3, 500.0)
    b = place(t, 6, 200.0)
    assert a is not None and b is not None
    assert sorted(a.counts.tolist()) == [1, 2]  # packed 2 + 1
    assert sorted(b.counts.tolist()) == [2, 2, 2]
    assert imbalance(t, a) == pytest.approx(1.140625)  # 1.1406
    assert imbalance(t, b) == pytest.approx(1.1425)
    cands = [Candidate(3, 500.0, 10.0), Candidate(6, 200.0, 10.0)]
    sel = select(t, cands, Strategy.CORRAL_I, deadline=10.0)
    assert sel is not None and (sel.candidate.n, sel.candidate.b) == (3, 500.0)
    # the text's follow-up: <3,400> fits after <3,500> but not after <6,200>
    commit(t, sel.allocation)
    assert place(t, 3, 400.0) is not None
    release(t, sel.allocation)
    assert t.free.tolist() == [2, 2, 2, 2] and np.all(t.m_res == 1000.0)
    commit(t, b)
    assert place(t, 3, 400.0) is None


def test_placement_respects_links_and_never_overbooks() -> None:
    rng = np.random.default_rng(3)
    t = Tree(pods=2, racks_per_pod=3, machines_per_rack=5, slots_per_machine=4, nic=1000.0, oversubscription=2.0)
    live = []
    for _ in range(300):
        if live and rng.random() < 0.35:
            release(t, live.pop(int(rng.integers(len(live)))))
            continue
        a = place(t, int(rng.integers(1, 25)), float(rng.choice([50.0, 100.0, 300.0])))
        if a is not None:
            assert a.counts.sum() == a.n
            commit(t, a)
            live.append(a)
        assert t.free.min() >= 0
        assert t.m_res.min() >= -1e-6 and t.r_res.min() >= -1e-6 and t.p_res.min() >= -1e-6
    for a in live[::-1]:
        release(t, a)
    assert t.free.sum() == t.vms and np.allclose(t.r_res, t.r_cap) and np.allclose(t.p_res, t.p_cap)


def test_lowest_subtree_first() -> None:
    t = Tree(pods=2, racks_per_pod=2, machines_per_rack=4, slots_per_machine=4, nic=1000.0, oversubscription=4.0)
    a = place(t, 4, 900.0)  # fits one machine: no bandwidth anywhere
    assert a is not None and a.machines.size == 1 and float(a.reservation(a.counts).sum()) == 0.0
    c = place(t, 10, 100.0)  # needs a rack; the rack uplink carries nothing
    assert c is not None and c.racks.size == 1 and c.pods.size == 1
    d = place(t, 40, 10.0)  # more than a pod: crosses the core
    assert d is not None and d.pods.size == 2
    assert place(t, 65, 1.0) is None


def test_candidates_meet_the_deadline_with_least_bandwidth() -> None:
    p = JobProfile(s_map=1.0, s_reduce=1.0, b_map_p=60 * MB, b_reduce_p=60 * MB, b_disk=125 * MB,
                   map_tasks=400, reduce_tasks=100, map_slots=2, reduce_slots=2)
    size = 200e9
    deadline = 1800.0
    cands = candidates(p, size, deadline, n_max=400, b_step=5 * MB, b_max=125 * MB)
    assert cands, "some tuple meets a loose deadline"
    for c in cands:
        assert c.time <= deadline
        if c.b > 5 * MB:  # one step less misses the deadline
            assert float(latency_a(p, size, c.n, c.b - 5 * MB)) > deadline
    need = min_bandwidth(p, size, np.array([1]), deadline)
    assert np.isnan(need[0])  # one machine cannot make it
    fast = candidates(p, size, deadline, n_max=400, b_step=5 * MB, b_max=125 * MB, faster=2)
    assert len(fast) > len(cands) and min(c.time for c in fast) < min(c.time for c in cands)


def test_strategies() -> None:
    t = Tree(pods=1, racks_per_pod=2, machines_per_rack=4, slots_per_machine=2, nic=1000.0, oversubscription=2.0)
    cands = [Candidate(2, 800.0, 9.0), Candidate(4, 300.0, 7.0), Candidate(8, 100.0, 5.0), Candidate(16, 900.0, 3.0)]
    strawman = select(t, cands, Strategy.STRAWMAN, deadline=10.0)
    assert strawman is not None and strawman.candidate.n == 8  # 16 × 900 cannot be placed
    r1 = select(t, cands, Strategy.CORRAL_R, deadline=10.0, rng=np.random.default_rng(1))
    r2 = select(t, cands, Strategy.CORRAL_R, deadline=10.0, rng=np.random.default_rng(1))
    assert r1 is not None and r2 is not None and r1.candidate == r2.candidate
    corral_i = select(t, cands, Strategy.CORRAL_I, deadline=10.0)
    corral_t = select(t, cands, Strategy.CORRAL_T, deadline=10.0)
    assert corral_i is not None and corral_t is not None
    scores = {c.n: imbalance(t, a) for c in cands if (a := place(t, c.n, c.b)) is not None}
    assert corral_i.candidate.n == min(scores, key=lambda n: scores[n])
    times = {c.n: c.time for c in cands}
    assert corral_t.candidate.n == min(scores, key=lambda n: scores[n] * times[n])
    assert select(t, [Candidate(17, 1.0, 1.0)], Strategy.BASELINE, deadline=10.0) is None  # rejected
    assert select(t, [Candidate(2, 1.0, 11.0)], Strategy.CORRAL_I, deadline=10.0) is None  # too slow


def _within_residuals(t: Tree, a: Allocation) -> bool:
    return bool((a.reservation(a.counts) <= t.m_res[a.machines] + 1e-6).all()
                and (a.reservation(a.rack_counts) <= t.r_res[a.racks] + 1e-6).all()
                and (a.reservation(a.pod_counts) <= t.p_res[a.pods] + 1e-6).all())


def test_a_rack_hosting_part_of_a_request_needs_its_uplink_even_with_enough_free_slots() -> None:
    # rack 0: 16 free slots but only one machine link left and no uplink; rack 1: room for 6 VMs
    t = Tree(pods=1, racks_per_pod=2, machines_per_rack=4, slots_per_machine=4, nic=1000.0, oversubscription=4.0)
    t.m_res[1:4] = 0.0
    t.r_res[0] = 0.0
    t.free[4:8] = [2, 2, 1, 1]
    assert place(t, 8, 100.0) is None  # rack 0 can send nothing up: 8 VMs do not fit
    a = place(t, 6, 100.0)
    assert a is not None and a.racks.tolist() == [1] and _within_residuals(t, a)


def test_placements_never_exceed_a_residual_under_tight_links() -> None:
    rng = np.random.default_rng(5)
    t = Tree(pods=2, racks_per_pod=3, machines_per_rack=4, slots_per_machine=4, nic=1000.0, oversubscription=8.0)
    live: list[Allocation] = []
    placed = 0
    for _ in range(400):
        if live and rng.random() < 0.3:
            release(t, live.pop(int(rng.integers(len(live)))))
        a = place(t, int(rng.integers(2, 40)), float(rng.choice([100.0, 250.0, 500.0, 1000.0])))
        if a is not None:
            assert a.counts.sum() == a.n and _within_residuals(t, a)
            commit(t, a)
            live.append(a)
            placed += 1
    assert placed > 50


def test_wave_breakpoints_keep_the_least_n_of_each_wave_count() -> None:
    p = JobProfile(s_map=1.0, s_reduce=1.0, b_map_p=60 * MB, b_reduce_p=60 * MB, b_disk=125 * MB,
                   map_tasks=300, reduce_tasks=70, map_slots=2, reduce_slots=1)

    def waves(n: int) -> tuple[int, int]:
        return -(-300 // (2 * n)), -(-70 // n)

    ns = wave_breakpoints(p, 200).tolist()
    assert ns == sorted(set(ns)) and ns[0] == 1 and max(ns) <= 200
    for n in range(1, 201):  # every N has a breakpoint at or below it with the same waves
        assert max(m for m in ns if m <= n and waves(m) == waves(n)) in ns
    for n in ns[1:]:  # one fewer VM changes the waves: a breakpoint is never wasted
        assert waves(n - 1) != waves(n)
    size, deadline = 100e9, 1500.0
    for c in candidates(p, size, deadline, n_max=200, b_step=5 * MB, b_max=125 * MB):
        assert c.n in ns and c.time <= deadline
