"""Recurring jobs' contracts over REST (docs/recurring/platform.md), on the admission app:

    GET  /v1/contracts                         the caller's recurring templates and contracts  200
    GET  /v1/contracts/{template_id}           one: contract, sign-off, reservation, runs     200
    POST /v1/contracts/{template_id}/accept    sign off the inferred contract                 202
    POST /v1/contracts/{template_id}/override  sign off with fields replaced                  202
    POST /v1/contracts/{template_id}/reject    no reservation: the job runs on fair share     202
    POST /v1/contracts/{template_id}/profile   declare its analytics profile (Corral)         202

A sign-off is the fact `ContractSignedOff` on the template's stream (optimistic concurrency on it);
planning then decides the reservation. Before anything is written the same planning runs on the
current state (`recurring.decisions.check_signoff`): an override that leaves no room — a deadline
before the skyline fits, a skyline the cluster cannot hold, a period that switches periodic and
non-periodic — is a 422 naming the field, and the log is unchanged. Other errors: 404 for a
template that does not exist or is another tenant's, 409 while no contract is inferred yet or when
the body names a version that is not the current one. Templates are tenant-scoped; an operator
(or open mode) sees every tenant's.

A profile is the fact `AnalyticsProfileDeclared` (docs/corral/platform.md): bytes in, shuffled
and out per instance, task counts, rates, slots; planning then runs a Corral round. A field out
of range (negative or zero bytes, no tasks) is a 422 naming it; nothing is written.
"""

# no `from __future__ import annotations`: FastAPI reads the routes' annotations (`Caller` is local)
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, ConfigDict, Field, model_validator
from sextant_contracts import events as ev
from sextant_contracts import recurring as rc
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_core.recurring.decisions import check_signoff, template_id, terms_of
from sextant_core.recurring.state import TemplateState
from sextant_core.state.model import ClusterState
from sextant_kit.errors import ConcurrencyError
from sextant_kit.problems import Problem, not_found_route, problem_responses, problem_route
from sextant_kit.telemetry import current_traceparent

from .auth import Principal
from .handlers import SERVICE, Store

_TID = Path(min_length=1, max_length=128, description="the recurring template's id")
Skyline = list[Annotated[int, Field(ge=0, le=100_000)]]


class SignOffRequest(BaseModel):
    """`version`: the contract version signed (default: the current one; another is a 409)."""

    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(default=None, ge=1)


class OverrideRequest(SignOffRequest):
    """The fields to replace (at least one); the others keep their inferred values. Times are
    seconds from the start of the period; `skyline` is containers per plan step (one minute)."""

    earliest_start_s: float | None = Field(default=None, ge=0, le=2_592_000)
    deadline_s: float | None = Field(default=None, gt=0, le=2_592_000)
    period_s: float | None = Field(default=None, gt=0, le=2_592_000)
    skyline: Skyline | None = Field(default=None, min_length=1, max_length=rc.MAX_STEPS)

    @model_validator(mode="after")
    def _some_field(self) -> "OverrideRequest":
        if all(getattr(self, k) is None for k in ("earliest_start_s", "deadline_s", "period_s", "skyline")):
            raise ValueError("an override names at least one of earliest_start_s, deadline_s, period_s, skyline")
        return self


Positive = Annotated[float, Field(gt=0, le=1e18, allow_inf_nan=False)]


class ProfileRequest(BaseModel):
    """An analytics template's data-flow profile: bytes per instance (input, shuffle, output),
    map and reduce tasks; optional CPU-bound map and reduce rates and disk bandwidth (bytes/s,
    default 100 MB/s) and slots per machine (8 maps, 2 reducers)."""

    model_config = ConfigDict(extra="forbid")
    input_bytes: Positive
    shuffle_bytes: Positive
    output_bytes: Positive
    map_tasks: int = Field(ge=1, le=1_000_000)
    reduce_tasks: int = Field(ge=1, le=1_000_000)
    map_rate_bytes_s: float | None = Field(default=None, gt=0, le=1e12, allow_inf_nan=False)
    reduce_rate_bytes_s: float | None = Field(default=None, gt=0, le=1e12, allow_inf_nan=False)
    disk_bytes_s: float | None = Field(default=None, gt=0, le=1e12, allow_inf_nan=False)
    map_slots: int | None = Field(default=None, ge=1, le=1024)
    reduce_slots: int | None = Field(default=None, ge=1, le=1024)


class ProfileDeclared(BaseModel):
    template_id: str
    profile: dict[str, Any]


class SignedOff(BaseModel):
    template_id: str
    version: int
    verdict: Literal["accept", "override", "reject"]


