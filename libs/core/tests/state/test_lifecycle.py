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
    for table in TRANSITIONS.values():
        assert not (set(table) & TERMINAL)
