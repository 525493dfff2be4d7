"""The event catalogue of DESIGN §3: every fact Sextant records.

Each event is a frozen pydantic model with a constant `TYPE` (the CloudEvents `ce_type` and the
`events.type` column), a `SCHEMA_VERSION` (bumped together with an upcaster in `upcasters.py`),
and a `stream` (the aggregate it belongs to: `workload-<id>`, `server-<id>`, `clock`,
`model-<classification>`). Streams are the Kafka keys, so per-workload order holds.

Decision events (the `DecisionEvent` subclasses: `WorkloadAdmitted`, `WorkloadQueued`,
`PlacementDecided`, `PlacementDeferred`, `AllocationAdjusted`, `MigrationDecided`,
`ReclassificationRequested`, `ProbeRequested`, `WorkloadClassified`, `ProfilingPlanned`) carry a
`DecisionRecord` so `sextant replay` can re-derive them; the fold counts each one per workload.
Recurring templates have their own events and decisions (`recurring.py`, `decision_of`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from .model import (
    Allocation,
    Classification,
    DecisionRecord,
    DecisionTrace,
    Frozen,
    PerformanceTarget,
    ServerCapacity,
    WorkloadKind,
    WorkloadSpec,
)

EVENT_TYPES: dict[str, type[Event]] = {}


class Event(Frozen):
    """Base of every event. Subclasses set TYPE and SCHEMA_VERSION and are registered by TYPE."""

    TYPE: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = 1
    DECISION: ClassVar[bool] = False

    at: float = Field(ge=0, description="when it happened, seconds (virtual in the twin)")

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.TYPE:
            if cls.TYPE in EVENT_TYPES and EVENT_TYPES[cls.TYPE] is not cls:
                raise TypeError(f"duplicate event type {cls.TYPE}")
            EVENT_TYPES[cls.TYPE] = cls

    @property
    def stream(self) -> str:  # pragma: no cover - every concrete event overrides
        raise NotImplementedError


class WorkloadEvent(Event):
    workload_id: str = Field(min_length=1, max_length=128)

    @property
    def stream(self) -> str:
        return f"workload-{self.workload_id}"


class DecisionEvent(WorkloadEvent):
    DECISION: ClassVar[bool] = True
    decision: DecisionRecord


class ServerEvent(Event):
    server_id: str = Field(min_length=1, max_length=128)

    @property
    def stream(self) -> str:
        return f"server-{self.server_id}"


# --- workload lifecycle ----------------------------------------------------------------------


class WorkloadSubmitted(WorkloadEvent):
    TYPE: ClassVar[str] = "WorkloadSubmitted"
    tenant: str = Field(min_length=1, max_length=64)
    name: str = Field(default="", max_length=200)
    kind: WorkloadKind
    target: PerformanceTarget
    spec: WorkloadSpec
    priority: int = Field(default=0, ge=0, le=9)
    best_effort: bool = False
    requested_cores: int | None = Field(default=None, gt=0, le=100_000)
    requested_memory_gb: float | None = Field(default=None, gt=0)
    fast_path: bool = False  # short jobs skip profiling (Paragon §3.5)


class WorkloadStarted(WorkloadEvent):
    TYPE: ClassVar[str] = "WorkloadStarted"
    allocation: Allocation


class WorkloadCompleted(WorkloadEvent):
    TYPE: ClassVar[str] = "WorkloadCompleted"


class WorkloadRevoked(WorkloadEvent):
    TYPE: ClassVar[str] = "WorkloadRevoked"
    reason: str = ""


class WorkloadFailed(WorkloadEvent):
    TYPE: ClassVar[str] = "WorkloadFailed"
    reason: str


class RecordQuarantined(Event):
    """A record a consumer could not handle (its handling raised, again and again): set aside so
    the consumer goes on. Names the record (`record_id`: its event id, or what identifies it on its
    topic), its type, the consumer and the error. When the record names a live workload, that
    workload fails with reason `quarantined` (the fold does it). On the workload's stream when it
    names one, else on `quarantine-<consumer>`."""

    TYPE: ClassVar[str] = "RecordQuarantined"
    consumer: str = Field(min_length=1, max_length=128)
    record_id: str = Field(min_length=1, max_length=256)
    record_type: str = Field(default="", max_length=128)
    workload_id: str | None = Field(default=None, min_length=1, max_length=128)
    error: str = Field(max_length=2000)

    @property
    def stream(self) -> str:
        return f"workload-{self.workload_id}" if self.workload_id else f"quarantine-{self.consumer}"


class TargetUpdated(WorkloadEvent):
    TYPE: ClassVar[str] = "TargetUpdated"
    target: PerformanceTarget


# --- profiling -------------------------------------------------------------------------------


class ProfileRun(Frozen):
    """One short sandboxed run of the profiling plan.

    `classification` says which matrix the result feeds; `column` the column id in it (a scale-up
    config like "c4-m8", a node count "n2", a platform id, or an interference source). `server_id`
    is where it runs (chosen by the plan among the registered servers of `platform`).
    """

    run_id: str
    classification: Classification
    column: str
    platform: str
    server_id: str | None = None
    cores: int = Field(default=1, gt=0)
    nodes: int = Field(default=1, gt=0)
    duration_s: float = Field(default=30.0, gt=0)


class ProfilingPlanned(DecisionEvent):
    TYPE: ClassVar[str] = "ProfilingPlanned"
    runs: tuple[ProfileRun, ...]


class ProfileSampleRecorded(WorkloadEvent):
    """One measurement. For interference runs, `value` is the tolerated score and `caused` the
    caused score (0..100); otherwise `value` is the measured performance."""

    TYPE: ClassVar[str] = "ProfileSampleRecorded"
    run_id: str
    classification: Classification
    column: str
    value: float
    caused: float | None = None


class ProfilingCompleted(WorkloadEvent):
    TYPE: ClassVar[str] = "ProfilingCompleted"
    samples: int = Field(ge=0)


# --- classification --------------------------------------------------------------------------

# How a classification model's `content_hash` is computed (`FactorModel.content_hash`):
# `grid-1e-9` (current) hashes every parameter rounded to 1e-9 in the engine's normalised units, so
# the same log gives the same hash on any CPU and BLAS kernel; `f8-bytes` (events written before,
# set by their upcasters) hashed the raw float64 bytes, which differ in the last bits between BLAS
# kernels (e.g. AVX-512 and AVX2 machines): such a hash is checked only where it can be reproduced.
Fingerprint = Literal["grid-1e-9", "f8-bytes"]
MODEL_FINGERPRINT: Fingerprint = "grid-1e-9"
LEGACY_FINGERPRINT: Fingerprint = "f8-bytes"



class WorkloadClassified(DecisionEvent):
    """The four reconstructed rows (Quasar §3.2). Keys are column ids; `confidence` in 0..1 per
    classification; `model_versions` the matrix versions used."""

    TYPE: ClassVar[str] = "WorkloadClassified"
    SCHEMA_VERSION: ClassVar[int] = 2
    # the rows of `sextant_core.policies.Classified` (what a classifier returns), on purpose: a
    # shared base would reorder this event's JSON fields (and so every stored log)
    # pylint: disable=duplicate-code
    scale_up: dict[str, float] = Field(default_factory=dict)
    scale_out: dict[str, float] = Field(default_factory=dict)
    heterogeneity: dict[str, float] = Field(default_factory=dict)
    tolerated: dict[str, float] = Field(default_factory=dict)
    caused: dict[str, float] = Field(default_factory=dict)
    confidence: dict[str, float] = Field(default_factory=dict)
    model_versions: dict[str, str] = Field(default_factory=dict)
    # pylint: enable=duplicate-code
    reclassification: bool = False  # True when the workload was already running
    fingerprint: Fingerprint = MODEL_FINGERPRINT  # the writer's model-hash scheme (see above)


class ModelRetrained(Event):
    """A full retrain of one classification matrix, triggered by an event count (DESIGN §5)."""

    TYPE: ClassVar[str] = "ModelRetrained"
    SCHEMA_VERSION: ClassVar[int] = 2
    classification: Classification
    group: str = "all"  # matrices kept per workload type where the knobs differ
    model_version: str
    content_hash: str
    rows: int = Field(ge=0)
    columns: int = Field(ge=0)
    rank: int = Field(ge=0)
    trigger_position: int = Field(ge=0)
    fingerprint: Fingerprint = MODEL_FINGERPRINT  # how `content_hash` was computed (see above)

    @property
    def stream(self) -> str:
        return f"model-{self.classification.value}-{self.group}"


class KnowledgeSeeded(Event):
    """One exhaustively profiled workload offline-seeded into a classification matrix (Paragon §2.2,
    Quasar §3.2: "a few tens" of dense rows; scale-out: 20–30 types × 1–100 nodes).

    `values` maps column id -> raw measurement (performance for scale-up/scale-out/heterogeneity;
    the tolerated score 0..100 per interference source); `caused` the caused scores (interference
    only). Folded by the classification knowledge base like a classified workload's row.
    """

    TYPE: ClassVar[str] = "KnowledgeSeeded"
    classification: Classification
    group: str = "all"
    row_id: str = Field(min_length=1, max_length=200)
    values: dict[str, float]
    caused: dict[str, float] = Field(default_factory=dict)

    @property
    def stream(self) -> str:
        return f"model-{self.classification.value}-{self.group}"


class ReclassificationRequested(DecisionEvent):
    TYPE: ClassVar[str] = "ReclassificationRequested"
    reason: str


# --- admission -------------------------------------------------------------------------------


class WorkloadAdmitted(DecisionEvent):
    TYPE: ClassVar[str] = "WorkloadAdmitted"
    arq_class: int = Field(ge=0, le=9)
    trace: DecisionTrace = Field(default_factory=DecisionTrace)


class WorkloadQueued(DecisionEvent):
    """Admission put the workload in its ARQ class queue (Paragon §4): why it waits, how long."""

    TYPE: ClassVar[str] = "WorkloadQueued"
    arq_class: int = Field(ge=0, le=9)
    position: int = Field(ge=0)
    expected_wait_s: float = Field(ge=0)
    reason: str


# --- placement and adjustment ----------------------------------------------------------------


class PlacementDecided(DecisionEvent):
    TYPE: ClassVar[str] = "PlacementDecided"
    allocation: Allocation
    predicted_performance: float = Field(ge=0, default=0.0)
    trace: DecisionTrace = Field(default_factory=DecisionTrace)


class PlacementDeferred(DecisionEvent):
    TYPE: ClassVar[str] = "PlacementDeferred"
    reasons: tuple[str, ...]
    trace: DecisionTrace = Field(default_factory=DecisionTrace)


class AllocationAdjusted(DecisionEvent):
    TYPE: ClassVar[str] = "AllocationAdjusted"
    action: str  # scale_up | scale_down | scale_out | scale_in | evict | reclaim
    allocation: Allocation
    reason: str
    trace: DecisionTrace = Field(default_factory=DecisionTrace)


class MigrationDecided(DecisionEvent):
    TYPE: ClassVar[str] = "MigrationDecided"
    allocation: Allocation
    cost_s: float = Field(ge=0)
    gain: float
    reason: str
    trace: DecisionTrace = Field(default_factory=DecisionTrace)



# --- monitoring and reprovisioning -------------------------------------------------------------


class ProbeRequested(DecisionEvent):
    """Reprovisioning asks for an in-place interference probe of a running workload (Quasar §4.1
    proactive detection, Paragon §3.4 pre-emptive mode, Quasar §4.3 stragglers): microbenchmarks on
    `sources` next to it; the agent answers with `InterferenceProbed`. `purpose` is `proactive`
    (periodic sample) or `straggler` (a slow task's in-place check)."""

    TYPE: ClassVar[str] = "ProbeRequested"
    SCHEMA_VERSION: ClassVar[int] = 2
    probe_id: str = Field(min_length=1, max_length=200)
    sources: tuple[str, ...] = Field(min_length=1, max_length=10)
    purpose: str = Field(default="proactive", max_length=32)
    server_id: str | None = None  # where (None: the first server of the allocation)
    reference_server_id: str | None = None  # a healthy server of the same job probed alongside
    reason: str = ""
    # Whether the fold counts this decision in its workload's `decisions` (the counter seeds derive
    # from). Schema 1 probes were recorded when the fold did not count probes: their upcaster sets
    # False, so a log of that time re-derives the seeds it was decided with.
    counted: bool = True


class InterferenceProbed(WorkloadEvent):
    """A fact from the agent: the tolerated and caused scores (0..100) measured in place by the
    probe `probe_id`, one entry per probed source."""

    TYPE: ClassVar[str] = "InterferenceProbed"
    SCHEMA_VERSION: ClassVar[int] = 1
    probe_id: str = Field(min_length=1, max_length=200)
    purpose: str = Field(default="proactive", max_length=32)
    tolerated: dict[str, float] = Field(default_factory=dict)
    caused: dict[str, float] = Field(default_factory=dict)
    server_id: str | None = None
    reference_server_id: str | None = None
    reference_tolerated: dict[str, float] = Field(default_factory=dict)
    reference_caused: dict[str, float] = Field(default_factory=dict)


class TasksObserved(WorkloadEvent):
    """A fact from the agent (the framework's TaskTracker view, Quasar §4.3): per running task, its
    server and its progress rate (task-seconds of work per second). Input of straggler detection."""

    TYPE: ClassVar[str] = "TasksObserved"
    SCHEMA_VERSION: ClassVar[int] = 1
    servers: tuple[str, ...] = ()  # per task
    rates: tuple[float, ...] = ()  # per task, ≥ 0
    progress: tuple[float, ...] = ()  # per task, fraction done 0..1


class TaskAttemptsObserved(TasksObserved):
    """`TasksObserved` where each task has its own progress, with what LATE (Zaharia et al.,
    OSDI'08) needs besides: how long each task attempt has run and whether it is a speculative
    copy. A subclass, so it folds and is assessed like `TasksObserved`; a separate type, so logs
    written before it (the golden logs, the platform fixture) keep their bytes."""

    TYPE: ClassVar[str] = "TaskAttemptsObserved"
    SCHEMA_VERSION: ClassVar[int] = 1
    elapsed: tuple[float, ...] = ()  # per task, seconds the attempt has run, ≥ 0
    attempts: tuple[int, ...] = ()  # per task, 0 = the original attempt, ≥ 1 = a speculative copy

# --- telemetry -------------------------------------------------------------------------------


class PerformanceObserved(WorkloadEvent):
    """A measured performance sample, in the target's units, and its ratio to the target.
    `offered`: the load offered over the window in the same units when the executor knows it
    (a service: requests/s arriving, served within the bound or not — `value` counts only those
    within it, so it collapses when the service saturates); None otherwise."""

    TYPE: ClassVar[str] = "PerformanceObserved"
    value: float = Field(ge=0)
    ratio_to_target: float = Field(ge=0)
    p99_latency_ms: float | None = None
    offered: float | None = Field(default=None, ge=0)  # load offered (services: requests/s arriving), if known


class QosVerdict(WorkloadEvent):
    TYPE: ClassVar[str] = "QosVerdict"
    met: bool
    ratio_to_target: float = Field(ge=0)
    window_s: float = Field(gt=0)


class Tick(Event):
    """Periodic time in the log, so time-based policies are replayable (DESIGN §3 step 6)."""

    TYPE: ClassVar[str] = "Tick"
    seq: int = Field(ge=0)
    period_s: float = Field(gt=0)

    @property
    def stream(self) -> str:
        return "clock"


# --- servers ---------------------------------------------------------------------------------


class ServerRegistered(ServerEvent):
    TYPE: ClassVar[str] = "ServerRegistered"
    platform: str
    capacity: ServerCapacity
    cell: str = "cell-0"


class ServerDrained(ServerEvent):
    TYPE: ClassVar[str] = "ServerDrained"
    reason: str = ""


class ServerFailed(ServerEvent):
    TYPE: ClassVar[str] = "ServerFailed"
    reason: str = ""


class ServerRecovered(ServerEvent):
    TYPE: ClassVar[str] = "ServerRecovered"


class ServerRackAssigned(ServerEvent):
    """The server sits in `rack` (a rack of machines under a top-of-rack switch): its NIC's
    bandwidth (bytes/s) and the oversubscription of the rack's uplink to the core (> 1), as
    Corral's Model B reads them (docs/corral/platform.md). A later one replaces it; a server
    without one is in no rack (Corral plans only racked servers)."""

    TYPE: ClassVar[str] = "ServerRackAssigned"
    rack: str = Field(min_length=1, max_length=128)
    nic_bytes_s: float = Field(default=1.25e9, gt=0)
    oversubscription: float = Field(default=5.0, gt=1)


def decision_of(event: Event) -> DecisionRecord | None:
    """The `DecisionRecord` of a decision event — a workload's (`DecisionEvent`) or a recurring
    template's (`recurring.TemplateDecision`) — else None."""
    if not event.DECISION:
        return None
    rec = getattr(event, "decision", None)
    return rec if isinstance(rec, DecisionRecord) else None


def event_class(type_name: str) -> type[Event]:
    """The model for a `ce_type`; KeyError names the unknown type."""
    try:
        return EVENT_TYPES[type_name]
    except KeyError:
        raise KeyError(f"unknown event type {type_name!r}") from None