class ContractView(BaseModel):
    """A recurring template as its owner sees it. `status`: `detected` (periodic, no actionable
    contract yet), `inferred` (awaits sign-off), `accepted`, `overridden`, `rejected`;
    `reservation` is what planning holds now (None: none), `refused` its latest refusal."""

    template_id: str
    tenant: str
    name: str
    status: str
    runs: int
    detection: dict[str, Any] | None = None
    contract: dict[str, Any] | None = None
    signoff: dict[str, Any] | None = None
    terms: dict[str, Any] | None = None
    reservation: dict[str, Any] | None = None
    refused: dict[str, Any] | None = None
    extensions: int = 0
    submissions: list[str] = Field(default_factory=list, description="workloads submitted under this template")


class ContractPage(BaseModel):
    items: list[ContractView]


def status_of(t: TemplateState) -> str:
    if t.contract is None:
        return "detected" if t.detected is not None else "observed"
    if t.signoff is None:
        return "inferred"
    return {"accept": "accepted", "override": "overridden", "reject": "rejected"}[t.signoff.verdict]


def submissions(state: ClusterState) -> dict[str, list[str]]:
    """Workload ids per recurring template their names belong to (one pass over the workloads)."""
    known = state.recurring.templates
    out: dict[str, list[str]] = {}
    if not known:
        return out
    for wid, w in sorted(state.workloads.items()):
        if w.name and (tid := template_id(w.tenant, w.name)) in known:
            out.setdefault(tid, []).append(wid)
    return out


def contract_view(state: ClusterState, t: TemplateState, subs: list[str] | None = None) -> ContractView:
    def dump(m: BaseModel | None, *drop: str) -> dict[str, Any] | None:
        return None if m is None else m.model_dump(mode="json", exclude={"decision", "template_id", "at", *drop})

    terms = None
    if t.contract is not None and (t.signoff is None or t.signoff.verdict != "reject"):
        x = terms_of(t.contract, t.signoff)
        terms = {"version": x.version, "period_s": x.period_s, "earliest_start_s": x.earliest_start_s,
                 "deadline_s": x.deadline_s, "skyline": list(x.skyline), "overridden": sorted(x.overridden)}
    if subs is None:
        subs = submissions(state).get(t.template_id, [])
    return ContractView(template_id=t.template_id, tenant=t.tenant, name=t.name, status=status_of(t), runs=len(t.runs),
                        detection=dump(t.detected, "tenant"), contract=dump(t.contract, "tenant"),
                        signoff=dump(t.signoff, "tenant"), terms=terms,
                        reservation=None if t.reservation is None else t.reservation.model_dump(mode="json"),
                        refused=dump(t.refused), extensions=len(t.extensions), submissions=subs[-50:])


def recognised(state: ClusterState, tenant: str, name: str) -> str | None:
    """The template a submission named `name` belongs to, if the log knows it."""
    if not name:
        return None
    tid = template_id(tenant, name)
    return tid if tid in state.recurring.templates else None


async def sign_off(store: Store, state: ClusterState, t: TemplateState, verdict: str, body: SignOffRequest,
                   *, now: float, attempts: int = 3) -> rc.ContractSignedOff:
    """Validate (module doc) and record one sign-off; raises `Problem` and writes nothing on error."""
    if t.contract is None:
        raise Problem(409, "contract-not-inferred", f"template {t.template_id} has no inferred contract yet")
    version = body.version or t.contract.version
    if version != t.contract.version:
        raise Problem(409, "stale-contract", f"contract version {version} is not the current one "
                      f"({t.contract.version})", current_version=t.contract.version)
    fields = body.model_dump(exclude={"version"}, exclude_none=True) if isinstance(body, OverrideRequest) else {}
    if "skyline" in fields:
        fields["skyline"] = tuple(fields["skyline"])
    event = rc.ContractSignedOff(at=now, template_id=t.template_id, tenant=t.tenant, version=version,
                                 verdict=verdict, **fields)  # type: ignore[arg-type]
    refused = check_signoff(state, event)
    if refused is not None:
        path = f"$.{refused.field}"
        raise Problem(422, "contract-infeasible", f"1 invalid field: {path}",
                      errors=[{"path": path, "in": "body", "detail": refused.reason, "code": "infeasible"}])
    await _append_to_template(store, t, event, "signoff", now=now, attempts=attempts)
    return event


async def declare_profile(store: Store, t: TemplateState, body: ProfileRequest, *, now: float,
                          attempts: int = 3) -> rc.AnalyticsProfileDeclared:
    """Record one `AnalyticsProfileDeclared` (the body is already valid: pydantic's 422 otherwise)."""
    event = rc.AnalyticsProfileDeclared(at=now, template_id=t.template_id, **body.model_dump(exclude_none=True))
    await _append_to_template(store, t, event, "profile", now=now, attempts=attempts)
    return event


