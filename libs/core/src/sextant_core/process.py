"""The process manager: which command follows which event (DESIGN §3). Pure.

`react(state, event)` is called with a state that already includes `event` — possibly more: a
service catches up with the log before it reacts, so its state may be ahead of the event. A
reaction therefore depends on the event and states its intent (e.g. `PlaceWorkload.reason`); the
decider checks that the command still applies to the current state. Commands come in a fixed order. The services and the twin both run it, so the workflow is
written once. Commands for the cluster agent (`StartWorkload`, ...) leave the core as messages;
the others are handled by `decide` in the service named by the command's HANDLER.
"""

from __future__ import annotations

from functools import singledispatch

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_contracts import recurring as rc
from sextant_contracts import vc

from .admission.queues import class_queues, heads
from .domain.lifecycle import TERMINAL, WorkloadPhase
from .kwiken.platform import due
from .state.model import ClusterState

Commands = tuple[cmd.Command, ...]


def react(state: ClusterState, event: ev.Event) -> Commands:
    return _react(event, state)


def reacts_to(event_type: type[ev.Event]) -> bool:
    """Whether any reaction is registered for `event_type`: events without one (profile samples,
    starts, ...) never produce a command, whatever the state, so a service hosting a decider can
    acknowledge them without reading the log first (they are folded at its next catch-up)."""
    return _react.dispatch(event_type) is not _react.dispatch(ev.Event)


@singledispatch
def _react(event: ev.Event, state: ClusterState) -> Commands:
    return ()


@_react.register
def _(event: ev.WorkloadSubmitted, state: ClusterState) -> Commands:
    if event.fast_path:
        return (cmd.ClassifyWorkload(workload_id=event.workload_id),) + _allocate(state, "arrival")
    return (cmd.PlanProfiling(workload_id=event.workload_id),) + _allocate(state, "arrival")


@_react.register
def _(event: ev.ProfilingPlanned, state: ClusterState) -> Commands:
    return (cmd.ExecuteProfileRuns(workload_id=event.workload_id, runs=event.runs),)


@_react.register
def _(event: ev.ProfilingCompleted, state: ClusterState) -> Commands:
    return (cmd.ClassifyWorkload(workload_id=event.workload_id),)


@_react.register
def _(event: ev.WorkloadClassified, state: ClusterState) -> Commands:
    if event.reclassification:  # reclassified while running: re-plan against the new rows
        return (cmd.PlaceWorkload(workload_id=event.workload_id, reason="reclassified"),)
    return (cmd.AdmitWorkload(workload_id=event.workload_id),)


@_react.register
def _(event: ev.WorkloadAdmitted, state: ClusterState) -> Commands:
    # the class queue it left moves on: its new head is retried (ARQ; no-op without queues)
    nxt = class_queues(state)[event.arq_class] if state.queued else ()
    return (cmd.PlaceWorkload(workload_id=event.workload_id),) + \
        tuple(cmd.AdmitWorkload(workload_id=w) for w in nxt[:1])


@_react.register
def _(event: ev.PlacementDecided, state: ClusterState) -> Commands:
    return (cmd.StartWorkload(workload_id=event.workload_id, allocation=event.allocation),)


@_react.register
def _(event: ev.AllocationAdjusted, state: ClusterState) -> Commands:
    return (cmd.ResizeWorkload(workload_id=event.workload_id, allocation=event.allocation),)


@_react.register
def _(event: ev.MigrationDecided, state: ClusterState) -> Commands:
    return (cmd.ResizeWorkload(workload_id=event.workload_id, allocation=event.allocation),)


@_react.register
def _(event: ev.ReclassificationRequested, state: ClusterState) -> Commands:
    return (cmd.PlanProfiling(workload_id=event.workload_id),)


@_react.register
def _(event: ev.TargetUpdated, state: ClusterState) -> Commands:
    return (cmd.PlaceWorkload(workload_id=event.workload_id, reason="target_updated"),)


