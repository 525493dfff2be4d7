"""Recurring jobs on the platform (Morpheus, spec/morpheus.md): their events and commands.

Every event here belongs to one recurring *template* of one tenant, on the stream
`template-<template_id>` (topic `sextant.events.recurring`); the id is derived from the tenant and
the template's normalised name (`sextant_core.recurring.platform.template_id`), so the edge that
sees a run and the API that sees a submission name the same template.

Facts (recorded by an edge, folded, never re-derived):

- `RecurringRunObserved` — the agent: one finished instance (times, output's first read, skyline);
- `RecurringInstanceObserved` — the agent: a running instance's demand at one plan step (DRA input);
- `ContractSignedOff` — the API: the owner's verdict on a contract version (accept / override / reject);
- `AnalyticsProfileDeclared` — the API: an analytics template's data-flow profile (Corral).

Decisions (`TemplateDecision`: a `DecisionRecord` like every decision, re-derived by replay):

- `RecurringTemplateDetected`, `ContractInferred` — profiling (detection, SLO inference, skyline LP);
- `ReservationPlanned`, `ReservationRefused`, `ReservationReleased` — planning (LowCost on the plan);
- `ReservationExtended` — reprovisioning (DRA);
- `CorralPlanDecided` — planning: racks and priorities of the profiled templates' next instances.

Times are seconds; `*_s` fields of a contract are relative to the period start (wall-clock aligned);
plan fields (`earliest`, `deadline`, `offset`, `step`) are steps of the plan's window (`step_s`).
Commands (`TemplateCommand`) address a template, not a workload: their inherited `workload_id` is
empty and `decide` routes them on `template_id`.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from .commands import Command
from .events import Event
from .model import DecisionRecord, Frozen

MAX_STEPS = 1440  # a skyline is at most one day of one-minute steps
_ID = Field(min_length=1, max_length=128)
Containers = Annotated[int, Field(ge=0)]  # whole containers at one step


class TemplateEvent(Event):
    template_id: str = _ID

    @property
    def stream(self) -> str:
        return f"template-{self.template_id}"


class TemplateDecision(TemplateEvent):
    """A decision about a template: the same provenance as a workload's `DecisionEvent`."""

    DECISION: ClassVar[bool] = True
    decision: DecisionRecord


# --- facts -------------------------------------------------------------------------------------


class RecurringRunObserved(TemplateEvent):
    """One finished instance of a recurring job (from the agent, when the run ends). `skyline`:
    containers used per plan step from its start; `first_read_s`: the first read of its output by
    another job (None: not read), whose period is `reader_period_s` (None: unknown or egress);
    `input_available_s`: the last write to its inputs (None: no input). Absolute times."""

    TYPE: ClassVar[str] = "RecurringRunObserved"
    tenant: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=200)
    instance: str = _ID
    submit_s: float = Field(ge=0)
    start_s: float = Field(ge=0)
    end_s: float = Field(ge=0)
    succeeded: bool = True
    input_available_s: float | None = Field(default=None, ge=0)
    first_read_s: float | None = Field(default=None, ge=0)
    reader_period_s: float | None = Field(default=None, gt=0)
    skyline: tuple[Annotated[float, Field(ge=0)], ...] = Field(default=(), max_length=MAX_STEPS)
    container_cores: float = Field(default=1.0, gt=0, le=1024)
    container_memory_gb: float = Field(default=8.0, gt=0, le=4096)

    @model_validator(mode="after")
    def _ordered(self) -> RecurringRunObserved:
        if not self.submit_s <= self.start_s <= self.end_s:
            raise ValueError("a run needs submit_s <= start_s <= end_s")
        return self


class RecurringInstanceObserved(TemplateEvent):
    """A running instance's containers at plan step `step`: `used` now and `pending` (asked, not
    granted) — the input of dynamic reprovisioning (Morpheus §7)."""

    TYPE: ClassVar[str] = "RecurringInstanceObserved"
    instance: str = _ID
    step: int = Field(ge=0)
    used: int = Field(ge=0)
    pending: int = Field(ge=0)


SignOff = Literal["accept", "override", "reject"]


class ContractSignedOff(TemplateEvent):
    """The owner's verdict on contract `version`. `override` replaces the fields it names (None:
    keep the inferred value); the overrides stay in force over later re-inferred versions until the
    next sign-off. `reject` releases any reservation: the job runs on fair share."""

    TYPE: ClassVar[str] = "ContractSignedOff"
    tenant: str = Field(min_length=1, max_length=64)
    version: int = Field(ge=1)
    verdict: SignOff
    earliest_start_s: float | None = None
    deadline_s: float | None = None
    period_s: float | None = Field(default=None, gt=0)
    skyline: tuple[Containers, ...] | None = Field(default=None, min_length=1, max_length=MAX_STEPS)


