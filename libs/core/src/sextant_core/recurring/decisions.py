"""Recurring-job decisions on the platform: pure functions of the state (docs/recurring/platform.md).

- `infer` (profiling, `InferContract`): detection on the template's submit times
  (`periodicity.detect`), the SLO from its runs' provenance (`slo.infer_slo`, on
  `periodicity.contract_period`: the natural period when the job keeps its place in it), the skyline LP on its successful runs (`skyline.fit_skyline`).
  On a run (`trigger` `run`) it decides only for a template without a contract: the first
  periodic verdict records `RecurringTemplateDetected`, the first actionable SLO `ContractInferred`
  version 1. Daily (`trigger` `daily`) it re-infers a contract and records version n + 1 only when
  some term changed (a, d, period, skyline, container), so a steady job adds nothing to the log.
- `plan_reservation` (planning, `PlanReservation`): the effective terms — the contract with the
  owner's overrides on top, which stay in force over re-inferred versions — become a
  `ReservationRequest` on a plan rebuilt from the state (`build_plan`) and are added or re-planned
  with LowCost (`plan.Plan.add` / `override`). A rejected contract's reservation is released. A
  request equal to the reservation already held decides nothing.
- `check_signoff`: the same planning for a sign-off not yet recorded — the API answers 422 with
  the field it names and writes nothing.
- `extend` (reprovisioning, `ExtendReservation`): one DRA evaluation (`dra.reprovision`); only a
  shortfall (the instance wants more than it holds, within ρ × its recent allocation) is recorded.

The plan is not kept in the state: `build_plan` rebuilds it from the log's reservations (claimed
as recorded, in their order of admission, `Plan.adopt`) and extensions, over the capacity of the
schedulable servers times `capacity_share` [choice: the reservations' share of the cluster;
1.0 by default]. A reservation that no longer fits (servers lost) is left out of the rebuilt plan
and named in the decision's trace.

Contract → plan request [choices]: steps of `step_s` seconds; earliest = ⌈a / step⌉ (at least 0),
deadline = ⌊d / step⌋, at most one period after earliest; a period that is a whole number of
steps dividing the day is periodic, any other is one non-periodic instance per day. Which field
an infeasible request is blamed on: `deadline_s` when [earliest, deadline) is empty or shorter
than the skyline, `period_s` when an override would switch periodic and non-periodic, otherwise
the overridden field (skyline, then deadline, then earliest) or `skyline` (no capacity for it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from sextant_contracts import model as cm
from sextant_contracts import recurring as rc

from ..context import DecisionContext
from ..state.model import ClusterState, WorkloadState
from . import placements, racks
from .dra import CAPPED, NO_SHORTFALL, DraParams, reprovision
from .ledger import LedgerError
from .lowcost import Allocation, LowCostParams
from .periodicity import DetectorParams, contract_period, detect
from .placements import template_id as template_id  # its home before placements existed
from .plan import Plan, PlanError, ReservationRequest, Unplaceable
from .skyline import DEFAULT_ALPHA, SkylineError, fit_skyline
from .slo import InstanceProvenance, OutputRead, SloParams, infer_slo
from .state import TemplateState
from .templates import normalise_name


@dataclass(frozen=True)
class PlatformParams:
    """Parameters of the platform's recurring decisions (the pure core's defaults), as of
    `rules` (`RULES`: a log outlives the code, so every rule set a log may hold is kept)."""

    detector: DetectorParams = field(default_factory=DetectorParams)
    slo: SloParams = field(default_factory=SloParams)
    alpha: float = DEFAULT_ALPHA
    resolution: int = 1  # skyline LP steps per plan step (runs are short: the exact LP)
    lowcost: LowCostParams = field(default_factory=LowCostParams)
    dra: DraParams = field(default_factory=DraParams)
    step_s: int = 60
    window_steps: int = 1440
    capacity_share: float = 1.0
    rules: str = "3"
    placements_claim: bool = True  # QoS placements are claims of the plan (`placements`)
    skip_ended: bool = True  # no DRA decision for an instance whose run is already recorded

    @property
    def model_version(self) -> str:
        """What a decision under these rules records as its `model_version` (rules 2 recorded none)."""
        return "" if self.rules == LEGACY_RULES else f"{MODEL_PREFIX}{self.rules}"


MODEL_PREFIX = "recurring-rules/"
LEGACY_RULES = "2"  # decisions recorded before the rules were named (model_version "")
# The rule sets a log may hold. 2: DRA's per-instance bound = its skyline's area, a contract's
# period snapped only while the job keeps its place (`periodicity.contract_period`), placements
# not in the plan. 3: QoS placements and Kwiken's reissue load are claims of the plan, placements
# pass its gate; an instance whose run is recorded gets no DRA decision (the fold would not hold
# it); a slower consumer's read is capped one period after the input, not at the period's end
# (`slo` consumer-period rule). Earlier ones (DRA bound at half the area, every period snapped) were never recorded by a
# released build.
RULES = {"2": PlatformParams(slo=SloParams(consumer_cap="period_end"), rules="2", placements_claim=False,
                             skip_ended=False),
         "3": PlatformParams()}
PARAMS = RULES["3"]


def rules_of(model_version: str) -> str:
    """The rule set a recorded decision was made under (`model_version` of its record)."""
    return model_version[len(MODEL_PREFIX):] if model_version.startswith(MODEL_PREFIX) else LEGACY_RULES


def params_for(rules: str) -> PlatformParams:
    try:
        return RULES[rules]
    except KeyError:
        raise KeyError(f"recurring rules {rules!r} are not kept (kept: {', '.join(sorted(RULES))})") from None


class TermsError(ValueError):
    """The terms cannot be reserved; `field` names the contract field to blame."""

    def __init__(self, field_name: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field_name
        self.reason = reason


# --- inference ---------------------------------------------------------------------------------


def infer(state: ClusterState, t: TemplateState, trigger: str, ctx: DecisionContext,
          p: PlatformParams = PARAMS) -> tuple[rc.TemplateEvent, ...]:
    """Detection and contract inference for one template (module doc)."""
    if (trigger == "run") != (t.contract is None):
        return ()
    submits = np.asarray([r.submit_s for r in t.runs], dtype=float)
    found = detect(np.zeros(len(submits), dtype=np.int64), submits, p.detector, window_start_s=-1.0)
    if not found or not found[0].periodic:
        return ()
    per = found[0]
    period = contract_period(per)
    contract = infer_slo(0, period, [_provenance(r) for r in t.runs], p.slo)
    out: list[rc.TemplateEvent] = []
    if t.detected is None:
        out.append(rc.RecurringTemplateDetected(
            at=ctx.at, template_id=t.template_id, decision=ctx.record("recurring-detection", t.template_id, p.model_version),
            tenant=t.tenant, template=normalise_name(t.name), period_s=period,
            natural_period_s=per.natural_period_s, arrivals=per.n_arrivals, cv=_finite(per.cv),
            slo=contract.verdict.value))
    if not contract.actionable:
        return tuple(out)
    skylines = [r.skyline for r in t.runs if r.succeeded and sum(r.skyline) > 0]
    try:
        fit = fit_skyline(skylines, alpha=p.alpha, resolution=p.resolution)
    except SkylineError:
        return tuple(out)
    last = t.runs[-1]
    terms = (period, round(contract.earliest_start_s, 6), round(contract.deadline_s, 6), fit.skyline,
             last.container_cores, last.container_memory_gb)
    old = t.contract
    if old is not None and terms == (old.period_s, old.earliest_start_s, old.deadline_s, old.skyline,
                                     old.container_cores, old.container_memory_gb):
        return tuple(out)
    out.append(rc.ContractInferred(
        at=ctx.at, template_id=t.template_id, decision=ctx.record("recurring-contract", t.template_id, p.model_version),
        tenant=t.tenant, version=1 if old is None else old.version + 1,
        trigger="detected" if old is None else "daily", period_s=period, earliest_start_s=terms[1],
        deadline_s=terms[2], instances=contract.instances, read_cv=_finite(contract.read_cv),
        slack_ratio=round(contract.slack_ratio, 6), skyline=fit.skyline, skyline_peak=max(fit.skyline),
        skyline_area=sum(fit.skyline), step_s=p.step_s, container_cores=last.container_cores,
        container_memory_gb=last.container_memory_gb))
    return tuple(out)


def _provenance(r: rc.RecurringRunObserved) -> InstanceProvenance:
    reads = () if r.first_read_s is None else (OutputRead(r.first_read_s, None, r.reader_period_s),)
    return InstanceProvenance(0, r.submit_s, r.start_s, r.end_s, r.succeeded, r.input_available_s, reads)


def _finite(x: float) -> float:
    return round(x, 6) if math.isfinite(x) else 0.0


# --- planning ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Terms:
    """The contract as it is to be reserved: the inferred one with the owner's overrides on top."""

    version: int
    period_s: float
    earliest_start_s: float
    deadline_s: float
    skyline: tuple[int, ...]
    cores: float
    memory_gb: float
    overridden: frozenset[str]


