"""Loss composition (kwiken/budget.py) and catch-up (kwiken/catchup.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.kwiken.budget import independent_loss, loss_costs, sequential_loss
from sextant_core.kwiken.catchup import (
    catch_up,
    global_fractions,
    global_reissues,
    global_thresholds,
    speedup,
    threshold_for_budget,
)
from sextant_core.kwiken.dag import KwikenInputError, StageDag, end_to_end


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_the_sequential_loss_is_bounded_by_the_sum(r: list[float]) -> None:
    assert sequential_loss(r) <= sum(r) + 1e-12


def test_composition_costs() -> None:
    # two stages, loss 0.1 each: 1 − 0.9² = 0.19 ≤ 0.2; contributions 1 and 3 → costs 0.25, 0.75
    assert sequential_loss([0.1, 0.1]) == pytest.approx(0.19)
    assert independent_loss([0.1, 0.2], [1, 3]) == pytest.approx((0.1 + 0.6) / 4)
    assert loss_costs("independent", [1, 3]).tolist() == [0.25, 0.75]
    assert loss_costs("sequential", [1, 3]).tolist() == [1.0, 1.0]
    with pytest.raises(KwikenInputError) as e:
        loss_costs("parallel", [1])
    assert e.value.field == "composition"


def test_three_threads_are_twice_as_fast() -> None:
    assert speedup(1) == 1.0 and speedup(3) == 2.0


def chain() -> StageDag:
    return StageDag.sequential([1.0, 1.0])


def test_catch_up_off_changes_nothing_and_from_zero_halves_every_stage() -> None:
    lat = np.array([[4.0, 6.0], [1.0, 1.0]])
    e2e, share = catch_up(chain(), lat, np.inf)
    assert np.array_equal(e2e, end_to_end(chain(), lat)) and share == 0.0
    e2e, share = catch_up(chain(), lat, -1.0)   # every stage starts late: 3 threads, half the time
    assert e2e.tolist() == [5.0, 1.0] and share == pytest.approx(0.5)   # c (3/2 − 1) per stage, Σc = 1


def test_only_the_late_part_is_sped_up() -> None:
    # request 0 starts stage 1 at 4 > T_z = 2: 4 + 6/2 = 7; request 1 starts it at 1: unchanged
    e2e, share = catch_up(chain(), np.array([[4.0, 6.0], [1.0, 1.0]]), 2.0)
    assert e2e.tolist() == [7.0, 2.0] and share == pytest.approx(0.5 * 0.5 / 2)


def test_the_threshold_keeps_the_thread_budget() -> None:
    rng = np.random.default_rng(4)
    lat = np.exp(rng.standard_normal((2000, 2)))
    tz = threshold_for_budget(chain(), lat, 0.05)
    assert catch_up(chain(), lat, tz)[1] <= 0.05
    assert catch_up(chain(), lat, tz * 0.9)[1] > 0.04


def test_global_fractions_follow_the_local_ones_and_spend_the_budget() -> None:
    # local 0.02 and 0.06 at costs 0.5 each spend 0.04; a global budget of 0.01 is a quarter of it
    g = global_fractions(np.array([0.02, 0.06]), np.array([0.5, 0.5]), 0.01)
    assert g == pytest.approx([0.005, 0.015])
    assert np.all(global_fractions(np.zeros(2), np.array([0.5, 0.5]), 0.01) == 0)


def test_global_reissues_hit_their_fraction_on_training_and_never_slow_a_request() -> None:
    rng = np.random.default_rng(6)
    lat = np.exp(rng.standard_normal((4000, 2)))
    alt = np.exp(rng.standard_normal((4000, 2)))
    z = global_thresholds(chain(), lat, alt, np.array([0.0, 0.05]))
    assert np.isinf(z[0]) and np.isfinite(z[1])
    e2e, used = global_reissues(chain(), lat, alt, z)
    assert used == pytest.approx(0.5 * 0.05, abs=0.5 * 0.002)   # cost 0.5 × fraction 0.05
    assert np.all(e2e <= end_to_end(chain(), lat) + 1e-12)
    off, used_off = global_reissues(chain(), lat, alt, np.full(2, np.inf))
    assert np.array_equal(off, end_to_end(chain(), lat)) and used_off == 0.0
