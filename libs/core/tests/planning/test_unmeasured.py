"""Version 9's confidence per heterogeneity entry (planning/assess.py, `unmeasured_levels`): a
platform whose level the workload's own profiling runs did not measure counts H(p) · (1 − δ)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sextant_core.planning.assess import (
    Assessor,
    SizingParams,
    measured_platforms,
    slow_levels,
    unmeasured_levels,
)
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


# --- the slow-platform gate (`slow_levels`) -------------------------------------------------------


def _gated(gate: float) -> SextantPlanner:
    return SextantPlanner(SextantParams(sizing=SizingParams(alpha=3.0, slow_gate=gate)))


def test_a_platform_made_to_meet_by_more_cores_is_gated_when_it_is_slow() -> None:
    # R = 12. a1 (A, level 10) has 1 free core: U(1) = 10 < 12. B's level is 8 (0.8 of A's): with
    # 2 cores 0.8 · 18 = 14.4 meets R — the predicted scale-up makes a slow platform "meet". With
    # a 5 % gate B counts 8 · 0.01: nothing meets, and the workload goes as close as possible
    # (B or A, whichever predicts more) — never placed on B as if it met its target.
    w = (World().server("a1", platform="A").server("b1", platform="B")
         .workload("hog", on=(("a1", 7, 1.0),), ref="A")
         .workload("new", target=ips(12), heterogeneity={"A": 10.0, "B": 8.0}, scale_up=UP))
    st = w.state()
    d8 = place(st, _gated(0.0))
    assert chosen(d8) == (("b1", 2, 1.0),) and "as_close_as_possible" not in d8.events[0].trace.notes
    d9 = place(st, _gated(0.05))
    assert "as_close_as_possible" in d9.events[0].trace.notes


def test_the_gate_keeps_platforms_within_it_and_needs_room() -> None:
    w = _world({"A": 10.0, "B": 10.0}).state().workloads["new"]
    levels = np.array([10.0, 9.6, 9.2])
    room = np.array([True, True, True])
    np.testing.assert_allclose(slow_levels(levels, room, w, 0.05), [10.0, 9.6, 0.092])
    # the best level is read among the platforms with room only: without A's, B's 9.6 is the best
    # and 9.2 is within 5 % of it
    np.testing.assert_allclose(slow_levels(levels, np.array([False, True, True]), w, 0.05), [10.0, 9.6, 9.2])
    assert slow_levels(levels, room, w, 0.0) is levels
