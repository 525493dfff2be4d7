"""Predicted performance of a workload on any allocation, from its four classification rows
(Quasar §3.2, §4.2; spec quasar.md §9 item 1: "the obvious reading is a separable product").

    node(p, c)      = H(p) · S(c)                   one node of platform p with c cores
    aggregate(A)    = E(n) · Σᵢ node(pᵢ, cᵢ)         batch and analytics (work adds up)
    aggregate(A)    = E(n) · n · minᵢ node(pᵢ, cᵢ)   services: the load balancer splits the load
                                                     evenly, so the weakest node binds

- **H(p)**, the level: the `heterogeneity` row — the performance on platform p with the plan's
  *reference configuration* (its heterogeneity runs and the reference run use it,
  `classification.observations`). A platform without a prediction gets the geometric mean of the
  predicted ones.
- **S(c)**, the shape: the `scale_up` row (`c<cores>[-knobs]` columns, cores parsed from the
  prefix; several columns with the same cores → the best), measured on the high-end platform, as
  a ratio to its value at the reference cores c_ref: S(c) = U(c) / U(c_ref), so S(c_ref) = 1.
  c_ref = the cores of the plan's heterogeneity runs, else of its first scale-up run, else 1
  (`WorkloadState.profile_runs`). [IMPL CHOICE] the heterogeneity row gives the level and the
  scale-up row only the shape, because platforms are chosen by the level: one noisy scale-up
  column must not move every platform's prediction. Between columns U is interpolated linearly
  (below an Amdahl curve: conservative), below the smallest column it scales linearly to 0 cores,
  beyond the largest it stays flat, and it is made non-decreasing by an isotonic (least-squares,
  pool-adjacent-violators) fit of the column values — more cores are never predicted slower, and
  noise on a plateau averages out instead of ratcheting up. `plateau` ε ≥ 0 cuts the curve flat
  from the first c within a factor 1 + ε of its top: gains below the measurement noise are not
  worth cores (sizing would otherwise buy phantom performance with the cores of a noisy plateau).
- Fallbacks: without a scale-up row the workload scales linearly up to its requested cores (1
  without a request; that is c_ref) and stays flat beyond; without a heterogeneity row the level
  is U(c_ref) on every platform (1 without either row).
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

    reference_cores: int
    platform_factor: Mapping[str, float]  # H(p): the level on each platform
    default_factor: float  # H of a platform with no prediction
    curve: FloatArray  # S(c) for c = 1..len(curve) (1 at the reference cores)
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
        """S(c); 0 for c < 1, flat beyond the curve."""
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

    def scale_outs(self, n: FloatArray) -> FloatArray:
        """E(k) for every node count k of `n` (the same values as `scale_out` one by one)."""
        out: FloatArray = np.ones(len(n))
        if len(self.nodes):
            multi = n > 1
            out[multi] = np.interp(n[multi], self.nodes, self.efficiency)
        return out

    def aggregate(self, node_perfs: Sequence[float]) -> float:
        """Aggregate performance of nodes with the given per-node predictions."""
        n = len(node_perfs)
        if n == 0:
            return 0.0
        e = self.scale_out(n)
        return e * n * min(node_perfs) if self.service else e * math.fsum(node_perfs)

    def best_at(self, cores: int) -> float:
        """The best platform's prediction at `cores` (S(cores) × the best level)."""
        return self.up(cores) * max([*self.platform_factor.values(), self.default_factor])

    def best_allocation(self, cores: int) -> float:
        """The best platform's predicted aggregate for `cores` cores in all, spread the way
        Quasar scales out (scale up first): n = ⌈cores / c_sat⌉ nodes of ⌈cores / n⌉ cores each,
        c_sat the first core count at the top of the curve — E(n) · n · best level · S(⌈cores /
        n⌉) (batch and services alike: the nodes are equal). One node: `best_at(cores)`."""
        curve = self.curve
        if len(curve) == 0 or cores <= 1:
            return self.best_at(max(cores, 1))
        c_sat = int(np.argmax(curve >= curve[-1])) + 1
        n = -(-cores // c_sat)
        if n <= 1:
            return self.best_at(cores)
        per_node = -(-cores // n)
        return self.scale_out(n) * n * self.best_at(per_node)

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
    ys = isotonic(np.array([pts[int(c)] for c in xs]))
    xs, ys = np.concatenate(([0.0], xs)), np.concatenate(([0.0], ys))
    out: FloatArray = np.maximum.accumulate(np.interp(grid, xs, ys))
    return out


def isotonic(ys: FloatArray) -> FloatArray:
    """The non-decreasing least-squares fit of `ys` (pool adjacent violators, equal weights).
    Already non-decreasing (the common scale-up row): `ys` itself, as the pooling gives it (every
    block one value y, y / 1 = y)."""
    values = ys.tolist()
    if all(a <= b for a, b in zip(values, values[1:], strict=False)):
        return np.array(values, dtype=np.float64)
    blocks: list[list[float]] = []  # [sum, count]
    for y in values:
        blocks.append([y, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, n = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += n
    return np.concatenate([np.full(int(n), s / n) for s, n in blocks]) if blocks else np.zeros(0)


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


def reference_cores(w: WorkloadState) -> int:
    """c_ref: the cores of the plan's heterogeneity runs, else of its first scale-up run (the
    reference run, `classification.observations`), else 1."""
    runs = w.profile_runs
    het = [r.cores for r in runs if r.classification == Classification.HETEROGENEITY]
    if het:
        return het[0]
    up = [r.cores for r in runs if r.classification == Classification.SCALE_UP]
    return up[0] if up else 1


def _geomean(values: Sequence[float]) -> float:
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(math.fsum(math.log(v) for v in pos) / len(pos)) if pos else 1.0


def flatten_plateau(curve: FloatArray, plateau: float) -> FloatArray:
    """The curve held flat from the first c with U(c) ≥ U(top) / (1 + plateau)."""
    if plateau <= 0 or len(curve) == 0:
        return curve
    k = int(np.searchsorted(curve, float(curve[-1]) / (1.0 + plateau), side="left"))
    out: FloatArray = np.minimum(curve, curve[k])
    return out


def model_for(state: ClusterState, w: WorkloadState, max_cores: int, plateau: float = 0.0) -> PerformanceModel:
    """The performance model of `w` (classified or not) for curves up to `max_cores`."""
    c = w.classification
    scale_up = c.scale_up if c is not None else {}
    has_up = any(column_cores(k) for k in scale_up)
    c_ref = reference_cores(w) if has_up else max(w.requested_cores or 1, 1)
    u = flatten_plateau(scale_up_curve(scale_up, max(max_cores, c_ref), fallback_level=1.0,
                                       requested_cores=c_ref), plateau)
    u_ref = float(u[c_ref - 1])
    shape = u[:max(max_cores, 1)] / u_ref if u_ref > 0 else u[:max(max_cores, 1)]
    het = {p: float(v) for p, v in (c.heterogeneity.items() if c is not None else ())
           if math.isfinite(v) and v > 0}
    level = u_ref if has_up and u_ref > 0 else 1.0
    factors = dict(sorted(het.items())) if het else {}
    default = _geomean(list(factors.values())) if factors else level
    nodes, eff = efficiency_curve(c.scale_out if c is not None else {})
    return PerformanceModel(reference_cores=c_ref, platform_factor=factors, default_factor=default, curve=shape,
                            nodes=nodes, efficiency=eff, service=w.kind.value == "service")
