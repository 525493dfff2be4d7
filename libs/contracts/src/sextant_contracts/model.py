"""Value types shared by events and commands: targets, workload specs, allocations, decision records.

Units are fixed here once: time in seconds (float; virtual seconds in the twin, Unix seconds on
the platform), memory in GiB, bandwidth in GB/s, latency in milliseconds, performance as a
positive real whose meaning the target states (QPS, 1/completion-time, instructions/s), and
interference scores on 0..100 (Paragon §3.2: tolerated = highest tolerated pressure, caused =
pressure generated; higher caused = more pressure).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class Frozen(BaseModel):
    """Base for every contract value: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class WorkloadKind(StrEnum):
    """What shape of performance target a workload has (Quasar §2)."""

    BATCH = "batch"  # single-node batch: completion time or instruction rate
    ANALYTICS = "analytics"  # distributed batch (Hadoop/Spark/Storm): completion time
    SERVICE = "service"  # latency-critical: QPS with a tail-latency bound


class InterferenceSource(StrEnum):
    """The ten sources of interference of Paragon Table II, in its order (the canonical column order).

    L2 capacity/bandwidth are folded into the LLC rows as the paper's table does ("similar for L2").
    """

    MEMORY_CAP = "memory_cap"
    MEMORY_BW = "memory_bw"
    LLC_CAP = "llc_cap"
    LLC_BW = "llc_bw"
    L1I = "l1i"
    L1D = "l1d"
    TLB = "tlb"
    CORE = "core"
    NETWORK_BW = "network_bw"
    STORAGE_BW = "storage_bw"


INTERFERENCE_SOURCES: tuple[InterferenceSource, ...] = tuple(InterferenceSource)


class Classification(StrEnum):
    """The four classifications of Quasar §3.2, each its own matrix."""

    SCALE_UP = "scale_up"
    SCALE_OUT = "scale_out"
    HETEROGENEITY = "heterogeneity"
    INTERFERENCE = "interference"


# --- performance targets ---------------------------------------------------------------------


class ThroughputLatencyTarget(Frozen):
    """Serve `qps` requests per second with the p99 latency at most `p99_latency_ms`."""

    type: Literal["throughput_latency"] = "throughput_latency"
    qps: float = Field(gt=0, le=1e9)
    p99_latency_ms: float = Field(gt=0, le=3.6e6)


class CompletionTimeTarget(Frozen):
    """Finish within `seconds` of starting."""

    type: Literal["completion_time"] = "completion_time"
    seconds: float = Field(gt=0, le=3.0e7)


class InstructionRateTarget(Frozen):
    """Sustain at least `ips` (normalised instructions per second; in the twin, relative units)."""

    type: Literal["instruction_rate"] = "instruction_rate"
    ips: float = Field(gt=0, le=1e15)


class DeadlineTarget(Frozen):
    """Finish by the absolute time `at` (Morpheus-style SLO for recurring jobs)."""

    type: Literal["deadline"] = "deadline"
    at: float = Field(ge=0)


PerformanceTarget = Annotated[
    ThroughputLatencyTarget | CompletionTimeTarget | InstructionRateTarget | DeadlineTarget,
    Field(discriminator="type"),
]


# --- what to run -----------------------------------------------------------------------------


class TwinWorkloadRef(Frozen):
    """A workload of the cluster twin: `ref` names its ground-truth model instance."""

    type: Literal["twin"] = "twin"
    ref: str = Field(min_length=1, max_length=200)


class ContainerSpec(Frozen):
    """A command or image to run on a real executor."""

    type: Literal["container"] = "container"
    image: str | None = Field(default=None, max_length=500)
    command: tuple[str, ...] = Field(default=(), max_length=256)


WorkloadSpec = Annotated[TwinWorkloadRef | ContainerSpec, Field(discriminator="type")]


# --- servers and allocations -----------------------------------------------------------------


class ServerCapacity(Frozen):
    """Per-resource capacity of one server."""

    cores: int = Field(gt=0)
    memory_gb: float = Field(gt=0)
    disk_bw_gbs: float = Field(ge=0, default=0.0)
    network_bw_gbs: float = Field(ge=0, default=0.0)
    llc_mb: float = Field(ge=0, default=0.0)


class Assignment(Frozen):
    """A slice of one server given to a workload."""

    server_id: str
    cores: int = Field(gt=0)
    memory_gb: float = Field(gt=0)


class Allocation(Frozen):
    """Where a workload runs and with how much; `config` carries framework knobs (Quasar §3.2)."""

    assignments: tuple[Assignment, ...]
    config: dict[str, float] = Field(default_factory=dict)

    @property
    def total_cores(self) -> int:
        return sum(a.cores for a in self.assignments)

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(a.server_id for a in self.assignments)


class DecisionRecord(Frozen):
    """What a decision was derived from, so replay can re-derive it (DESIGN §4).

    `state_position` is the global log position of the state the decider folded before deciding;
    `causation` the ids of the input events; the rest pins the policy and the model.
    """

    decision_id: str
    causation: tuple[str, ...]
    state_position: int = Field(ge=0)
    profile: str
    policy_version: str
    model_version: str = ""
    seed: int = Field(ge=0)


class DecisionTrace(Frozen):
    """Compact verdict summary of a decision (STYLE 8): per-filter rejection counts with reasons,
    the top candidates with their scores, and the work spent."""

    filtered: dict[str, dict[str, int]] = Field(default_factory=dict)
    top: tuple[tuple[str, float], ...] = ()
    examined: int = 0
    backtracks: int = 0
    budget_exhausted: bool = False
    notes: tuple[str, ...] = ()


class RawSample(Frozen):
    """One raw performance sample from the cluster agent (topic `sextant.telemetry.samples`).

    Not an event of the log: the telemetry service aggregates samples into `PerformanceObserved`
    and `QosVerdict` events. `ratio_to_target` is the executor's measurement relative to the
    workload's target (≥ 1 meets it); `sample_id` makes redeliveries recognisable.
    """

    sample_id: str = Field(min_length=1, max_length=128)
    workload_id: str = Field(min_length=1, max_length=128)
    at: float = Field(ge=0)
    value: float = Field(ge=0)
    ratio_to_target: float = Field(ge=0)
    p99_latency_ms: float | None = None
    offered: float | None = Field(default=None, ge=0)  # load offered (services: requests/s arriving), if known
