"""What ARQ asks the planner's side: which servers could take the workload now, and how good
each would be for it (Paragon §4: "an available machine" of a pool; "resource quality").

An `Offer` per server row: `eligible` (it has room and passes the interference checks now),
`ratio` (predicted performance over the requirement: ≥ 1 meets it), `could_serve` (its platform
and size could meet the requirement if it were free — the busy slots whose release ARQ waits
for). Two providers, matching the two planners:

- `TargetAvailability` (profile `sextant`): the Sextant assessment (`planning.assess`): room =
  the sized cores and memory fit, interference = the exact D1 check, ratio = the predicted ratio
  at the sized cores (platform × scale-up × predicted interference factor);
- `ParagonAvailability` (profile `paragon`): room = the requested size fits, interference =
  Paragon's strict D1 and D2 filters, ratio = predicted platform performance / (95 % of the best
  predicted platform) — Paragon's QoS reading of "a server of suitable quality".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..placement.plugins.fit import capacity_fit
from ..placement.plugins.interference import d1_violations, d2_violations
from ..placement.plugins.paragon_residual import residual_violations
from ..placement.plugins.quasar_sizing import RATIO, SIZED
from ..placement.request import Sizer, request_for, requested_size
from ..placement.table import BoolArray, CandidateTable, FloatArray, TableIndex, without_workload
from ..planning.assess import Assessor
from ..planning.targets import QOS_FRACTION
from ..state.model import ClusterState, WorkloadState


@dataclass(frozen=True, slots=True)
class Offer:
    table: CandidateTable
    eligible: BoolArray
    ratio: FloatArray
    could_serve: BoolArray
    cores: int  # cores the workload would take on a typical server (waiting demand)
    meets: BoolArray | None = None  # eligible & (ratio >= 1), when the provider computed it


class Availability(Protocol):
    def offer(self, state: ClusterState, w: WorkloadState, at: float, seed: int) -> Offer: ...


class TargetAvailability:
    def __init__(self, assessor: Assessor) -> None:
        self.assessor = assessor

    def offer(self, state: ClusterState, w: WorkloadState, at: float, seed: int) -> Offer:
        a = self.assessor.assess(state, w, at, seed)
        t = a.table
        sized = t.extra[SIZED]
        schedulable = t.schedulable
        eligible = schedulable & (sized >= 1)  # room ...
        eligible &= t.free_memory_gb + 1e-9 >= a.request.memory_gb
        eligible &= ~residual_violations(t.extra["residual"], a.request.caused).any(axis=1)  # ... and D1
        model, req = a.model, a.required.value
        # H(platform) · U(capacity) ≥ R, looked up per (platform, capacity): the same products
        reach = model.factors(t.platforms)[:, None] * model.curve[None, :] >= req
        could = schedulable & reach[t.platform_code, np.maximum(np.minimum(t.cap_cores, model.max_cores), 1) - 1]
        meets = eligible & (t.extra[RATIO] >= 1.0)
        cores = int(np.median(sized[meets])) if meets.any() else int(max(1, w.requested_cores or 1))
        return Offer(table=t, eligible=eligible, ratio=t.extra[RATIO], could_serve=could, cores=cores, meets=meets)


class ParagonAvailability:
    def __init__(self, sizer: Sizer = requested_size, index: TableIndex | None = None) -> None:
        self.sizer = sizer
        self.index = index if index is not None else TableIndex()

    def offer(self, state: ClusterState, w: WorkloadState, at: float, seed: int) -> Offer:
        t = self.index.table(state)
        if w.allocation is not None:
            t = without_workload(t, state, w)
        cores, mem = self.sizer(state, w)
        r = request_for(w, cores, mem, seed=seed)
        room, _ = capacity_fit(t.free_cores, t.free_memory_gb, cores, mem)
        room &= t.schedulable
        ok = ~d1_violations(t.tolerated_min, r.caused).any(axis=1) & ~d2_violations(r.tolerated, t.caused_sum).any(axis=1)
        perf = r.performance_by_code(t)
        known = np.isfinite(perf)
        best = float(perf[known].max()) if known.any() else 0.0
        per_platform = np.where(known, perf, 0.0) / (QOS_FRACTION * best) if best > 0 else np.ones(len(perf))
        ratio = per_platform[t.platform_code]
        could = t.schedulable & (ratio >= 1.0) & (t.cap_cores >= cores)
        return Offer(table=t, eligible=room & ok, ratio=ratio, could_serve=could, cores=cores)
