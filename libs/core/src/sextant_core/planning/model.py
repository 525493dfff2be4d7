"""Predicted performance of a workload on any allocation, from its four classification rows
(Quasar §3.2, §4.2; spec quasar.md §9 item 1: "the obvious reading is a separable product").

    node(p, c)      = U(c) · H(p)                   one node of platform p with c cores
    aggregate(A)    = E(n) · Σᵢ node(pᵢ, cᵢ)         batch and analytics (work adds up)
    aggregate(A)    = E(n) · n · minᵢ node(pᵢ, cᵢ)   services: the load balancer splits the load
                                                     evenly, so the weakest node binds

- **U(c)**, the scale-up curve: the `scale_up` row (`c<cores>[-knobs]` columns, cores parsed from
  the prefix; several columns with the same cores → the best) is the performance on the
  *reference platform* — where the scale-up runs of the profiling plan ran (Quasar: "on the
  highest-end platform"); taken from `WorkloadState.profile_runs`, else the platform with the most
  cores among the servers. [IMPL CHOICE] between columns U is interpolated linearly (below an
  Amdahl curve: conservative), below the smallest column it scales linearly to 0 cores, beyond
  the largest it stays flat, and it is made non-decreasing (more cores are never predicted slower;
  Quasar quantises scale-up and so do we). Without a scale-up row the workload is taken to scale
  linearly up to its requested cores (1 without a request) and stay flat beyond, at the level
  of its heterogeneity row on the reference platform.
- **H(p)**, the platform factor: `heterogeneity[p] / heterogeneity[reference]` (both rows are in
  the same units and measured with the reference configuration, `classification.observations`).
  A platform without a prediction gets the geometric mean of the predicted ones; without any
  heterogeneity row every platform is 1.
- **E(n)**, per-node scale-out efficiency: `scale_out["n<k>"] / (k · scale_out["n1"])`; without
  `n1` the smallest column counts as efficiency 1; linear between columns, flat beyond, clipped to
  [0.05, 2] (super-linear scale-out exists, Quasar §2.2); 1 without a scale-out row.

Units are those of the rows (see `targets.py`); the model never reads anything but the
classification, the workload's own profiling plan and the platforms of the state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sextant_contracts.model import Classification

from ..profiling.plan import column_cores
from ..state.model import ClusterState, WorkloadState
from .arrays import FloatArray

E_MIN, E_MAX = 0.05, 2.0


@dataclass(frozen=True, slots=True)
class PerformanceModel:
    """A workload's predicted performance; see the module docstring for the formulas."""

    reference: str
    platform_factor: Mapping[str, float]  # H(p)
    default_factor: float  # H of a platform with no prediction
    curve: FloatArray  # U(c) for c = 1..len(curve)
    nodes: FloatArray  # scale-out columns k (ascending)
    efficiency: FloatArray  # E(k) at those columns
    service: bool = False

    @property
    def max_cores(self) -> int:
        return len(self.curve)

    def factor(self, platform: str) -> float:
        return float(self.platform_factor.get(platform, self.default_factor))

    def factors(self, platforms: Sequence[str]) -> FloatArray:
        """H per platform of `platforms` (e.g. `CandidateTable.platforms`)."""
        return np.array([self.factor(p) for p in platforms], dtype=np.float64)

    def up(self, cores: int) -> float:
        """U(c); 0 for c < 1, flat beyond the curve."""
        if cores < 1:
            return 0.0
        return float(self.curve[min(cores, len(self.curve)) - 1])

    def node(self, platform: str, cores: int) -> float:
        return self.up(cores) * self.factor(platform)

    def scale_out(self, n: int) -> float:
        """E(n), 1 for one node."""
        if n <= 1 or len(self.nodes) == 0:
            return 1.0
        return float(np.interp(float(n), self.nodes, self.efficiency))

    def aggregate(self, node_perfs: Sequence[float]) -> float:
        """Aggregate performance of nodes with the given per-node predictions."""
        n = len(node_perfs)
        if n == 0:
            return 0.0
        e = self.scale_out(n)
        return e * n * min(node_perfs) if self.service else e * math.fsum(node_perfs)

    @property
    def best_single(self) -> float:
        """The best single-node prediction: the full curve on the best predicted platform."""
        best = max([*self.platform_factor.values(), self.default_factor])
        return float(self.curve[-1]) * best


