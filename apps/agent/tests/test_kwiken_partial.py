"""A partial-answer stage as the twin serves it (`StageSamples`: latency as served, plus single
responders): under a plan's stopping rule its served latencies follow the core's rule
(`Responders.stop`) on a full responder matrix of the same law; its responder samples are single
draws of the law and do not depend on the plan; on the in-process platform the windows after the
first plan are its stopping times, and replay re-derives every decision."""

from __future__ import annotations

import math

import numpy as np
from sextant_agent.kwiken import (
    SAMPLES,
    observe_window,
    partial_policy,
    partial_samples,
    responder_samples,
    stage_law,
    window_samples,
)
from sextant_contracts import kwiken as kw
from sextant_core.kwiken import platform as kp
from sextant_core.kwiken.partial import PartialPolicy, Responders
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.testing.kwiken import declared
from sextant_sim.kwiken.families import draw

from .test_kwiken_windows import Cluster

LOOKUP = kw.StageSpec(name="lookup", cost=2.0, fanout=50, partial=True)
WINDOWS = range(8)  # 8 × 512 served requests per comparison


def _served(policy: PartialPolicy) -> np.ndarray:
    return np.concatenate([partial_samples("svc-1", LOOKUP, k, policy) for k in WINDOWS])


def _matrix_rule(policy: PartialPolicy, m: int = 4096) -> np.ndarray:
    """The core's stopping rule on a full (requests × 50) responder matrix of the same law."""
    law = stage_law("svc-1", LOOKUP)
    stop = Responders(draw(law, (m, LOOKUP.fanout), np.random.default_rng(99))).stop(policy)
    return np.round(stop, 3)  # as the window's samples


def _same_law(a: np.ndarray, b: np.ndarray) -> bool:
    return not kp.drifted(tuple(a), tuple(b), 0.001)


def test_served_latencies_follow_the_stopping_rule_of_a_full_responder_matrix() -> None:
    law = stage_law("svc-1", LOOKUP)
    for policy in (PartialPolicy("kwiken", t_c=math.inf, t_d=0.5 * law.median, p=0.9),
                   PartialPolicy("kwiken", t_c=8.0 * law.median, t_d=math.inf, p=1.0),
                   PartialPolicy("kwiken", t_d=0.0, p=0.8, t_min=2.0 * law.median)):
        got = _served(policy)
        assert got.size == SAMPLES * len(WINDOWS)
        assert _same_law(got, _matrix_rule(policy)), policy
        assert np.all(got <= policy.t_c + 1e-3) and np.all(got >= min(policy.t_min, got.max()) - 1e-3)
    # power: without the rule (all 50 responders) the same test tells the two apart
    cut = PartialPolicy("kwiken", t_c=math.inf, t_d=0.0, p=0.9)
    assert not _same_law(_served(cut), _matrix_rule(PartialPolicy("kwiken")))
    assert _same_law(_served(PartialPolicy("kwiken")), np.concatenate([window_samples("svc-1", LOOKUP, 100 + k)
                                                                      for k in WINDOWS]))


def test_responder_samples_are_single_draws_the_same_with_or_without_a_plan() -> None:
    law = stage_law("svc-1", LOOKUP)
    got = np.concatenate([responder_samples("svc-1", LOOKUP, k) for k in WINDOWS])
    assert _same_law(got, draw(law, 4096, np.random.default_rng(5)))
    assert not _same_law(got, np.concatenate([window_samples("svc-1", LOOKUP, k) for k in WINDOWS]))  # not the max
    entry = kw.StagePlanEntry(stage="lookup", policy="none", fraction=0.0, partial_t_c_ms=None,
                              partial_t_d_ms=1.0, partial_p=0.9, samples=512)
    dec = declared()
    plan = kw.KwikenPlanDecided(at=60.0, workload_id="svc-1", decision=_record(), trigger="first", stages=(entry,),
                                reissue_budget=0.05, loss_budget=0.001, reissue_spent=0.0)
    with_plan, bare = observe_window("svc-1", dec, plan, 3), observe_window("svc-1", dec, None, 3)
    by = {s.stage: s for s in with_plan.stages}
    assert by["lookup"].responder_ms == {s.stage: s for s in bare.stages}["lookup"].responder_ms
    assert by["lookup"].samples_ms == partial_samples("svc-1", LOOKUP, 3, PartialPolicy("kwiken", math.inf, 1.0, 0.9))
    assert by["front"].responder_ms == () and by["agg"].responder_ms == ()


def test_a_plan_entry_maps_to_its_stopping_rule() -> None:
    e = kw.StagePlanEntry(stage="lookup", policy="none", fraction=0.0, partial_t_c_ms=80.0, partial_t_d_ms=None,
                          partial_p=0.95, samples=1)
    assert partial_policy(e) == PartialPolicy("kwiken", t_c=80.0, t_d=math.inf, p=0.95, t_min=0.0)
    assert partial_policy(e.model_copy(update={"partial_t_min_ms": 12.0})).t_min == 12.0
    assert partial_policy(e.model_copy(update={"partial_p": None})) is None and partial_policy(None) is None


def _record() -> object:
    from sextant_contracts.model import DecisionRecord

    return DecisionRecord(decision_id="d", causation=(), state_position=0, profile="foundation",
                          policy_version="v", seed=1)


def test_windows_after_the_first_plan_serve_the_partial_stage_under_its_rule_and_replay() -> None:
    c = Cluster()
    c.run_service()
    log = c.p.log
    plan = next(x for e in log if isinstance(x := e.event(), kw.KwikenPlanDecided))
    entry = next(s for s in plan.stages if s.stage == "lookup")
    rule = partial_policy(entry)
    assert rule is not None and entry.samples >= kp.MIN_SAMPLES
    after = [x for e in log if isinstance(x := e.event(), kw.StageLatenciesObserved) and x.at > plan.at]
    assert after
    for w in after:
        lookup = next(s for s in w.stages if s.stage == "lookup")
        k = int(w.window_start_s // 60)
        assert lookup.samples_ms == partial_samples("svc-1", LOOKUP, k, rule)
        assert lookup.responder_ms == responder_samples("svc-1", LOOKUP, k)
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
