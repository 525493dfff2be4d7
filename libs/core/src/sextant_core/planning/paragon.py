"""`ParagonPlanner`: Paragon's interference- and heterogeneity-aware *assignment* of a given size
(Paragon §3.2) — the planner of the `paragon` profile (the size is the workload's request) and of
`reservation-paragon` (the size is a reservation, Quasar §6 "reservation + Paragon").

0. ARQ pools (Paragon §4): while a class above the workload's has workloads waiting, the pools
   kept for them are out of bounds (`admission.queues.reserved_from`; reason `reserved_pool`);
1. capacity: the `schedulable` and `fit` filters (Paragon spec §3.2 [PROPOSAL]: hard capacity
   filters before the interference filters);
2. interference: the greedy level-by-level D1/D2 search with backtracking and a work budget
   (`greedy.search`);
3. selection: best predicted platform with candidates, then the least ‖D1 + D2‖₁ (`greedy.select`).

When no single server has room for the size, the size is spread (as the placement framework's
scale-out does, `placement/spread.py`) over the candidates of the same search run for one core
(memory per core kept), in the selection order; incomplete → deferred. Paragon itself places
single-node applications only (spec §9 item 18); spreading is what its reservation baseline needs
for a reservation larger than any server.

The trace counts, per level filter, the rows each level removed (reason `d1_<source>` /
`d2_<source>`), the backtracking passes, and notes `backtracked`, `least_violation`,
`budget_exhausted`, `scale_out`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sextant_contracts.model import Allocation, Assignment, DecisionTrace

from ..admission.quality import CLASSES, pools, table_quality
from ..admission.queues import class_queues, reserved_from
from ..placement.framework import DEFAULT_BUDGET, Budget, count_reasons
from ..placement.plugins.interference import d1_margins, d2_margins
from ..placement.registry import plugin
from ..placement.request import PlacementRequest, Sizer, request_for, requested_size
from ..placement.retry import request_could_fit
from ..placement.spread import spread
from ..placement.table import CandidateTable, TableIndex, without_workload
from ..policies import PlacementOutcome, RetryHint
from ..state.model import ClusterState, WorkloadState
from .arrays import BoolArray, FloatArray
from .greedy import GreedyParams, GreedyResult, search

if TYPE_CHECKING:
    from ..context import DecisionContext


def _ranked(res: GreedyResult, table: CandidateTable, perf: FloatArray, d1: FloatArray, d2: FloatArray) -> Any:
    rows = np.flatnonzero(res.candidates)
    p = np.where(np.isfinite(perf), perf, -np.inf)
    rank = np.empty(len(p), dtype=np.int64)
    rank[np.lexsort((np.arange(len(p)), -p))] = np.arange(len(p))
    l1 = np.abs(d1[rows] + d2[rows]).sum(axis=1)
    order = np.lexsort((rows, l1, rank[table.platform_code[rows]]))
    return rows[order], l1[order]


class ParagonPlanner(RetryHint):
    """Paragon's greedy selector for the size the sizer gives (default: the workload's request)."""

    def __init__(self, *, sizer: Sizer = requested_size, params: GreedyParams | None = None,
                 budget: int = DEFAULT_BUDGET, max_servers: int = 256, top_k: int = 5,
                 index: TableIndex | None = None) -> None:
        self.sizer = sizer
        self.params = params or GreedyParams()
        self.budget = budget
        self.max_servers = max_servers
        self.top_k = top_k
        self.index = index if index is not None else TableIndex()

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        table = self.index.table(state)
        if w.allocation is not None:
            table = without_workload(table, state, w)
        cores, mem = self.sizer(state, w)
        return place_paragon(table, request_for(w, cores, mem, seed=ctx.seed), self.params,
                             Budget(self.budget), max_servers=self.max_servers, top_k=self.top_k,
                             allowed=arq_allowed(state, w, table))

    def could_use(self, state: ClusterState, w: WorkloadState, freed: tuple[str, ...]) -> bool:
        """Whether a deferred `w` could now be placed thanks to the `freed` servers (capacity
        comes first in the search and the size may be spread: `placement/retry.py`)."""
        cores, mem = self.sizer(state, w)
        return request_could_fit(state, lambda: self.index.table(state), freed, cores, mem, scale_out=True)


def arq_allowed(state: ClusterState, w: WorkloadState, table: CandidateTable) -> BoolArray | None:
    """Servers outside the ARQ pools kept for waiting classes above w's (None: no bound)."""
    if not state.queued or w.arq_class is None:
        return None
    below = reserved_from(class_queues(state), w.arq_class)
    if below >= CLASSES:
        return None
    out: BoolArray = pools(table_quality(table)) < below
    return out


