"""The seams every later capability plugs into: one Protocol per decision, its outcome type, and
`PolicySet`, the bundle a profile names.

The simple implementations at the bottom (`AdmitAll`, `FirstFitPlanner`, `ObservedOnlyClassifier`,
`NoAdaptation`) are the starting policies the foundation ships so the whole loop runs; the
classification engine, ARQ admission, Sextant planning and reprovisioning replace them through
`PolicySet` without touching `decide`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import Field
from sextant_contracts import events as ev
from sextant_contracts.model import Allocation, Assignment, DecisionTrace, Frozen

from .state.model import ClusterState, WorkloadState

if TYPE_CHECKING:
    from .decide import DecisionContext


# --- outcomes ----------------------------------------------------------------------------------


class Classified(Frozen):
    """What a classifier returns: the fields of `WorkloadClassified` without its record."""

    scale_up: dict[str, float] = Field(default_factory=dict)
    scale_out: dict[str, float] = Field(default_factory=dict)
    heterogeneity: dict[str, float] = Field(default_factory=dict)
    tolerated: dict[str, float] = Field(default_factory=dict)
    caused: dict[str, float] = Field(default_factory=dict)
    confidence: dict[str, float] = Field(default_factory=dict)
    model_versions: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AdmissionOutcome:
    admitted: bool
    arq_class: int = 0
    position: int = 0
    expected_wait_s: float = 0.0
    reason: str = ""
    trace: DecisionTrace = field(default_factory=DecisionTrace)
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PlacementOutcome:
    allocation: Allocation | None
    predicted_performance: float = 0.0
    reasons: tuple[str, ...] = ()
    trace: DecisionTrace = field(default_factory=DecisionTrace)
    detail: Mapping[str, Any] = field(default_factory=dict)


# --- protocols ---------------------------------------------------------------------------------


class ProfilingPolicy(Protocol):
    def plan(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> tuple[ev.ProfileRun, ...]: ...


class Classifier(Protocol):
    def classify(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> Classified: ...


class AdmissionPolicy(Protocol):
    def admit(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> AdmissionOutcome: ...


class Planner(Protocol):
    """`place` decides; a planner may also define `could_use(state, w, freed) -> bool`, asked
    before a deferred workload is retried because `freed` servers got capacity back: False means
    the search cannot succeed now (e.g. no freed server fits the one-server request, and nothing
    else changed in its favour), so the retry is answered without searching (process.py)."""

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome: ...


class Reprovisioner(Protocol):
    def review(self, state: ClusterState, w: WorkloadState, reason: str,
               ctx: DecisionContext) -> Sequence[ev.Event]: ...


@dataclass(frozen=True, slots=True)
class PolicySet:
    """A named, versioned bundle of policies (a profile). `version` goes into every decision."""

    profile: str
    version: str
    profiling: ProfilingPolicy
    classifier: Classifier
    admission: AdmissionPolicy
    planner: Planner
    reprovisioner: Reprovisioner


# --- starting policies -------------------------------------------------------------------------


class AdmitAll:
    """Admit every workload in ARQ class 0 (no admission control)."""

    def admit(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> AdmissionOutcome:
        return AdmissionOutcome(admitted=True, arq_class=0, reason="admit-all")


class ObservedOnlyClassifier:
    """No collaborative filtering: each observed column keeps its measured value and every
    unobserved column gets the mean of the observed ones of the same classification."""

    def classify(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> Classified:
        by: dict[str, dict[str, float]] = {"scale_up": {}, "scale_out": {}, "heterogeneity": {},
                                           "tolerated": {}, "caused": {}}
        for _run, cls, col, value, caused in w.samples:
            if cls == "interference":
                by["tolerated"][col] = value
                by["caused"][col] = caused if caused is not None else 0.0
            else:
                by[cls][col] = value
        platforms = sorted({s.platform for s in state.servers.values()})
        het = by["heterogeneity"]
        if het:
            mean = sum(het.values()) / len(het)
            het = {p: het.get(p, mean) for p in platforms} if platforms else het
        return Classified(scale_up=by["scale_up"], scale_out=by["scale_out"], heterogeneity=het,
                          tolerated=by["tolerated"], caused=by["caused"],
                          confidence={k: 0.0 for k in by}, model_versions={"observed": "0"})


class FirstFitPlanner:
    """Requested cores (1 if none) and memory (1 GiB if none) on the least-loaded server that
    fits, ties by server id. A stand-in until the placement framework's profiles exist."""

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        cores = w.requested_cores or 1
        mem = w.requested_memory_gb or 1.0
        best: tuple[float, str] | None = None
        for s in state.sorted_servers():
            if s.schedulable and s.free_cores >= cores and s.free_memory_gb >= mem:
                key = (s.used_cores / s.capacity.cores, s.server_id)
                if best is None or key < best:
                    best = key
        if best is None:
            return PlacementOutcome(allocation=None, reasons=("no_capacity",),
                                    trace=DecisionTrace(examined=len(state.servers)))
        alloc = Allocation(assignments=(Assignment(server_id=best[1], cores=cores, memory_gb=mem),))
        return PlacementOutcome(allocation=alloc, trace=DecisionTrace(
            examined=len(state.servers), top=((best[1], round(100 * (1 - best[0]), 3)),)))


class NoAdaptation:
    """Never adjusts a running workload (the `no-adaptation` baseline, docs/adaptation.md)."""

    def review(self, state: ClusterState, w: WorkloadState, reason: str,
               ctx: DecisionContext) -> Sequence[ev.Event]:
        return ()
