"""`evolve(state, event) -> state`: one small registered function per event type (STYLE 2).

Resource accounting: a workload holds its allocation from `PlacementDecided` until it completes,
fails, is revoked or is re-placed; adjustments swap the old allocation for the new one.

`evolve` itself does what every event of a kind shares: each `DecisionEvent` adds one to its
workload's `decisions` (the counter `decide.seed_for` derives seeds from; a probe upcast from
schema 1, logged before probes were counted, is not), the knowledge base
follows the classification events, and the clock and the position advance. The fold refuses what
it does not know: an event type without a registered handler raises `UnknownEvent` (as an
`eventsourcing` aggregate's mutator does). Old shapes of known types reach it through the
upcasters (`sextant_contracts.upcasters`, applied by `Envelope.event`); facts that change nothing
here are registered as such (`_unchanged`).

Every change of a server's row (resources, residents, interference aggregates, flags) is also
pushed on `state.server_journal` (see `state.model`), so columnar indexes can follow the fold
incrementally. The per-tenant (demand, held) servers (`state.load`) follow the one workload an
event changes, and `state.schedulable_servers` the server flags (`fairness.load`).
"""

from __future__ import annotations

from collections.abc import Iterable

from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_contracts import recurring as rc
from sextant_contracts import vc
from sextant_contracts.collector import collector_paused
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import Allocation

from ..classification.knowledge import add_samples, samples_batchable
from ..classification.knowledge import evolve as evolve_knowledge
from ..dispatch import Dispatch
from ..domain.lifecycle import QUARANTINED, TERMINAL, WorkloadPhase, allows, is_late_fact, next_phase
from ..fairness.load import moved
from ..fairness.vcstate import evolve_vc
from ..kwiken.platform import evolve_kwiken
from ..recurring.state import evolve_recurring
from .model import (
    EMPTY,
    N_SOURCES,
    NO_PRESSURE,
    ClusterState,
    ServerState,
    TaskView,
    WorkloadState,
    interference_vectors,
    journal_push,
    server_aggregates,
)
from .records import copy_with as replace

PROBES_KEPT = 8  # in-place proactive probes kept per workload (WorkloadState.probed)
OBSERVED_KEPT = 8  # observations kept per workload (WorkloadState.observed): a few telemetry windows
# offered loads kept per service (WorkloadState.load_history): a day of 10-minute windows and an
# hour more, so a forecaster can look one day back from an hour ahead
LOAD_KEPT = 156
TASK_VIEWS_KEPT = 2  # per-task views kept per analytics job (WorkloadState.task_views): this one and the one before
# (offered, p99, allocation) points kept per service (WorkloadState.latency_history): four hours of
# 10-minute windows, the latency calibration's fit window
LATENCY_KEPT = 24


class UnknownEvent(TypeError):
    """The fold has no handler for this event type: the catalogue (`sextant_contracts.events`)
    grew and this fold did not, or an old type reached it without an upcaster."""


def evolve(state: ClusterState, event: ev.Event, position: int | None = None) -> ClusterState:
    """Fold one event. `position` is its global log position when it comes from the log.

    Raises `UnknownEvent` for a type the fold does not know and `IllegalTransition` for an event
    its workload's phase does not allow."""
    new = _apply(event, state)
    changes: dict[str, object] = {}
    workloads = new.workloads
    if isinstance(event, ev.DecisionEvent) and not (isinstance(event, ev.ProbeRequested) and not event.counted):
        # one more decision about the event's workload (whatever the decision's kind), in the
        # same copy of the state as the changes below
        w = _workload(new, event)
        workloads = changes["workloads"] = workloads.set(w.workload_id, replace(w, decisions=w.decisions + 1))
    if workloads is not state.workloads:  # an event changes at most the workload it names
        wid = getattr(event, "workload_id", "")
        load = moved(new.load, state.workloads.get(wid), workloads.get(wid))
        if load is not new.load:
            changes["load"] = load
    kb = evolve_knowledge(new.knowledge, event)  # the classification matrices
    if kb is not new.knowledge:
        changes["knowledge"] = kb
    if event.at > new.now:
        changes["now"] = event.at
    if position is not None:
        changes["position"] = position
    return replace(new, **changes) if changes else new


