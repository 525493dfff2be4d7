"""Slack, free-server probability and the Eq. 2 switch time (admission/waiting.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sextant_core.admission.waiting import free_probability, slack, switch_time


@pytest.mark.parametrize(("ct", "spent", "expected"), [
    (2000.0, 30.0, 70.0),     # 0.05 · 2000 − 30
    (400.0, 30.0, -10.0),     # 20 − 30: the budget is gone
], ids=["left", "spent"])
def test_slack(ct: float, spent: float, expected: float) -> None:
    assert slack(ct, spent) == pytest.approx(expected)


def test_free_probability() -> None:
    # 4 busy slots, mean residual 400 s: λ = 0.01/s; Pr[100 s] = 1 − e^{−1}
    assert free_probability(100.0, 4, 400.0) == pytest.approx(1 - math.exp(-1))
    assert float(free_probability(50.0, 0, 400.0)) == 0.0


def test_waiting_wins_when_the_diversion_is_poor() -> None:
    # S = 100 s, λ = 10/200 = 0.05/s. V_i(t) = (100 − t)(1 − e^{−0.05 t}) peaks at t ≈ 30 s (70 · 0.777 ≈ 54.4);
    # a diversion of quality 0.3 is worth 100 · 0.3 = 30 < 54.4 → wait
    d = switch_time(100.0, 1.0, 0.3, 10, 200.0, points=200)
    assert d.wait and 25 < d.switch_at_s < 35 and d.value_wait == pytest.approx(54.38, abs=0.01)
    t = np.linspace(0, 100, 201)[1:-1]
    assert d.value_wait == pytest.approx(float(((100 - t) * (1 - np.exp(-0.05 * t))).max()))
    lam = 0.05
    assert d.expected_wait_s == pytest.approx((1 - math.exp(-lam * d.switch_at_s)) / lam)


def test_switching_wins_when_the_diversion_is_good() -> None:
    d = switch_time(100.0, 1.0, 0.9, 10, 200.0)  # 90 > 54.4
    assert not d.wait and d.value_switch == pytest.approx(90.0)


@pytest.mark.parametrize(("s_a", "busy"), [(0.0, 10), (-5.0, 10), (100.0, 0)], ids=["no-slack", "late", "nothing-frees"])
def test_never_wait_without_slack_or_hope(s_a: float, busy: int) -> None:
    assert not switch_time(s_a, 1.0, 0.0, busy, 200.0).wait
