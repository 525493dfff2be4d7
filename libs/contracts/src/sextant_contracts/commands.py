"""Commands: requests addressed to exactly one handler (STYLE 3). A command's failure reaches its
caller; an event's handlers fail independently. The process manager of the core decides which
command follows which event (DESIGN §3), so the services and the twin run the same workflow.

Each command names the service that handles it (`HANDLER`), which is also its topic's consumer.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .events import ProfileRun
from .model import Allocation, Frozen, PerformanceTarget, WorkloadKind, WorkloadSpec

COMMAND_TYPES: dict[str, type[Command]] = {}


class Command(Frozen):
    TYPE: ClassVar[str] = ""
    HANDLER: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = 1

    workload_id: str = Field(min_length=1, max_length=128)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: object) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.TYPE:
            if cls.TYPE in COMMAND_TYPES and COMMAND_TYPES[cls.TYPE] is not cls:
                raise TypeError(f"duplicate command type {cls.TYPE}")
            COMMAND_TYPES[cls.TYPE] = cls

    @property
    def stream(self) -> str:
        return f"workload-{self.workload_id}"


class SubmitWorkload(Command):
    """From the REST API or the submissions topic. `workload_id` is minted once at the edge."""

    TYPE: ClassVar[str] = "SubmitWorkload"
    HANDLER: ClassVar[str] = "admission"
    # the fields of `WorkloadSubmitted`, which records this command, on purpose: a shared base
    # would reorder the event's JSON fields (and so every stored log)
    # pylint: disable=duplicate-code
    tenant: str = Field(min_length=1, max_length=64)
    name: str = Field(default="", max_length=200)
    kind: WorkloadKind
    target: PerformanceTarget
    spec: WorkloadSpec
    priority: int = Field(default=0, ge=0, le=9)
    best_effort: bool = False
    requested_cores: int | None = Field(default=None, gt=0, le=100_000)
    requested_memory_gb: float | None = Field(default=None, gt=0, le=1e6)
    # pylint: enable=duplicate-code


class PlanProfiling(Command):
    TYPE: ClassVar[str] = "PlanProfiling"
    HANDLER: ClassVar[str] = "profiling"


class ExecuteProfileRuns(Command):
    """To the cluster agent: execute these sandboxed runs and report `ProfileSampleRecorded`."""

    TYPE: ClassVar[str] = "ExecuteProfileRuns"
    HANDLER: ClassVar[str] = "agent"
    runs: tuple[ProfileRun, ...]


class ClassifyWorkload(Command):
    TYPE: ClassVar[str] = "ClassifyWorkload"
    HANDLER: ClassVar[str] = "classification"


class AdmitWorkload(Command):
    TYPE: ClassVar[str] = "AdmitWorkload"
    HANDLER: ClassVar[str] = "admission"


class PlaceWorkload(Command):
    """Place (or re-place) a workload. `reason` states the intent, so a decider whose state has
    moved past the triggering event can tell whether the command still applies: `admitted` and
    `capacity_freed` place a workload that holds nothing yet; `server_failed` (with `server_id`),
    `target_updated` and `reclassified` re-plan one that runs. `freed` (with `capacity_freed`):
    the servers whose capacity came back, so a planner can tell that a deferred workload still
    cannot fit without re-running its search; empty = unknown (a periodic retry: full search)."""

    TYPE: ClassVar[str] = "PlaceWorkload"
    HANDLER: ClassVar[str] = "planning"
    reason: Literal["admitted", "capacity_freed", "server_failed", "target_updated",
                    "reclassified"] = "admitted"
    server_id: str | None = None
    freed: tuple[str, ...] = ()


class StartWorkload(Command):
    """To the cluster agent: run the workload on this allocation."""

    TYPE: ClassVar[str] = "StartWorkload"
    HANDLER: ClassVar[str] = "agent"
    allocation: Allocation


class StopWorkload(Command):
    TYPE: ClassVar[str] = "StopWorkload"
    HANDLER: ClassVar[str] = "agent"
    reason: str = ""


class ResizeWorkload(Command):
    """To the cluster agent: apply an adjusted allocation (scale, migrate)."""

    TYPE: ClassVar[str] = "ResizeWorkload"
    HANDLER: ClassVar[str] = "agent"
    allocation: Allocation


class ReviewWorkload(Command):
    """To reprovisioning: look at a workload whose QoS verdict or sample warrants it."""

    TYPE: ClassVar[str] = "ReviewWorkload"
    HANDLER: ClassVar[str] = "reprovisioning"
    reason: str



# --- monitoring and reprovisioning -------------------------------------------------------------


class ProbeInterference(Command):
    """To the cluster agent: inject microbenchmarks on `sources` next to the running workload (on
    `server_id`, or on each of its servers) and report `InterferenceProbed`."""

    TYPE: ClassVar[str] = "ProbeInterference"
    HANDLER: ClassVar[str] = "agent"
    SCHEMA_VERSION: ClassVar[int] = 1
    probe_id: str = Field(min_length=1, max_length=200)
    sources: tuple[str, ...] = Field(min_length=1, max_length=10)
    purpose: str = "proactive"
    server_id: str | None = None
    reference_server_id: str | None = None


class AssessObservation(Command):
    """To reprovisioning: one performance observation of a running workload (reactive detection,
    load-driven scaling, idle reclaim)."""

    TYPE: ClassVar[str] = "AssessObservation"
    HANDLER: ClassVar[str] = "reprovisioning"
    SCHEMA_VERSION: ClassVar[int] = 1
    value: float = Field(ge=0)
    ratio_to_target: float = Field(ge=0)
    p99_latency_ms: float | None = None
    offered: float | None = Field(default=None, ge=0)  # load offered (services: requests/s arriving), if known


class AssessProbe(Command):
    """To reprovisioning: the result of an in-place interference probe, to compare with the
    workload's recorded classification."""

    TYPE: ClassVar[str] = "AssessProbe"
    HANDLER: ClassVar[str] = "reprovisioning"
    SCHEMA_VERSION: ClassVar[int] = 1
    probe_id: str = Field(min_length=1, max_length=200)
    purpose: str = "proactive"
    tolerated: dict[str, float] = Field(default_factory=dict)
    caused: dict[str, float] = Field(default_factory=dict)
    server_id: str | None = None
    reference_server_id: str | None = None
    reference_tolerated: dict[str, float] = Field(default_factory=dict)
    reference_caused: dict[str, float] = Field(default_factory=dict)


class AssessTasks(Command):
    """To reprovisioning: the per-task view of an analytics job (straggler detection)."""

    TYPE: ClassVar[str] = "AssessTasks"
    HANDLER: ClassVar[str] = "reprovisioning"
    SCHEMA_VERSION: ClassVar[int] = 2
    servers: tuple[str, ...] = ()
    rates: tuple[float, ...] = ()
    progress: tuple[float, ...] = ()
    # v2 (from `TaskAttemptsObserved`; empty from `TasksObserved`): seconds each attempt has run,
    # and 0 for an original attempt, ≥ 1 for a speculative copy
    elapsed: tuple[float, ...] = ()
    attempts: tuple[int, ...] = ()