def fold(items: Iterable[Envelope | ev.Event], state: ClusterState = EMPTY) -> ClusterState:
    """Fold envelopes (with positions) or bare events into `state`, the cyclic garbage collector
    paused (`sextant_contracts.collector`: the fold allocates no cycles); a run of one workload's
    samples in one copy (`fold_events`)."""
    with collector_paused():
        return fold_events(((item.event(), item.position) if isinstance(item, Envelope) else (item, None)
                            for item in items), state)


def fold_events(pairs: Iterable[tuple[ev.Event, int | None]], state: ClusterState) -> ClusterState:
    """`evolve` of every (event, position) in order — the same state — except that a run of
    consecutive `ProfileSampleRecorded` of one workload (a profiling plan's samples, recorded
    together) is folded in one copy of the state, its workload and its pending row
    (`_fold_samples`) instead of one per event."""
    run: list[tuple[ev.ProfileSampleRecorded, int | None]] = []
    for event, position in pairs:
        if event.__class__ is _SAMPLE:
            if run and run[0][0].workload_id != event.workload_id:  # type: ignore[attr-defined]
                state = _fold_samples(state, run)
                run = []
            run.append((event, position))  # type: ignore[arg-type]
            continue
        if run:
            state = _fold_samples(state, run)
            run = []
        state = evolve(state, event, position)
    return _fold_samples(state, run) if run else state


_SAMPLE = ev.ProfileSampleRecorded
_SAMPLE_TYPE = ev.ProfileSampleRecorded.TYPE


def _fold_samples(state: ClusterState, run: list[tuple[ev.ProfileSampleRecorded, int | None]]) -> ClusterState:
    """`evolve` of each of `run` (one workload's consecutive samples), in one copy when nothing
    but the samples, the clock and the position changes: the workload exists, its phase takes
    samples (a sample never changes the phase), and the folds' handlers of the type are this
    module's and the knowledge base's own (a registration elsewhere, e.g. a test's, folds one by
    one). The workload's and the pending row's samples get every sample, in order; the clock and
    the position end where the per-event fold leaves them. Otherwise: one by one."""
    first = run[0][0]
    w = state.workloads.get(first.workload_id)
    if (len(run) == 1 or w is None or is_late_fact(w.phase, _SAMPLE_TYPE)
            or not allows(w.phase, _SAMPLE_TYPE) or _apply.dispatch(_SAMPLE) is not _sample_recorded
            or not samples_batchable()):
        for event, position in run:
            state = evolve(state, event, position)
        return state
    phase = next_phase(w.workload_id, w.phase, _SAMPLE_TYPE)  # the same phase (TRANSITIONS)
    new = (*w.samples, *[(e.run_id, e.classification.value, e.column, e.value, e.caused) for e, _ in run])
    w2 = replace(w, phase=phase, samples=new)
    changes: dict[str, object] = {"workloads": state.workloads.set(w.workload_id, w2)}
    # as `_step`
    if phase != WorkloadPhase.QUEUED and w.workload_id in state.queued:
        changes["queued"] = tuple(x for x in state.queued if x != w.workload_id)
    if phase != WorkloadPhase.DEFERRED and w.workload_id in state.deferred:
        changes["deferred"] = tuple(x for x in state.deferred if x != w.workload_id)
    # as `evolve`
    load = moved(state.load, w, w2)
    if load is not state.load:
        changes["load"] = load
    kb = add_samples(state.knowledge, w.workload_id, [e for e, _ in run])
    if kb is not state.knowledge:
        changes["knowledge"] = kb
    now = state.now
    position = state.position
    moved_clock = moved_position = False
    for e, at in run:
        if e.at > now:
            now, moved_clock = e.at, True
        if at is not None:
            position, moved_position = at, True
    if moved_clock:
        changes["now"] = now
    if moved_position:
        changes["position"] = position
    return replace(state, **changes)


@Dispatch
def _apply(event: ev.Event, state: ClusterState) -> ClusterState:
    raise UnknownEvent(f"the fold has no handler for {type(event).__name__} ({event.TYPE or 'no TYPE'})")


@_apply.register
def _(event: rc.TemplateEvent, state: ClusterState) -> ClusterState:
    """Recurring templates fold on their own (`recurring.state`), decisions counted there."""
    return replace(state, recurring=evolve_recurring(state.recurring, event))


