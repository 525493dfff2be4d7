"""One columnar assessment of every server for one workload (Quasar §4.2 steps 1–2): what each
server would have to give it and what it would reach — shared by the Sextant planner and by ARQ
admission (which asks "is a server that meets the target available?", Paragon §4).

For workload w at time `at` (all arithmetic in `placement/plugins/quasar_sizing.py` and
`paragon_residual.py`):

1. the candidate table of the state (w's own allocation taken out when it is re-placed);
2. its performance model (`model.py`) and requirement R (`targets.py`, margin applied);
3. per server: interference factor f(s) (from the residents' pressure, `ResidualIndex.pressure`;
   column `interference_factor`), base(s) = H(platform) · f(s), the sized cores and the
   predicted ratio for one node (`size_rows`), the residual tolerance for the exact D1 check;
4. the table with these extra columns, ready for the Sextant profile's filters and scores.

[IMPL CHOICE] memory: a single node gets the workload's requested memory (1 GiB without a
request) × `memory_headroom`; a node of a spread gets it in proportion to its cores (the request's
GiB per core), at least `min_node_memory_gb`. The twin's classification has no memory columns
(Quasar's scale-up "blocks of memory"), so memory is not sized from a prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from sextant_contracts.model import Classification

from ..placement.plugins.paragon_residual import RESIDUAL
from ..placement.plugins.quasar_sizing import RATIO, SIZED, interference_factor, size_rows
from ..placement.request import PlacementRequest, request_for
from ..placement.table import CandidateTable, TableIndex, without_workload
from ..state.model import ClusterState, WorkloadState
from .arrays import FloatArray, IntArray
from .model import PerformanceModel, model_for
from .residual import ResidualIndex
from .targets import UNIT_BAND, Requirement, requirement

PRESSURE = "pressure"  # (n, S): what the residents put on a newcomer (`ResidualIndex.pressure`)
FACTOR = "interference_factor"  # (n,): the newcomer's predicted interference factor f(s)


@dataclass(frozen=True, slots=True)
class SizingParams:
    """Tunables of the joint sizing (chosen on seeds 1–5, docs/quality.md)."""

    margin: float = 0.0  # R · (1 + margin) (0.03 measured 0.499 vs 0.517 at 0, docs/quality.md)
    alpha: float = 2.0  # interference slowdown exponent (3.0 measured 0.517 vs 0.529 at 2, seed 1)
    slowdown_cap: float = 0.8
    memory_headroom: float = 1.0
    min_node_memory_gb: float = 0.5
    resident_headroom: float = 1.0  # κ of the residual index: residents kept at ≤ κ · tolerance
    plateau: float = 0.04  # scale-up gains below this are noise (`model.flatten_plateau`)
    per_core: bool = True  # per-core sources felt as the heaviest co-runner (`residual.py`)
    # how rows not in the target's units are recognised (`targets.py`): "wide" (planner 8 and
    # older) = a factor of `UNIT_MISMATCH` for every target; "kind" (8.1) = `UNIT_BAND` for
    # throughput and time targets, and a multi-node kind's relative requirement from its
    # requested allocation (`requirement_of`)
    units: str = "kind"
    # δ of `unmeasured_levels` (version 9): a platform whose level the workload's own profiling
    # runs did not measure counts H(p) · (1 − δ) when placing (0: every level taken as predicted)
    unmeasured_discount: float = 0.0
    # g of `slow_levels` (version 9): a platform whose level is below (1 − g) × the best level among
    # the platforms with room for the workload's cores cannot meet a relative QoS bar; it counts
    # H(p) · `SLOW_FACTOR` when placing (0: off)
    slow_gate: float = 0.0
    # version 9.4: a single node is sized to at least the workload's requested cores (the free
    # cores where fewer) when its classification's scale-up confidence is below this (0: off;
    # 1: whenever a scale-up entry was estimated, not measured — the estimate port reports 1)
    request_floor: float = 0.0

    def __post_init__(self) -> None:
        if self.margin < 0 or self.alpha <= 0 or self.memory_headroom <= 0:
            raise ValueError("margin >= 0, alpha > 0 and memory_headroom > 0 are required")
        if not 0.0 <= self.unmeasured_discount < 1.0 or not 0.0 <= self.slow_gate < 1.0:
            raise ValueError("unmeasured_discount and slow_gate must be in [0, 1)")
        if not 0.0 <= self.request_floor <= 1.0:
            raise ValueError("request_floor must be in [0, 1]")
        if not 0 < self.resident_headroom <= 1:
            raise ValueError("resident_headroom must be in (0, 1]")
        if self.units not in ("wide", "kind"):
            raise ValueError(f"units must be 'wide' or 'kind', not {self.units!r}")


MULTI_NODE_KINDS = frozenset({"analytics", "service"})


def requirement_of(model: PerformanceModel, w: WorkloadState, at: float, params: SizingParams) -> Requirement:
    """The requirement of `w` at `at` (`targets.requirement`) with `params.units`' reading of
    rows not in the target's units: "wide" — one band, and a relative requirement from the best
    node at the requested cores; "kind" — `UNIT_BAND` for non-rate targets, and for a multi-node
    kind the requested allocation's predicted aggregate (`PerformanceModel.best_allocation`)."""
    own = w.requested_cores or model.reference_cores
    if params.units == "wide":
        return requirement(w.target, now=at, submitted_at=w.submitted_at, best_single=model.best_single,
                           margin=params.margin, best_requested=model.best_at(own))
    best = model.best_allocation(own) if w.kind.value in MULTI_NODE_KINDS else model.best_at(own)
    return requirement(w.target, now=at, submitted_at=w.submitted_at, best_single=model.best_single,
                       margin=params.margin, best_requested=best, unit_band=UNIT_BAND)


