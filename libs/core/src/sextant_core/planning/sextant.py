"""`SextantPlanner`: Quasar's joint sizing and assignment (Quasar §4) on Paragon's interference
filters (Paragon §3.2) — the `Planner` of the `sextant` profile.

For a workload w (one `Assessment`, `assess.py`):

1. **Single node** — the profile `sextant` (filters `schedulable`, `quasar-fit`,
   `paragon-d1-residual` (strict), `quasar-target` (predicted ratio ≥ 1); scorers
   `quasar-quality`, `quasar-packing`, `least-added-pressure`) over the sized table. Which
   feasible row wins is `SextantParams.choice`:
   - `satisfice` (the default): among the rows predicted to meet the target with a margin (wider
     for a less confident classification), the quietest, then the emptiest, then the best
     platform × interference, then the server id (`satisfice.py`), each sized to the fewest cores
     that meet the target with that margin;
   - `rank` (policy version 5.1, kept to replay logs recorded under it): only the rows sized to
     the fewest cores stay ("the least amount of resources"), and the best total score wins
     (ties: server id).
   **Resident protection** (version 7, `SextantParams.residents = "protect"`, `protect.py`): the
   first row in that order where the newcomer breaks no resident predicted to meet its target
   (residents' predicted loss × (1 + `resident_pessimism`)), looking at most `resident_scan` rows
   (in chunks of 5, 10, 20, ...) deep. When every row looked at would break one,
   `resident_fallback` "waive" (the default) takes the one that harms least — version 8
   (`resident_waive = "shortfall"`): the least summed predicted shortfall of the residents it
   breaks; 7 ("fewest"): the fewest broken (first in order among them); "closest" goes on to
   step 3 on the rows that break nobody, and defers (`resident-guard/would_break_a_resident`)
   when none is left. Version 8 (`closest_guard`) guards step 3 too: its first row (at most
   `resident_scan` deep) that breaks nobody, else its first row (waived); 7 took its first row
   whatever it broke. Version 6.1 and earlier: D1 alone.
2. **Scale out** (kinds `analytics` and `service` only: single-node jobs cannot spread, Quasar
   Table 2) — `scaleout.spread` over the rows that fit a core and pass the strict D1 check.
3. **As close as possible** (Quasar §3.1) — no allocation meets the target: the profile
   `sextant-closest` (the target filter relaxed to 0, ranked by predicted quality first) gives the
   best single node; a spread that predicts more wins over it. Version 9.4: with an estimated
   heterogeneity row, the platforms more than `SatisficeParams.platform_tier` below the best
   feasible one come last here too (`_tier_level`), before the predicted quality — which reads
   the predicted interference, and the engine's caused scores are biased upward.
4. **Backtracking** (Paragon §3.2) — when even that is empty because the exact D1 check rejects
   every server with room, D1 is relaxed in steps of `d1_step` points up to `d1_max`: the first
   step at which some server passes is computed in one vectorised pass (`_needed_slack`: the same
   step a pass-by-pass search would stop at; the budget is charged as if each pass ran), and the
   profile is re-run once with `with_args("paragon-d1-residual", slack=δ)`. The trace counts the
   steps as backtracking passes. If no step within `d1_max` helps, the workload is deferred with
   the filters' reasons.

**Best-effort workloads** (Quasar §6: no guarantee, "may be migrated or killed at any point")
take leftovers: their requested cores (capped where the scale-up curve saturates), only on servers
they do not hurt (strict D1, never relaxed), ranked by least added pressure then packing; no target,
no scale-out; when nothing is left they wait (deferred). Their trace carries the note
`best_effort` and their cores are counted by the server aggregates (`best_effort_cores`), which is
what eviction (the reprovisioner's ladder) reads first.

The trace (`DecisionTrace`): per-filter rejection counts of the deciding pass, the top candidates,
candidates examined (budget units), backtracking passes, and notes such as `scale_out`,
`as_close_as_possible`, `d1_relaxed`, `relative_units`, `budget_exhausted`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sextant_contracts.model import Allocation, Assignment, DecisionTrace

from ..domain.lifecycle import TERMINAL, WorkloadPhase
from ..placement.framework import DEFAULT_BUDGET, Budget, Evaluation, Profile, best_row, evaluate
from ..placement.plugins.fit import MEMORY_EPS_GB
from ..placement.plugins.paragon_residual import RESIDUAL
from ..placement.plugins.quasar_sizing import SIZED, saturation
from ..placement.registry import make_profile
from ..placement.request import PlacementRequest
from ..placement.retry import rows_pass
from ..placement.trace import compact_trace, deferral_reasons, summary
from ..policies import PlacementOutcome
from ..state.model import ClusterState, ServerJournal, WorkloadState, interference_vectors
from .assess import FACTOR, Assessment, Assessor, SizingParams, floor_cores, node_memory
from .protect import ResidentGuard, first_unbroken
from .satisfice import SatisficeParams, margin_for, satisficing_order
from .scaleout import spread

if TYPE_CHECKING:
    from ..context import DecisionContext

MULTI_NODE = frozenset({"analytics", "service"})
_PRUNE_MIN = 1024  # deferrals remembered before the memo is first pruned of ended workloads


@dataclass(frozen=True, slots=True)
class _Deferral:
    """What a deferral saw: the server journal of its state, the classification it was decided on
    and the interference the workload causes (from that classification)."""

    journal: ServerJournal | None
    classification: object
    caused: Any


def sextant_profile(quality: float = 4.0, packing: float = 1.0, pressure: float = 1.0, cap: float = 1.1,
                    name: str = "sextant", spread: float = 0.0, scored: bool = True, d1: bool = True) -> Profile:
    """The single-node pass; `scored` False: its filters only (the satisficing choice orders the
    feasible rows itself, `satisfice.py`); `d1` False: without the D1 filter."""
    scorers: list[Any] = [("quasar-quality", quality, {"cap": cap}), ("quasar-packing", packing),
                          ("least-added-pressure", pressure)] if scored else []
    if spread > 0 and scored:
        scorers.append(("least-allocated", spread, {"cores_weight": 1.0, "memory_weight": 0.0}))
    return make_profile(name, filters=["paragon-arq-pool", "quasar-fit", *_D1[d1], "quasar-target"],
                        scorers=scorers, scale_out=False)


_D1: dict[bool, tuple[str, ...]] = {True: ("paragon-d1-residual",), False: ()}


def closest_profile(cap: float = 1.0, d1: bool = True) -> Profile:
    return make_profile("sextant-closest", filters=["paragon-arq-pool", "quasar-fit", *_D1[d1],
                                                    ("quasar-target", {"min_ratio": 0.0})],
                        scorers=[("quasar-quality", 100.0, {"cap": cap}), ("quasar-packing", 1.0)],
                        scale_out=False)


def necessary_profile(d1_max: float, d1: bool = True) -> Profile:
    """What any server that `sextant-closest` (D1 relaxed to at most `d1_max`) or the spread
    accepts passes for a one-core request: schedulable, room, and D1 within `d1_max` (`d1`)."""
    d1_filter: list[Any] = [("paragon-d1-residual", {"slack": d1_max})] if d1 else []
    return make_profile("sextant-necessary", filters=["schedulable", "fit", *d1_filter],
                        scorers=[], scale_out=False)


def best_effort_profile() -> Profile:
    return make_profile("sextant-best-effort", filters=["quasar-fit", "paragon-d1-residual"],
                        scorers=[("least-added-pressure", 2.0), ("quasar-packing", 1.0)], scale_out=False)


@dataclass(frozen=True, slots=True)
class SextantParams:
    sizing: SizingParams = field(default_factory=SizingParams)
    quality_weight: float = 4.0
    packing_weight: float = 1.0
    pressure_weight: float = 1.0
    quality_cap: float = 1.1
    d1_step: float = 5.0
    d1_max: float = 20.0
    max_servers: int = 64
    budget: int = DEFAULT_BUDGET
    spread_weight: float = 0.0  # `least-allocated` on cores: prefer emptier servers
    choice: str = "satisfice"  # the single-node choice: "satisfice" (`satisfice.py`) or "rank"
    satisfice: SatisficeParams = field(default_factory=SatisficeParams)
    # the memory of a scale-out node: "spread" = what the spread checked against the node's free
    # memory (GiB per core × its cores, at least `sizing.min_node_memory_gb`, and only on nodes with
    # that much free); "request" (planner versions before 6.1) = the whole request's memory when
    # the spread is one node — which the spread had not checked: it over-committed the server
    scale_out_memory: str = "spread"
    # who may be slowed by a newcomer: "protect" (version 7) = no resident predicted to meet its
    # target may stop meeting it (`protect.py`), on top of D1; "d1" (before 7) = D1 alone
    residents: str = "protect"
    # `ResidentGuard.pessimism`; paragon-ec2-2500 true rows, seeds 1/2/3 (docs/quality/planning.md):
    # 1 → 0.825/0.836/0.812, 3 → 0.818/0.827 (6.1: 0.800/0.806/0.785)
    resident_pessimism: float = 1.0
    # `ResidentGuard.min_head`: residents predicted at least this are protected (0.98: 0.818 vs 0.825, seed 1)
    resident_min_head: float = 1.0
    # when every satisficing row breaks a resident: "waive" = the first of them all the same (the
    # newcomer is not sent below its target to spare a resident); "closest" = as close as possible
    # on the rows that break nobody, else deferred (the oracle's least harm)
    resident_fallback: str = "waive"
    # the guard checks at most this many rows in satisficing order before the fallback (its cost
    # is a few small arrays per row with residents: bounded, for DESIGN §7's 2 ms on 10 000 servers)
    resident_scan: int = 64
    # "as close as possible" (no row meets the target): with `closest_guard` (version 8) and the
    # "waive" fallback, the first of its rows (at most `resident_scan` deep) that breaks no resident,
    # else its first; without it (7) its first row whatever it breaks
    closest_guard: bool = True
    # which satisficing row "waive" takes when each breaks a resident: "fewest" broken (7), or the
    # least "shortfall" (Σ over the broken residents of how far below 1 they are predicted to fall)
    resident_waive: str = "shortfall"
    # version 9.3: False = no D1 check for the workloads with a target (single node, as close as
    # possible, scale-out; best-effort keeps it): their interference is the predicted slowdown's
    # and the resident guard's only (docs/quality/planning.md, "Which interference check loses")
    d1_filter: bool = True

    def __post_init__(self) -> None:
        if self.choice not in CHOICES:
            raise ValueError(f"choice must be one of {CHOICES}, not {self.choice!r}")
        if self.scale_out_memory not in SCALE_OUT_MEMORY:
            raise ValueError(f"scale_out_memory must be one of {SCALE_OUT_MEMORY}, not {self.scale_out_memory!r}")
        if self.resident_scan < 1:
            raise ValueError("resident_scan must be >= 1")
        if self.resident_fallback not in ("waive", "closest"):
            raise ValueError(f"resident_fallback must be 'waive' or 'closest', not {self.resident_fallback!r}")
        if self.resident_waive not in ("fewest", "shortfall"):
            raise ValueError(f"resident_waive must be 'fewest' or 'shortfall', not {self.resident_waive!r}")
        if self.residents not in RESIDENTS:
            raise ValueError(f"residents must be one of {RESIDENTS}, not {self.residents!r}")


CHOICES = ("satisfice", "rank")
SCALE_OUT_MEMORY = ("spread", "request")
RESIDENTS = ("protect", "d1")
PROTECTED = "residents_protected"  # the note of a choice (or deferral) the resident guard changed
WAIVED = "protection_waived"  # every satisficing row broke a resident: the first taken all the same
BREAKS_A_RESIDENT = "resident-guard/would_break_a_resident"  # the reason of a protection deferral


@dataclass(frozen=True, slots=True)
class _Guarded:
    """The resident guard with what one decision's checks read."""

    guard: ResidentGuard
    state: ClusterState
    w: WorkloadState
    at: float
    max_cores: int

    @property
    def exclude(self) -> str | None:
        return self.w.workload_id if self.w.allocation is not None else None


