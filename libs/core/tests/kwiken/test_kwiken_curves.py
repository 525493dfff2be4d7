"""Lower convex hull and its interpolation (kwiken/curves.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.kwiken.curves import Curve, lower_hull

points = st.lists(st.tuples(st.integers(0, 1000).map(lambda i: i / 1000), st.floats(0, 1e4)), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(points)
def test_the_hull_lies_below_every_point_and_is_convex(pts: list[tuple[float, float]]) -> None:
    r = np.array([p[0] for p in pts])
    v = np.array([p[1] for p in pts])
    hr, hv = lower_hull(r, v)
    assert np.all(np.diff(hr) > 0)
    assert hr[0] == r.min() and hr[-1] == r.max()
    assert np.all(np.interp(r, hr, hv) <= v + 1e-9 * (1 + np.abs(v)))
    if hr.size >= 3:
        slopes = np.diff(hv) / np.diff(hr)
        assert np.all(np.diff(slopes) >= -1e-6 * (1 + np.abs(slopes[:-1])))


def test_a_dent_is_bridged_and_interpolated() -> None:
    # points (0,10) (0.5,9) (1,0): (0.5,9) lies above the chord 10 → 0 (which is 5 there)
    c = Curve.of(np.array([0.0, 0.5, 1.0]), np.array([10.0, 9.0, 0.0]), ("none", "timeout", "timeout"))
    assert c.hull_r.tolist() == [0.0, 1.0]
    assert float(c(0.25)) == 7.5
    assert c.policy_at(0.45) == "timeout" and c.max_r == 1.0