@dataclass(frozen=True, slots=True)
class Assessment:
    """Everything the planner and admission need about one workload on every server."""

    table: CandidateTable  # with extra columns residual, sized_cores, predicted_ratio
    request: PlacementRequest  # memory for one node; cores = 1 (rows carry their own size)
    model: PerformanceModel
    required: Requirement
    base: FloatArray  # H(platform) · f(s) per row
    memory_per_core: float


class Assessor:
    """Builds `Assessment`s; keeps the incremental table and residual indexes of one decider."""

    def __init__(self, params: SizingParams | None = None, index: TableIndex | None = None) -> None:
        self.params = params or SizingParams()
        self.index = index if index is not None else TableIndex()
        self.residuals = ResidualIndex(kappa=self.params.resident_headroom, per_core=self.params.per_core)
        self._model: tuple[tuple[object, ...], object, object, PerformanceModel] | None = None
        self._last: tuple[tuple[object, ...], tuple[object, ...], Assessment] | None = None

    def model(self, state: ClusterState, w: WorkloadState, max_cores: int) -> PerformanceModel:
        """`model_for(state, w, max_cores)`, kept for the last workload asked about (its admission,
        then its placement): it reads only w's classification (same object), profiling plan
        (same object), request and kind, never the rest of the state."""
        key = (w.workload_id, w.requested_cores, w.kind, max_cores)
        hit = self._model
        if hit is not None and hit[0] == key and hit[1] is w.classification and hit[2] is w.profile_runs:
            return hit[3]
        model = model_for(state, w, max_cores, self.params.plateau)
        self._model = (key, w.classification, w.profile_runs, model)
        return model

    def table(self, state: ClusterState, w: WorkloadState) -> CandidateTable:
        table = self.index.table(state)
        return without_workload(table, state, w) if w.allocation is not None else table

    def assess(self, state: ClusterState, w: WorkloadState, at: float, seed: int = 0) -> Assessment:
        """The assessment of `w` at `at` on `state`. The last one is kept: asked again for the
        same workload on the same servers (the same map) with the same inputs, and the indexes
        have served no other state since (their buffers, which its columns view, are unchanged)
        — its placement right after its admission — it is returned again, with the new seed (the
        only thing that differs). What it reads of `w`: classification, profiling plan and target
        (same objects), request, kind, submission time, no allocation."""
        same = (state.servers, w.classification, w.profile_runs, w.target)
        key = (w.workload_id, at, w.requested_cores, w.requested_memory_gb, w.kind, w.best_effort, w.submitted_at,
               self.residuals.rebuilds, self.residuals.syncs, self.index.stats.rebuilds, self.index.stats.syncs)
        last = self._last
        if (w.allocation is None and last is not None and last[1] == key
                and all(a is b for a, b in zip(last[0], same, strict=True))):
            a = last[2]
            return a if a.request.seed == seed else replace(a, request=replace(a.request, seed=seed))
        a = self._assess(state, w, at, seed)
        key = (*key[:7], self.residuals.rebuilds, self.residuals.syncs, self.index.stats.rebuilds,
               self.index.stats.syncs)  # the indexes as they are now, at `state`
        self._last = (same, key, a) if w.allocation is None else None
        return a

    def _assess(self, state: ClusterState, w: WorkloadState, at: float, seed: int) -> Assessment:
        p = self.params
        table = self.table(state, w)
        max_cores = int(table.cap_cores.max()) if len(table) else 1
        model = self.model(state, w, max(max_cores, 1))
        req = requirement_of(model, w, at, p)
        mem = (w.requested_memory_gb or 1.0) * p.memory_headroom
        request = request_for(w, 1, mem, seed=seed)
        exclude = w.workload_id if w.allocation else None
        pressure = self.residuals.pressure(state, table, exclude=exclude)
        factor = interference_factor(pressure, request.tolerated, p.alpha, p.slowdown_cap)
        levels = unmeasured_levels(model.factors(table.platforms), table.platforms, w, p.unmeasured_discount)
        if p.slow_gate > 0 and len(table):
            want = w.requested_cores or model.reference_cores
            room = np.zeros(len(table.platforms), dtype=np.bool_)
            room[table.platform_code[table.cap_cores >= min(want, int(table.cap_cores.max()))]] = True
            levels = slow_levels(levels, room, w, p.slow_gate)
        base = levels[table.platform_code] * factor
        sized, ratio = size_rows(base, req.value, model.curve, table.free_cores)
        floor = floor_cores(w, p.request_floor)
        if floor > 1:
            sized, ratio = floored_rows(sized, ratio, floor, base, req.value, model.curve, table.free_cores)
        residual = self.residuals.residual(state, table, exclude=exclude)
        cols = {RESIDUAL: residual, SIZED: sized, RATIO: ratio, PRESSURE: pressure, FACTOR: factor}
        per_core = mem / max(w.requested_cores or 1, 1)
        return Assessment(table=table.with_extra(cols), request=request, model=model, required=req,
                          base=base, memory_per_core=per_core)