class SextantPlanner:
    """Joint sizing + placement; one instance per decider (it keeps incremental indexes)."""

    def __init__(self, params: SextantParams | None = None, *, assessor: Assessor | None = None,
                 top_k: int = 5, prune_after: int = _PRUNE_MIN) -> None:
        self.params = params or SextantParams()
        p = self.params
        self.assessor = assessor if assessor is not None else Assessor(p.sizing)
        self.top_k = top_k
        self.profile = sextant_profile(p.quality_weight, p.packing_weight, p.pressure_weight, p.quality_cap,
                                       spread=p.spread_weight, scored=p.choice == "rank", d1=p.d1_filter)
        self.closest = closest_profile(d1=p.d1_filter)
        self.best_effort = best_effort_profile()
        self.necessary = necessary_profile(p.d1_max + 1e-9, d1=p.d1_filter)
        self.guard = ResidentGuard(p.sizing, p.resident_pessimism, p.resident_min_head) \
            if p.residents == "protect" else None
        self._deferred: dict[str, _Deferral] = {}
        self._prune_min = self._prune_at = prune_after

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        out = self._still_deferred(state, w) or self._no_room(state, w)
        if out is None:
            out = self._place(state, w, ctx)
        if (out.allocation is None and not out.trace.budget_exhausted and w.allocation is None
                and PROTECTED not in out.trace.notes):  # a protection deferral is not what the memo assumes
            caused = np.array(interference_vectors(w.classification)[1])
            self._deferred[w.workload_id] = _Deferral(state.server_journal, w.classification, caused)
            if len(self._deferred) > self._prune_at:
                self._prune(state)
        else:
            self._deferred.pop(w.workload_id, None)
        return out

    def _prune(self, state: ClusterState) -> None:
        """Forget the deferrals of workloads that ended (completed, failed, revoked) or that the
        state no longer knows: they are never placed again. Run when the memo has doubled since
        the last prune (amortised O(1) a placement; at least `prune_after` deferrals); a cache
        only: decisions do not change."""
        for wid in [wid for wid in self._deferred
                    if (x := state.workloads.get(wid)) is None or x.phase in TERMINAL]:
            del self._deferred[wid]
        self._prune_at = max(self._prune_min, 2 * len(self._deferred))

    @property
    def deferrals(self) -> frozenset[str]:
        """The workloads whose latest placement this planner deferred and still remembers."""
        return frozenset(self._deferred)

    def _place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        a = self.assessor.assess(state, w, ctx.at, ctx.seed)
        budget = Budget(self.params.budget)
        notes: list[str] = ["relative_units"] if a.required.relative else []
        if w.best_effort:
            return self._leftovers(a, w, budget, notes)
        ev = evaluate(self.profile, a.table, a.request, budget, scores_if_feasible=True)
        guarded = _Guarded(self.guard, state, w, ctx.at, len(a.model.curve)) if self.guard is not None else None
        if self.params.choice == "satisfice":
            chosen = self._satisfice(a, w, ev, budget, notes, guarded)
            if chosen is not None:
                return chosen
        else:
            row = self._pick(a, ev, least_cores=True)
            if row is not None:
                return self._single(a, ev, row, budget, notes)
        spread_out = self._spread(a, ev, budget) if w.kind.value in MULTI_NODE else None
        if spread_out is not None and spread_out.met:
            return self._spread_outcome(a, ev, spread_out, budget, [*notes, "scale_out"])
        notes.append("as_close_as_possible")
        backtracks = 0
        close = evaluate(self.closest, a.table, a.request, budget, reuse=ev, scores_if_feasible=True)
        waive = self.params.resident_fallback == "waive"
        if waive and not self.params.closest_guard:  # the guard only chooses among the rows that meet the target
            guarded = None
        level = self._tier_level(a, w)
        row = self._pick(a, close, least_cores=False, guarded=guarded, notes=notes, waive=waive, level=level)
        if row is None and PROTECTED not in notes and self.params.d1_filter:
            slack = self._needed_slack(a, close)
            if slack is not None and not budget.exhausted:
                backtracks = int(round(slack / self.params.d1_step))
                close = evaluate(self.closest.with_args("paragon-d1-residual", slack=slack), a.table, a.request, budget,
                                 reuse=close, scores_if_feasible=True)
                budget.charge(len(a.table) * max(backtracks - 1, 0))  # the passes a step-by-step search makes
                notes.append("d1_relaxed")
                row = self._pick(a, close, least_cores=False, guarded=guarded, notes=notes, waive=waive, level=level)
        if spread_out is not None and row is not None:
            single_perf = float(a.table.extra["predicted_ratio"][row]) * a.required.value
            if spread_out.aggregate > single_perf:
                return self._spread_outcome(a, ev, spread_out, budget, [*notes, "scale_out"], backtracks)
        if row is not None:
            return self._single(a, close, row, budget, notes, backtracks=backtracks)
        if spread_out is not None:
            return self._spread_outcome(a, ev, spread_out, budget, [*notes, "scale_out"], backtracks)
        return self._defer(ev, budget, notes, backtracks)

    def _still_deferred(self, state: ClusterState, w: WorkloadState) -> PlacementOutcome | None:
        """A retried deferral decided on the servers that changed since it was deferred.

        At the deferral no server passed the `sextant-closest` filters with D1 relaxed to
        `d1_max` (nor the spread's, a subset). A server whose row did not change since still does
        not (its columns and residual are the same, and the closest filters do not depend on the
        requirement), so unless the workload's classification changed, only the changed rows can
        now pass: if none passes the necessary condition — the profile's own `schedulable`,
        `fit` (one core and the node's memory) and `paragon-d1-residual` (relaxed to `d1_max`)
        filters, run on those rows only (`placement.retry.rows_pass`) — the workload is still
        deferred: exactly what a full evaluation would conclude, without one. Found by walking the
        server journal back to the deferral's state (bounded); otherwise a full evaluation runs.

        Only a workload already in phase `deferred` is answered here: `decide` records nothing for
        its retry unless it is placed, so all that is observable is placed-or-not, which the
        shortcut gets exactly as a full evaluation (libs/core/tests/planning/test_deferral_shortcut.py
        compares them on random states). Every recorded `PlacementDeferred` comes from a full
        evaluation (or `_no_room`, a function of the state), never from this memo — which a
        restarted process does not have, and a decision discarded by a head-conditional append
        leaves behind — so the log is the same whatever the process's cache history."""
        memo = self._deferred.get(w.workload_id)
        if (memo is None or w.phase is not WorkloadPhase.DEFERRED or w.allocation is not None
                or memo.classification is not w.classification):
            return None
        changed: list[str] = []
        node = state.server_journal
        while node is not memo.journal:
            if node is None or node.added or len(changed) > 4096:
                return None
            changed.append(node.server_id)
            node = node.prev
        if changed:
            t = self.assessor.table(state, w)
            rows = np.array(sorted({t.row(sid) for sid in changed if sid in state.servers}), dtype=np.int64)
            if len(rows):
                index = self.assessor.residuals
                sub = t.take(rows.tolist()).with_extra({RESIDUAL: index.residual_of(index.minimum(state)[rows],
                                                                         t.caused_sum[rows])})
                request = PlacementRequest(workload_id=w.workload_id, cores=1,
                                           memory_gb=self._node_memory(w), caused=memo.caused)
                if rows_pass(self.necessary, sub, range(len(rows)), request):
                    return None
        return PlacementOutcome(allocation=None, reasons=("deferred/unchanged",),
                                trace=DecisionTrace(examined=len(changed), notes=("still_deferred",)),
                                detail={"mode": "none", "changed": len(changed)})

    def _needed_slack(self, a: Assessment, ev: Evaluation) -> float | None:
        """The first relaxation step δ = k · d1_step ≤ d1_max at which the exact D1 check admits a
        server that passes every other filter — what relaxing step by step finds, in one pass:
        a row passes at δ iff max_k (c_new(k) − residual(s, k)) ≤ δ. None if no step does."""
        others = np.ones(len(a.table), dtype=np.bool_)
        for f in ev.filters:
            if f.name != "paragon-d1-residual":
                others &= f.verdict.mask
        if not others.any():
            return None
        short = (a.request.caused[None, :] - a.table.extra[RESIDUAL][others]).max(axis=1)
        need = max(float(short.min()), 0.0)
        step = self.params.d1_step
        slack = math.ceil(need / step - 1e-9) * step
        return slack if 0 < slack <= self.params.d1_max + 1e-9 else None

    # --- outcomes ------------------------------------------------------------------------------

    def _tier_level(self, a: Assessment, w: WorkloadState) -> np.ndarray | None:
        """The predicted platform level H(p) per row when the platform tier applies (version 9.4:
        `SatisficeParams.platform_tier` > 0 and `w`'s heterogeneity confidence below 1), else None."""
        conf = w.classification.confidence if w.classification is not None else None
        if self.params.satisfice.platform_tier <= 0 or conf is None or conf.get("heterogeneity", 0.0) >= 1.0:
            return None
        t = a.table
        out: np.ndarray = a.model.factors(t.platforms)[t.platform_code]
        return out

    def _pick(self, a: Assessment, ev: Evaluation, *, least_cores: bool, guarded: _Guarded | None = None,
              notes: list[str] | None = None, waive: bool = False, level: np.ndarray | None = None) -> int | None:
        """The row chosen among the feasible ones: the fewest sized cores first when `least_cores`
        ("the least amount of resources"), then the total score, then the server id. With
        `guarded`: the first in that order that breaks no resident (`protect.py`); when every
        feasible row would, None and `PROTECTED` is added to `notes` — or, with `waive`, the
        guard looks at most `resident_scan` rows deep and when each breaks a resident the first
        row is taken all the same (`WAIVED` noted; `PROTECTED` when the guard moved the choice)."""
        feasible = np.flatnonzero(ev.feasible)
        if len(feasible) == 0:
            return None
        sized = a.table.extra[SIZED]
        keys = (feasible, -ev.total[feasible], sized[feasible]) if least_cores else (feasible, -ev.total[feasible])
        if level is not None:  # 9.4: the rows of platforms well below the best feasible one last
            lv = level[feasible]
            keys = (*keys, (lv < (1.0 - self.params.satisfice.platform_tier) * float(lv.max())).astype(np.int64))
        order = feasible[np.lexsort(keys)]
        if guarded is None:
            return int(order[0])
        row, _ = first_unbroken(guarded.guard, guarded.state, a.table,
                                order[:self.params.resident_scan] if waive else order, a.request.caused, guarded.at,
                                exclude=guarded.exclude, max_cores=guarded.max_cores)
        if waive:
            if notes is not None:
                notes.append(WAIVED if row is None else PROTECTED if row != int(order[0]) else "")
                if not notes[-1]:
                    notes.pop()
            return int(order[0]) if row is None else row
        if row is None and notes is not None and PROTECTED not in notes:
            notes.append(PROTECTED)
        return row

    def _satisfice(self, a: Assessment, w: WorkloadState, ev: Evaluation, budget: Budget,
                   notes: list[str], guarded: _Guarded | None = None) -> PlacementOutcome | None:
        """The satisficing single-node choice (`satisfice.py`) among the feasible rows of `ev`;
        with `guarded`, the first in that order that breaks no resident (`protect.py`), the
        order asked for in growing chunks (rows that break someone are set aside). When every
        row breaks someone, or every row of the chunks once `resident_scan` rows were looked at:
        with `resident_fallback` "waive", the row that breaks the fewest of those (the first in
        order among them), else None (`PROTECTED` noted)."""
        t = a.table
        conf = w.classification.confidence if w.classification is not None else None
        margin = margin_for(self.params.satisfice, conf)
        sp = self.params.satisfice
        level = self._tier_level(a, w)
        min_cores = floor_cores(w, self.params.sizing.request_floor)
        feasible = np.flatnonzero(ev.feasible)
        k, skipped = self.top_k, 0
        least: tuple[float, int, int, float, bool] | None = None  # (harm, row, cores, ratio, sure)
        while True:
            choice = satisficing_order(feasible, base=a.base, factor=t.extra[FACTOR],
                                       used=t.cap_cores - t.free_cores, free_cores=t.free_cores, sized=t.extra[SIZED],
                                       ratio=t.extra["predicted_ratio"], required=a.required.value,
                                       curve=a.model.curve, margin=margin, params=sp, k=k, level=level,
                                       min_cores=min_cores)
            if choice is None or (skipped >= self.params.resident_scan and least is not None):
                if least is not None and self.params.resident_fallback == "waive":
                    _, row, cores, ratio, sure = least
                    return self._single(a, ev, row, budget,
                                        [*notes, "satisficed" if sure else "satisficed_thin", WAIVED], cores=cores,
                                        top=((t.server_ids[row], round(ratio * 100, 6)),))
                if skipped:
                    notes.append(PROTECTED)
                return None
            j = 0
            if guarded is not None:
                broken, short = guarded.guard.harm(guarded.state, t, choice.rows, a.request.caused, guarded.at,
                                                   exclude=guarded.exclude, max_cores=guarded.max_cores)
                ok = np.flatnonzero(broken == 0)
                if len(ok) == 0:
                    harm = short if self.params.resident_waive == "shortfall" else broken.astype(np.float64)
                    i = int(np.argmin(harm))  # the first of the least harm in this chunk
                    if least is None or float(harm[i]) < least[0]:
                        least = (float(harm[i]), int(choice.rows[i]), int(choice.sized[i]), float(choice.ratio[i]),
                                 choice.sure)
                    feasible = np.setdiff1d(feasible, choice.rows, assume_unique=True)
                    skipped += len(choice.rows)
                    k *= 2
                    continue
                j = int(ok[0])
            break
        top = tuple((t.server_ids[int(r)], round(float(q) * 100, 6))
                    for r, q in zip(choice.rows[j:], choice.ratio[j:], strict=True))
        extra = [PROTECTED] if skipped or j else []
        return self._single(a, ev, int(choice.rows[j]), budget,
                            [*notes, "satisficed" if choice.sure else "satisficed_thin", *extra],
                            cores=int(choice.sized[j]), top=top)

    def _single(self, a: Assessment, ev: Evaluation, row: int, budget: Budget, notes: list[str], *,
                backtracks: int = 0, cores: int | None = None,
                top: tuple[tuple[str, float], ...] | None = None) -> PlacementOutcome:
        cores = int(a.table.extra[SIZED][row]) if cores is None else cores
        perf = float(a.model.up(cores) * a.base[row])
        alloc = Allocation(assignments=(Assignment(server_id=a.table.server_ids[row], cores=cores,
                                                   memory_gb=a.request.memory_gb),))
        trace = self._trace(ev, budget, notes, backtracks, top=top)
        detail = {**summary(ev), "mode": "single", "chosen": [a.table.server_ids[row]], "cores": [cores],
                  "required": a.required.value, "predicted": perf}
        return PlacementOutcome(allocation=alloc, predicted_performance=round(perf, 6), trace=trace, detail=detail)

    def _no_room(self, state: ClusterState, w: WorkloadState) -> PlacementOutcome | None:
        """A deferral without an assessment when no schedulable server has a free core and the
        memory of one node (the common case of a deferred workload retried on a busy cell)."""
        t = self.assessor.table(state, w)
        mem = self._node_memory(w)
        if (t.schedulable & (t.free_cores >= 1) & (t.free_memory_gb + 1e-9 >= mem)).any():
            return None
        trace = DecisionTrace(filtered={"quasar-fit": {"no_free_cores": len(t)}}, examined=len(t), notes=("no_room",))
        return PlacementOutcome(allocation=None, reasons=("quasar-fit/no_free_cores",), trace=trace,
                                detail={"mode": "none", "rows": len(t)})

    def _node_memory(self, w: WorkloadState) -> float:
        """The memory one node of `w` needs at least (its request with headroom; a multi-node
        kind's share of it per core, at least `min_node_memory_gb`)."""
        mem = (w.requested_memory_gb or 1.0) * self.params.sizing.memory_headroom
        if w.kind.value in MULTI_NODE:
            mem = min(mem, max(mem / max(w.requested_cores or 1, 1), self.params.sizing.min_node_memory_gb))
        return mem

    def _spread(self, a: Assessment, ev: Evaluation, budget: Budget) -> Any:
        """Scale out over the rows that pass the `schedulable`, pool and strict D1 filters of the
        single-node pass `ev` (their verdicts, not run again)."""
        if not a.required.reachable:
            return None
        eligible = np.ones(len(a.table), dtype=np.bool_)
        for f in ev.filters:
            if f.name in ("schedulable", "paragon-arq-pool", "paragon-d1-residual"):
                eligible &= f.verdict.mask
        if self.params.scale_out_memory == "spread":  # a node gets at least the floor: it must have it free
            eligible &= a.table.free_memory_gb + MEMORY_EPS_GB >= self.params.sizing.min_node_memory_gb
        return spread(a.model, a.required.value, eligible, a.base, a.table.free_cores, a.table.free_memory_gb,
                      a.memory_per_core, self.params.max_servers, budget)

    def _spread_outcome(self, a: Assessment, ev: Evaluation, sp: Any, budget: Budget, notes: list[str],
                        backtracks: int = 0) -> PlacementOutcome:
        n = len(sp.rows)
        # "request": a one-node spread took the whole request's memory (before 6.1)
        nodes = n if self.params.scale_out_memory == "request" else max(n, 2)
        parts = tuple(Assignment(server_id=a.table.server_ids[r], cores=c,
                                 memory_gb=node_memory(a, c, nodes, self.params.sizing.min_node_memory_gb))
                      for r, c in zip(sp.rows, sp.cores, strict=True))
        top = tuple((a.table.server_ids[r], round(float(a.table.extra["predicted_ratio"][r]) * 100, 6))
                    for r in sp.rows[: self.top_k])
        trace = self._trace(ev, budget, notes if sp.met else [*notes, "target_not_met"], backtracks, top=top)
        detail = {**summary(ev), "mode": "scale_out", "chosen": [p.server_id for p in parts],
                  "cores": list(sp.cores), "required": a.required.value, "predicted": sp.aggregate}
        return PlacementOutcome(allocation=Allocation(assignments=parts), predicted_performance=round(sp.aggregate, 6),
                                trace=trace, detail=detail)

    def _leftovers(self, a: Assessment, w: WorkloadState, budget: Budget, notes: list[str]) -> PlacementOutcome:
        want = max(1, min(w.requested_cores or 1, saturation(a.model.curve)))
        sized = np.minimum(a.table.free_cores, want)
        table = a.table.with_extra({SIZED: np.where(sized >= want, sized, 0)})
        ev = evaluate(self.best_effort, table, a.request, budget, scores_if_feasible=True)
        notes = [*notes, "best_effort"]
        if not ev.feasible.any():
            return self._defer(ev, budget, notes, 0)
        row = best_row(ev.total, ev.feasible)
        assert row is not None
        perf = float(a.model.up(want) * a.base[row])
        alloc = Allocation(assignments=(Assignment(server_id=table.server_ids[row], cores=want,
                                                   memory_gb=a.request.memory_gb),))
        detail = {**summary(ev), "mode": "best_effort", "chosen": [table.server_ids[row]], "evictable": True}
        return PlacementOutcome(allocation=alloc, predicted_performance=round(perf, 6),
                                trace=self._trace(ev, budget, notes, 0), detail=detail)

    def _defer(self, ev: Evaluation, budget: Budget, notes: list[str], backtracks: int) -> PlacementOutcome:
        reasons = (BREAKS_A_RESIDENT,) if PROTECTED in notes else deferral_reasons(ev)
        return PlacementOutcome(allocation=None, reasons=reasons,
                                trace=self._trace(ev, budget, [*notes, "deferred"], backtracks),
                                detail={**summary(ev), "mode": "none"})

    def _trace(self, ev: Evaluation, budget: Budget, notes: list[str], backtracks: int,
               top: tuple[tuple[str, float], ...] | None = None) -> Any:
        if budget.used > budget.limit:
            notes = [*notes, "budget_exhausted"]
        t = compact_trace(ev, top_k=self.top_k, examined=budget.used, budget=budget, notes=tuple(notes), top=top)
        return t.model_copy(update={"backtracks": backtracks}) if backtracks else t
