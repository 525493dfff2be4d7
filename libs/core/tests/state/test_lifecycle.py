"""The workload state machine: allowed paths pass, everything else raises."""

from __future__ import annotations

import pytest
from sextant_core.domain.lifecycle import (
    TERMINAL,
    TRANSITIONS,
    IllegalTransition,
    next_phase,
)
from sextant_core.domain.lifecycle import (
    WorkloadPhase as P,
)


@pytest.mark.parametrize(("phase", "event", "expected"), [
    (None, "WorkloadSubmitted", P.SUBMITTED),
    (P.SUBMITTED, "ProfilingPlanned", P.PROFILING),
    (P.PROFILING, "ProfilingCompleted", P.PROFILED),
    (P.PROFILED, "WorkloadClassified", P.CLASSIFIED),
    (P.SUBMITTED, "WorkloadClassified", P.CLASSIFIED),  # fast path skips profiling
    (P.CLASSIFIED, "WorkloadQueued", P.QUEUED),
    (P.QUEUED, "WorkloadAdmitted", P.ADMITTED),
    (P.ADMITTED, "PlacementDeferred", P.DEFERRED),
    (P.DEFERRED, "PlacementDecided", P.PLACED),
    (P.PLACED, "WorkloadStarted", P.RUNNING),
    (P.RUNNING, "PlacementDecided", P.PLACED),  # re-plan after a lost server
    (P.RUNNING, "WorkloadCompleted", P.COMPLETED),
    (P.QUEUED, "WorkloadRevoked", P.REVOKED),
    (P.PROFILING, "WorkloadFailed", P.FAILED),
], ids=lambda v: str(v))
def test_allowed_transitions(phase: P | None, event: str, expected: P) -> None:
    assert next_phase("w", phase, event) == expected


@pytest.mark.parametrize(("phase", "event"), [
    (None, "WorkloadStarted"),
    (P.SUBMITTED, "WorkloadSubmitted"),
    (P.SUBMITTED, "PlacementDecided"),  # must be admitted first
    (P.CLASSIFIED, "WorkloadStarted"),
    (P.COMPLETED, "WorkloadRevoked"),
    (P.REVOKED, "WorkloadStarted"),
    (P.RUNNING, "UnknownEvent"),
], ids=lambda v: str(v))
def test_illegal_transitions_raise(phase: P | None, event: str) -> None:
    with pytest.raises(IllegalTransition):
        next_phase("w", phase, event)


def test_terminal_phases_have_no_way_out() -> None:
    for event, table in TRANSITIONS.items():
        for phase in set(table) & TERMINAL:  # only a completed workload's final verdict, and it stays put
            assert event in ("PerformanceObserved", "QosVerdict") and phase == P.COMPLETED, (event, phase)
            assert table[phase] == phase


def test_a_final_verdict_after_completion_is_folded_and_reviews_nothing() -> None:
    from sextant_contracts import events as ev
    from sextant_core.process import react
    from sextant_core.state.evolve import fold
    from sextant_core.testing.builders import alloc, server, submitted, through_placement

    a = alloc(("s1", 1, 1.0))
    log = [server("s1"), submitted("w1"), *through_placement("w1", a),
           ev.WorkloadStarted(at=3.0, workload_id="w1", allocation=a), ev.WorkloadCompleted(at=4.0, workload_id="w1")]
    verdict = ev.QosVerdict(at=4.5, workload_id="w1", met=False, ratio_to_target=0.5, window_s=1.0)
    state = fold([*log, verdict])
    w = state.workloads["w1"]
    assert (w.phase, w.last_verdict, w.verdicts, w.violations) == (P.COMPLETED, False, 1, 1)
    assert react(state, verdict) == ()
    running = fold([*log[:-1], verdict])  # the same violation while it runs is reviewed
    assert [c.reason for c in react(running, verdict)] == ["qos_violation"]