def _capacity(table: CandidateTable, request: PlacementRequest,
              allowed: BoolArray | None) -> tuple[BoolArray, dict[str, dict[str, int]]]:
    alive = np.ones(len(table), dtype=np.bool_)
    removed: dict[str, dict[str, int]] = {}
    if allowed is not None:
        removed["paragon-arq-pool"] = {"reserved_pool": int((~allowed).sum())} if (~allowed).any() else {}
        alive &= allowed
    for name in ("schedulable", "fit"):
        p = plugin(name)
        v = p.filter(table, request, p.Args())
        removed[name] = count_reasons(alive & ~v.mask, v.codes, p.REASONS)
        alive &= v.mask
    return alive, removed


def _trace(table: CandidateTable, res: GreedyResult, removed: dict[str, dict[str, int]], budget: Budget,
           top: tuple[tuple[str, float], ...], notes: list[str]) -> DecisionTrace:
    if res.backtracks:
        notes.append("backtracked")
    if res.least_violation:
        notes.append("least_violation")
    if res.exhausted or budget.used > budget.limit:
        notes.append("budget_exhausted")
    return DecisionTrace(filtered={**removed, **res.removed}, top=top, examined=budget.used,
                         backtracks=res.backtracks, budget_exhausted=res.exhausted or budget.used > budget.limit,
                         notes=tuple(notes))


def _search(table: CandidateTable, request: PlacementRequest, params: GreedyParams, budget: Budget,
            allowed: BoolArray | None) -> tuple[GreedyResult, dict[str, dict[str, int]], FloatArray, FloatArray]:
    start, removed = _capacity(table, request, allowed)
    d1 = d1_margins(table.tolerated_min, request.caused)
    d2 = d2_margins(request.tolerated, table.caused_sum)
    return search(d1, d2, request.caused, request.tolerated, start, params, budget), removed, d1, d2


def place_paragon(table: CandidateTable, request: PlacementRequest, params: GreedyParams, budget: Budget, *,
                  max_servers: int = 256, top_k: int = 5, allowed: BoolArray | None = None) -> PlacementOutcome:
    """Paragon's selection for `request` on `table` (pure; see the module docstring); `allowed`
    bounds the search to the ARQ pools the workload may use."""
    perf = request.performance_by_code(table)
    res, removed, d1, d2 = _search(table, request, params, budget, allowed)
    rows, l1 = _ranked(res, table, perf, d1, d2)
    if len(rows):
        row = int(rows[0])
        top = tuple((table.server_ids[r], round(100.0 * (1.0 - min(1.0, x / 2000.0)), 6))
                    for r, x in zip(rows[:top_k], l1[:top_k], strict=True))
        alloc = Allocation(assignments=(Assignment(server_id=table.server_ids[row], cores=request.cores,
                                                   memory_gb=request.memory_gb),))
        return PlacementOutcome(allocation=alloc, predicted_performance=_perf(perf, table, [(row, request.cores)]),
                                trace=_trace(table, res, removed, budget, top, []),
                                detail={"mode": "single", "chosen": [table.server_ids[row]],
                                        "relaxed": res.relaxed, "depth": res.depth})
    if request.cores > 1:
        unit = request.resized(1, request.memory_gb / request.cores)
        ures, _, ud1, ud2 = _search(table, unit, params, budget, allowed)
        urows, _ = _ranked(ures, table, perf, ud1, ud2)
        sp = spread(urows.tolist(), table.free_cores, table.free_memory_gb, request.cores, request.memory_gb,
                    max_servers, budget)
        if sp.complete:
            parts = [(r, c) for r, c, _ in sp.parts]
            alloc = Allocation(assignments=tuple(Assignment(server_id=table.server_ids[r], cores=c, memory_gb=m)
                                                 for r, c, m in sp.parts))
            top = tuple((table.server_ids[r], 0.0) for r, _ in parts[:top_k])
            return PlacementOutcome(allocation=alloc, predicted_performance=_perf(perf, table, parts),
                                    trace=_trace(table, ures, removed, budget, top, ["no_single_server", "scale_out"]),
                                    detail={"mode": "scale_out", "chosen": [table.server_ids[r] for r, _ in parts]})
    reasons = tuple(f"{f}/{r}" for f, rs in removed.items() for r in rs) or ("no_candidates",)
    return PlacementOutcome(allocation=None, reasons=reasons,
                            trace=_trace(table, res, removed, budget, (), ["no_single_server"]),
                            detail={"mode": "none"})


def _perf(perf: FloatArray, table: CandidateTable, parts: list[tuple[int, int]]) -> float:
    """Core-weighted mean predicted performance of the platforms used (0 if none predicted)."""
    num = den = 0.0
    for row, cores in parts:
        v = float(perf[table.platform_code[row]])
        if np.isfinite(v) and v > 0:
            num += cores * v
            den += cores
    return round(num / den, 6) if den else 0.0
