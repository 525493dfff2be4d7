"""The fairness simulator (sextant_sim.fairness): determinism, job accounting, rigid preemption,
the LCG loader and capacity rules, and MaxMin's diagnosis on a small case."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from sextant_core.fairness import make_policy
from sextant_sim.fairness import metrics
from sextant_sim.fairness.engine import simulate
from sextant_sim.fairness.workloads import DAY, Jobs, SyntheticSpec, lcg_capacities, load_lcg, synthetic


def jobs_of(rows: list[tuple[float, float, int, int]], n_vcs: int, days: int = 1) -> Jobs:
    """rows: (submit s, work server-s, parallelism, vc)."""
    a = np.array(rows, dtype=np.float64)
    return Jobs(a[:, 0], a[:, 1], a[:, 2].astype(np.int64), a[:, 3].astype(np.int64), n_vcs, days * DAY)


SMALL = SyntheticSpec(capacities=(40, 15, 20), system=20, loads=(1.0, 1.0, 0.5), daily_sigma=(0.8, 0.3, 0.3),
                      days=4, runtime_median_s=600.0)


def test_same_seed_same_floats_and_every_job_finishes_no_faster_than_alone() -> None:
    jobs, cap, total = synthetic(3, SMALL)
    a = simulate(jobs, cap, total, make_policy("sextant"))
    b = simulate(jobs, cap, total, make_policy("sextant"))
    assert a.done.tobytes() == b.done.tobytes() and a.history.credit.tobytes() == b.history.credit.tobytes()
    assert np.isfinite(a.done).all()
    assert (a.done - jobs.submit >= jobs.alone * (1 - 1e-9)).all()
    assert a.idle_while_waiting == 0.0 and a.lost_work == 0.0  # work-conserving, malleable
    assert np.bincount(jobs.vc).min() > 0


def test_synthetic_month_carries_the_monthly_loads() -> None:
    jobs, cap, total = synthetic(1)
    assert total == 4000 and cap.tolist() == [900, 350, 500, 400, 350, 250]
    np.testing.assert_allclose(metrics.loads(jobs, cap), [1.0, 1.0, 1.0, 0.5, 0.6, 1.4], atol=0.05)
    assert np.bincount(jobs.vc).min() >= 500  # enough jobs for the similar-load rule


def test_rigid_jobs_lose_their_work_when_a_guarantee_is_reclaimed() -> None:
    # VC0 (capacity 1) borrows VC1's idle server at t=0 for a 100 s job; VC1's own job arrives at
    # t=40 and reclaims it: VC0's job (40 s done) is killed and restarts
    jobs = jobs_of([(0, 100, 1, 0), (0, 100, 1, 0), (40, 10, 1, 1)], 2)
    r = simulate(jobs, np.array([1, 1]), 2, make_policy("maxmin"), rigid=True)
    assert r.preemptions == 1 and r.lost_work == pytest.approx(40.0)
    assert r.done.tolist() == pytest.approx([100.0, 150.0, 50.0])
    # the same with malleable jobs: nothing is lost, the job just slows down
    m = simulate(jobs, np.array([1, 1]), 2, make_policy("maxmin"))
    assert m.lost_work == 0.0 and m.done[1] == pytest.approx(110.0)


def test_reclaim_preempts_a_borrower_above_its_target_at_once() -> None:
    # 4 servers, capacities 1 and 1: VC0 takes 3 at t=0 (1 000 s jobs); VC1 over-demands at t=100
    # (three 50 s jobs). MaxMin's targets are 2 and 2: settle gives VC1 the free server and lets
    # VC0 keep its borrowed two until its jobs end; reclaim kills one of VC0's at once.
    rows = [(0, 1000, 1, 0), (0, 1000, 1, 0), (0, 1000, 1, 0), (100, 50, 1, 1), (100, 50, 1, 1), (100, 50, 1, 1)]
    jobs = jobs_of(rows, 2)
    cap, total = np.array([1, 1]), 4
    kept = simulate(jobs, cap, total, make_policy("maxmin"), rigid=True)
    taken = simulate(jobs, cap, total, make_policy("maxmin"), rigid=True, reclaim=True)
    assert kept.preemptions == 0 and kept.done[3:].tolist() == pytest.approx([150.0, 200.0, 250.0])
    assert taken.preemptions == 1 and taken.lost_work == pytest.approx(100.0)
    assert taken.done[3:].tolist() == pytest.approx([150.0, 150.0, 200.0])


def test_strict_history_leaves_servers_idle_while_a_vc_in_debt_waits() -> None:
    # VC0 borrows the whole cell for 23 h (balance: earns 10/s, spends 20/s), still in debt on day
    # 2, when it waits for 10 more servers while VC1's 10 sit idle
    rows = [(0, 23 * 3600 * 20, 20, 0), (DAY, 5 * 3600 * 20, 20, 0)]
    jobs = jobs_of(rows, 2, days=2)
    strict = simulate(jobs, np.array([10, 10]), 20, make_policy("strict"))
    maxmin = simulate(jobs, np.array([10, 10]), 20, make_policy("maxmin"))
    assert maxmin.idle_while_waiting == 0.0
    assert strict.idle_while_waiting > 0.0 and strict.done[1] > maxmin.done[1]


def test_maxmin_serves_the_small_vc_first_so_the_large_one_waits_longer() -> None:
    # two VCs at load 2 for an hour on capacities 30 and 10, 20 free servers: equal level 10 meets
    # the small VC's excess (10) in full; the large one gets 40 of 60 for an hour, then all 60
    # servers: 40·3600 done at 1 h, the other 20·3600 at 60 → 4/3 h
    rows = [(0, 3600 * 60, 60, 0), (0, 3600 * 20, 20, 1)]
    jobs = jobs_of(rows, 2)
    r = simulate(jobs, np.array([30, 10]), 60, make_policy("maxmin"))
    s = metrics.job_stretch(jobs, r)
    assert s[1] == pytest.approx(1.0) and s[0] == pytest.approx(4 / 3)


def test_lcg_loader_and_capacity_rules(tmp_path: Path) -> None:
    p = tmp_path / "tiny.swf.gz"
    lines = ["; header", "1 0 -1 3600 1 -1 -1 -1 100 -1 -1 1 7 -1 -1 1 -1 -1",
             "2 10 -1 3600 1 -1 -1 -1 100 -1 -1 1 7 -1 -1 1 -1 -1",
             "3 20 -1 0 1 -1 -1 -1 100 -1 -1 2 9 -1 -1 1 -1 -1"]
    with gzip.open(p, "wt") as f:
        f.write("\n".join(lines) + "\n")
    jobs, groups = load_lcg(p)
    assert groups == [7, 9] and jobs.work.tolist() == [3600.0, 3600.0, 1.0] and jobs.horizon == DAY
    cap, total = lcg_capacities(jobs, "mean")
    # group 7: 2 jobs × 1 h over a day → mean demand 1/12 → 1; group 9 → 1; free = ceil(0.3 × 2)
    assert cap.tolist() == [1, 1] and total == 3
    with pytest.raises(ValueError):
        lcg_capacities(jobs, "nope")


def test_similar_load_pairs_follow_the_log_ratio_rule() -> None:
    rows = [(float(i), 86400.0 * f, 1, v) for v, f, k in ((0, 1.0, 500), (1, 1.1, 500), (2, 2.0, 500))
            for i in range(k)]
    jobs = jobs_of(rows, 3)
    sub = metrics.subjects(jobs, np.array([500, 500, 500]))
    assert sub.pairs == [(0, 1)]  # |ln 1.1| ≤ 0.2 < |ln 2|
