"""`decide(state, command, *, params, seed, ...)`: the single pure entry point of every decision.

It dispatches the command to the policy of the active `PolicySet`, wraps the outcome in decision
events carrying a `DecisionRecord` (causation, the state's log position, profile, policy and model
versions, the seed), and returns them with a trace. Nothing here reads a clock, the environment or
a global random source: `at` (the time of the triggering event) and `seed` come from the caller,
and `seed_for` derives the seed from the workload id (common random numbers, DESIGN §5).

Commands that the core does not decide (agent commands) raise `NotADecision`. `DecisionContext`
(`context.py`) is re-exported here for the callers that build one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_contracts import recurring as rc
from sextant_contracts import vc
from sextant_contracts.ids import seed_from
from sextant_contracts.model import DecisionTrace

from .context import DecisionContext
from .corral import platform as corral_platform
from .domain.lifecycle import TERMINAL, WorkloadPhase, allows
from .fairness import platform as vcs
from .kwiken import platform as kwiken
from .policies import (
    ObservationAssessor,
    PolicySet,
    ProbeAssessor,
    ReplanAssessor,
    RetrainingClassifier,
    RetryHint,
    TaskAssessor,
)
from .recurring import decisions as recurring
from .state.evolve import evolve
from .state.model import ClusterState, WorkloadState


class NotADecision(ValueError):
    """The command is executed by an edge (the cluster agent), not decided by the core."""


@dataclass(frozen=True, slots=True)
class Decision:
    """Events to append (in order), the compact trace, and the full detail `explain` shows."""

    events: tuple[ev.Event, ...]
    trace: DecisionTrace | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


def seed_for(command: cmd.Command, state: ClusterState) -> int:
    """The seed of a decision: from the workload (or recurring template) id and how many decisions
    it has had."""
    if isinstance(command, vc.AllocateVcs):
        return seed_from(vc.VC_STREAM, command.TYPE, state.vcs.decisions)
    if isinstance(command, rc.TemplateCommand):
        t = state.recurring.templates.get(command.template_id)
        return seed_from(command.template_id, command.TYPE, 0 if t is None else t.decisions)
    w = state.workloads.get(command.workload_id)
    return seed_from(command.workload_id, command.TYPE, 0 if w is None else w.decisions)


def decide(state: ClusterState, command: cmd.Command, *, params: PolicySet, seed: int, at: float,
           causation: tuple[str, ...] = ()) -> Decision:
    """Decide `command` against `state` under the policies of `params`. Pure and deterministic."""
    if isinstance(command, rc.TemplateCommand):
        return _decide_template(state, command, params=params, seed=seed, at=at, causation=causation)
    if isinstance(command, vc.AllocateVcs):
        return _allocate_vcs(state, command, params=params, seed=seed, at=at, causation=causation)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise NotADecision(f"{command.TYPE} is not decided by the core")
    w = state.workloads.get(command.workload_id)
    if w is None or w.phase in TERMINAL:
        return Decision(events=(), detail={"skipped": "unknown or finished workload"})
    ctx = DecisionContext(at=at, seed=seed, state_position=state.position, causation=causation,
                          profile=params.profile, policy_version=params.version)
    return handler(state, w, command, params, ctx)


# --- handlers ----------------------------------------------------------------------------------


def _plan_profiling(state: ClusterState, w: WorkloadState, c: cmd.Command, p: PolicySet,
                    ctx: DecisionContext) -> Decision:
    if not allows(w.phase, "ProfilingPlanned"):
        return Decision(events=(), detail={"skipped": f"phase {w.phase}"})
    runs = p.profiling.plan(state, w, ctx)
    e = ev.ProfilingPlanned(at=ctx.at, workload_id=w.workload_id, runs=runs,
                            decision=ctx.record("profiling", w.workload_id))
    return Decision(events=(e,))


def _classify(state: ClusterState, w: WorkloadState, c: cmd.Command, p: PolicySet,
              ctx: DecisionContext) -> Decision:
    if not allows(w.phase, "WorkloadClassified"):
        return Decision(events=(), detail={"skipped": f"phase {w.phase}"})
    # A classifier may retrain models whose event count is due (`RetrainingClassifier`): the
    # retrains are appended right after the decision event (a block starts with its decision) and
    # the classification already uses them (they pin their row prefix, so log order is immaterial).
    extra: tuple[ev.Event, ...] = ()
    if isinstance(p.classifier, RetrainingClassifier):
        extra = tuple(p.classifier.retrains(state, w, ctx))
    seen = state
    for r in extra:
        seen = evolve(seen, r)
    out = p.classifier.classify(seen, w, ctx)
    model_version = ",".join(f"{k}={v}" for k, v in sorted(out.model_versions.items()))
    e = ev.WorkloadClassified(at=ctx.at, workload_id=w.workload_id,
                              decision=ctx.record("classification", w.workload_id, model_version),
                              reclassification=w.phase != WorkloadPhase.PROFILED
                              and w.phase != WorkloadPhase.SUBMITTED, **out.model_dump())
    return Decision(events=(e, *extra))


def _admit(state: ClusterState, w: WorkloadState, c: cmd.Command, p: PolicySet,
           ctx: DecisionContext) -> Decision:
    if w.phase not in (WorkloadPhase.CLASSIFIED, WorkloadPhase.QUEUED):
        return Decision(events=(), detail={"skipped": f"phase {w.phase}"})
    out = p.admission.admit(state, w, ctx)
    rec = ctx.record("admission", w.workload_id)
    e: ev.Event
    if out.admitted:
        e = ev.WorkloadAdmitted(at=ctx.at, workload_id=w.workload_id, decision=rec,
                                arq_class=out.arq_class, trace=out.trace)
    elif w.phase == WorkloadPhase.QUEUED and w.queue_position == out.position:
        return Decision(events=(), detail={"still_queued": out.reason})
    else:
        e = ev.WorkloadQueued(at=ctx.at, workload_id=w.workload_id, decision=rec,
                              arq_class=out.arq_class, position=out.position,
                              expected_wait_s=out.expected_wait_s, reason=out.reason)
    return Decision(events=(e,), trace=out.trace, detail=out.detail)


def _place(state: ClusterState, w: WorkloadState, c: cmd.Command, p: PolicySet,
           ctx: DecisionContext) -> Decision:
    assert isinstance(c, cmd.PlaceWorkload)
    if not _placement_applies(w, c):
        return Decision(events=(), detail={"skipped": f"{c.reason} in phase {w.phase}"})
    if (c.freed and w.phase == WorkloadPhase.DEFERRED and isinstance(p.planner, RetryHint)
            and not p.planner.could_use(state, w, c.freed)):
        return Decision(events=(), detail={"still_deferred": "no freed server fits it"})
    if vcs.over_allocation(state, w):  # its tenant holds its VC allocation already: it waits
        if w.phase == WorkloadPhase.DEFERRED:
            return Decision(events=(), detail={"still_deferred": vcs.GATE_REASON})
        gated = ev.PlacementDeferred(at=ctx.at, workload_id=w.workload_id, decision=ctx.record("placement", w.workload_id),
                                     reasons=(vcs.GATE_REASON,))
        return Decision(events=(gated,), detail={"deferred": vcs.GATE_REASON})
    out = p.planner.place(state, w, ctx)
    if c.reason == "reclassified" and w.allocation is not None and isinstance(p.reprovisioner, ReplanAssessor):
        out = p.reprovisioner.replan(state, w, out, ctx)  # keep it where it runs, or move
    rules = recurring.params_for(p.recurring_rules)
    gate = None if out.allocation is None else recurring.placement_gate(state, w, out.allocation, rules)
    rec = ctx.record("placement", w.workload_id, "" if gate is None else rules.model_version)
    e: ev.Event
    if gate is not None and gate.reason is not None:  # it would take cores a reservation holds
        detail = {**out.detail, "deferred": gate.reason, "ledger_left_out": list(gate.left_out)}
        if w.phase == WorkloadPhase.DEFERRED:
            return Decision(events=(), trace=out.trace, detail={**detail, "still_deferred": gate.reason})
        e = ev.PlacementDeferred(at=ctx.at, workload_id=w.workload_id, decision=rec, reasons=(gate.reason,),
                                 trace=out.trace)
        return Decision(events=(e,), trace=out.trace, detail=detail)
    if out.allocation is not None:
        e = ev.PlacementDecided(at=ctx.at, workload_id=w.workload_id, decision=rec,
                                allocation=out.allocation,
                                predicted_performance=out.predicted_performance, trace=out.trace)
    elif w.phase == WorkloadPhase.DEFERRED:
        return Decision(events=(), trace=out.trace, detail=out.detail)  # still no room
    else:
        e = ev.PlacementDeferred(at=ctx.at, workload_id=w.workload_id, decision=rec,
                                 reasons=out.reasons, trace=out.trace)
    return Decision(events=(e,), trace=out.trace, detail=out.detail)


_FRESH = frozenset({WorkloadPhase.ADMITTED, WorkloadPhase.DEFERRED})
_REPLAN = frozenset({WorkloadPhase.RUNNING, WorkloadPhase.PLACED, WorkloadPhase.DEFERRED})


def _placement_applies(w: WorkloadState, c: cmd.PlaceWorkload) -> bool:
    """Does the intent of `c` still hold for `w` (the state may be ahead of the trigger)?"""
    if c.reason in ("admitted", "capacity_freed"):
        return w.phase in _FRESH
    if c.reason == "server_failed":
        return w.phase in _REPLAN and (w.allocation is None or c.server_id in w.allocation.servers)
    return w.phase in _REPLAN


def _review(state: ClusterState, w: WorkloadState, c: cmd.Command, p: PolicySet,
            ctx: DecisionContext) -> Decision:
    if w.phase != WorkloadPhase.RUNNING:
        return Decision(events=(), detail={"skipped": f"phase {w.phase}"})
    assert isinstance(c, cmd.ReviewWorkload)
    events, refused = within_ledger(state, p.reprovisioner.review(state, w, c.reason, ctx), p)
    return Decision(events=tuple(events), detail={"ledger_refused": refused} if refused else {})


_RESIZES = (ev.AllocationAdjusted, ev.MigrationDecided)


def within_ledger(state: ClusterState, events: Sequence[ev.Event], p: PolicySet
                  ) -> tuple[Sequence[ev.Event], str | None]:
    """A reprovisioner's decision that grows a workload (more cores or memory than it holds) past
    what reservations and other placements leave in the capacity ledger is dropped whole and the
    reason returned (`recurring.placement_gate`, rules 3; docs/recurring/platform.md "One ledger").
    Nothing is recorded then, and a decision that passes is recorded as decided, so replay under
    any rule set re-derives the same log."""
    rules = recurring.params_for(p.recurring_rules)
    for e in events:
        if not isinstance(e, _RESIZES):
            continue
        w = state.workloads.get(e.workload_id)
        if w is None or w.allocation is None:
            continue
        held, new = w.allocation, e.allocation
        if (new.total_cores <= held.total_cores
                and sum(a.memory_gb for a in new.assignments) <= sum(a.memory_gb for a in held.assignments)):
            continue
        gate = recurring.placement_gate(state, w, new, rules)
        if gate is not None and gate.reason is not None:
            return (), f"{e.TYPE} of {e.workload_id}: {gate.reason}"
    return events, None


def _assess(state: ClusterState, w: WorkloadState, c: cmd.Command, p: PolicySet,
            ctx: DecisionContext) -> Decision:
    """Monitoring inputs for the reprovisioner, each answered by its assessor capability; a
    reprovisioner without it (e.g. `NoAdaptation`) decides nothing for that input."""
    if w.phase != WorkloadPhase.RUNNING:
        return Decision(events=(), detail={"skipped": f"phase {w.phase}"})
    r = p.reprovisioner
    events: Sequence[ev.Event] = ()
    if isinstance(c, cmd.AssessObservation) and isinstance(r, ObservationAssessor):
        events = r.observe(state, w, c, ctx)
    elif isinstance(c, cmd.AssessProbe) and isinstance(r, ProbeAssessor):
        events = r.assess_probe(state, w, c, ctx)
    elif isinstance(c, cmd.AssessTasks) and isinstance(r, TaskAssessor):
        events = r.assess_tasks(state, w, c, ctx)
    events, refused = within_ledger(state, events, p)
    return Decision(events=tuple(events), detail={"ledger_refused": refused} if refused else {})


def _plan_kwiken(state: ClusterState, w: WorkloadState, c: cmd.Command, p: PolicySet,
                 ctx: DecisionContext) -> Decision:
    """Kwiken's plan of a service (`kwiken.platform`): only when due (first plan or drift)."""
    svc = state.kwiken.get(w.workload_id)
    if svc is None:
        return Decision(events=(), detail={"skipped": "no stages declared"})
    is_due, moved = kwiken.due(svc)
    if not is_due:
        return Decision(events=(), detail={"skipped": "no plan due (samples short or no drift)"})
    stages, spent = kwiken.compute_plan(svc, ctx.seed)
    d = svc.declared
    e = kw.KwikenPlanDecided(at=ctx.at, workload_id=w.workload_id, decision=ctx.record("kwiken", w.workload_id),
                             trigger="first" if svc.plan is None else "drift", stages=stages,
                             reissue_budget=d.reissue_budget, loss_budget=d.loss_budget, reissue_spent=spent,
                             drift=moved)
    plan = [f"{s.stage}: {s.policy} r={s.fraction:g}" + (f" T={s.timeout_ms:g}ms" if s.timeout_ms is not None else "")
            + (f" partial p={s.partial_p:g}" if s.partial_p is not None else "") for s in stages]
    return Decision(events=(e,), detail={"drift": list(moved), "alpha": kwiken.ALPHA, "reissue_spent": spent,
                                         "plan": plan[:20]})


