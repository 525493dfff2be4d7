"""Immutable cluster state. Maps are HAMTs (`immutables.Map`): an update costs O(log n) and shares
structure, so folding 100 000 events stays fast while every intermediate state stays valid — a
decision can keep the snapshot it saw.

Per-server interference aggregates (Paragon §3.1/§3.2, "cumulative sensitivity to interference"):
`ServerState.caused_sum[k]` = Σ over residents of their caused score on source k, and
`ServerState.tolerated_min[k]` = min over residents of their tolerated score (an empty server has
c = 0 and t = 100 on every source, Paragon spec §3.2 [PROPOSAL]). Vectors are in
`INTERFERENCE_SOURCES` order. [IMPL CHOICE] a resident without a classification, or a source
missing from it (or non-finite), counts as neutral (t = 100, c = 0); a workload spread over several
servers exerts its full caused vector on each of them. Aggregates are recomputed from the sorted
resident list whenever it or a resident's classification changes (no incremental drift).

`ClusterState.server_journal` is a persistent newest-first list of the server ids whose rows
changed, appended by `evolve` in O(1) per change. It lets a columnar placement index update only
the changed rows between two states of one lineage (`sextant_core.placement.table`). It takes no
part in equality, is dropped by pickling and restarts every `JOURNAL_SPAN` entries, so it never
grows without bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from immutables import Map
from sextant_contracts.events import ModelRetrained, ProfileRun, WorkloadClassified
from sextant_contracts.model import INTERFERENCE_SOURCES, Allocation, ServerCapacity, WorkloadKind

from ..classification.knowledge import KnowledgeBase
from ..domain.lifecycle import HOLDING, WorkloadPhase
from ..fairness.load import Load
from ..fairness.vcstate import VcState
from ..kwiken.platform import KwikenState
from ..recurring.state import RecurringState
from .records import copy_with

N_SOURCES = len(INTERFERENCE_SOURCES)
NO_PRESSURE: tuple[float, ...] = (0.0,) * N_SOURCES
FULL_TOLERANCE: tuple[float, ...] = (100.0,) * N_SOURCES
GUARDED_TOLERANCE: tuple[float, ...] = (0.0,) * N_SOURCES  # a guarded workload tolerates no added pressure
JOURNAL_SPAN = 4096


def _vector(values: Mapping[str, float], default: float) -> tuple[float, ...]:
    out = []
    for src in INTERFERENCE_SOURCES:
        v = values.get(src.value)
        out.append(float(v) if v is not None and math.isfinite(v) else default)
    return tuple(out)


# interference_vectors of recent classifications: id -> (the classification, its vectors); the
# classification is kept with its entry, so an id is never reused while it is cached
_VECTORS: dict[int, tuple[WorkloadClassified, tuple[tuple[float, ...], tuple[float, ...]]]] = {}
_VECTORS_KEPT = 4096


def interference_vectors(c: WorkloadClassified | None) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(tolerated, caused) of a classification in `INTERFERENCE_SOURCES` order, 0..100 scores;
    missing or non-finite entries are neutral (tolerated 100, caused 0). A pure function of the
    (immutable) classification, remembered per object: the fold asks it for every resident of a
    server whose row changes."""
    if c is None:
        return FULL_TOLERANCE, NO_PRESSURE
    hit = _VECTORS.get(id(c))
    if hit is not None and hit[0] is c:
        return hit[1]
    vectors = _vector(c.tolerated, 100.0), _vector(c.caused, 0.0)
    if len(_VECTORS) >= _VECTORS_KEPT:
        _VECTORS.clear()
    _VECTORS[id(c)] = (c, vectors)
    return vectors