@_apply.register(vc.VcCapacitySet)
@_apply.register(vc.VcAllocationDecided)
def _vc(event: vc.VcCapacitySet | vc.VcAllocationDecided, state: ClusterState) -> ClusterState:
    """Virtual clusters fold on their own (`fairness.vcstate`): capacities, allocation, history."""
    return replace(state, vcs=evolve_vc(state.vcs, event))


@_apply.register(kw.ServiceStagesDeclared)
@_apply.register(kw.StageLatenciesObserved)
@_apply.register(kw.KwikenPlanDecided)
def _kwiken(event: kw.ServiceStagesDeclared | kw.StageLatenciesObserved | kw.KwikenPlanDecided,
            state: ClusterState) -> ClusterState:
    """Kwiken's services fold on their own (`kwiken.platform`); a plan is counted by `evolve`."""
    return replace(state, kwiken=evolve_kwiken(state.kwiken, event))


# --- helpers -----------------------------------------------------------------------------------


def _workload(state: ClusterState, event: ev.WorkloadEvent) -> WorkloadState:
    w = state.workloads.get(event.workload_id)
    if w is None:
        next_phase(event.workload_id, None, event.TYPE)  # raises IllegalTransition
        raise AssertionError("unreachable")
    return w


def _step(state: ClusterState, event: ev.WorkloadEvent, **changes: object) -> ClusterState:
    """Move the workload to its next phase (validated) and apply `changes`."""
    w = _workload(state, event)
    if is_late_fact(w.phase, event.TYPE):
        return state
    phase = next_phase(w.workload_id, w.phase, event.TYPE)
    w2 = replace(w, phase=phase, **changes)  # type: ignore[arg-type]
    state = replace(state, workloads=state.workloads.set(w.workload_id, w2))
    if phase != WorkloadPhase.QUEUED and w.workload_id in state.queued:
        state = replace(state, queued=tuple(x for x in state.queued if x != w.workload_id))
    if phase != WorkloadPhase.DEFERRED and w.workload_id in state.deferred:
        state = replace(state, deferred=tuple(x for x in state.deferred if x != w.workload_id))
    return state


def _take(state: ClusterState, workload_id: str, alloc: Allocation, sign: int, at: float) -> ClusterState:
    servers = state.servers
    journal = state.server_journal
    with servers.mutate() as m:
        for a in alloc.assignments:
            s: ServerState | None = m.get(a.server_id)
            if s is None:
                continue  # the server left the cell; nothing to account
            residents = set(s.residents)
            if sign > 0:
                residents.add(workload_id)
            else:
                residents.discard(workload_id)
            ordered = tuple(sorted(residents))
            m[a.server_id] = replace(s, used_cores=s.used_cores + sign * a.cores,
                                     used_memory_gb=round(s.used_memory_gb + sign * a.memory_gb, 9),
                                     residents=ordered, residents_changed_at=at,
                                     **server_aggregates(a.server_id, ordered, state.workloads))
            journal = journal_push(journal, a.server_id)
        servers = m.finish()
    return replace(state, servers=servers, server_journal=journal)


def _refresh_aggregates(state: ClusterState, server_ids: Iterable[str]) -> ClusterState:
    """Recompute the interference aggregates of `server_ids` (a resident was reclassified)."""
    servers = state.servers
    journal = state.server_journal
    for sid in server_ids:
        s = servers.get(sid)
        if s is None:
            continue
        servers = servers.set(sid, replace(s, **server_aggregates(sid, s.residents, state.workloads)))
        journal = journal_push(journal, sid)
    return replace(state, servers=servers, server_journal=journal)


def pressure_around(state: ClusterState, alloc: Allocation, exclude: str | None = None) -> tuple[float, ...]:
    """Σ over the allocation's servers of their residents' caused pressure, per source (rounded):
    what a workload's neighbourhood presses on it, as its classification rows estimate it —
    without `exclude`'s own share where it is a resident (its own reclassification is not a
    change of its neighbourhood)."""
    total = [0.0] * N_SOURCES
    w = state.workloads.get(exclude) if exclude is not None else None
    own = interference_vectors(w.classification)[1] if w is not None else None
    for sid in sorted(set(alloc.servers)):
        s = state.servers.get(sid)
        if s is not None:
            mine = own is not None and exclude in s.residents
            for k in range(N_SOURCES):
                total[k] += s.caused_sum[k] - (own[k] if mine else 0.0)  # type: ignore[index]
    return tuple(round(v, 3) + 0.0 for v in total)


