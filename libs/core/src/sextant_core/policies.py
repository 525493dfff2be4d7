"""The seams every later capability plugs into: one Protocol per decision, its outcome type, and
`PolicySet`, the bundle a profile names.

Optional capabilities are Protocols too, the way the Kubernetes scheduler framework declares its
optional plugin interfaces: a policy that has one declares it by subclassing the Protocol
(`class ProfilePlanner(RetryHint): ...`), so mypy checks the method's name and signature and an
implementer that misses it cannot be instantiated (the methods are abstract). `decide` asks the
type (`isinstance(planner, RetryHint)`), never a name:

- `RetryHint` (planner): `could_use`, asked before a deferred workload is retried;
- `ExplainablePlanner` (planner): `explaining`, the same planner recording every verdict;
- `RetrainingClassifier` (classifier): `retrains`, model retrains due before a classification;
- `ObservationAssessor`, `ProbeAssessor`, `TaskAssessor` (reprovisioner): the monitoring inputs
  `AssessObservation`, `AssessProbe`, `AssessTasks`; a reprovisioner without one decides nothing
  for that input;
- `ReplanAssessor` (reprovisioner): `replan`, the re-plan after a reclassification (keep or move).

The simple implementations at the bottom (`AdmitAll`, `FirstFitPlanner`, `ObservedOnlyClassifier`,
`NoAdaptation`) are the starting policies the foundation ships so the whole loop runs; the
classification engine, ARQ admission, Sextant planning and reprovisioning replace them through
`PolicySet` without touching `decide`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import Field
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import Allocation, Assignment, DecisionTrace, Frozen

from .context import DecisionContext
from .state.model import ClusterState, WorkloadState

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
    """`place` decides; see `RetryHint` and `ExplainablePlanner` for what a planner may add."""

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome: ...


class Reprovisioner(Protocol):
    """`review` decides on a review (QoS verdict, probe round); see the assessors for what a
    reprovisioner may add."""

    def review(self, state: ClusterState, w: WorkloadState, reason: str,
               ctx: DecisionContext) -> Sequence[ev.Event]: ...


# --- optional capabilities ---------------------------------------------------------------------


@runtime_checkable
class RetryHint(Protocol):
    """A planner capability (the scheduler framework's queueing hint): asked before a deferred
    workload is retried because `freed` servers got capacity back. False means the search cannot
    succeed now (e.g. no freed server fits the one-server request, and nothing else changed in
    its favour), so the retry is answered without searching (`process.py`); True means search.
    A planner without it is always searched."""

    @abstractmethod
    def could_use(self, state: ClusterState, w: WorkloadState, freed: tuple[str, ...]) -> bool: ...


@runtime_checkable
class ExplainablePlanner(Protocol):
    """A planner capability: `explaining()` is the same planner (same decisions) recording every
    server's verdict from every plugin in the outcome's detail, for `sextant explain`."""

    @abstractmethod
    def explaining(self) -> Planner: ...


@runtime_checkable
class RetrainingClassifier(Protocol):
    """A classifier capability: the `ModelRetrained` events due before classifying `w` (models
    whose event count is due). `decide` appends them right after the classification event, which
    already uses them; none due is an empty sequence."""

    @abstractmethod
    def retrains(self, state: ClusterState, w: WorkloadState,
                 ctx: DecisionContext) -> Sequence[ev.ModelRetrained]: ...


@runtime_checkable
class ObservationAssessor(Protocol):
    """A reprovisioner capability: decide on a running workload's performance observation."""

    @abstractmethod
    def observe(self, state: ClusterState, w: WorkloadState, c: cmd.AssessObservation,
                ctx: DecisionContext) -> Sequence[ev.Event]: ...


@runtime_checkable
class ProbeAssessor(Protocol):
    """A reprovisioner capability: decide on the result of an in-place interference probe."""

    @abstractmethod
    def assess_probe(self, state: ClusterState, w: WorkloadState, c: cmd.AssessProbe,
                     ctx: DecisionContext) -> Sequence[ev.Event]: ...


@runtime_checkable
class TaskAssessor(Protocol):
    """A reprovisioner capability: decide on an analytics job's per-task progress view."""

    @abstractmethod
    def assess_tasks(self, state: ClusterState, w: WorkloadState, c: cmd.AssessTasks,
                     ctx: DecisionContext) -> Sequence[ev.Event]: ...


@runtime_checkable
class ReplanAssessor(Protocol):
    """A reprovisioner capability: the re-plan of a running workload after its reclassification
    (`PlaceWorkload("reclassified")`) — given the planner's `proposed` outcome, the outcome to
    decide (the proposal, or the workload's current allocation to keep it where it runs). A
    reprovisioner without it takes the planner's proposal."""

    @abstractmethod
    def replan(self, state: ClusterState, w: WorkloadState, proposed: PlacementOutcome,
               ctx: DecisionContext) -> PlacementOutcome: ...


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
    # the policy allocating servers between virtual clusters (`sextant_core.fairness`); another
    # one than the default is named in the profile (`profiles.with_vc_policy`), so replay finds it
    vc_policy: str = "sextant"
    # the rule set of recurring decisions and of the placement gate (`recurring.decisions.RULES`);
    # replay takes the one a decision recorded (`recurring.decisions.rules_of`)
    recurring_rules: str = "3"


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