@_react.register
def _(event: ev.QosVerdict, state: ClusterState) -> Commands:
    w = state.workloads.get(event.workload_id)
    if event.met or w is None or w.phase in TERMINAL:  # a completed workload's final verdict: nothing to review
        return ()
    return (cmd.ReviewWorkload(workload_id=event.workload_id, reason="qos_violation"),)


@_react.register
def _(event: ev.WorkloadRevoked, state: ClusterState) -> Commands:
    return (cmd.StopWorkload(workload_id=event.workload_id, reason=event.reason or "revoked"),) + \
        _allocate(state, "completion") + _capacity_freed(state, _held(state, event.workload_id))


@_react.register
def _(event: ev.WorkloadCompleted, state: ClusterState) -> Commands:
    return _allocate(state, "completion") + _capacity_freed(state, _held(state, event.workload_id))


@_react.register
def _(event: ev.WorkloadFailed, state: ClusterState) -> Commands:
    return _allocate(state, "completion") + _capacity_freed(state, _held(state, event.workload_id))


@_react.register
def _(event: ev.RecordQuarantined, state: ClusterState) -> Commands:
    """A workload failed by quarantine is stopped where it runs (the agent did not report it)."""
    if not event.workload_id:
        return ()
    return (cmd.StopWorkload(workload_id=event.workload_id, reason="quarantined"),) + \
        _allocate(state, "completion") + _capacity_freed(state, _held(state, event.workload_id))


@_react.register
def _(event: ev.ServerRegistered, state: ClusterState) -> Commands:
    return _servers_changed(state) + _capacity_freed(state, (event.server_id,))


@_react.register
def _(event: ev.ServerRecovered, state: ClusterState) -> Commands:
    return _servers_changed(state) + _capacity_freed(state, (event.server_id,))


@_react.register
def _(event: ev.ServerFailed, state: ClusterState) -> Commands:
    s = state.servers.get(event.server_id)
    if s is None:
        return ()
    return _servers_changed(state) + tuple(
        cmd.PlaceWorkload(workload_id=w, reason="server_failed", server_id=event.server_id)
        for w in s.residents if state.workloads[w].phase in (WorkloadPhase.RUNNING, WorkloadPhase.PLACED))


@_react.register
def _(event: ev.ServerDrained, state: ClusterState) -> Commands:
    return _servers_changed(state)


@_react.register
def _(event: ev.Tick, state: ClusterState) -> Commands:
    # time passes: a queued head whose waiting bound ran out is admitted even if nothing completes;
    # deferred placements are retried too — a safety net should a capacity trigger have been
    # missed (e.g. a decider restarted between the trigger and its reaction)
    admit = tuple(cmd.AdmitWorkload(workload_id=w) for w in heads(state)) if state.queued else ()
    return admit + tuple(cmd.PlaceWorkload(workload_id=w, reason="capacity_freed") for w in state.deferred) + \
        _probe_round(event, state) + _daily_inference(event, state) + _daily_corral(event, state)


# --- monitoring → reprovisioning ---------------------------------------------------------------

PROBE_ROUND_S = 600.0
"""Proactive detection runs in rounds (Quasar §4.1: every 10 minutes): the first `Tick` at or past
each multiple of PROBE_ROUND_S asks reprovisioning to review every running workload with reason
`probe_round`; the policy decides which fraction it probes (`reprovisioning.detection`)."""