def _decide_template(state: ClusterState, c: rc.TemplateCommand, *, params: PolicySet, seed: int, at: float,
                     causation: tuple[str, ...]) -> Decision:
    """A recurring template's decision (`recurring.decisions`): inference, planning or DRA; a Corral
    round (`corral.platform`)."""
    t = state.recurring.templates.get(c.template_id)
    if t is None:
        return Decision(events=(), detail={"skipped": "unknown template"})
    ctx = DecisionContext(at=at, seed=seed, state_position=state.position, causation=causation,
                          profile=params.profile, policy_version=params.version)
    rules = recurring.params_for(params.recurring_rules)
    events: Sequence[ev.Event]
    if isinstance(c, rc.InferContract):
        events = recurring.infer(state, t, c.trigger, ctx, rules)
    elif isinstance(c, rc.PlanReservation):
        events = recurring.plan_reservation(state, t, c.reason, ctx, rules)
    elif isinstance(c, rc.ExtendReservation):
        events = recurring.extend(state, t, c.instance, c.step, c.used, c.pending, ctx, rules)
    elif isinstance(c, rc.PlanCorral):
        corral_events, detail = corral_platform.plan_round(state, t, c.trigger, ctx, rules)
        return Decision(events=corral_events, detail=detail)
    else:
        raise NotADecision(f"{c.TYPE} is not decided by the core")
    return Decision(events=tuple(events))


