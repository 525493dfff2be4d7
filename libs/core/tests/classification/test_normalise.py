"""Normalisation (Paragon §9.2 option (b)): log for performance, /100 for scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sextant_core.classification.normalise import (
    InvalidEntry,
    Normalisation,
    backward,
    forward,
    normalise_one,
    tolerance,
)


@pytest.mark.parametrize("kind,raw", [
    (Normalisation.LOG, [0.5, 1.0, 2e6]),
    (Normalisation.SCORE, [0.0, 42.0, 100.0]),
    (Normalisation.LINEAR, [-3.0, 0.0, 5.5]),
], ids=["log", "score", "linear"])
def test_round_trip(kind: Normalisation, raw: list[float]) -> None:
    x = np.array(raw)
    np.testing.assert_allclose(backward(kind, forward(kind, x)), x, rtol=1e-12)


def test_log_maps_ratios_to_differences() -> None:
    z = forward(Normalisation.LOG, np.array([3.0, 6.0]))
    assert z[1] - z[0] == pytest.approx(math.log(2.0))


@pytest.mark.parametrize("kind,bad", [
    (Normalisation.LOG, 0.0), (Normalisation.LOG, -1.0), (Normalisation.SCORE, 100.5),
    (Normalisation.SCORE, -0.1), (Normalisation.LINEAR, float("nan")), (Normalisation.LOG, float("inf")),
])
def test_out_of_domain_values_are_rejected(kind: Normalisation, bad: float) -> None:
    with pytest.raises(InvalidEntry):
        forward(kind, np.array([1.0, bad]))
    assert normalise_one(kind, bad) is None


def test_scores_are_clipped_back_to_0_100() -> None:
    np.testing.assert_array_equal(backward(Normalisation.SCORE, np.array([-0.2, 0.5, 1.3])), [0.0, 50.0, 100.0])


def test_tolerances() -> None:
    assert tolerance(Normalisation.LOG) == pytest.approx(math.log(1.1))  # ±10 % relative
    assert tolerance(Normalisation.SCORE) == pytest.approx(0.1)  # ±10 points
