"""`ProfilePlanner`: the `Planner` seam (policies.py) implemented by running a placement profile.

`place(state, w, ctx)`:
1. the candidate table of `state` from the planner's incremental `TableIndex`; when `w` already
   holds an allocation (a re-plan), its own resources and interference are taken out first;
2. caller columns (`columns(state, w, table)`, e.g. the twin's ground truth) are attached;
3. the request: size from the sizer (default: the request, 1 core / 1 GiB when absent),
   performance and interference from `w.classification`, seed = `ctx.seed`;
4. `place_request`: one columnar pass; the best feasible server (ties by server id) takes the
   whole request. If none is feasible and the profile allows scale-out and the request has more
   than one core, a second pass with the one-core unit (1 core, memory/cores GiB) ranks the
   servers, and `spread` fills them in score order. Otherwise the outcome has no allocation and
   constant `plugin/reason` reasons (plus `scale_out/insufficient_capacity`, or
   `budget/exhausted` when the first pass already spent the work budget: no scale-out then).

`predicted_performance` [IMPL CHOICE]: the core-weighted mean of the workload's predicted
performance on the platforms it is placed on (0 when none is predicted); the planner's sizing
replaces it with a target-aware estimate.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy.typing as npt
from sextant_contracts.model import Allocation, Assignment

from ..policies import ExplainablePlanner, PlacementOutcome, RetryHint
from ..state.model import ClusterState, WorkloadState
from .framework import Budget, Evaluation, Profile, best_row, evaluate, ranked_rows
from .profiles import get_profile
from .request import PlacementRequest, Sizer, request_for, requested_size
from .retry import ROW_LOCAL, request_could_fit, rows_pass
from .spread import spread
from .table import CandidateTable, TableIndex, without_workload
from .trace import compact_trace, deferral_reasons, summary, verdicts

if TYPE_CHECKING:
    from ..context import DecisionContext

ColumnSource = Callable[[ClusterState, WorkloadState, CandidateTable], Mapping[str, npt.ArrayLike]]
"""(state, workload, table) -> extra columns, one value per table row (caller knowledge)."""


class ProfilePlanner(RetryHint, ExplainablePlanner):
    """Places a workload's request with `profile`. One instance keeps one `TableIndex`."""

    def __init__(self, profile: Profile | str, *, sizer: Sizer = requested_size,
                 columns: ColumnSource | None = None, explain: bool = False, top_k: int = 5,
                 index: TableIndex | None = None) -> None:
        self.profile = get_profile(profile) if isinstance(profile, str) else profile
        self.sizer = sizer
        self.columns = columns
        self.explain = explain
        self.top_k = top_k
        self.index = index if index is not None else TableIndex()

    def table(self, state: ClusterState, w: WorkloadState) -> CandidateTable:
        table = self.index.table(state)
        if w.allocation is not None:
            table = without_workload(table, state, w)
        if self.columns is not None:
            table = table.with_extra(self.columns(state, w, table))
        return table

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        cores, memory_gb = self.sizer(state, w)
        request = request_for(w, cores, memory_gb, seed=ctx.seed)
        return place_request(self.profile, self.table(state, w), request, top_k=self.top_k,
                             explain=self.explain)

    def explaining(self) -> ProfilePlanner:
        """This planner (same profile, sizer, columns and index) recording every verdict."""
        clone = copy.copy(self)
        clone.explain = True
        return clone

    def could_use(self, state: ClusterState, w: WorkloadState, freed: tuple[str, ...]) -> bool:
        """Whether a deferred `w` could now be placed thanks to the `freed` servers (retry.py)."""
        cores, memory_gb = self.sizer(state, w)
        if not request_could_fit(state, lambda: self.index.table(state), freed, cores, memory_gb,
                                 scale_out=self.profile.scale_out):
            return False
        if not all(s.name in ROW_LOCAL for s in self.profile.filters):
            return True
        table = self.table(state, w)
        rows = [table.row(sid) for sid in freed if sid in state.servers]
        request = request_for(w, cores, memory_gb, seed=0)
        if rows_pass(self.profile, table, rows, request):
            return True
        return self.profile.scale_out and cores > 1 and \
            rows_pass(self.profile, table, rows, request.resized(1, memory_gb / cores))


