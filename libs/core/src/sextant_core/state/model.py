"""Immutable cluster state. Maps are HAMTs (`immutables.Map`): an update costs O(log n) and shares
structure, so folding 100 000 events stays fast while every intermediate state stays valid — a
decision can keep the snapshot it saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from immutables import Map
from sextant_contracts.events import ModelRetrained, ProfileRun, WorkloadClassified
from sextant_contracts.model import Allocation, ServerCapacity, WorkloadKind

from ..domain.lifecycle import HOLDING, WorkloadPhase


@dataclass(frozen=True, slots=True)
class ServerState:
    server_id: str
    platform: str
    capacity: ServerCapacity
    cell: str = "cell-0"
    up: bool = True
    drained: bool = False
    used_cores: int = 0
    used_memory_gb: float = 0.0
    residents: tuple[str, ...] = ()  # workload ids, sorted

    @property
    def free_cores(self) -> int:
        return self.capacity.cores - self.used_cores

    @property
    def free_memory_gb(self) -> float:
        return self.capacity.memory_gb - self.used_memory_gb

    @property
    def schedulable(self) -> bool:
        return self.up and not self.drained


@dataclass(frozen=True, slots=True)
class WorkloadState:
    workload_id: str
    tenant: str
    kind: WorkloadKind
    target: Any  # a PerformanceTarget model
    spec: Any  # a WorkloadSpec model
    phase: WorkloadPhase
    submitted_at: float
    priority: int = 0
    best_effort: bool = False
    requested_cores: int | None = None
    requested_memory_gb: float | None = None
    name: str = ""
    fast_path: bool = False
    profile_runs: tuple[ProfileRun, ...] = ()
    samples: tuple[tuple[str, str, str, float, float | None], ...] = ()  # run, classification, column, value, caused
    classification: WorkloadClassified | None = None
    arq_class: int | None = None
    queue_position: int | None = None
    expected_wait_s: float | None = None
    allocation: Allocation | None = None
    started_at: float | None = None
    ended_at: float | None = None
    last_ratio: float | None = None
    last_verdict: bool | None = None
    verdicts: int = 0
    violations: int = 0
    decisions: int = 0
    end_reason: str = ""

    @property
    def holds_resources(self) -> bool:
        return self.phase in HOLDING and self.allocation is not None


@dataclass(frozen=True, slots=True)
class ClusterState:
    """Everything the deciders need. `position` is the global log position last folded (-1: none)."""

    position: int = -1
    now: float = 0.0
    tick: int = -1
    servers: Map[str, ServerState] = field(default_factory=Map)
    workloads: Map[str, WorkloadState] = field(default_factory=Map)
    models: Map[str, ModelRetrained] = field(default_factory=Map)
    queued: tuple[str, ...] = ()  # ARQ queue, in admission order
    deferred: tuple[str, ...] = ()  # admitted but not placed, in order

    def with_(self, **changes: Any) -> ClusterState:
        return replace(self, **changes)

    def live_workloads(self) -> list[WorkloadState]:
        return [w for _, w in sorted(self.workloads.items()) if w.phase not in
                (WorkloadPhase.COMPLETED, WorkloadPhase.FAILED, WorkloadPhase.REVOKED)]

    def sorted_servers(self) -> list[ServerState]:
        """Servers by id: the explicit tie-break order of every placement."""
        return [s for _, s in sorted(self.servers.items())]


EMPTY = ClusterState()