def terms_of(c: rc.ContractInferred, s: rc.ContractSignedOff | None) -> Terms:
    over = {k: getattr(s, k) for k in ("earliest_start_s", "deadline_s", "period_s", "skyline")
            if s is not None and s.verdict == "override" and getattr(s, k) is not None}
    return Terms(c.version, over.get("period_s", c.period_s), over.get("earliest_start_s", c.earliest_start_s),
                 over.get("deadline_s", c.deadline_s), tuple(over.get("skyline", c.skyline)), c.container_cores,
                 c.container_memory_gb, frozenset(over))


def request_of(template: str, terms: Terms, p: PlatformParams = PARAMS) -> ReservationRequest:
    """The plan request of `terms` (module doc); `TermsError` names the field when it has none."""
    step = p.step_s
    ratio = terms.period_s / step
    period = int(round(ratio)) if abs(ratio - round(ratio)) < 1e-9 and round(ratio) >= 1 else None
    periodic = period is not None and period <= p.window_steps and p.window_steps % period == 0
    span = period if periodic and period is not None else p.window_steps
    earliest = max(0, math.ceil(terms.earliest_start_s / step - 1e-9))
    deadline = min(math.floor(terms.deadline_s / step + 1e-9), earliest + span)
    if not periodic:
        deadline = min(deadline, p.window_steps)
    if any(v < 0 for v in terms.skyline) or sum(terms.skyline) == 0:
        raise TermsError("skyline", "the skyline must be non-negative and not all zero")
    if deadline <= earliest:
        raise TermsError("deadline_s", f"no time to run: the deadline ({terms.deadline_s:g} s) is not after the "
                                       f"earliest start ({terms.earliest_start_s:g} s)")
    if len(terms.skyline) > deadline - earliest:
        raise TermsError("deadline_s", f"the window [{earliest}, {deadline}) of {step}-s steps is shorter than the "
                                       f"job's skyline ({len(terms.skyline)} steps)")
    return ReservationRequest(template, terms.skyline, earliest, deadline, period if periodic else None,
                              terms.cores, terms.memory_gb)


