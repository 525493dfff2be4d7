"""What the classification predicts for a running workload on its current allocation.

Reuses the planner's performance model (`planning.model.model_for`): per node
H(p) · S(c), aggregated by the scale-out efficiency E(n). The requirement comes from
`planning.targets.requirement` (same units, same relative-unit fallback), so the estimated ratio
is directly comparable with the `ratio_to_target` telemetry reports. Interference is not in the
estimate (the classification predicts performance alone; Paragon §2.2): a co-runner's pressure
shows up as a deviation, which is what reactive monitoring is for.
"""

from __future__ import annotations

from dataclasses import dataclass

from sextant_contracts.model import Allocation

from ..planning.model import PerformanceModel, model_for
from ..planning.targets import requirement
from ..state.model import ClusterState, WorkloadState


@dataclass(frozen=True, slots=True)
class Estimate:
    performance: float  # predicted aggregate performance, in the rows' units
    required: float  # the target's requirement at `at` (before any margin)
    relative: bool

    @property
    def ratio(self) -> float:
        return self.performance / self.required if self.required > 0 else 0.0


def performance_model(state: ClusterState, w: WorkloadState) -> PerformanceModel:
    cores = max((s.capacity.cores for s in state.servers.values()), default=1)
    return model_for(state, w, cores)


def predicted(state: ClusterState, w: WorkloadState, alloc: Allocation, model: PerformanceModel) -> float:
    nodes = []
    for a in alloc.assignments:
        s = state.servers.get(a.server_id)
        if s is None or not s.up:
            continue
        nodes.append(model.node(s.platform, a.cores))
    return model.aggregate(nodes)


def estimate(state: ClusterState, w: WorkloadState, at: float, alloc: Allocation | None = None) -> Estimate | None:
    """The estimate for `alloc` (default: the current allocation); None without one."""
    alloc = alloc if alloc is not None else w.allocation
    if alloc is None or w.classification is None:
        return None
    m = performance_model(state, w)
    perf = predicted(state, w, alloc, m)
    req = requirement(w.target, now=at, submitted_at=w.submitted_at, best_single=m.best_single)
    return Estimate(performance=perf, required=req.base, relative=req.relative)