def _allocate_vcs(state: ClusterState, c: vc.AllocateVcs, *, params: PolicySet, seed: int, at: float,
                  causation: tuple[str, ...]) -> Decision:
    """The allocation between virtual clusters (`fairness.platform`), under `params.vc_policy`."""
    if not state.vcs.active:
        return Decision(events=(), detail={"skipped": "no tenant has a VC capacity"})
    ctx = DecisionContext(at=at, seed=seed, state_position=state.position, causation=causation,
                          profile=params.profile, policy_version=params.version)
    e = vcs.allocate(state, c.reason, params.vc_policy, at, ctx.record("vc-allocation", vc.VC_STREAM))
    return Decision(events=(e,))


_HANDLERS = {
    cmd.PlanProfiling: _plan_profiling,
    cmd.ClassifyWorkload: _classify,
    cmd.AdmitWorkload: _admit,
    cmd.PlaceWorkload: _place,
    cmd.ReviewWorkload: _review,
    cmd.AssessObservation: _assess,
    cmd.AssessProbe: _assess,
    cmd.AssessTasks: _assess,
    kw.PlanKwiken: _plan_kwiken,
}

DECIDED_COMMANDS = frozenset(_HANDLERS) | {rc.InferContract, rc.PlanReservation, rc.ExtendReservation, rc.PlanCorral,
                                            vc.AllocateVcs}
