"""Kwiken on the platform: contract validation, the bounded fold, the KS drift test, the plan
decision and its replay with 0 differences."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_core.explain import explain_decision
from sextant_core.kwiken import platform as kp
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.builders import record, server, submitted
from sextant_core.testing.kwiken import declared, window
from sextant_core.testing.loop import InProcessPlatform, steady_agent

POLICY = policy_set("foundation")
WID = "svc-1"


@pytest.mark.parametrize(("change", "field"), [
    ({"edges": (("front", "lookup"), ("lookup", "agg"), ("agg", "front"))}, "edges"),
    ({"edges": (("front", "nowhere"),)}, "edges"),
    ({"reissue_budget": 0.0}, "reissue_budget"),
    ({"loss_budget": 1.5}, "loss_budget"),
    ({"stages": (kw.StageSpec(name="a"), kw.StageSpec(name="a"))}, "stages"),
])
def test_bad_declarations_fail_naming_the_field(change: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        declared(**change)
    assert err.value.errors()[0]["loc"][0] == field


def test_the_fold_keeps_a_bounded_window_per_stage() -> None:
    st = fold([declared()] + [window(100.0 + i, i, n=500) for i in range(6)])
    svc = st.kwiken.get(WID)
    assert svc is not None and [len(x) for x in svc.samples] == [kp.WINDOW] * 3
    assert svc.samples[0][-500:] == window(105.0, 5, n=500).stages[0].samples_ms  # the newest kept


def test_the_ks_test_accepts_one_distribution_and_rejects_a_shifted_one() -> None:
    rng = np.random.default_rng(1)
    a, b = tuple(rng.lognormal(0, 0.8, 1000)), tuple(rng.lognormal(0, 0.8, 1000))
    assert not kp.drifted(a, b)
    assert kp.drifted(a, tuple(1.3 * x for x in b))


def recorded() -> InProcessPlatform:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit([server("s1", cores=16, memory_gb=64.0), submitted(WID, cores=2)])
    p.submit([declared(), window(100.0, 1)])  # 250 samples per stage: the first plan
    p.submit([window(160.0, 2)])  # same distribution: no new plan
    p.submit([window(220.0, 3, scale=3.0, n=500)])  # the stages slow down: drift
    return p


def test_plans_are_decided_first_and_on_drift_only() -> None:
    log = recorded().log
    plans = [e.event() for e in log if e.type == "KwikenPlanDecided"]
    assert [p.trigger for p in plans] == ["first", "drift"]  # type: ignore[attr-defined]
    first, second = plans
    assert isinstance(first, kw.KwikenPlanDecided) and isinstance(second, kw.KwikenPlanDecided)
    assert set(second.drift) == {"front", "lookup", "agg"}
    assert first.reissue_spent <= first.reissue_budget + 1e-9
    lookup = next(s for s in first.stages if s.stage == "lookup")
    assert lookup.fraction == 0.0 and lookup.partial_p is not None  # partial answers, no reissues
    timed = [s for s in first.stages if s.timeout_ms is not None]
    assert timed and all(s.fraction > 0 for s in timed)
    assert next(s for s in second.stages if s.stage == "front").timeout_ms != \
        next(s for s in first.stages if s.stage == "front").timeout_ms


def test_replay_rederives_every_kwiken_plan_with_0_differences() -> None:
    log = recorded().log
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    assert report.state == fold(log)


def test_changed_samples_are_a_difference() -> None:
    log = recorded().log
    i = next(i for i, e in enumerate(log) if e.type == "StageLatenciesObserved")
    stages = log[i].payload["stages"]
    changed = [{**stages[0], "samples_ms": [2.0 * v for v in stages[0]["samples_ms"]]}, *stages[1:]]
    log[i] = log[i].model_copy(update={"payload": {**log[i].payload, "stages": changed}})
    assert not replay(log, policy_set).ok


def test_explain_shows_a_kwiken_plan() -> None:
    log = recorded().log
    plan = next(e for e in log if e.type == "KwikenPlanDecided")
    lines = explain_decision(log, plan.payload["decision"]["decision_id"])
    assert lines[0].startswith("KwikenPlanDecided")
    assert "  re-derived: identical" in lines


def test_a_declaration_alone_decides_nothing() -> None:
    p = InProcessPlatform(POLICY, steady_agent)
    p.submit([server("s1"), submitted(WID, cores=2), declared()])
    assert not any(e.type == "KwikenPlanDecided" for e in p.log)
    assert isinstance(p.log[0].event(), ev.ServerRegistered)


def test_a_steady_150_stage_service_is_rarely_replanned_by_chance() -> None:
    """Family-wise α over the stages: 20 windows of a steady service (independent draws of the same
    laws as the plan's samples) give at most 2 drifts, where a per-stage α = 0.01 flags most windows."""
    specs = tuple(kw.StageSpec(name=f"s{i}") for i in range(150))
    dec = kw.ServiceStagesDeclared(at=1.0, workload_id=WID, stages=specs)
    plan = kw.KwikenPlanDecided(at=2.0, workload_id=WID, decision=record(), trigger="first", stages=(),
                                reissue_budget=0.05, loss_budget=0.001, reissue_spent=0.0)
    sigma = np.linspace(0.3, 1.2, 150)[:, None]

    def draw(seed: int) -> tuple[tuple[float, ...], ...]:
        x = np.random.default_rng(seed).lognormal(0.0, 1.0, (150, 1000)) ** sigma
        return tuple(tuple(row) for row in x)

    used = draw(0)
    windows = [draw(s) for s in range(1, 21)]
    flagged = [kp.due(kp.ServiceKwiken(dec, w, plan, used))[0] for w in windows]
    per_stage = [any(kp.drifted(c, u) for c, u in zip(w, used, strict=True)) for w in windows[:5]]
    assert sum(flagged) <= 2 and sum(per_stage) >= 3
