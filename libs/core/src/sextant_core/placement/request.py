"""What a placement is asked to place: size, predicted performance per platform, interference.

The request is built from the `WorkloadState` (its requested resources and its classification)
by a *sizer* and `request_for`. Units: cores (int ≥ 1), memory in GiB (> 0), performance in the
classification's units (higher is better; only ratios between platforms are used by the
baseline plugins), interference scores 0..100 in `INTERFERENCE_SOURCES` order.

[IMPL CHOICE] A workload that requests nothing gets 1 core and 1 GiB (`requested_size`), as the
foundation's stand-in planner did; reservation-based or target-driven sizers (the twin's
`reservation-*` baselines, the planner's joint sizing) replace the sizer, not the planner.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from ..state.model import ClusterState, WorkloadState, interference_vectors
from .table import CandidateTable, FloatArray

Sizer = Callable[[ClusterState, WorkloadState], tuple[int, float]]
"""(state, workload) -> (cores, memory GiB) to place."""

DEFAULT_CORES = 1
DEFAULT_MEMORY_GB = 1.0


def requested_size(state: ClusterState, w: WorkloadState) -> tuple[int, float]:
    """The workload's own request; 1 core / 1 GiB where absent."""
    return (w.requested_cores or DEFAULT_CORES, w.requested_memory_gb or DEFAULT_MEMORY_GB)


@dataclass(frozen=True, slots=True)
class PlacementRequest:
    """One workload to place. `seed` is the decision's seed (the `random` plugin's stream)."""

    workload_id: str
    cores: int
    memory_gb: float
    performance: Mapping[str, float] = field(default_factory=dict)  # platform -> predicted perf
    tolerated: FloatArray = field(default_factory=lambda: np.full(10, 100.0))
    caused: FloatArray = field(default_factory=lambda: np.zeros(10))
    best_effort: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise ValueError(f"cores must be >= 1, got {self.cores}")
        if not self.memory_gb > 0:
            raise ValueError(f"memory_gb must be > 0, got {self.memory_gb}")

    def resized(self, cores: int, memory_gb: float) -> PlacementRequest:
        return replace(self, cores=cores, memory_gb=memory_gb)

    def performance_by_code(self, table: CandidateTable) -> FloatArray:
        """Predicted performance per platform of `table.platforms` (NaN where not predicted)."""
        out = np.full(len(table.platforms), np.nan)
        for i, p in enumerate(table.platforms):
            v = self.performance.get(p)
            if v is not None and math.isfinite(v):
                out[i] = v
        return out


def request_for(w: WorkloadState, cores: int, memory_gb: float, seed: int = 0) -> PlacementRequest:
    """The request for `w` with the given size; performance and interference from its
    classification (neutral when unclassified: tolerates 100, causes 0, no platform preference)."""
    tolerated, caused = interference_vectors(w.classification)
    perf = dict(w.classification.heterogeneity) if w.classification is not None else {}
    return PlacementRequest(workload_id=w.workload_id, cores=cores, memory_gb=memory_gb,
                            performance=perf, tolerated=np.array(tolerated), caused=np.array(caused),
                            best_effort=w.best_effort, seed=seed)
