"""Loss composition (kwiken/budget.py) and catch-up (kwiken/catchup.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.kwiken.budget import independent_loss, loss_costs, sequential_loss
from sextant_core.kwiken.catchup import catch_up, speedup, threshold_for_budget
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
