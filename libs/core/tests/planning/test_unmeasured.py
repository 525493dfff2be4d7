"""Version 9's confidence per heterogeneity entry (planning/assess.py, `unmeasured_levels`): a
platform whose level the workload's own profiling runs did not measure counts H(p) · (1 − δ)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sextant_core.planning.assess import Assessor, SizingParams, measured_platforms, unmeasured_levels
from sextant_core.planning.sextant import SextantParams, SextantPlanner

from .conftest import World, chosen, place

UP = {"c1": 10.0, "c2": 18.0, "c4": 30.0}


def ips(x: float) -> dict[str, object]:
    return {"type": "instruction_rate", "ips": x}


def _world(het: dict[str, float], target: float = 5.0) -> World:
    # the builder's workloads have one profiling run, a scale-up run on their reference platform A:
    # A's level is measured, B's predicted
    return (World().server("a1", platform="A").server("b1", platform="B")
            .workload("new", target=ips(target), heterogeneity=het, scale_up=UP))


def _planner(discount: float) -> SextantPlanner:
    return SextantPlanner(SextantParams(sizing=SizingParams(alpha=3.0, unmeasured_discount=discount)))


def test_measured_platforms_are_those_of_the_profiling_runs() -> None:
    st = _world({"A": 10.0, "B": 10.0}).state()
    assert measured_platforms(st.workloads["new"]) == frozenset({"A"})


def test_an_unmeasured_level_is_discounted_and_a_measured_one_kept() -> None:
    w = _world({"A": 10.0, "B": 10.0}).state().workloads["new"]
    levels = np.array([10.0, 12.0])
    np.testing.assert_allclose(unmeasured_levels(levels, ["A", "B"], w, 0.05), [10.0, 11.4])
    assert unmeasured_levels(levels, ["A", "B"], w, 0.0) is levels  # version 8 and earlier


def test_full_heterogeneity_confidence_means_every_entry_is_known() -> None:
    # the estimate port (and true rows) report confidence 1: nothing to discount
    st = _world({"A": 10.0, "B": 12.0}).state()
    w = st.workloads["new"]
    assert w.classification is not None
    sure = w.classification.model_copy(update={"confidence": {"heterogeneity": 1.0, "interference": 1.0}})
    w = replace(w, classification=sure)
    levels = np.array([10.0, 12.0])
    assert unmeasured_levels(levels, ["A", "B"], w, 0.05) is levels


def test_the_assessment_discounts_unmeasured_rows_only() -> None:
    st = _world({"A": 10.0, "B": 10.3}).state()
    w = st.workloads["new"]
    plain = Assessor(SizingParams(alpha=3.0)).assess(st, w, 5.0)
    wary = Assessor(SizingParams(alpha=3.0, unmeasured_discount=0.05)).assess(st, w, 5.0)
    b = np.asarray(plain.table.platforms)[plain.table.platform_code] == "B"
    np.testing.assert_allclose(wary.base[~b], plain.base[~b])
    np.testing.assert_allclose(wary.base[b], plain.base[b] * 0.95)
    assert wary.required == plain.required  # the requirement reads the undiscounted levels


def test_a_measured_platform_wins_over_a_slightly_better_predicted_one() -> None:
    # both servers empty and quiet, both meet R = 5: version 8 takes the best predicted platform
    # (B, 10.3, one 2 % bucket above A); with δ = 0.05 B counts 9.785 < 10 and A, measured, wins
    st = _world({"A": 10.0, "B": 10.3}).state()
    assert chosen(place(st, _planner(0.0)))[0][0] == "b1"
    assert chosen(place(st, _planner(0.05)))[0][0] == "a1"


def test_an_unmeasured_platform_still_serves_when_the_measured_one_cannot() -> None:
    # A is full; B's prediction clears R = 9 after the discount (10.3 · 0.95 = 9.785 at 1 core)
    st = _world({"A": 10.0, "B": 10.3}, target=9.0)
    st.workload("hog", on=(("a1", 8, 1.0),), ref="A")
    state = st.state()
    assert chosen(place(state, _planner(0.05)))[0][0] == "b1"


def test_the_discount_is_checked() -> None:
    with pytest.raises(ValueError):
        SizingParams(unmeasured_discount=1.0)