def planner_for(profile_name: str, **options: Any) -> ProfilePlanner:
    """A planner for a registered profile; `options` are `ProfilePlanner` keyword arguments."""
    return ProfilePlanner(get_profile(profile_name), **options)


def _predicted(request: PlacementRequest, table: CandidateTable, parts: list[tuple[int, int, float]]) -> float:
    num = den = 0.0
    for row, cores, _ in parts:
        v = request.performance.get(table.platforms[table.platform_code[row]])
        if v is not None and math.isfinite(v) and v > 0:
            num += cores * v
            den += cores
    return num / den if den else 0.0


def _outcome(table: CandidateTable, request: PlacementRequest, parts: list[tuple[int, int, float]],
             **kw: Any) -> PlacementOutcome:
    alloc = Allocation(assignments=tuple(Assignment(server_id=table.server_ids[r], cores=c, memory_gb=m)
                                         for r, c, m in parts))
    return PlacementOutcome(allocation=alloc, predicted_performance=_predicted(request, table, parts), **kw)


def place_request(profile: Profile, table: CandidateTable, request: PlacementRequest, *,
                  top_k: int = 5, explain: bool = False) -> PlacementOutcome:
    """Run `profile` for `request` on `table` (pure; see the module docstring)."""
    budget = Budget(profile.budget)
    ev = evaluate(profile, table, request, budget)
    detail: dict[str, Any] = summary(ev)
    if explain:
        detail["verdicts"] = verdicts(ev)
    row = best_row(ev.total, ev.feasible)
    if row is not None:
        trace = compact_trace(ev, top_k=top_k, examined=budget.used, budget=budget)
        detail.update(mode="single", chosen=[table.server_ids[row]], budget=budget.used)
        return _outcome(table, request, [(row, request.cores, request.memory_gb)], trace=trace, detail=detail)
    reasons = deferral_reasons(ev)
    notes: tuple[str, ...] = ("no_single_server",)
    if profile.scale_out and request.cores > 1 and budget.exhausted:
        reasons += ("budget/exhausted",)
    elif profile.scale_out and request.cores > 1:
        out = _scale_out(profile, ev, budget, detail, top_k=top_k, explain=explain)
        if out is not None:
            return out
        reasons += ("scale_out/insufficient_capacity",)
        notes += ("scale_out_incomplete",)
    trace = compact_trace(ev, top_k=top_k, examined=budget.used, budget=budget, notes=notes)
    detail.update(mode="none", chosen=[], budget=budget.used)
    return PlacementOutcome(allocation=None, reasons=reasons, trace=trace, detail=detail)


def _scale_out(profile: Profile, ev: Evaluation, budget: Budget, detail: dict[str, Any], *,
               top_k: int, explain: bool) -> PlacementOutcome | None:
    """Rank servers for the one-core unit and spread the request over them; None if it does
    not all fit (within `max_servers` and the budget)."""
    table, request = ev.table, ev.request
    ev_unit = evaluate(profile, table, request.resized(1, request.memory_gb / request.cores), budget)
    rows = ranked_rows(ev_unit.total, ev_unit.feasible, profile.max_servers)
    sp = spread(rows.tolist(), table.free_cores, table.free_memory_gb, request.cores, request.memory_gb,
                profile.max_servers, budget)
    detail["scale_out"] = summary(ev_unit)
    if explain:
        detail["scale_out"]["verdicts"] = verdicts(ev_unit)
    if not sp.complete:
        return None
    parts = list(sp.parts)
    top = tuple((table.server_ids[r], round(float(ev_unit.total[r]), 6)) for r, _, _ in parts[:top_k])
    trace = compact_trace(ev, top_k=top_k, examined=budget.used, budget=budget, top=top,
                          notes=("no_single_server", "scale_out"))
    detail.update(mode="scale_out", chosen=[table.server_ids[r] for r, _, _ in parts], budget=budget.used)
    return _outcome(table, request, parts, trace=trace, detail=detail)
