"""Reissue policies and their variance curves (kwiken/reissue.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.kwiken.reissue import (
    POLICIES,
    apply_plan,
    plan_stage,
    reissue_curve,
    reissue_draws,
    stage_policy_latency,
    timeout_for,
)

samples = st.lists(st.floats(0, 1e3), min_size=1, max_size=300).map(np.array)


def heavy(n: int = 4000, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = 10 * np.exp(0.8 * rng.standard_normal(n))
    return np.where(rng.random(n) < 0.03, 20 * x, x)


@settings(max_examples=100, deadline=None)
@given(samples, st.sampled_from(POLICIES))
def test_reissue_at_zero_changes_nothing(x: np.ndarray, policy: str) -> None:
    alt, rank = reissue_draws(x, 3)
    y, used = stage_policy_latency(x, 0.0, policy, alt, rank)
    assert np.array_equal(y, x) and used == 0.0


@settings(max_examples=100, deadline=None)
@given(samples, st.floats(0, 1), st.sampled_from(POLICIES))
def test_a_reissue_never_makes_a_request_slower_nor_spends_more_than_r(x: np.ndarray, r: float, policy: str) -> None:
    alt, rank = reissue_draws(x, 3)
    y, used = stage_policy_latency(x, r, policy, alt, rank)
    assert np.all(y <= x)
    assert used <= r + 1e-9


@pytest.mark.parametrize(("r", "expected"), [
    (0.0, 10.0),   # nothing above the maximum
    (0.1, 9.0),    # floor(0.1·10) = 1 sample above 9
    (0.25, 8.0),   # floor(2.5) = 2 samples above 8
    (1.0, 0.0),    # every request reissued at once
], ids=["r0", "r10", "r25", "r100"])
def test_the_timeout_is_an_order_statistic(r: float, expected: float) -> None:
    assert timeout_for(np.arange(1.0, 11.0), r) == expected


def test_the_curve_starts_at_the_variance_and_falls_and_is_deterministic() -> None:
    x = heavy()
    c = reissue_curve(x, seed=5)
    assert c.v[0] == pytest.approx(np.var(x)) and c.policy[0] == "none"
    assert c(0.05) < 0.5 * np.var(x)          # heavy tails: 5 % reissues halve the variance at least
    assert c(1.0) <= c(0.05)
    again = reissue_curve(x, seed=5)
    assert again.v.tobytes() == c.v.tobytes() and again.policy == c.policy


def test_a_plan_meets_its_fraction_on_its_own_samples() -> None:
    x = heavy()
    c = reissue_curve(x, seed=5)
    plan = plan_stage(x, 0.05, c)
    alt = np.stack([np.roll(x, 7), np.roll(x, 13)])
    _, re = apply_plan(x, alt, np.linspace(0, 1, x.size), plan)
    assert plan.policy in POLICIES and re.mean() <= 0.05 + 1e-9
    assert plan_stage(x, 0.0).policy == "none"