Bytes = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Rate = Annotated[float, Field(gt=0, le=1e12, allow_inf_nan=False)]  # bytes/s


class AnalyticsProfileDeclared(TemplateEvent):
    """The owner declares the template's instances analytics jobs (MapReduce-like, Corral,
    jalaparti.md §3.1): bytes read, shuffled and written per instance, task counts, the CPU-bound
    map and reduce rates and the disk bandwidth (bytes/s), slots per machine. Selectivities are
    input / shuffle and shuffle / output. A later declaration replaces it."""

    TYPE: ClassVar[str] = "AnalyticsProfileDeclared"
    input_bytes: Bytes
    shuffle_bytes: Bytes
    output_bytes: Bytes
    map_tasks: int = Field(ge=1, le=1_000_000)
    reduce_tasks: int = Field(ge=1, le=1_000_000)
    map_rate_bytes_s: Rate = 100e6
    reduce_rate_bytes_s: Rate = 100e6
    disk_bytes_s: Rate = 100e6
    map_slots: int = Field(default=8, ge=1, le=1024)
    reduce_slots: int = Field(default=2, ge=1, le=1024)


# --- decisions ---------------------------------------------------------------------------------


class RecurringTemplateDetected(TemplateDecision):
    """A template is periodic (Morpheus §4): its fitted period, the natural period it snaps to
    (None: off-kilter), how many arrivals and their gaps' CV, and the SLO verdict at detection."""

    TYPE: ClassVar[str] = "RecurringTemplateDetected"
    tenant: str = Field(min_length=1, max_length=64)
    template: str = Field(min_length=1, max_length=200)
    period_s: float = Field(gt=0)
    natural_period_s: float | None = None
    arrivals: int = Field(ge=0)
    cv: float = Field(ge=0)
    slo: str = Field(max_length=32)


class ContractInferred(TemplateDecision):
    """An inferred contract (Morpheus §4–§5): run in [earliest_start_s, deadline_s) of every period
    (a = P95 input available, d = P50 first read), with the skyline LP's reservation shape (whole
    containers per `step_s` step; peak and area summarise it). `version` counts from 1;
    `trigger` says why it was inferred (`detected`: first contract; `daily`: re-inference)."""

    TYPE: ClassVar[str] = "ContractInferred"
    tenant: str = Field(min_length=1, max_length=64)
    version: int = Field(ge=1)
    trigger: Literal["detected", "daily"]
    period_s: float = Field(gt=0)
    earliest_start_s: float
    deadline_s: float
    instances: int = Field(ge=0)
    read_cv: float = Field(ge=0)
    slack_ratio: float
    skyline: tuple[Containers, ...] = Field(min_length=1, max_length=MAX_STEPS)
    skyline_peak: int = Field(ge=0)
    skyline_area: int = Field(ge=0)
    step_s: int = Field(default=60, gt=0)
    container_cores: float = Field(default=1.0, gt=0)
    container_memory_gb: float = Field(default=8.0, gt=0)


class PlannedReservation(Frozen):
    """A reservation as planned: the request (plan steps; `period` None = one non-periodic instance)
    and LowCost's allocation (`containers[j]` at period step `offset + j`)."""

    template_id: str = _ID
    earliest: int = Field(ge=0)
    deadline: int = Field(ge=1)
    period: int | None = Field(default=None, gt=0)
    skyline: tuple[Containers, ...] = Field(min_length=1, max_length=MAX_STEPS)
    cores: float = Field(gt=0)
    memory_gb: float = Field(gt=0)
    offset: int = Field(ge=0)
    containers: tuple[Containers, ...] = Field(max_length=MAX_STEPS)
    periodic: bool


class ReservationPlanned(TemplateDecision):
    """Planning put the template's reservation on the plan (`change`: a `new` one, an owner's
    `override`, a `reinferred` contract). Non-periodic reservations it displaced were re-planned
    (`replanned`) or dropped (`dropped`: their template ids)."""

    TYPE: ClassVar[str] = "ReservationPlanned"
    contract_version: int = Field(ge=1)
    change: Literal["new", "override", "reinferred"]
    reservation: PlannedReservation
    replanned: tuple[PlannedReservation, ...] = ()
    dropped: tuple[str, ...] = ()
    peak_cost: float = Field(ge=0)


class ReservationRefused(TemplateDecision):
    """The contract cannot be reserved: `field` names the contract field that makes it infeasible
    (`deadline_s`, `skyline`, `period_s`, ...) and `reason` says why. Any earlier reservation stays."""

    TYPE: ClassVar[str] = "ReservationRefused"
    contract_version: int = Field(ge=1)
    field: str = Field(max_length=64)
    reason: str = Field(max_length=500)


