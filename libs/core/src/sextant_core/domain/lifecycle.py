"""The workload state machine (DESIGN §3).

    SUBMITTED ─ProfilingPlanned→ PROFILING ─ProfilingCompleted→ PROFILED ─WorkloadClassified→ CLASSIFIED
    SUBMITTED ─WorkloadClassified (fast path, Paragon §3.5)→ CLASSIFIED
    CLASSIFIED|QUEUED ─WorkloadQueued→ QUEUED ─WorkloadAdmitted→ ADMITTED
    ADMITTED|DEFERRED ─PlacementDeferred→ DEFERRED ─PlacementDecided→ PLACED ─WorkloadStarted→ RUNNING
    RUNNING ─PlacementDecided (re-plan after a lost server or a new target)→ PLACED
    RUNNING ─AllocationAdjusted|MigrationDecided|PerformanceObserved|QosVerdict|samples→ RUNNING
    RUNNING ─ReclassificationRequested/ProfilingPlanned/WorkloadClassified→ RUNNING (in place)
    RUNNING ─WorkloadCompleted→ COMPLETED;  any live phase ─WorkloadFailed→ FAILED, ─WorkloadRevoked→ REVOKED
    COMPLETED ─PerformanceObserved|QosVerdict (the final window, judged after the end)→ COMPLETED

An event that the table does not allow in the current phase raises `IllegalTransition`: deciders
never emit one, so seeing it means a bug or a corrupted log, and folding stops loudly.
"""

from __future__ import annotations

from enum import StrEnum


class WorkloadPhase(StrEnum):
    SUBMITTED = "submitted"
    PROFILING = "profiling"
    PROFILED = "profiled"
    CLASSIFIED = "classified"
    QUEUED = "queued"
    ADMITTED = "admitted"
    DEFERRED = "deferred"
    PLACED = "placed"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    REVOKED = "revoked"


P = WorkloadPhase
TERMINAL = frozenset({P.COMPLETED, P.FAILED, P.REVOKED})
QUARANTINED = "quarantined"  # the end reason of a workload failed by a `RecordQuarantined`
LIVE = frozenset(P) - TERMINAL
# phases in which the workload holds cluster resources
HOLDING = frozenset({P.PLACED, P.RUNNING})

# event type -> {from phase: to phase}; `None` as the from-phase means "no workload yet".
TRANSITIONS: dict[str, dict[WorkloadPhase | None, WorkloadPhase]] = {
    "WorkloadSubmitted": {None: P.SUBMITTED},
    "ProfilingPlanned": {P.SUBMITTED: P.PROFILING, P.RUNNING: P.RUNNING},
    "ProfileSampleRecorded": {P.PROFILING: P.PROFILING, P.RUNNING: P.RUNNING, P.PLACED: P.PLACED},
    "ProfilingCompleted": {P.PROFILING: P.PROFILED, P.RUNNING: P.RUNNING, P.PLACED: P.PLACED},
    "WorkloadClassified": {P.PROFILED: P.CLASSIFIED, P.SUBMITTED: P.CLASSIFIED, P.RUNNING: P.RUNNING,
                           P.PLACED: P.PLACED},
    "WorkloadQueued": {P.CLASSIFIED: P.QUEUED, P.QUEUED: P.QUEUED},
    "WorkloadAdmitted": {P.CLASSIFIED: P.ADMITTED, P.QUEUED: P.ADMITTED},
    "PlacementDeferred": {P.ADMITTED: P.DEFERRED, P.DEFERRED: P.DEFERRED, P.RUNNING: P.DEFERRED,
                          P.PLACED: P.DEFERRED},
    "PlacementDecided": {P.ADMITTED: P.PLACED, P.DEFERRED: P.PLACED, P.RUNNING: P.PLACED,
                         P.PLACED: P.PLACED},
    "WorkloadStarted": {P.PLACED: P.RUNNING},
    "AllocationAdjusted": {P.RUNNING: P.RUNNING},
    "MigrationDecided": {P.RUNNING: P.RUNNING},
    "ReclassificationRequested": {P.RUNNING: P.RUNNING},
    # a completed workload's last window is judged after its end (telemetry's final verdict)
    "PerformanceObserved": {P.RUNNING: P.RUNNING, P.PLACED: P.PLACED, P.COMPLETED: P.COMPLETED},
    "QosVerdict": {P.RUNNING: P.RUNNING, P.PLACED: P.PLACED, P.COMPLETED: P.COMPLETED},
    "WorkloadCompleted": {P.RUNNING: P.COMPLETED, P.PLACED: P.COMPLETED},
    "TargetUpdated": {p: p for p in LIVE},
    "WorkloadFailed": {p: P.FAILED for p in LIVE},
    "WorkloadRevoked": {p: P.REVOKED for p in LIVE},
}


# Facts reported by the edges (agent, telemetry) may race with decisions or repeat after an edge
# restarts: a sample taken just before a revoke is appended just after it; a restarted agent may
# report a profiling run twice. A fact that no longer applies to the workload's phase is folded as
# a no-op instead of halting every fold. Decisions are never tolerated: they are appended right
# after the state they were decided on, so an inapplicable decision is a bug.
LATE_FACTS = frozenset({"ProfileSampleRecorded", "ProfilingCompleted", "PerformanceObserved", "QosVerdict",
                        "WorkloadStarted", "WorkloadCompleted", "WorkloadFailed"})


def is_late_fact(phase: WorkloadPhase | None, event_type: str) -> bool:
    """A fact that does not apply in `phase` (see LATE_FACTS)."""
    return event_type in LATE_FACTS and phase is not None and not allows(phase, event_type)


class IllegalTransition(RuntimeError):
    """An event arrived that the workload's phase does not allow."""

    def __init__(self, workload_id: str, phase: WorkloadPhase | None, event_type: str) -> None:
        super().__init__(f"workload {workload_id}: {event_type} not allowed in phase {phase}")
        self.workload_id = workload_id
        self.phase = phase
        self.event_type = event_type


def next_phase(workload_id: str, phase: WorkloadPhase | None, event_type: str) -> WorkloadPhase:
    table = TRANSITIONS.get(event_type)
    if table is None or phase not in table:
        raise IllegalTransition(workload_id, phase, event_type)
    return table[phase]


def allows(phase: WorkloadPhase | None, event_type: str) -> bool:
    return phase in TRANSITIONS.get(event_type, {})