def resident_vectors(w: WorkloadState) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(tolerated, caused) of `w` as a resident of its servers: its classification's, except that a
    `guarded` workload tolerates no added pressure (its co-runners' D1 checks fail on every source
    a newcomer presses)."""
    t, c = interference_vectors(w.classification)
    return (GUARDED_TOLERANCE if w.guarded else t), c


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
    caused_sum: tuple[float, ...] = NO_PRESSURE  # Σ residents' caused, per source (0..100 each)
    tolerated_min: tuple[float, ...] = FULL_TOLERANCE  # min residents' tolerated, per source
    best_effort_cores: int = 0  # cores held here by best-effort residents (evictable first)
    best_effort_memory_gb: float = 0.0
    # when `residents` last changed (a workload placed, moved, resized or gone): the reprovisioner's
    # reactive detector re-measures a workload's baseline after its neighbourhood changed
    residents_changed_at: float = float("-inf")
    rack: str = ""  # `ServerRackAssigned` ("": in no rack), with its NIC and uplink oversubscription
    nic_bytes_s: float = 0.0
    oversubscription: float = 0.0

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
class TaskView:
    """One per-task view of an analytics job (`TasksObserved`): when, and per task its server,
    work rate, progress (0..1) and the seconds its attempt has run (empty without attempts)."""

    at: float
    servers: tuple[str, ...]
    rates: tuple[float, ...]
    progress: tuple[float, ...]
    elapsed: tuple[float, ...] = ()


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
    # the latest `OBSERVED_KEPT` observations, (time, ratio to target), oldest first: the measured
    # baseline of the reprovisioner's step detector (`reprovisioning.detection.step_change`)
    # (time, ratio to target, the pressure around it then: Σ caused_sum of its servers per source)
    observed: tuple[tuple[float, float, tuple[float, ...]], ...] = ()
    # the latest `LOAD_KEPT` offered loads (time, requests/s) of a service whose telemetry knows
    # them (`PerformanceObserved.offered`), oldest first: its own load history, which the
    # reprovisioner forecasts from (`reprovisioning.forecast`)
    load_history: tuple[tuple[float, float], ...] = ()
    # the latest `PROBES_KEPT` in-place proactive probes (time, probe id, server, ((source,
    # tolerated), ...)), oldest first: the in-place baseline of ladder 8.6's combined probe test
    # (`reprovisioning.detection.combined_change`)
    probed: tuple[tuple[float, str, str, tuple[tuple[str, float], ...]], ...] = ()
    # the latest `TASK_VIEWS_KEPT` per-task views of an analytics job (`TasksObserved`), oldest
    # first: the straggler rule of ladder 8.8 compares a view with the one before it
    # (`reprovisioning.task_views`)
    task_views: tuple[TaskView, ...] = ()
    # the latest `LATENCY_KEPT` (time, offered requests/s, p99 ms, allocation then) of a service
    # whose telemetry knows both: the points its latency calibration fits
    # (`reprovisioning.calibration`, ladder 8.7)
    latency_history: tuple[tuple[float, float, float, Allocation], ...] = ()
    allocated_at: float | None = None  # the latest placement, adjustment or migration that changed its allocation
    allocated_pressure: tuple[float, ...] | None = None  # the pressure around it right after it
    reclassify_requested_at: float | None = None  # the latest ReclassificationRequested
    # when its current classification starts to describe it: the request that led to it (a
    # reactive step's observation, a probe) when one was pending, else the classification's time
    classified_from: float | None = None
    last_verdict: bool | None = None
    verdicts: int = 0
    violations: int = 0
    decisions: int = 0  # decision events about it (every `DecisionEvent`; counted by `evolve`)
    end_reason: str = ""
    # a guaranteed workload whose best-effort co-runners were evicted for it (the ladder's
    # `evict` rung: its classification under-stated its sensitivity, or it needed their room) —
    # its servers tolerate nothing more (`server_aggregates`), so best effort does not come back
    guarded: bool = False

    @property
    def holds_resources(self) -> bool:
        return self.phase in HOLDING and self.allocation is not None


class ServerAggregates(TypedDict):
    caused_sum: tuple[float, ...]
    tolerated_min: tuple[float, ...]
    best_effort_cores: int
    best_effort_memory_gb: float


def server_aggregates(server_id: str, residents: tuple[str, ...], workloads: Mapping[str, WorkloadState],
                      exclude: str | None = None) -> ServerAggregates:
    """The aggregate fields of a server from its residents (sorted ids), optionally without one.

    Returns keyword arguments for `ServerState`: caused_sum, tolerated_min, best_effort_cores,
    best_effort_memory_gb. Summation runs in resident order, so the result is bit-reproducible.
    """
    caused = [0.0] * N_SOURCES
    tolerated = [100.0] * N_SOURCES
    be_cores, be_mem = 0, 0.0
    for rid in residents:
        w = workloads.get(rid)
        if w is None or rid == exclude:
            continue
        t, c = resident_vectors(w)
        for k in range(N_SOURCES):
            caused[k] += c[k]
            if t[k] < tolerated[k]:
                tolerated[k] = t[k]
        if w.best_effort and w.allocation is not None:
            for a in w.allocation.assignments:
                if a.server_id == server_id:
                    be_cores += a.cores
                    be_mem += a.memory_gb
    return ServerAggregates(caused_sum=tuple(caused), tolerated_min=tuple(tolerated),
                            best_effort_cores=be_cores, best_effort_memory_gb=round(be_mem, 9))


@dataclass(frozen=True, slots=True, eq=False)
class ServerJournal:
    """One entry of the server-change journal (newest first). Compared by identity.

    `added` marks a change of the row set (a server id seen for the first time or a platform
    change), which a columnar index answers with a full rebuild.
    """

    server_id: str
    added: bool
    prev: ServerJournal | None
    depth: int

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_dropped_journal, ())


def _dropped_journal() -> None:
    """Unpickles a journal as None: snapshots carry no journal (it is a cache hint only)."""
    return None


def journal_push(journal: ServerJournal | None, server_id: str, added: bool = False) -> ServerJournal:
    """Append one change; restarts the list after `JOURNAL_SPAN` entries."""
    if journal is None or journal.depth >= JOURNAL_SPAN:
        return ServerJournal(server_id, added, None, 0)
    return ServerJournal(server_id, added, journal, journal.depth + 1)


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
    knowledge: KnowledgeBase = field(default_factory=KnowledgeBase)  # classification matrices
    recurring: RecurringState = field(default_factory=RecurringState)  # recurring templates (Morpheus)
    vcs: VcState = field(default_factory=VcState)  # virtual clusters: capacities, allocation, history
    kwiken: KwikenState = field(default_factory=KwikenState)  # services' stage DAGs, samples, plans
    # kept by `evolve` (`fairness.load`): per tenant with a live workload (demand, held) in servers,
    # and the servers that are up and not drained — what an allocation between tenants reads
    load: Load = field(default_factory=Map)
    schedulable_servers: int = 0
    server_journal: ServerJournal | None = field(default=None, compare=False, repr=False)

    def with_(self, **changes: Any) -> ClusterState:
        """A copy with `changes`; replacing `servers` without a journal resets the journal."""
        if "servers" in changes and "server_journal" not in changes:
            changes["server_journal"] = None
        return copy_with(self, **changes)

    def live_workloads(self) -> list[WorkloadState]:
        return [w for _, w in sorted(self.workloads.items()) if w.phase not in
                (WorkloadPhase.COMPLETED, WorkloadPhase.FAILED, WorkloadPhase.REVOKED)]

    def sorted_servers(self) -> list[ServerState]:
        """Servers by id: the explicit tie-break order of every placement."""
        return [s for _, s in sorted(self.servers.items())]


EMPTY = ClusterState()
