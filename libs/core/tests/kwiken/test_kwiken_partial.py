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
    fractions,
    kwiken_policy,
    oracle_quantile,
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


def straggler_world(m: int = 4000, n: int = 100) -> np.ndarray:
    """Responders answer in 1–2 ms, except: 5 % of requests have one straggler at 100 ms, 0.8 % have
    twenty. At a 0.1 % budget (0.1 responder per request) the right rule stops at 2 ms when at most
    a few responders are missing (e.g. once `n − 1` answered): it drops the lone stragglers (loss 0.05 %) and leaves the heavy 0.8 % (< 1 %) to wait, so the
    p99 falls from 100 ms to ≤ 2 ms. Any cut-off below 100 ms also drops the heavy requests'
    twenty (0.05 % + 0.16 % > 0.1 %): fixed timeouts cannot move the p99. Rows: the 5 % first, then
    the 0.8 %."""
    rng = np.random.default_rng(5)
    lat = rng.uniform(1.0, 2.0, (m, n))
    k1, k20 = int(0.05 * m), int(0.008 * m)
    lat[:k1, 0] = 100.0
    lat[k1:k1 + k20, :20] = 100.0
    return lat


def test_kwiken_finds_the_known_rule_where_a_cutoff_cannot_help() -> None:
    resp = Responders(straggler_world())
    pol = kwiken_policy(resp, 0.001)
    stop = resp.stop(pol)
    assert resp.loss(stop) <= 0.001 + 1e-12
    assert np.percentile(resp.t_all, 99) == 100.0 and np.percentile(stop, 99) <= 2.0
    # the known rule: the lone stragglers' requests stop by 2 ms, the heavy ones wait for all
    assert stop[:200].max() <= 2.0 and np.all(stop[200:232] == 100.0)
    assert np.percentile(resp.stop(baseline_policy(resp, "fixed-timeout", 0.001)), 99) == 100.0
    assert np.percentile(resp.stop(baseline_policy(resp, "wait-for-fraction", 0.001)), 99) == 100.0


def test_time_then_fraction_keeps_a_fraction_whose_time_alone_overshoots_the_budget() -> None:
    # stopping every request at t_0.99 loses 1 % (one responder in 100 everywhere); with the time
    # floor T' fitted, only the stragglers' requests lose one: the baseline must find that rule
    resp = Responders(straggler_world())
    assert resp.loss(resp.t_fraction(0.99)) > 0.001
    pol = baseline_policy(resp, "time-then-fraction", 0.001)
    stop = resp.stop(pol)
    assert resp.loss(stop) <= 0.001 + 1e-12 and np.percentile(stop, 99) <= 2.0


@pytest.mark.parametrize("objective", ["p99-train", "variance"])
def test_kwiken_is_never_behind_a_baseline_on_its_training_requests(objective: str) -> None:
    # every baseline's rule (same fit, same grid) is a member of Kwiken's sweep
    for lat in (fanout(500, 200), straggler_world(1000, 200)):
        resp = Responders(lat)
        for budget in (0.001, 0.01):
            pol = kwiken_policy(resp, budget, objective)
            got = resp.stop(pol)
            assert resp.loss(got) <= budget + 1e-12
            key = (lambda s: np.percentile(s, 99)) if objective == "p99-train" else np.var
            for kind in BASELINES:
                assert key(got) <= key(resp.stop(baseline_policy(resp, kind, budget))) * (1 + 1e-9)


def test_the_fraction_grid_counts_responders_left_out() -> None:
    fr = fractions(300)
    counts = {int(np.ceil(p * 300 - 1e-9)) for p in fr}
    assert {299, 298, 297} <= counts and 300 not in counts      # 0.995 and 0.999 alone would both be 300
    assert len(counts) == len(fr) and list(fr) == sorted(fr)


def test_the_oracle_bound_is_exact_on_a_small_case_and_below_every_rule() -> None:
    # 100 requests of 10 responders at 1 ms but responder 0 of request i at 10 + i ms (p99 108.01).
    # NumPy's p99 of 100 values weighs the largest, so no request may stay above the target; budget
    # 0.01 is 10 stragglers in all: the 10 slowest requests are stopped, the target is the 90th, 99 ms
    lat = np.ones((100, 10))
    lat[:, 0] = 10.0 + np.arange(100)
    resp = Responders(lat)
    assert np.percentile(resp.t_all, 99) == pytest.approx(108.01)
    assert oracle_quantile(resp, 0.01) == pytest.approx(99.0, rel=1e-6)
    # with budget 0.1 (one responder per request) everything can stop at 1 ms
    assert oracle_quantile(resp, 0.1) == pytest.approx(1.0, rel=1e-6)
    resp = Responders(fanout())
    bound = oracle_quantile(resp, 0.01)
    for pol in (kwiken_policy(resp, 0.01), *(baseline_policy(resp, k, 0.01) for k in BASELINES)):
        assert bound <= np.percentile(resp.stop(pol), 99) * (1 + 1e-9)


def test_an_unknown_objective_is_refused() -> None:
    with pytest.raises(KwikenInputError) as e:
        kwiken_policy(Responders(fanout(50, 20)), 0.01, "mean")
    assert e.value.field == "objective"


def test_the_default_rule_keeps_the_plain_cutoff_unless_another_shape_is_clearly_better() -> None:
    # identical responders: every shape's cross-fitted p99 is within noise of the cut-off's, so the
    # plain cut-off (fitted like the fixed-timeout baseline) is kept
    resp = Responders(fanout())
    pol = kwiken_policy(resp, 0.01)
    fixed = baseline_policy(resp, "fixed-timeout", 0.01)
    assert (pol.t_d, pol.p, pol.t_min) == (np.inf, pol.p, 0.0) and pol.t_c == pytest.approx(fixed.t_c)