def _release(state: ClusterState, workload_id: str, at: float) -> ClusterState:
    w = state.workloads[workload_id]
    if w.allocation is None:
        return state
    return _take(state, workload_id, w.allocation, -1, at)


def _swap(state: ClusterState, event: ev.WorkloadEvent, alloc: Allocation, **changes: object) -> ClusterState:
    old = _workload(state, event).allocation
    before = {sid: state.servers[sid].residents_changed_at for sid in (old.servers if old is not None else ())
              if sid in state.servers}
    state = _release(state, event.workload_id, event.at)
    moved = old is None or set(old.assignments) != set(alloc.assignments)
    at = event.at if moved else _workload(state, event).allocated_at
    state = _step(state, event, allocation=alloc, allocated_at=at, **changes)
    state = _take(state, event.workload_id, alloc, +1, event.at)
    if moved:
        state = _step(state, event, allocated_pressure=pressure_around(state, alloc, event.workload_id))
    # a workload re-placed on a server with the same cores and memory changes nothing for its
    # neighbours there: their `residents_changed_at` stays
    same = set(old.assignments) & set(alloc.assignments) if old is not None else set()
    for a in sorted(same, key=lambda a: a.server_id):
        s = state.servers.get(a.server_id)
        if s is not None and a.server_id in before:
            state = replace(state, servers=state.servers.set(a.server_id, replace(s, residents_changed_at=before[a.server_id])))
    return state


# --- workload lifecycle ------------------------------------------------------------------------


@_apply.register
def _(event: ev.WorkloadSubmitted, state: ClusterState) -> ClusterState:
    old = state.workloads.get(event.workload_id)
    phase = next_phase(event.workload_id, None if old is None else old.phase, event.TYPE)
    w = WorkloadState(workload_id=event.workload_id, tenant=event.tenant, kind=event.kind,
                      target=event.target, spec=event.spec, phase=phase, submitted_at=event.at,
                      priority=event.priority, best_effort=event.best_effort,
                      requested_cores=event.requested_cores,
                      requested_memory_gb=event.requested_memory_gb, name=event.name,
                      fast_path=event.fast_path)
    return replace(state, workloads=state.workloads.set(event.workload_id, w))


@_apply.register
def _(event: ev.ProfilingPlanned, state: ClusterState) -> ClusterState:
    return _step(state, event, profile_runs=event.runs)


@_apply.register
def _sample_recorded(event: ev.ProfileSampleRecorded, state: ClusterState) -> ClusterState:
    """(`_fold_samples` folds a run of them at once: the same state.)"""
    w = _workload(state, event)
    sample = (event.run_id, event.classification.value, event.column, event.value, event.caused)
    return _step(state, event, samples=w.samples + (sample,))


@_apply.register
def _(event: ev.ProfilingCompleted, state: ClusterState) -> ClusterState:
    return _step(state, event)


@_apply.register
def _(event: ev.WorkloadClassified, state: ClusterState) -> ClusterState:
    w = _workload(state, event)
    req = w.reclassify_requested_at
    pending = req is not None and (w.classification is None or req >= w.classification.at)
    state = _step(state, event, classification=event, classified_from=req if pending else event.at)
    if w.allocation is not None:  # reclassified in place: its servers' aggregates change
        state = _refresh_aggregates(state, w.allocation.servers)
    return state


@_apply.register
def _(event: ev.WorkloadQueued, state: ClusterState) -> ClusterState:
    state = _step(state, event, arq_class=event.arq_class, queue_position=event.position,
                  expected_wait_s=event.expected_wait_s)
    if event.workload_id not in state.queued:
        state = replace(state, queued=state.queued + (event.workload_id,))
    return state


@_apply.register
def _(event: ev.WorkloadAdmitted, state: ClusterState) -> ClusterState:
    return _step(state, event, arq_class=event.arq_class, queue_position=None, expected_wait_s=None)


@_apply.register
def _(event: ev.PlacementDeferred, state: ClusterState) -> ClusterState:
    state = _release(state, event.workload_id, event.at)
    state = _step(state, event, allocation=None)
    if event.workload_id not in state.deferred:
        state = replace(state, deferred=state.deferred + (event.workload_id,))
    return state


