"""Recurring templates in the cluster state: what the log says about each one (a fold).

`RecurringState.templates` maps a template id to its `TemplateState`: the newest `MAX_RUNS`
finished runs (inference's history), the detection, the current contract, the owner's latest
sign-off, the reservation as planned (request and allocation, read back from the log — the fold
never re-plans), the latest refusal, Corral's analytics profile, and the DRA extensions of instances still running (an
extension decided after its instance's `RecurringRunObserved` — the agent reports both, and
reprovisioning may decide after the run ended — is not held).
`evolve_recurring` folds one `TemplateEvent`; it refuses a type it does not know, and a fact or a
decision about a template no run introduced (`UnknownTemplate`: the API and the deciders never
write one).

`corral` is the latest Corral round (`CorralPlanDecided`: racks and priorities of the profiled
templates' next instances). `decisions` counts the decisions about a template (the seeds of its next decisions derive from
it, as a workload's do); `plans` numbers planned reservations, so a plan rebuilt from the state
claims them in the order they were admitted (the ledger's first come, first kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import singledispatch

from immutables import Map
from sextant_contracts import recurring as rc

MAX_RUNS = 200  # newest finished runs kept per template (a month of a 4-hourly job)


class UnknownTemplate(ValueError):
    """A template event about a template the log never introduced with a run."""


@dataclass(frozen=True, slots=True)
class TemplateState:
    template_id: str
    tenant: str
    name: str
    runs: tuple[rc.RecurringRunObserved, ...] = ()
    detected: rc.RecurringTemplateDetected | None = None
    contract: rc.ContractInferred | None = None
    signoff: rc.ContractSignedOff | None = None
    reservation: rc.PlannedReservation | None = None
    planned_seq: int = -1  # order of admission of `reservation` on the plan
    refused: rc.ReservationRefused | None = None
    extensions: tuple[tuple[str, int, int], ...] = ()  # (instance, step, containers) of live instances
    decisions: int = 0
    profile: rc.AnalyticsProfileDeclared | None = None  # Corral's data-flow profile (None: not analytics)


@dataclass(frozen=True, slots=True)
class RecurringState:
    templates: Map[str, TemplateState] = field(default_factory=Map)
    plans: int = 0
    corral: rc.CorralPlanDecided | None = None  # the latest Corral round

    def get(self, template_id: str) -> TemplateState:
        t = self.templates.get(template_id)
        if t is None:
            raise UnknownTemplate(f"no recurring template {template_id!r}")
        return t

    def profiled(self) -> list[TemplateState]:
        """Templates with an analytics profile (Corral's jobs), in id order."""
        return [t for _, t in sorted(self.templates.items()) if t.profile is not None]

    def reserved(self) -> list[TemplateState]:
        """Templates holding a reservation, in their order of admission on the plan."""
        return sorted((t for t in self.templates.values() if t.reservation is not None),
                      key=lambda t: (t.planned_seq, t.template_id))


def evolve_recurring(state: RecurringState, event: rc.TemplateEvent) -> RecurringState:
    """Fold one template event (module doc); decisions also count on their template."""
    if not isinstance(event, rc.RecurringRunObserved):
        state.get(event.template_id)  # only a run introduces a template
    new = _apply(event, state)
    if isinstance(event, rc.TemplateDecision):
        t = new.get(event.template_id)
        new = _put(new, replace(t, decisions=t.decisions + 1))
    return new


def _put(state: RecurringState, t: TemplateState, **changes: object) -> RecurringState:
    return replace(state, templates=state.templates.set(t.template_id, t), **changes)  # type: ignore[arg-type]


@singledispatch
def _apply(event: rc.TemplateEvent, state: RecurringState) -> RecurringState:
    raise TypeError(f"the recurring fold has no handler for {type(event).__name__}")


@_apply.register
def _(event: rc.RecurringRunObserved, state: RecurringState) -> RecurringState:
    t = state.templates.get(event.template_id) or TemplateState(event.template_id, event.tenant, event.name)
    ext = tuple(x for x in t.extensions if x[0] != event.instance)  # its extensions end with it
    return _put(state, replace(t, runs=(*t.runs, event)[-MAX_RUNS:], extensions=ext))


@_apply.register(rc.RecurringInstanceObserved)  # DRA's input: the process manager's
def _unchanged(event: rc.TemplateEvent, state: RecurringState) -> RecurringState:
    return state


@_apply.register
def _(event: rc.ContractSignedOff, state: RecurringState) -> RecurringState:
    return _put(state, replace(state.get(event.template_id), signoff=event))


@_apply.register
def _(event: rc.RecurringTemplateDetected, state: RecurringState) -> RecurringState:
    return _put(state, replace(state.get(event.template_id), detected=event))


@_apply.register
def _(event: rc.ContractInferred, state: RecurringState) -> RecurringState:
    return _put(state, replace(state.get(event.template_id), contract=event))


@_apply.register
def _(event: rc.ReservationPlanned, state: RecurringState) -> RecurringState:
    t = state.get(event.template_id)
    seq = t.planned_seq if t.reservation is not None else state.plans
    state = _put(state, replace(t, reservation=event.reservation, planned_seq=seq, refused=None),
                 plans=state.plans + 1)
    for r in event.replanned:  # displaced residual reservations, re-planned in place
        state = _put(state, replace(state.get(r.template_id), reservation=r))
    for gone in event.dropped:
        state = _put(state, replace(state.get(gone), reservation=None, planned_seq=-1, extensions=()))
    return state


@_apply.register
def _(event: rc.ReservationRefused, state: RecurringState) -> RecurringState:
    return _put(state, replace(state.get(event.template_id), refused=event))


@_apply.register
def _(event: rc.ReservationReleased, state: RecurringState) -> RecurringState:
    t = state.get(event.template_id)
    return _put(state, replace(t, reservation=None, planned_seq=-1, extensions=()))


@_apply.register
def _(event: rc.ReservationExtended, state: RecurringState) -> RecurringState:
    t = state.get(event.template_id)
    if event.granted == 0 or any(r.instance == event.instance for r in t.runs):
        return state  # nothing granted, or decided after the instance's run ended: nothing is held
    return _put(state, replace(t, extensions=(*t.extensions, (event.instance, event.step, event.granted))))


@_apply.register
def _(event: rc.AnalyticsProfileDeclared, state: RecurringState) -> RecurringState:
    return _put(state, replace(state.get(event.template_id), profile=event))


@_apply.register
def _(event: rc.CorralPlanDecided, state: RecurringState) -> RecurringState:
    return replace(state, corral=event)