def build_plan(state: ClusterState, p: PlatformParams = PARAMS, exclude: str | None = None,
               rack_plan: bool = True) -> tuple[Plan, tuple[str, ...]]:
    """The plan of the log's reservations, then (with `rack_plan`) the held Corral plan's racks
    (`racks`), then, under rules that claim them, the placed QoS workloads but `exclude` (module
    doc, `placements`); returns it and the ids left out."""
    servers = [s for s in state.sorted_servers() if s.schedulable]
    cores = p.capacity_share * sum(s.capacity.cores for s in servers)
    memory = p.capacity_share * sum(s.capacity.memory_gb for s in servers)
    plan = Plan.create(cores, memory, steps=p.window_steps, step_seconds=p.step_s, params=p.lowcost)
    left_out: list[str] = []
    for t in state.recurring.reserved():
        r = t.reservation
        assert r is not None
        req = ReservationRequest(r.template_id, r.skyline, r.earliest, r.deadline, r.period, r.cores, r.memory_gb)
        try:
            plan = plan.adopt(req, Allocation(r.offset, r.containers, 0.0, 0.0))
        except LedgerError:
            left_out.append(t.template_id)
            continue
        for instance, step, containers in t.extensions:
            steps = np.arange(step, step + p.dra.every_steps)
            try:
                plan = plan.extend(t.template_id, _claim_id(t.template_id, instance, step), steps, containers)
            except LedgerError:
                left_out.append(f"{t.template_id}/{instance}@{step}")
    if rack_plan:
        plan, gone = racks.hold_rack_plan(plan, state.recurring.corral, p.step_s)
        left_out.extend(gone)
    if p.placements_claim:
        plan, gone = placements.claim_placements(plan, state, exclude)
        left_out.extend(gone)
    return plan, tuple(left_out)


def placement_gate(state: ClusterState, w: WorkloadState, allocation: cm.Allocation,
                   p: PlatformParams = PARAMS) -> placements.GateVerdict | None:
    """The ledger's check of a QoS placement before it is recorded (`placements.gate`); None when
    the gate does not apply (no reservation, `w` not claimed, or rules without it)."""
    if not p.placements_claim:
        return None
    return placements.gate(state, w, allocation, lambda st, ex: build_plan(st, p, ex))


def _claim_id(template: str, instance: str, step: int) -> str:
    return f"{template}/{instance}/dra@{step}"