@_apply.register
def _(event: ev.PlacementDecided, state: ClusterState) -> ClusterState:
    return _swap(state, event, event.allocation)


@_apply.register
def _(event: ev.WorkloadStarted, state: ClusterState) -> ClusterState:
    return _step(state, event, started_at=event.at)


@_apply.register
def _(event: ev.AllocationAdjusted, state: ClusterState) -> ClusterState:
    w = _workload(state, event)
    guarded = w.guarded or (event.action == "evict" and not w.best_effort)
    return _swap(state, event, event.allocation, guarded=guarded)


@_apply.register
def _(event: ev.MigrationDecided, state: ClusterState) -> ClusterState:
    return _swap(state, event, event.allocation)


@_apply.register
def _(event: ev.ReclassificationRequested, state: ClusterState) -> ClusterState:
    return _step(state, event, reclassify_requested_at=event.at)


@_apply.register
def _(event: ev.PerformanceObserved, state: ClusterState) -> ClusterState:
    w = _workload(state, event)
    here = pressure_around(state, w.allocation, w.workload_id) if w.allocation is not None else NO_PRESSURE
    kept = (*w.observed, (event.at, event.ratio_to_target, here))[-OBSERVED_KEPT:]
    if event.offered is None:
        return _step(state, event, last_ratio=event.ratio_to_target, observed=kept)
    load = (*w.load_history, (event.at, event.offered))[-LOAD_KEPT:]
    if event.p99_latency_ms is None or w.allocation is None:
        return _step(state, event, last_ratio=event.ratio_to_target, observed=kept, load_history=load)
    lat = (*w.latency_history, (event.at, event.offered, event.p99_latency_ms, w.allocation))[-LATENCY_KEPT:]
    return _step(state, event, last_ratio=event.ratio_to_target, observed=kept, load_history=load,
                 latency_history=lat)


@_apply.register
def _(event: ev.QosVerdict, state: ClusterState) -> ClusterState:
    w = _workload(state, event)
    return _step(state, event, last_verdict=event.met, verdicts=w.verdicts + 1,
                 violations=w.violations + (0 if event.met else 1))


@_apply.register
def _(event: ev.TargetUpdated, state: ClusterState) -> ClusterState:
    return _step(state, event, target=event.target)


@_apply.register
def _(event: ev.InterferenceProbed, state: ClusterState) -> ClusterState:
    """A proactive probe's tolerated scores are kept (`WorkloadState.probed`, the in-place
    baseline of ladder 8.6); other probes are facts for the reprovisioner only."""
    w = state.workloads.get(event.workload_id)
    if event.purpose != "proactive" or w is None:
        return state
    entry = (event.at, event.probe_id, event.server_id or "",
             tuple(sorted((k, float(v)) for k, v in event.tolerated.items())))
    # no lifecycle step: a probe is a fact about a running workload, not a transition
    w2 = replace(w, probed=(*w.probed, entry)[-PROBES_KEPT:])
    return replace(state, workloads=state.workloads.set(w.workload_id, w2))


@_apply.register(ev.ProbeRequested)  # a decision: counted by `evolve`; the agent answers it
@_apply.register(ev.KnowledgeSeeded)  # the knowledge base's (`evolve_knowledge`)
def _unchanged(event: ev.Event, state: ClusterState) -> ClusterState:
    """Known events that change nothing but the clock and the position here."""
    return state


@_apply.register
def _(event: ev.TasksObserved, state: ClusterState) -> ClusterState:
    """Kept (the latest `TASK_VIEWS_KEPT`) without a phase change; a view of a workload unknown
    or already ended changes nothing."""
    w = state.workloads.get(event.workload_id)
    if w is None or w.phase in TERMINAL:
        return state
    elapsed = event.elapsed if isinstance(event, ev.TaskAttemptsObserved) else ()
    view = TaskView(at=event.at, servers=event.servers, rates=event.rates, progress=event.progress, elapsed=elapsed)
    w2 = replace(w, task_views=(*w.task_views, view)[-TASK_VIEWS_KEPT:])
    return replace(state, workloads=state.workloads.set(w.workload_id, w2))