def scale_up_curve(scale_up: Mapping[str, float], max_cores: int, *, fallback_level: float,
                   requested_cores: int) -> FloatArray:
    """U(c) for c = 1..max_cores (see the module docstring)."""
    pts: dict[int, float] = {}
    for col, v in scale_up.items():
        c = column_cores(col)
        if c is None or c < 1 or not math.isfinite(v) or v <= 0:
            continue
        pts[c] = max(pts.get(c, 0.0), float(v))
    grid = np.arange(1, max(max_cores, 1) + 1, dtype=np.float64)
    if not pts:
        req = max(requested_cores, 1)
        return fallback_level * np.minimum(grid, req) / req
    xs = np.array(sorted(pts), dtype=np.float64)
    ys = np.array([pts[int(c)] for c in xs])
    xs, ys = np.concatenate(([0.0], xs)), np.concatenate(([0.0], ys))
    out: FloatArray = np.maximum.accumulate(np.interp(grid, xs, ys))
    return out


def efficiency_curve(scale_out: Mapping[str, float]) -> tuple[FloatArray, FloatArray]:
    """(node counts, E at those counts) from the scale-out row (empty arrays without one)."""
    pts: dict[int, float] = {}
    for col, v in scale_out.items():
        if len(col) > 1 and col[0] == "n" and col[1:].isdigit() and math.isfinite(v) and v > 0:
            pts[int(col[1:])] = float(v)
    if not pts:
        return np.zeros(0), np.zeros(0)
    ks = sorted(pts)
    k0 = 1 if 1 in pts else ks[0]
    per_node0 = pts[k0] / k0
    eff = np.clip(np.array([pts[k] / (k * per_node0) for k in ks]), E_MIN, E_MAX)
    return np.array(ks, dtype=np.float64), eff


def reference_platform(state: ClusterState, w: WorkloadState) -> str:
    """Where the scale-up row was measured: the plan's scale-up runs, else the high-end platform
    (most cores, then memory, then id — the profiling plan's rule)."""
    for r in w.profile_runs:
        if r.classification == Classification.SCALE_UP:
            return r.platform
    best: tuple[int, float, str] | None = None
    for s in state.servers.values():
        key = (-s.capacity.cores, -s.capacity.memory_gb, s.platform)
        if best is None or key < best:
            best = key
    return best[2] if best is not None else ""


def _geomean(values: Sequence[float]) -> float:
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(math.fsum(math.log(v) for v in pos) / len(pos)) if pos else 1.0


def model_for(state: ClusterState, w: WorkloadState, max_cores: int) -> PerformanceModel:
    """The performance model of `w` (classified or not) for curves up to `max_cores`."""
    c = w.classification
    ref = reference_platform(state, w)
    het = {p: float(v) for p, v in (c.heterogeneity.items() if c is not None else ())
           if math.isfinite(v) and v > 0}
    level = het.get(ref, _geomean(list(het.values())) if het else 1.0)
    factors = {p: v / level for p, v in sorted(het.items())}
    default = _geomean(list(factors.values())) if factors else 1.0
    curve = scale_up_curve(c.scale_up if c is not None else {}, max_cores, fallback_level=level,
                           requested_cores=w.requested_cores or 1)
    nodes, eff = efficiency_curve(c.scale_out if c is not None else {})
    return PerformanceModel(reference=ref, platform_factor=factors, default_factor=default, curve=curve,
                            nodes=nodes, efficiency=eff, service=w.kind.value == "service")