def _planned(template: str, res: object) -> rc.PlannedReservation:
    r = res.request  # type: ignore[attr-defined]
    a = res.allocation  # type: ignore[attr-defined]
    return rc.PlannedReservation(template_id=template, earliest=r.earliest, deadline=r.deadline, period=r.period,
                                 skyline=r.skyline, cores=r.cores, memory_gb=r.memory_gb, offset=a.offset,
                                 containers=a.containers, periodic=res.periodic)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PlanOutcome:
    """What planning decides for one template: a plan change, a refusal, a release, or nothing."""

    planned: rc.PlannedReservation | None = None
    replanned: tuple[rc.PlannedReservation, ...] = ()
    dropped: tuple[str, ...] = ()
    peak_cost: float = 0.0
    refused: TermsError | None = None
    release: bool = False
    left_out: tuple[str, ...] = ()


def outcome(state: ClusterState, t: TemplateState, signoff: rc.ContractSignedOff | None,
            p: PlatformParams = PARAMS) -> PlanOutcome:
    """Planning for `t` under `signoff` (module doc); nothing is changed."""
    if t.contract is None or signoff is None:
        return PlanOutcome()
    if signoff.verdict == "reject":
        return PlanOutcome(release=t.reservation is not None)
    terms = terms_of(t.contract, signoff)
    try:
        req = request_of(t.template_id, terms, p)
    except TermsError as exc:
        return PlanOutcome(refused=exc)
    plan, left_out = build_plan(state, p)
    held = plan.reservations.get(t.template_id)
    if held is not None and held.request == req:
        return PlanOutcome(left_out=left_out)
    try:
        update = plan.override(req) if held is not None else plan.add(req)
    except Unplaceable as exc:
        blame = next((f for f in ("skyline", "deadline_s", "earliest_start_s") if f in terms.overridden), "skyline")
        return PlanOutcome(refused=TermsError(blame, str(exc)), left_out=left_out)
    except PlanError as exc:
        blame = "period_s" if "periodic" in str(exc) else "skyline"
        return PlanOutcome(refused=TermsError(blame, str(exc)), left_out=left_out)
    assert update.reservation is not None
    return PlanOutcome(planned=_planned(t.template_id, update.reservation),
                       replanned=tuple(_planned(r.request.reservation_id, r) for r in update.replanned),
                       dropped=update.dropped, peak_cost=round(update.reservation.allocation.peak_cost, 9),
                       left_out=left_out)


def plan_reservation(state: ClusterState, t: TemplateState, reason: str, ctx: DecisionContext,
                     p: PlatformParams = PARAMS) -> tuple[rc.TemplateEvent, ...]:
    out = outcome(state, t, t.signoff, p)
    rec = ctx.record("recurring-plan", t.template_id, p.model_version)
    version = t.contract.version if t.contract is not None else 1
    if out.release:
        return (rc.ReservationReleased(at=ctx.at, template_id=t.template_id, decision=rec, reason="rejected"),)
    if out.refused is not None:
        return (rc.ReservationRefused(at=ctx.at, template_id=t.template_id, decision=rec, contract_version=version,
                                      field=out.refused.field, reason=out.refused.reason[:500]),)
    if out.planned is None:
        return ()
    change: Literal["new", "override", "reinferred"] = (
        "new" if t.reservation is None else "reinferred" if reason == "reinferred" else "override")
    return (rc.ReservationPlanned(at=ctx.at, template_id=t.template_id, decision=rec, contract_version=version,
                                  change=change, reservation=out.planned, replanned=out.replanned,
                                  dropped=out.dropped, peak_cost=out.peak_cost),)


def check_signoff(state: ClusterState, signoff: rc.ContractSignedOff,
                  p: PlatformParams = PARAMS) -> TermsError | None:
    """The refusal planning would decide for `signoff` if it were recorded now (None: it plans)."""
    t = state.recurring.get(signoff.template_id)
    return outcome(state, t, signoff, p).refused


# --- dynamic reprovisioning --------------------------------------------------------------------


def extend(state: ClusterState, t: TemplateState, instance: str, step: int, used: int, pending: int,
           ctx: DecisionContext, p: PlatformParams = PARAMS) -> Sequence[rc.TemplateEvent]:
    if t.reservation is None or (p.skip_ended and any(r.instance == instance for r in t.runs)):
        return ()
    plan, left_out = build_plan(state, p)
    if t.template_id not in plan.reservations:
        return ()
    _, d = reprovision(plan, t.template_id, instance, step % plan.window, used, pending, p.dra)
    if d.reason in (NO_SHORTFALL, CAPPED):
        return ()
    return (rc.ReservationExtended(at=ctx.at, template_id=t.template_id, decision=ctx.record("recurring-dra", t.template_id,
                                                                                             p.model_version),
                                   instance=instance, step=d.step, allocated=d.allocated, demand=d.demand, cap=d.cap,
                                   asked=d.asked, granted=d.granted, reason=d.reason),)