def _end(state: ClusterState, event: ev.WorkloadEvent, reason: str) -> ClusterState:
    if is_late_fact(_workload(state, event).phase, event.TYPE):
        return state  # already ended: its resources were released then
    state = _release(state, event.workload_id, event.at)
    return _step(state, event, ended_at=event.at, end_reason=reason)


@_apply.register
def _(event: ev.WorkloadCompleted, state: ClusterState) -> ClusterState:
    return _end(state, event, "completed")


@_apply.register
def _(event: ev.WorkloadFailed, state: ClusterState) -> ClusterState:
    return _end(state, event, event.reason)


@_apply.register
def _(event: ev.WorkloadRevoked, state: ClusterState) -> ClusterState:
    return _end(state, event, event.reason or "revoked")


@_apply.register
def _(event: ev.RecordQuarantined, state: ClusterState) -> ClusterState:
    """A quarantined record fails the live workload it names (reason `quarantined`), as a
    `WorkloadFailed` would; nothing else changes."""
    w = state.workloads.get(event.workload_id) if event.workload_id else None
    if w is None or w.phase in TERMINAL:
        return state
    failed = ev.WorkloadFailed(at=event.at, workload_id=w.workload_id, reason=QUARANTINED)
    return _end(state, failed, QUARANTINED)


# --- servers, clock, models --------------------------------------------------------------------


@_apply.register
def _(event: ev.ServerRegistered, state: ClusterState) -> ClusterState:
    old = state.servers.get(event.server_id)
    s = ServerState(server_id=event.server_id, platform=event.platform, capacity=event.capacity,
                    cell=event.cell)
    if old is not None:  # re-registration keeps the accounting of its residents
        s = replace(s, used_cores=old.used_cores, used_memory_gb=old.used_memory_gb,
                    residents=old.residents, caused_sum=old.caused_sum,
                    tolerated_min=old.tolerated_min, best_effort_cores=old.best_effort_cores,
                    best_effort_memory_gb=old.best_effort_memory_gb,
                    residents_changed_at=old.residents_changed_at, rack=old.rack, nic_bytes_s=old.nic_bytes_s,
                    oversubscription=old.oversubscription)
    added = old is None or old.platform != s.platform
    return replace(state, servers=state.servers.set(event.server_id, s),
                   server_journal=journal_push(state.server_journal, event.server_id, added),
                   schedulable_servers=_schedulable(state, old, s))


def _schedulable(state: ClusterState, old: ServerState | None, new: ServerState) -> int:
    """`state.schedulable_servers` after one server's row went from `old` (None: new) to `new`."""
    return state.schedulable_servers + new.schedulable - (old is not None and old.schedulable)


def _server_flag(state: ClusterState, server_id: str, **changes: object) -> ClusterState:
    s = state.servers.get(server_id)
    if s is None:
        return state
    s2 = replace(s, **changes)  # type: ignore[arg-type]
    return replace(state, servers=state.servers.set(server_id, s2),
                   server_journal=journal_push(state.server_journal, server_id),
                   schedulable_servers=_schedulable(state, s, s2))


@_apply.register
def _(event: ev.ServerFailed, state: ClusterState) -> ClusterState:
    return _server_flag(state, event.server_id, up=False)


@_apply.register
def _(event: ev.ServerRecovered, state: ClusterState) -> ClusterState:
    return _server_flag(state, event.server_id, up=True)


@_apply.register
def _(event: ev.ServerRackAssigned, state: ClusterState) -> ClusterState:
    """The rack changes no capacity: no journal entry (placement's indices are unchanged)."""
    s = state.servers.get(event.server_id)
    if s is None:
        return state
    s2 = replace(s, rack=event.rack, nic_bytes_s=event.nic_bytes_s, oversubscription=event.oversubscription)
    return replace(state, servers=state.servers.set(event.server_id, s2))


@_apply.register
def _(event: ev.ServerDrained, state: ClusterState) -> ClusterState:
    return _server_flag(state, event.server_id, drained=True)


@_apply.register
def _(event: ev.Tick, state: ClusterState) -> ClusterState:
    return replace(state, tick=event.seq)


@_apply.register
def _(event: ev.ModelRetrained, state: ClusterState) -> ClusterState:
    return replace(state, models=state.models.set(event.stream, event))
