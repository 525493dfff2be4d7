"""SumVar's budget split and its documented choices (kwiken/sumvar.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.kwiken.curves import Curve
from sextant_core.kwiken.dag import KwikenInputError
from sextant_core.kwiken.sumvar import random_allocations, sumvar, uniform


def curve(v: list[float], r: list[float] | None = None) -> Curve:
    rr = np.linspace(0, 1, len(v)) if r is None else np.array(r)
    return Curve.of(rr, np.array(v, float), ("none",) + ("timeout",) * (len(v) - 1))


falling = st.lists(st.floats(0, 100), min_size=2, max_size=6).map(lambda d: curve(list(np.cumsum(d)[::-1])))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(falling, st.floats(0.01, 10)), min_size=1, max_size=12),
       st.floats(1e-3, 1), st.floats(2, 4))
def test_sumvar_never_exceeds_the_budget_nor_one(stages: list[tuple[Curve, float]], b: float, g: float) -> None:
    c = np.array([s[1] for s in stages])
    c = c / c.sum()
    a = sumvar([s[0] for s in stages], c, b, gamma=g)
    assert a.spent <= b * (1 + 1e-12) + 1e-15
    assert np.all(a.r >= 0) and np.all(a.r <= 1)


def test_the_budget_goes_where_the_variance_falls() -> None:
    # stage 0 is flat, stage 1 falls from 100 to 0: every chunk goes to stage 1
    a = sumvar([curve([5, 5]), curve([100, 0])], [0.5, 0.5], 0.1, gamma=2)
    assert a.r[0] == 0 and a.r[1] == pytest.approx(0.2)   # 0.1 / c = 0.2
    assert a.spent == pytest.approx(0.1) and a.sum_var == pytest.approx(5 + 80)


def test_no_chunk_is_spent_on_a_gain_that_is_not_positive() -> None:
    a = sumvar([curve([5, 5]), curve([3, 4])], [0.5, 0.5], 0.5)
    assert np.all(a.r == 0) and a.spent == 0


def test_ties_go_to_the_lower_index_and_ineligible_stages_get_nothing() -> None:
    a = sumvar([curve([10, 0]), curve([10, 0])], [0.5, 0.5], 0.01, gamma=2)  # 4 chunks alternate, 0 first
    assert a.r[0] >= a.r[1] > 0
    b = sumvar([curve([10, 0]), curve([10, 0])], [0.5, 0.5], 0.01, eligible=[False, True])
    assert b.r[0] == 0 and b.r[1] > 0


def test_a_stage_is_capped_at_the_end_of_its_curve() -> None:
    a = sumvar([curve([10, 0])], [1.0], 1.0, gamma=2)
    assert a.r[0] == 1.0
    a = sumvar([curve([10, 0], [0, 0.1])], [1.0], 1.0, gamma=2)   # a loss curve ending at 0.1
    assert a.r[0] == pytest.approx(0.1) and a.spent == pytest.approx(0.1)


@pytest.mark.parametrize(("kw", "field"), [({"gamma": 1.0}, "gamma"), ({"budget": 0.0}, "budget")])
def test_bad_parameters_are_named(kw: dict[str, float], field: str) -> None:
    args = {"budget": 0.1, "gamma": 3.0} | kw
    with pytest.raises(KwikenInputError) as e:
        sumvar([curve([1, 0])], [1.0], args["budget"], gamma=args["gamma"])
    assert e.value.field == field


def test_uniform_and_random_allocations_spend_the_budget() -> None:
    c = np.array([0.2, 0.3, 0.5])
    assert np.allclose(uniform(c, 0.05), 0.05)
    r = random_allocations(c, 0.05, 100, seed=1)
    assert r.shape == (100, 3) and np.allclose(r @ c, 0.05)