class ReservationReleased(TemplateDecision):
    """The reservation left the plan (`reason`: `rejected` by the owner)."""

    TYPE: ClassVar[str] = "ReservationReleased"
    reason: str = Field(max_length=200)


class ReservationExtended(TemplateDecision):
    """DRA for one running instance at plan `step` (Morpheus §7): it held `allocated`, wanted
    `demand`, was capped at `cap` (ρ × its recent allocation); `granted` extra containers for one
    step (0 with `reason` `bound_exhausted` or `plan_full`)."""

    TYPE: ClassVar[str] = "ReservationExtended"
    instance: str = _ID
    step: int = Field(ge=0)
    allocated: int = Field(ge=0)
    demand: int = Field(ge=0)
    cap: int = Field(ge=0)
    asked: int = Field(ge=0)
    granted: int = Field(ge=0)
    reason: str = Field(max_length=32)


class CorralJob(Frozen):
    """One template's next instance in a Corral plan: its `racks` (names), when it starts after the
    round's start (`start_s`) and its `priority` (0 first); `predicted_s` = Model B on its racks
    (`model_b_s`) plus the data-balance penalty α·D/r (`penalty_s`); `cores` and `memory_gb`: its
    racks' capacity, claimed in the capacity ledger over its run."""

    template_id: str = _ID
    racks: tuple[str, ...] = Field(min_length=1)
    priority: int = Field(ge=0)
    start_s: float = Field(ge=0)
    predicted_s: float = Field(ge=0)
    model_b_s: float = Field(ge=0)
    penalty_s: float = Field(ge=0)
    cores: float = Field(default=0.0, ge=0)  # its racks' schedulable servers, held in the capacity ledger
    memory_gb: float = Field(default=0.0, ge=0)


class CorralDeferred(Frozen):
    """A profiled template the round did not plan, and why."""

    template_id: str = _ID
    reason: str = Field(max_length=300)


class CorralPlanDecided(TemplateDecision):
    """A Corral planning round (jalaparti.md §4.3) over every profiled template, recorded on the
    stream of the template that caused it: the racks known (`racks`, sorted; `machines_per_rack`
    the smallest one's servers; the slowest NIC and the highest oversubscription among them), each
    job's racks and priority, the plan's makespan and the LP-Batch lower bound on it, and `model`
    (the latency model and planner version). `trigger`: `profile` (a declaration) or `daily`. Each
job's racks are claimed in the capacity ledger from `start_step` (the first plan step after the
round); a job they do not fit in is `deferred` with the ledger's reason and the rest re-planned."""

    TYPE: ClassVar[str] = "CorralPlanDecided"
    trigger: Literal["profile", "daily"]
    model: str = Field(max_length=64)
    start_step: int = Field(default=0, ge=0)  # the plan step (of the day's window) the batch starts at
    racks: tuple[str, ...] = ()
    machines_per_rack: int = Field(default=0, ge=0)
    nic_bytes_s: float = Field(default=0.0, ge=0)
    oversubscription: float = Field(default=0.0, ge=0)
    jobs: tuple[CorralJob, ...] = ()
    deferred: tuple[CorralDeferred, ...] = ()
    makespan_s: float = Field(default=0.0, ge=0)
    lp_bound_s: float = Field(default=0.0, ge=0)


# --- commands ----------------------------------------------------------------------------------


class TemplateCommand(Command):
    """A command about a recurring template: `workload_id` stays empty (it names no workload)."""

    workload_id: str = Field(default="", max_length=0)
    template_id: str = _ID

    @property
    def stream(self) -> str:
        return f"template-{self.template_id}"


class InferContract(TemplateCommand):
    """To profiling: detect the template and infer its contract (`run`: a run was observed and it
    has no contract yet; `daily`: re-infer an existing contract)."""

    TYPE: ClassVar[str] = "InferContract"
    HANDLER: ClassVar[str] = "profiling"
    trigger: Literal["run", "daily"] = "run"


class PlanReservation(TemplateCommand):
    """To planning: bring the plan in line with the template's contract and sign-off."""

    TYPE: ClassVar[str] = "PlanReservation"
    HANDLER: ClassVar[str] = "planning"
    reason: Literal["signed_off", "reinferred"] = "signed_off"


class ExtendReservation(TemplateCommand):
    """To reprovisioning: one DRA evaluation of a running instance."""

    TYPE: ClassVar[str] = "ExtendReservation"
    HANDLER: ClassVar[str] = "reprovisioning"
    instance: str = _ID
    step: int = Field(ge=0)
    used: int = Field(ge=0)
    pending: int = Field(ge=0)


class PlanCorral(TemplateCommand):
    """To planning: a Corral round over every profiled template (`trigger`: what caused it)."""

    TYPE: ClassVar[str] = "PlanCorral"
    HANDLER: ClassVar[str] = "planning"
    trigger: Literal["profile", "daily"] = "profile"
