"""QoS placements as claims of the capacity ledger: one ledger for placements and reservations.

Reservations (`recurring/plan.py`) and QoS placements (the planning service's `Planner`) both
promise cores. They go through one ledger, so neither promises cores the other holds:

- **Reservations see placements.** The plan every recurring decision rebuilds from the log
  (`decisions.build_plan`) claims, after the reservations and their extensions, every placed
  workload as a `ClaimKind.PLACEMENT` claim (`claim_placements`); LowCost then packs a new or
  re-planned reservation around them.
- **Placements see reservations.** Before a placement is recorded, `gate` checks its allocation
  as a claim on that plan (`Plan.hold`): it must fit at every step in what every reservation and
  every other placement leave. A placement that does not fit is deferred with `RESERVED_REASON`
  and the step and resource short; the planner's choice of servers is kept otherwise (the
  ledger is a cell aggregate, not a map of servers).

Choices (Morpheus does not place QoS work; these are ours):

- A placement's claim is its allocation's cores and memory on schedulable servers at **every
  step** of the window: the planner knows no end of a service, and a batch job's estimate is not
  a promise. It is released by the rebuild that no longer sees the workload placed.
- **Not claimed:** best-effort workloads (evictable: they promise nothing, and are not gated), and
  an instance of a recurring template that holds a reservation or racks in the held Corral plan
  (its name belongs to the template, `templates.normalise_name`): it runs inside its reservation
  or racks, and claiming both would count its cores twice. Neither is gated.
- A placement displaces nothing: it must fit in what reservations of both tiers leave
  (`Plan.hold`), since a placement decision re-plans no reservation.
- In the rebuilt plan reservations come first (in their order of admission), placements after,
  together as one claim; when that does not fit (servers lost since), one by one in workload id
  order, and the ones that no longer fit are left out and named (`decisions.build_plan`).
- **Reissue load** (Kwiken, docs/kwiken/platform.md): a service whose plan spends a share s of
  its work on reissues (`KwikenPlanDecided.reissue_spent`) runs s × its cores more; that load is a
  `ClaimKind.REISSUE` claim (cores only, every step) in the residual tier, after the placements:
  a placement or a non-periodic reservation must leave it room, a periodic reservation may take
  it (ledger rule 3: in a rebuilt plan that no longer holds it, it is left out and named).
- A re-placement (server failure, migration) is checked without the workload's own claims.
- Only when the state holds a reservation or a Corral plan with a job (`ledger_in_use`): a
  cluster without one places exactly as before and records nothing new.
- A reprovisioner's resize or migration that grows a workload passes the same check
  (`decide.within_ledger`): a decision that does not fit is dropped whole (nothing recorded; the
  reprovisioner asks again at its next review).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from sextant_contracts.ids import derive_id
from sextant_contracts.model import Allocation

from ..state.model import ClusterState, WorkloadState
from .ledger import ClaimInfeasible, ClaimKind, LedgerError
from .plan import Plan
from .templates import normalise_name

RESERVED_REASON = "reserved capacity"
PLACEMENTS_CLAIM = "placements"

PlanBuilder = Callable[[ClusterState, "str | None"], "tuple[Plan, tuple[str, ...]]"]


@lru_cache(maxsize=65536)
def template_id(tenant: str, name: str) -> str:
    """The id of the template a job name belongs to, for one tenant (`templates.normalise_name`)."""
    return derive_id("template", tenant, normalise_name(name))


def runs_in_reservation(state: ClusterState, w: WorkloadState) -> bool:
    """Is `w` an instance of a recurring template that holds a reservation or racks in the held
    Corral plan (module doc)?"""
    if not w.name or not state.recurring.templates:
        return False
    tid = template_id(w.tenant, w.name)
    t = state.recurring.templates.get(tid)
    if t is None:
        return False
    corral = state.recurring.corral
    return t.reservation is not None or (corral is not None and any(j.template_id == tid for j in corral.jobs))


def ledger_in_use(state: ClusterState) -> bool:
    """Does some template hold a reservation, or some analytics job racks (the gate applies)?"""
    corral = state.recurring.corral
    return (corral is not None and bool(corral.jobs)) or any(
        t.reservation is not None for t in state.recurring.templates.values())


def claimed(state: ClusterState, w: WorkloadState) -> bool:
    """Does `w`'s placement go through the ledger (module doc)?"""
    return not w.best_effort and not runs_in_reservation(state, w)


def _size(state: ClusterState, a: Allocation) -> tuple[float, float]:
    up = [x for x in a.assignments if (s := state.servers.get(x.server_id)) is not None and s.schedulable]
    return float(sum(x.cores for x in up)), float(sum(x.memory_gb for x in up))


def placed(state: ClusterState, exclude: str | None = None) -> list[tuple[str, float, float]]:
    """(workload id, cores, memory) of every claimed placement on a schedulable server, by id."""
    ids = sorted({wid for s in state.servers.values() if s.schedulable for wid in s.residents})
    out = []
    for wid in ids:
        w = state.workloads.get(wid)
        if wid == exclude or w is None or w.allocation is None or not claimed(state, w):
            continue
        cores, memory = _size(state, w.allocation)
        if cores > 0 or memory > 0:
            out.append((wid, cores, memory))
    return out


def claim_placements(plan: Plan, state: ClusterState, exclude: str | None = None,
                     reissues: bool = True) -> tuple[Plan, tuple[str, ...]]:
    """`plan` with every claimed placement held and, with `reissues`, the reissue load of every
    Kwiken plan (module doc); returns it and the claims left out."""
    rows = placed(state, exclude)
    if not rows:
        return plan, ()
    left_out: list[str] = []
    try:
        plan = plan.hold(PLACEMENTS_CLAIM, sum(r[1] for r in rows), sum(r[2] for r in rows))
    except LedgerError:
        for wid, cores, memory in rows:
            try:
                plan = plan.hold(f"placement/{wid}", cores, memory)
            except LedgerError:
                left_out.append(f"placement/{wid}")
    if reissues:
        for wid, cores, _ in rows:
            svc = state.kwiken.get(wid)
            spent = 0.0 if svc is None or svc.plan is None else svc.plan.reissue_spent
            if spent > 0:
                try:
                    plan = plan.hold(f"reissue/{wid}", cores * spent, 0.0, ClaimKind.REISSUE)
                except LedgerError:
                    left_out.append(f"reissue/{wid}")
    return plan, tuple(left_out)


@dataclass(frozen=True)
class GateVerdict:
    """The ledger's answer to one placement: `reason` None when it fits."""

    reason: str | None
    left_out: tuple[str, ...] = ()


def gate(state: ClusterState, w: WorkloadState, allocation: Allocation, plan_of: PlanBuilder) -> GateVerdict | None:
    """Check `allocation` of `w` against the ledger (module doc); None when the gate does not
    apply (no reservation nor rack plan in the state, or `w` is not claimed). `plan_of(state, exclude)` rebuilds
    the plan without `w`'s own claim (`decisions.build_plan`)."""
    if not ledger_in_use(state) or not claimed(state, w):
        return None
    plan, left_out = plan_of(state, w.workload_id)
    cores, memory = _size(state, allocation)
    try:
        plan.hold(f"placement/{w.workload_id}", cores, memory)
    except ClaimInfeasible as exc:
        return GateVerdict(f"{RESERVED_REASON}: at step {exc.step} the reservations and placements leave "
                           f"{exc.short_by:.6g} {exc.resource} too few", left_out)
    return GateVerdict(None, left_out)