async def _append_to_template(store: Store, t: TemplateState, event: ev.Event, kind: str, *, now: float,
                              attempts: int) -> None:
    """Append `event` to the template's stream at its current version (optimistic, `attempts`
    tries; its id derived from `kind`, the template and the version); 409 when it keeps moving."""
    stream = f"template-{t.template_id}"
    for _ in range(attempts):
        v = await store.stream_version(stream)
        env = Envelope.wrap(event, id=derive_id(kind, t.template_id, v), source=SERVICE, stream_version=v + 1,
                            time=now, traceparent=current_traceparent())
        try:
            await store.append(stream, v, [env])
            return
        except ConcurrencyError:
            continue
    raise Problem(409, "template-busy", "the template keeps changing; retry")


def router(ctx: Any, caller: Any, clock: Any) -> APIRouter:
    """The routes (module doc) on `ctx` (`api.ApiContext`), authenticated by the `caller`
    dependency of the workload routes; `clock()` gives the time a sign-off is recorded at."""
    r = APIRouter(prefix="/v1/contracts", tags=["recurring"], route_class=problem_route(ctx.max_body_bytes))
    Caller = Annotated[Principal, Depends(caller)]
    auth = (401, 429)

    def owned(who: Principal, tid: str) -> TemplateState:
        t = ctx.decider.state.recurring.templates.get(tid)
        if t is None or (who.scope is not None and t.tenant != who.scope):
            raise Problem(404, "template-not-found", f"no recurring template {tid}")
        return t

    @r.get("", response_model=ContractPage, responses=problem_responses(*auth, 422),
           summary="List recurring templates and their contracts (by id)")
    async def listing(who: Caller, status: Annotated[str | None, Query(max_length=32)] = None,
                      limit: Annotated[int, Query(ge=1, le=1000)] = 200) -> ContractPage:
        await ctx.catch_up()
        state = ctx.decider.state
        subs = submissions(state)
        items = [contract_view(state, t, subs.get(tid, [])) for tid, t in sorted(state.recurring.templates.items())
                 if (who.scope is None or t.tenant == who.scope) and (status is None or status_of(t) == status)]
        return ContractPage(items=items[:limit])

    @r.get("/{template_id}", response_model=ContractView, responses=problem_responses(*auth, 404, 422),
           summary="Show one recurring template's contract, sign-off and reservation")
    async def show(template_id: Annotated[str, _TID], who: Caller) -> ContractView:
        await ctx.catch_up()
        return contract_view(ctx.decider.state, owned(who, template_id))

    async def signed(tid: str, who: Principal, verdict: str, body: SignOffRequest) -> SignedOff:
        await ctx.catch_up()
        event = await sign_off(ctx.store, ctx.decider.state, owned(who, tid), verdict, body, now=clock())
        return SignedOff(template_id=tid, version=event.version, verdict=event.verdict)

    @r.post("/{template_id}/accept", status_code=202, response_model=SignedOff,
            responses=problem_responses(*auth, 404, 409, 413, 415, 422), summary="Accept the inferred contract")
    async def accept(template_id: Annotated[str, _TID], who: Caller, body: SignOffRequest | None = None) -> SignedOff:
        return await signed(template_id, who, "accept", body or SignOffRequest())

    @r.post("/{template_id}/override", status_code=202, response_model=SignedOff,
            responses=problem_responses(*auth, 404, 409, 413, 415, 422),
            summary="Sign off with fields replaced (422 naming the field if the plan cannot hold it)")
    async def override(template_id: Annotated[str, _TID], who: Caller, body: OverrideRequest) -> SignedOff:
        return await signed(template_id, who, "override", body)

    @r.post("/{template_id}/reject", status_code=202, response_model=SignedOff,
            responses=problem_responses(*auth, 404, 409, 413, 415, 422),
            summary="Reject the contract: no reservation, the job runs on fair share")
    async def reject(template_id: Annotated[str, _TID], who: Caller, body: SignOffRequest | None = None) -> SignedOff:
        return await signed(template_id, who, "reject", body or SignOffRequest())

    @r.post("/{template_id}/profile", status_code=202, response_model=ProfileDeclared,
            responses=problem_responses(*auth, 404, 409, 413, 415, 422),
            summary="Declare the template's analytics profile (Corral plans its racks)")
    async def profile(template_id: Annotated[str, _TID], who: Caller, body: ProfileRequest) -> ProfileDeclared:
        await ctx.catch_up()
        event = await declare_profile(ctx.store, owned(who, template_id), body, now=clock())
        return ProfileDeclared(template_id=template_id,
                               profile=event.model_dump(mode="json", exclude={"template_id", "at"}))

    not_found_route(r)
    return r
