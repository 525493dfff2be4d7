"""Partial answers at fan-out stages: loss accounting, Kwiken's sweep and the baselines (kwiken/partial.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.kwiken.dag import KwikenInputError
from sextant_core.kwiken.partial import (
    BASELINES,
    PartialPolicy,
    Responders,
    baseline_policy,
    kwiken_policy,
    partial_curve,
)


def test_loss_is_the_mean_fraction_of_responders_not_yet_answered() -> None:
    resp = Responders(np.array([[1.0, 2.0, 3.0, 10.0], [1.0, 1.0, 1.0, 1.0]]))
    # stop at 3 and at 0.5: request 0 misses 1/4, request 1 misses 4/4 → mean 5/8
    assert resp.loss(np.array([3.0, 0.5])) == pytest.approx(5 / 8)
    assert resp.loss(resp.t_all) == 0.0


@pytest.mark.parametrize(("pol", "expected"), [
    (PartialPolicy("k", t_c=2.5), [2.5, 2.5]),                 # the cut-off
    (PartialPolicy("k", t_d=0.5, p=0.5), [2.5, 1.5]),          # half answered (2nd responder) + 0.5
    (PartialPolicy("k"), [10.0, 4.0]),                          # wait for everyone
    (PartialPolicy("t", t_d=0.0, p=0.5, t_min=3.0), [3.0, 3.0]),  # time-then-fraction: max(T', t_0.5)
], ids=["cutoff", "fraction-then-wait", "wait-all", "time-then-fraction"])
def test_stop_times(pol: PartialPolicy, expected: list[float]) -> None:
    resp = Responders(np.array([[1.0, 2.0, 3.0, 10.0], [1.0, 1.0, 2.0, 4.0]]))
    assert resp.stop(pol).tolist() == expected


def fanout(m: int = 800, n: int = 400, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = 5 * np.exp(0.6 * rng.standard_normal((m, n)))
    return np.where(rng.random((m, n)) < 0.002, 30 * x, x)


def test_kwiken_meets_the_budget_on_training_and_lowers_the_variance() -> None:
    resp = Responders(fanout())
    pol = kwiken_policy(resp, 0.01)
    stop = resp.stop(pol)
    assert resp.loss(stop) <= 0.01 + 1e-12
    assert np.var(stop) < 0.5 * np.var(resp.t_all)
    assert kwiken_policy(resp, 0.0) == PartialPolicy("kwiken")


@pytest.mark.parametrize("kind", BASELINES)
def test_baselines_meet_the_budget(kind: str) -> None:
    resp = Responders(fanout())
    stop = resp.stop(baseline_policy(resp, kind, 0.01))
    assert resp.loss(stop) <= 0.01 + 1e-12


def test_kwiken_is_at_least_as_low_in_variance_as_fixed_timeout() -> None:
    # fixed-timeout is a point of Kwiken's family (T_d = ∞, T_c fitted the same way), so on training
    # data Kwiken's variance is at most its
    resp = Responders(fanout())
    vk = np.var(resp.stop(kwiken_policy(resp, 0.01)))
    assert vk <= np.var(resp.stop(baseline_policy(resp, "fixed-timeout", 0.01))) * (1 + 1e-6)


def test_the_curve_falls_with_the_loss_budget() -> None:
    c, pols = partial_curve(Responders(fanout()), np.array([0.0, 0.001, 0.01, 0.05]))
    assert c.v[0] > c.v[-1] and len(pols) == 4 and c.max_r == 0.05


def test_an_empty_responder_matrix_is_refused() -> None:
    with pytest.raises(KwikenInputError) as e:
        Responders(np.empty((0, 3)))
    assert e.value.field == "responders"
