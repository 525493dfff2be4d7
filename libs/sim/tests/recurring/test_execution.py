"""The minute-stepped cluster: guarantees first, opportunistic fair share, the debt semantics."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_sim.recurring.execution import (
    ReservationTable,
    UserStatic,
    reservation_table,
    simulate,
    waterfill,
)
from sextant_sim.recurring.workload import MAX_PHASES, Instances


def _jobs(*phases: list[tuple[float, float]], start_min: list[int] | None = None,
          template: list[int] | None = None) -> Instances:
    """Instances from (work container-minutes, max parallelism) phases, starting at `start_min`."""
    n = len(phases)
    work, par = np.zeros((n, MAX_PHASES)), np.zeros((n, MAX_PHASES))
    for i, ph in enumerate(phases):
        for j, (w, q) in enumerate(ph):
            work[i, j], par[i, j] = w, q
    start = np.array(start_min if start_min is not None else [0] * n, dtype=float) * 60.0
    return Instances(np.array(template if template is not None else list(range(n))), start, start - 60.0,
                     np.full(n, np.nan), work, par, (work > 0).sum(axis=1), np.ones(n, bool), np.zeros(n, bool))


@pytest.mark.parametrize(("want", "weight", "cap", "expected"), [
    ([2, 10], [1, 1], 12, [2, 10]),  # everything fits
    ([2, 10], [1, 1], 6, [2, 4]),  # 2 met, λ = (6 − 2) / 1 = 4
    ([5, 5, 5], [1, 1, 1], 6, [2, 2, 2]),
    ([10, 10], [1, 3], 8, [2, 6]),  # λ = 8 / 4 = 2: 1·2 and 3·2
    ([1, 10], [1, 3], 8, [1, 7]),  # 1 met, λ = 7 / 3
    ([3, 3], [1, 1], 0, [0, 0]),
], ids=["fits", "small-met", "equal", "weighted", "weighted-small-met", "no-capacity"])
def test_waterfill(want: list[float], weight: list[float], cap: float, expected: list[float]) -> None:
    x = waterfill(np.array(want, float), np.array(weight, float), cap)
    np.testing.assert_allclose(x, expected)


def test_a_job_alone_runs_its_phases_at_full_parallelism() -> None:
    # phase 1: 20 container-min at 10 → 2 min; phase 2: 5 at 5 → 1 min; ends at minute 3
    out = simulate(_jobs([(20, 10), (5, 5)]), 100, UserStatic(np.array([0.0])), record=True)
    assert out.end_s[0] == pytest.approx(3 * 60.0)
    np.testing.assert_allclose(out.skyline(0), [10, 10, 5])


def test_a_short_guarantee_without_opportunistic_capacity_stretches_the_job() -> None:
    jobs = _jobs([(100, 10)])
    worst = simulate(jobs, 100, UserStatic(np.array([5.0])), opportunistic=False)
    shared = simulate(jobs, 100, UserStatic(np.array([5.0])))
    assert worst.end_s[0] == pytest.approx(20 * 60.0)  # 100 / 5
    assert shared.end_s[0] == pytest.approx(10 * 60.0)  # fair share tops it up to 10


def test_guarantees_first_then_fair_share_of_the_rest() -> None:
    # capacity 10: A guaranteed 8 of its 10, B none; the 2 left are split 1 / 1
    out = simulate(_jobs([(100, 10)], [(100, 10)]), 10, UserStatic(np.array([8.0, 0.0])), record=True)
    assert out.skyline(0)[0] == pytest.approx(9.0)
    assert out.skyline(1)[0] == pytest.approx(1.0)


def test_adhoc_load_takes_its_weighted_share_of_the_leftover() -> None:
    # capacity 10, no guarantees, one job wanting 10 and ad-hoc wanting 10 with weight 4: λ = 2 → 2 / 8
    out = simulate(_jobs([(100, 10)]), 10, UserStatic(np.array([0.0])), adhoc=np.full(5, 10.0), adhoc_weight=4.0,
                   record=True, horizon_min=5)
    assert out.skyline(0)[0] == pytest.approx(2.0)
    assert out.adhoc_served[0] == pytest.approx(8.0)


def test_guarantees_beyond_the_cluster_are_cut_fairly() -> None:
    out = simulate(_jobs([(100, 10)], [(100, 10)]), 10, UserStatic(np.array([10.0, 10.0])), opportunistic=False,
                   record=True)
    assert out.skyline(0)[0] == pytest.approx(5.0) and out.skyline(1)[0] == pytest.approx(5.0)


def test_debt_is_repaid_by_later_capacity() -> None:
    # a reservation of 5 for 2 minutes then 15: the job (10 wide, 40 work) is short by 10 in the first two
    # minutes and catches up only as far as its parallelism allows: 5, 5, 10, 10, 10 → ends at minute 5
    table = ReservationTable(np.array([[5.0, 5.0, 15.0, 15.0, 15.0, 15.0]]), np.array([0]), np.array([True]),
                             np.array([0]), np.array([0]), UserStatic(np.array([0.0])))
    out = simulate(_jobs([(40, 10)]), 100, table, opportunistic=False, record=True)
    np.testing.assert_allclose(out.skyline(0), [5, 5, 10, 10, 10])
    assert out.end_s[0] == pytest.approx(5 * 60.0)


def test_reservations_hold_only_inside_their_window_and_others_fall_back() -> None:
    # template 0 reserved 10 at minutes 2–3 of its period; template 1 has no reservation: its user's 4
    table = ReservationTable(np.array([[10.0, 10.0], [0.0, 0.0]]), np.array([2, 0]), np.array([True, False]),
                             np.array([0, 0]), np.array([0, 1]), UserStatic(np.array([0.0, 4.0])))
    out = simulate(_jobs([(30, 10)], [(8, 10)]), 100, table, opportunistic=False, record=True, grace_minutes=10)
    np.testing.assert_allclose(out.skyline(0), [0, 0, 10, 10] + [0] * 7, atol=1e-12)
    assert np.isnan(out.end_s[0])  # 20 of its 30 container-minutes, then nothing: never finishes
    np.testing.assert_allclose(out.skyline(1), [4, 4])


def test_same_inputs_same_outcome() -> None:
    jobs = _jobs([(30, 4), (10, 2)], [(50, 8)], [(7, 7)], start_min=[0, 1, 1])
    a = simulate(jobs, 9, UserStatic(np.array([2.0, 3.0, 0.0])), adhoc=np.full(30, 3.0), record=True)
    b = simulate(jobs, 9, UserStatic(np.array([2.0, 3.0, 0.0])), adhoc=np.full(30, 3.0), record=True)
    np.testing.assert_array_equal(a.end_s, b.end_s)
    np.testing.assert_array_equal(a.used, b.used)


def test_a_plans_allocations_become_a_reservation_table() -> None:
    # template 0, period 10 min, reserved 10 containers at minutes 3–4 of each period; instance 1 is in period 1
    jobs = _jobs([(20, 10)], [(20, 10)], start_min=[3, 13], template=[0, 0])
    table = reservation_table(jobs, {0: 600.0}, {0: (3, [10.0, 10.0])}, 1, UserStatic(np.zeros(2)))
    out = simulate(jobs, 100, table, opportunistic=False)
    np.testing.assert_allclose(out.end_s, [5 * 60.0, 15 * 60.0])


def test_skylines_in_bulk_equal_one_by_one() -> None:
    jobs = _jobs([(30, 4), (10, 2)], [(50, 8)], [(7, 7)], start_min=[0, 1, 3])
    out = simulate(jobs, 9, UserStatic(np.array([2.0, 3.0, 0.0])), adhoc=np.full(30, 3.0), record=True)
    bulk = out.skylines(np.array([0, 2]))
    assert sorted(bulk) == [0, 2]
    for i in (0, 2):
        np.testing.assert_array_equal(bulk[i], out.skyline(i))
    assert out.skyline(0).sum() == pytest.approx(40.0)  # all its work
