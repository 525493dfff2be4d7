"""Slot prediction uses the estimated period; the score takes each slot's first submission."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.recurring.arrivals import SlotScore, hit_tolerance_s, predict_slots, score_slots
from sextant_core.recurring.periodicity import Periodicity, Verdict


def template(period: float, phase: float, verdict: Verdict = Verdict.PERIODIC) -> Periodicity:
    return Periodicity(key=1, n_jobs=10, n_arrivals=10, median_gap_s=period, cv=0.0, verdict=verdict,
                       period_s=period, phase_s=phase, natural_period_s=86400.0, on_line=1.0, first_arrival_s=phase,
                       last_arrival_s=phase + 9 * period)


def test_slots_follow_the_estimated_period_not_the_label():
    # label 1 day, estimated 86 390 s: eight days on, the slots have drifted 80 s from the label
    slots = predict_slots(template(86390.0, 3600.0), 10 * 86400.0, 18 * 86400.0)
    assert len(slots) == 8
    assert slots[0] == pytest.approx(3600.0 + 10 * 86390.0)
    assert slots[-1] == pytest.approx(3600.0 + 17 * 86390.0)


def test_no_slots_for_a_non_periodic_template_or_an_empty_window():
    assert len(predict_slots(template(3600.0, 0.0, Verdict.IRREGULAR), 0.0, 1e5)) == 0
    assert len(predict_slots(template(3600.0, 0.0), 5.0, 5.0)) == 0


@pytest.mark.parametrize("period,expected", [(600.0, 60.0), (3600.0, 180.0), (86400.0, 4320.0)],
                         ids=["10min-floor-60s", "hour-5pc", "day-5pc"])
def test_hit_tolerance(period, expected):
    assert hit_tolerance_s(period) == expected


def test_score_counts_first_submission_per_slot():
    slots = np.array([3600.0, 7200.0, 10800.0, 14400.0])
    submits = np.array([
        3650.0,            # slot 1: first within ±1800, 50 s off ≤ 180 -> hit
        6000.0, 7210.0,    # slot 2: the first (1200 s early) decides -> scored, miss
        # slot 3: nothing in [9000, 12600) -> empty
        14400.0 + 1799.0,  # slot 4: inside the window, 1799 s late -> miss
    ])
    assert score_slots(slots, submits, 3600.0) == SlotScore(slots=4, scored=3, hits=1)


def test_score_edge_cases():
    assert score_slots(np.array([100.0]), np.empty(0), 60.0) == SlotScore(1, 0, 0)
    assert score_slots(np.empty(0), np.array([1.0]), 60.0) == SlotScore(0, 0, 0)
    total = SlotScore(4, 3, 1) + SlotScore(1, 1, 1)
    assert (total.hit_rate, total.recall) == (0.5, 0.8)