def measured_platforms(w: WorkloadState) -> frozenset[str]:
    """The platforms whose heterogeneity entry `w`'s own profiling runs measured: those of its
    heterogeneity runs and of its scale-up runs (the reference run gives the high-end platform's
    entry, `classification.observations`)."""
    return frozenset(r.platform for r in w.profile_runs
                     if r.classification in (Classification.HETEROGENEITY, Classification.SCALE_UP))


def unmeasured_levels(levels: FloatArray, platforms: Sequence[str], w: WorkloadState, discount: float) -> FloatArray:
    """The levels H(p) the planner places with (version 9): a platform whose entry `w`'s profiling
    measured keeps its level; any other counts H(p) · (1 − `discount`) — the planner prefers a
    platform known to meet the target to one predicted to, and takes an unmeasured one only when
    its prediction clears the target by the discount. Levels are unchanged when `discount` is 0,
    when `w` has no profiling runs, or when its classification reports full heterogeneity
    confidence (a classifier that knows every entry, e.g. the twin's estimate port): every entry
    is then as good as measured. The requirement is not touched (`targets.requirement` reads the
    undiscounted model)."""
    c = w.classification
    if discount <= 0 or not w.profile_runs or c is None or c.confidence.get("heterogeneity", 0.0) >= 1.0:
        return levels
    known = measured_platforms(w)
    scale = np.array([1.0 if p in known else 1.0 - discount for p in platforms], dtype=np.float64)
    out: FloatArray = levels * scale
    return out


SLOW_FACTOR = 0.01  # a gated platform is never predicted to meet a target, and still ordered


def slow_levels(levels: FloatArray, room: np.ndarray, w: WorkloadState, gate: float) -> FloatArray:
    """The levels with every platform below (1 − `gate`) × the best level among the platforms with
    `room` (those that can host the workload's cores) scaled by `SLOW_FACTOR` (version 9).

    Paragon's QoS is 95 % of the performance on the best server configuration: a platform whose
    per-core level is more than `gate` below the best cannot meet it, whatever cores the sizing
    gives it (cores beyond the workload's threads do not help). An absolute target in the rows'
    units lets such a platform through when the predicted scale-up curve over-estimates the
    cores it would add (measured on paragon-ec2-2500 with the classification engine: most lost
    workloads ran on platforms predicted slow, docs/quality/profiling.md). Unchanged when `w`'s
    classification reports full heterogeneity confidence (the estimate port; true rows), as in
    `unmeasured_levels`, or when no platform has room."""
    c = w.classification
    if gate <= 0 or c is None or c.confidence.get("heterogeneity", 0.0) >= 1.0 or not room.any():
        return levels
    top = float(levels[room].max())
    if top <= 0:
        return levels
    out: FloatArray = np.where(levels < (1.0 - gate) * top, levels * SLOW_FACTOR, levels)
    return out


def floor_cores(w: WorkloadState, threshold: float) -> int:
    """The fewest cores a single node of `w` is sized to (version 9.4, `SizingParams.request_floor`):
    its requested cores when its classification's scale-up confidence is below `threshold`, else
    0 (no floor). The fewest cores predicted to meet the target are what Quasar sizes to; with
    estimated scale-up entries the predicted curve is flatter or steeper than the truth by the
    estimate's error, and the fewest cores that meet the bar on it leave no room for that error
    (measured on paragon-ec2-2500: docs/quality/planning.md, "Sizing and platform choice")."""
    c = w.classification
    if threshold <= 0 or c is None or not w.requested_cores:
        return 0
    return int(w.requested_cores) if float(c.confidence.get("scale_up", 0.0)) < threshold else 0


def floored_rows(sized: IntArray, ratio: FloatArray, floor: int, base: FloatArray, required: float,
                 curve: FloatArray, free_cores: IntArray) -> tuple[IntArray, FloatArray]:
    """(sized, ratio) with every row given at least min(`floor`, its free cores); the ratio is
    the prediction at the new size (unchanged where the size is)."""
    out = np.maximum(sized, np.minimum(floor, np.maximum(free_cores, 0))).astype(np.int64)
    if not (np.isfinite(required) and required > 0) or len(curve) == 0:
        return out, ratio
    up = np.concatenate(([0.0], curve))[np.minimum(out, len(curve))]
    new: FloatArray = np.where(out != sized, up * base / required, ratio)
    return out, new


def node_memory(a: Assessment, cores: int, nodes: int, min_gb: float) -> float:
    """GiB for one node of `cores` cores (the whole request on a single node)."""
    if nodes <= 1:
        return a.request.memory_gb
    return round(max(a.memory_per_core * cores, min_gb), 9)