def _probe_round(event: ev.Tick, state: ClusterState) -> Commands:
    k = int(event.at // PROBE_ROUND_S)
    if event.at <= 0 or k == int(max(event.at - event.period_s, 0.0) // PROBE_ROUND_S):
        return ()
    return tuple(cmd.ReviewWorkload(workload_id=w.workload_id, reason="probe_round")
                 for w in state.live_workloads() if w.phase == WorkloadPhase.RUNNING)


# --- recurring templates (Morpheus) -------------------------------------------------------------

INFERENCE_ROUND_S = 86400.0
"""Existing contracts are re-inferred daily: the first `Tick` at or past each multiple of
INFERENCE_ROUND_S asks profiling to re-infer every template that has a contract, in id order."""


def _daily_inference(event: ev.Tick, state: ClusterState) -> Commands:
    templates = state.recurring.templates
    if not templates or event.at <= 0:
        return ()
    k = int(event.at // INFERENCE_ROUND_S)
    if k == int(max(event.at - event.period_s, 0.0) // INFERENCE_ROUND_S):
        return ()
    return tuple(rc.InferContract(template_id=tid, trigger="daily")
                 for tid, t in sorted(templates.items()) if t.contract is not None)


def _daily_corral(event: ev.Tick, state: ClusterState) -> Commands:
    """With analytics profiles, the first `Tick` past each day also asks planning for a Corral round
    (on the lowest profiled template id's stream; it records only a changed plan)."""
    k = int(event.at // INFERENCE_ROUND_S)
    if event.at <= 0 or k == int(max(event.at - event.period_s, 0.0) // INFERENCE_ROUND_S):
        return ()
    profiled = state.recurring.profiled()
    return (rc.PlanCorral(template_id=profiled[0].template_id, trigger="daily"),) if profiled else ()


@_react.register
def _(event: rc.AnalyticsProfileDeclared, state: ClusterState) -> Commands:
    """A declared profile joins the next Corral round: plan it now."""
    if event.template_id not in state.recurring.templates:
        return ()
    return (rc.PlanCorral(template_id=event.template_id, trigger="profile"),)


@_react.register
def _(event: rc.RecurringRunObserved, state: ClusterState) -> Commands:
    """A run of a template without a contract: try to detect it and infer one."""
    t = state.recurring.templates.get(event.template_id)
    if t is None or t.contract is not None:
        return ()
    return (rc.InferContract(template_id=event.template_id, trigger="run"),)


@_react.register
def _(event: rc.ContractSignedOff, state: ClusterState) -> Commands:
    return (rc.PlanReservation(template_id=event.template_id, reason="signed_off"),)


@_react.register
def _(event: rc.ContractInferred, state: ClusterState) -> Commands:
    """A re-inferred contract the owner signed (accepted or overrode) is re-planned."""
    t = state.recurring.templates.get(event.template_id)
    if event.trigger != "daily" or t is None or t.signoff is None or t.signoff.verdict == "reject":
        return ()
    return (rc.PlanReservation(template_id=event.template_id, reason="reinferred"),)


@_react.register
def _(event: rc.RecurringInstanceObserved, state: ClusterState) -> Commands:
    t = state.recurring.templates.get(event.template_id)
    if t is None or t.reservation is None:
        return ()
    return (rc.ExtendReservation(template_id=event.template_id, instance=event.instance, step=event.step,
                                 used=event.used, pending=event.pending),)


@_react.register
def _(event: ev.PerformanceObserved, state: ClusterState) -> Commands:
    w = state.workloads.get(event.workload_id)
    if w is None or w.phase != WorkloadPhase.RUNNING:
        return ()
    return (cmd.AssessObservation(workload_id=event.workload_id, value=event.value,
                                  ratio_to_target=event.ratio_to_target, p99_latency_ms=event.p99_latency_ms,
                                  offered=event.offered),)


@_react.register
def _(event: ev.ProbeRequested, state: ClusterState) -> Commands:
    return (cmd.ProbeInterference(workload_id=event.workload_id, probe_id=event.probe_id, sources=event.sources,
                                  purpose=event.purpose, server_id=event.server_id,
                                  reference_server_id=event.reference_server_id),)


@_react.register
def _(event: ev.InterferenceProbed, state: ClusterState) -> Commands:
    return (cmd.AssessProbe(workload_id=event.workload_id, probe_id=event.probe_id, purpose=event.purpose,
                            tolerated=event.tolerated, caused=event.caused, server_id=event.server_id,
                            reference_server_id=event.reference_server_id,
                            reference_tolerated=event.reference_tolerated, reference_caused=event.reference_caused),)


@_react.register
def _(event: ev.TasksObserved, state: ClusterState) -> Commands:
    """`TaskAttemptsObserved` (a subclass) also carries each attempt's age and copy number."""
    a = event if isinstance(event, ev.TaskAttemptsObserved) else None
    return (cmd.AssessTasks(workload_id=event.workload_id, servers=event.servers, rates=event.rates,
                            progress=event.progress, elapsed=() if a is None else a.elapsed,
                            attempts=() if a is None else a.attempts),)


# --- virtual clusters ----------------------------------------------------------------------------


def _allocate(state: ClusterState, reason: vc.Reason) -> Commands:
    """Planning recomputes the allocation between VCs — only while a tenant has a VC capacity, so a
    log without capacities is decided exactly as before they existed."""
    return (vc.AllocateVcs(reason=reason),) if state.vcs.active else ()


def _servers_changed(state: ClusterState) -> Commands:
    """The cell's schedulable servers changed (a server registered, failed, drained or returned):
    a new allocation (reason `servers`) when an allocation is in force and the total differs from
    the one it was decided over — before the re-plans and retries that follow, so they see it.
    Nothing when no tenant has a capacity, the total is unchanged (a re-registration), or no
    allocation was decided yet (a decider folded past the event: the `VcCapacitySet` reaction
    allocates with the current total)."""
    last = state.vcs.last
    if not state.vcs.active or last is None or last.total == state.schedulable_servers:
        return ()
    return (vc.AllocateVcs(reason="servers"),)


@_react.register
def _(event: vc.VcCapacitySet, state: ClusterState) -> Commands:
    """A capacity changed: a new allocation, then every deferred placement retried (a full search:
    a tenant's allocation may have grown)."""
    return _allocate(state, "capacity") + tuple(
        cmd.PlaceWorkload(workload_id=w, reason="capacity_freed") for w in state.deferred)


def _held(state: ClusterState, workload_id: str) -> tuple[str, ...]:
    """The servers an ended workload held (its allocation is kept after it ends), sorted."""
    w = state.workloads.get(workload_id)
    if w is None or w.allocation is None:
        return ()
    return tuple(sorted(w.allocation.servers))


def _capacity_freed(state: ClusterState, freed: tuple[str, ...]) -> Commands:
    """Capacity came back on `freed`: retry the head of every ARQ class queue (most demanding class
    first), then deferred placements, in order, each told which servers freed.

    [IMPL CHOICE] Incremental retries: a workload that ends holding nothing frees nothing, so it
    retries no deferred placement; otherwise each retry carries `freed`, and a planner that can
    tell from them that the workload still does not fit answers without searching
    (`Planner.could_use`, decide.py). Retrying every deferred placement in full on every completion
    made an oversubscribed run quadratic (paragon-ec2-8500: over an hour per profile). The `Tick`
    retry (no `freed`: a full search) remains the safety net for what no capacity event announces
    (time passing, a resident's reclassification, a decider restarted between trigger and reaction)."""
    out: list[cmd.Command] = []
    if state.queued:
        out.extend(cmd.AdmitWorkload(workload_id=w) for w in heads(state))
    if freed:
        out.extend(cmd.PlaceWorkload(workload_id=w, reason="capacity_freed", freed=freed) for w in state.deferred)
    return tuple(out)


# --- Kwiken (multi-stage services) ---------------------------------------------------------------


@_react.register(kw.ServiceStagesDeclared)
@_react.register(kw.StageLatenciesObserved)
def _kwiken(event: kw.ServiceStagesDeclared | kw.StageLatenciesObserved, state: ClusterState) -> Commands:
    """New samples or stages: a plan is asked for when one is due (first plan, or the KS drift test)."""
    svc = state.kwiken.get(event.workload_id)
    w = state.workloads.get(event.workload_id)
    if svc is None or w is None or w.phase in TERMINAL or not due(svc)[0]:
        return ()
    return (kw.PlanKwiken(workload_id=event.workload_id),)
