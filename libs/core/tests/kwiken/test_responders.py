"""A partial-answer stage's responder samples (`StageSamples.responder_ms`): the fold keeps a bounded
window of them; the plan's stopping rule is fitted on them and the drift test reads them (its
served latencies, cut by the rule, do not make it drift); windows without them — logs recorded
before they existed — are planned as then, reading the served samples as one responder's."""

from __future__ import annotations

import numpy as np
from sextant_contracts import kwiken as kw
from sextant_core.kwiken import platform as kp
from sextant_core.state import fold
from sextant_core.testing.kwiken import declared, window

WID = "svc-1"


def _with_responders(w: kw.StageLatenciesObserved, seed: int, scale: float = 1.0,
                     served: float = 1.0) -> kw.StageLatenciesObserved:
    """`w` with single-responder samples for the partial stage `lookup` (lognormal, median 2 ms ×
    `scale`) and its served samples × `served`."""
    rng = np.random.default_rng(seed)
    stages = []
    for s in w.stages:
        if s.stage == "lookup":
            resp = tuple(float(v) for v in np.round(scale * 2.0 * rng.lognormal(0.0, 0.5, 250), 3))
            s = s.model_copy(update={"samples_ms": tuple(round(v * served, 3) for v in s.samples_ms),
                                     "responder_ms": resp})
        stages.append(s)
    return w.model_copy(update={"stages": tuple(stages)})


def _svc(events: list[object]) -> kp.ServiceKwiken:
    """The Kwiken fold of `events` (`evolve_kwiken`: a plan needs no workload around it here)."""
    state = kp.KwikenState()
    for e in events:
        state = kp.evolve_kwiken(state, e)  # type: ignore[arg-type]
    svc = state.get(WID)
    assert svc is not None
    return svc


def test_windows_without_responders_are_planned_reading_served_samples_as_responders() -> None:
    old = _svc([declared()] + [window(100.0 + i, i) for i in range(2)])
    assert old == fold([declared()] + [window(100.0 + i, i) for i in range(2)]).kwiken.get(WID)
    assert old.responders == () and old.basis(1) == old.samples[1]
    # the same samples given as responders explicitly: the same plan, byte for byte
    explicit = kp.ServiceKwiken(old.declared, old.samples, responders=((), old.samples[1], ()))
    assert kp.compute_plan(old, 6) == kp.compute_plan(explicit, 6)


def test_the_fold_keeps_a_bounded_window_of_responders_for_the_partial_stage() -> None:
    svc = _svc([declared()] + [_with_responders(window(100.0 + i, i), 50 + i) for i in range(10)])
    assert [len(x) for x in svc.responders] == [0, kp.WINDOW, 0]
    assert svc.basis(1) == svc.responders[1] and svc.basis(0) == svc.samples[0]


def test_the_stopping_rule_is_fitted_on_responders_not_on_served_latencies() -> None:
    events: list[object] = [declared(loss_budget=0.05)] + [_with_responders(window(100.0 + i, i), 50 + i)
                                                           for i in range(2)]
    svc = _svc(events)
    lookup = kp.compute_plan(svc, 6)[0][1]
    as_before = kp.compute_plan(kp.ServiceKwiken(svc.declared, svc.samples), 6)[0][1]
    assert lookup.partial_p is not None and lookup.samples == len(svc.responders[1])
    # responders of median 2 ms against served samples of median 10 ms: another rule, its times
    # on the responders' scale
    rule = (lookup.partial_t_c_ms, lookup.partial_t_d_ms, lookup.partial_t_min_ms)
    assert rule != (as_before.partial_t_c_ms, as_before.partial_t_d_ms, as_before.partial_t_min_ms)
    finite = [t for t in rule if t is not None]
    assert finite and max(finite) < float(np.max(svc.responders[1]))


def test_served_latencies_cut_by_the_rule_do_not_make_the_partial_stage_drift() -> None:
    first = [_with_responders(window(100.0 + i, i), 50 + i) for i in range(2)]
    stages, spent = kp.compute_plan(_svc([declared(), *first]), 6)
    plan = kw.KwikenPlanDecided(at=170.0, workload_id=WID, decision=_record(), trigger="first", stages=stages,
                                reissue_budget=0.05, loss_budget=0.001, reissue_spent=spent)
    # the next windows: same laws, the partial stage's served latencies halved by its rule
    later = [_with_responders(window(200.0 + i, 20 + i), 80 + i, served=0.5) for i in range(8)]
    svc = _svc([declared(), *first, plan, *later])
    assert kp.due(svc) == (False, ())
    # read as responders (the old reading), the halved served latencies drift
    legacy = kp.ServiceKwiken(svc.declared, svc.samples, svc.plan, svc.plan_samples)
    assert kp.due(legacy) == (True, ("lookup",))
    # the responders themselves moving is drift
    moved = _svc([declared(), *first, plan, *[_with_responders(window(200.0 + i, 20 + i), 80 + i, scale=2.0)
                                              for i in range(8)]])
    assert kp.due(moved) == (True, ("lookup",))


def _record() -> object:
    from sextant_contracts.model import DecisionRecord

    return DecisionRecord(decision_id="d", causation=(), state_position=0, profile="foundation",
                          policy_version="v", seed=1)
