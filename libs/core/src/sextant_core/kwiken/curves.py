"""Variance-response curves: lower convex hull and interpolation (jalaparti.md §3.2, §5.3).

A curve is a set of points `(r, V(r))` measured on a grid of budgets `r` (a reissue fraction or a
utility-loss rate). SumVar works on the *lower convex hull* of those points (`V̄_s`, §3.2.2: "to
preclude discretization effects"), interpolated linearly between its vertices; a point between two
vertices is reachable by mixing the two vertices' policies over requests in proportion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def lower_hull(r: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the lower convex hull of the points `(r_i, v_i)`, sorted by `r` (monotone chain).

    Equal `r` keep the lowest `v`. The hull passes through the first and last `r` and lies on or
    below every point.
    """
    r = np.asarray(r, dtype=float)
    v = np.asarray(v, dtype=float)
    idx = np.lexsort((v, r))
    rs, vs = r[idx], v[idx]
    keep = np.concatenate(([True], rs[1:] != rs[:-1]))
    rs, vs = rs[keep], vs[keep]
    hr: list[float] = []
    hv: list[float] = []
    for x, y in zip(rs.tolist(), vs.tolist(), strict=True):
        while len(hr) >= 2:
            # pop the last vertex when it lies on or above the chord from the one before to (x, y)
            cross = (hr[-1] - hr[-2]) * (y - hv[-2]) - (hv[-1] - hv[-2]) * (x - hr[-2])
            if cross <= 0:
                hr.pop()
                hv.pop()
            else:
                break
        hr.append(x)
        hv.append(y)
    return np.asarray(hr), np.asarray(hv)


@dataclass(frozen=True)
class Curve:
    """A variance-response curve: the measured points and their lower convex hull.

    `r`, `v`: the grid and the measured variance (ms²) at each grid point; `policy[i]` names the
    per-stage policy that achieved `v[i]`; `hull_r`, `hull_v`: the hull's vertices. `__call__`
    interpolates the hull (constant beyond its ends).
    """

    r: np.ndarray
    v: np.ndarray
    policy: tuple[str, ...]
    hull_r: np.ndarray
    hull_v: np.ndarray

    @classmethod
    def of(cls, r: np.ndarray, v: np.ndarray, policy: tuple[str, ...]) -> Curve:
        hr, hv = lower_hull(r, v)
        return cls(np.asarray(r, float), np.asarray(v, float), policy, hr, hv)

    def __call__(self, r: float | np.ndarray) -> np.ndarray:
        return np.interp(r, self.hull_r, self.hull_v)

    def policy_at(self, r: float) -> str:
        """The policy of the measured grid point nearest to `r` (ties: the smaller `r`)."""
        return self.policy[int(np.argmin(np.abs(self.r - r)))]

    @property
    def max_r(self) -> float:
        return float(self.hull_r[-1])
