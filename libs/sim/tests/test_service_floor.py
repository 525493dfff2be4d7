"""The ground-truth floor on a service's server-hours (`adaptation.scoring.server_hours_floor`):
a lower bound on every allocation, checked against exhaustive search on small instances."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_sim.adaptation.scoring import server_hours_floor
from sextant_sim.workloads.service import met_fraction

BASE, BOUND = 0.05, 0.25


def served(nodes: tuple[float, ...], lam: float) -> float:
    """The twin's share within the bound on these nodes: the mean of their shares, even split."""
    return sum(met_fraction(m, lam / len(nodes), BASE, BOUND) for m in nodes) / len(nodes) if nodes else 0.0


def exact(mus: list[float], segments: list[tuple[float, float]], share: float) -> float:
    """The cheapest allocation meeting `share`: any subset of servers per segment (none included)."""
    subsets = [c for r in range(len(mus) + 1) for c in itertools.combinations(mus, r)]
    total = sum(dt * lam for dt, lam in segments)
    best = float("inf")
    for pick in itertools.product(subsets, repeat=len(segments)):
        met = sum(served(c, lam) * dt * lam for c, (dt, lam) in zip(pick, segments, strict=True))
        if met >= share * total - 1e-9 * total:
            best = min(best, sum(len(c) * dt / 3600.0 for c, (dt, _l) in zip(pick, segments, strict=True)))
    return best


@settings(max_examples=60, deadline=None)
@given(mus=st.lists(st.floats(20_000, 120_000), min_size=1, max_size=3),
       loads=st.lists(st.floats(1_000, 200_000), min_size=1, max_size=3),
       share=st.sampled_from([0.5, 0.9, 0.988]))
def test_the_floor_is_below_every_allocation_and_its_plan_above(mus: list[float], loads: list[float],
                                                                share: float) -> None:
    segments = [(900.0, lam) for lam in loads]
    best = exact(mus, segments, share)
    f = server_hours_floor(mus, BASE, BOUND, segments, share)
    if best == float("inf"):  # no allocation meets the share: neither can the plan
        assert f.plan == float("inf")
        return
    assert f.lower_bound <= best + 1e-9
    assert f.plan >= best - 1e-9 and f.plan_share >= share - 1e-9


def test_one_strong_server_for_a_light_load() -> None:
    # 1 000 req/s on servers of 50 000: one node serves ~all within the bound for the hour; the
    # bound is the relaxation's — 98.8 % of the hour on one node, the rest paused: 0.988
    f = server_hours_floor([50_000.0, 50_000.0], BASE, BOUND, [(3600.0, 1_000.0)], 0.988)
    assert f.plan == pytest.approx(1.0) and f.lower_bound == pytest.approx(0.988, rel=1e-3)
    # 50 000 req/s saturates one node (μ 50 000); split over two, 1 − e^(−25 000 · 0.2 / 1000) = 99.3 %
    g = server_hours_floor([50_000.0, 50_000.0], BASE, BOUND, [(3600.0, 50_000.0)], 0.988)
    assert g.plan == pytest.approx(2.0) and 1.0 < g.lower_bound <= 2.0
    # 60 000 req/s: two nodes serve 1 − e^(−4) = 98.2 % < 98.8 %, and there is no third server
    h = server_hours_floor([50_000.0, 50_000.0], BASE, BOUND, [(3600.0, 60_000.0)], 0.988)
    assert h.plan == h.lower_bound == float("inf")
    # the twin counts the mean of the nodes' shares (not the weakest node's): three nodes of μ 50k,
    # 50k and 20k serve 90k req/s at (2 · 0.993 + 0) / 3 = 0.662 ≥ 0.64, with the weakest saturated
    m = server_hours_floor([50_000.0, 50_000.0, 20_000.0], BASE, BOUND, [(3600.0, 90_000.0)], 0.64)
    assert m.plan == pytest.approx(3.0) and m.plan_share == pytest.approx(2 * (1 - math.exp(-4.0)) / 3)
