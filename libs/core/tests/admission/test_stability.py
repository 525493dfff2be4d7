"""Traffic equations and load factors (admission/stability.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.admission.stability import core_load, effective_rates, load_factor, stable


def test_effective_rates_with_diversion() -> None:
    # class 0 sends half its traffic to class 1: λ̄0 = 2, λ̄1 = 1 + 0.5 · 2 = 2
    np.testing.assert_allclose(effective_rates([2.0, 1.0], [[0.0, 0.5], [0.0, 0.0]]), [2.0, 2.0])


def test_load_factor_and_stability() -> None:
    assert load_factor([2.0, 2.0], [4.0, 8.0]) == pytest.approx(0.75)  # 2/4 + 2/8
    assert stable([2.0, 2.0], [4.0, 8.0]) and not stable([2.0, 2.0], [2.0, 8.0])  # 1 + 0.25


@pytest.mark.parametrize("routing", [[[0.0, 1.2], [0.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]], [[0.0]]],
                         ids=["creates-traffic", "closed-loop", "shape"])
def test_bad_routing_is_rejected(routing: list[list[float]]) -> None:
    with pytest.raises(ValueError):
        effective_rates([1.0, 1.0], routing)


def test_core_load() -> None:
    assert core_load(600, 500, 1000) == pytest.approx(1.1)  # (600 + 500) / 1000: unstable
    assert core_load(1, 0, 0) == float("inf")
    with pytest.raises(ValueError):
        load_factor([1.0], [0.0])
