"""The public REST API, `/v1` (docs/api/README.md; OpenAPI in docs/api/openapi.json).

    POST   /v1/workloads          submit (Idempotency-Key honoured)            202 Accepted
    GET    /v1/workloads/{id}     state, allocation, QoS verdict, queue         200 WorkloadView
    GET    /v1/workloads          filters (state, kind), cursor pagination     200 WorkloadPage
    PATCH  /v1/workloads/{id}     new performance target → re-planned          202 Accepted
    DELETE /v1/workloads/{id}     revoke: resources freed, the agent stops it  202 Accepted
    GET    /v1/state              operators: the cluster; a tenant: its own    200
    /v1/contracts...              recurring jobs' contracts: list, show, accept / override / reject
                                  (`contracts.py`)
    PUT    /v1/tenants/{id}/capacity  an operator sets a tenant's VC capacity     202 (`tenants.py`)
    GET    /v1/tenants/{id}/usage     a tenant's VC: capacity, load, credit, ... 200

The web console (`console`, `/console/`) is served by the same app with the same auth.

Every error is an RFC 9457 problem document (`sextant_kit.problems`). The order of the checks:
body size (413) and content type (415); authentication (401); the tenant a request names (403);
the rate (429); validation (422); existence and ownership (404 — another tenant's workload is
indistinguishable from a missing one); state (409); quotas (429). A refused request appends
nothing to the log. Reads catch the decider up with the log first (read-your-writes).
"""


import base64
import binascii
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sextant_contracts.commands import SubmitWorkload
from sextant_contracts.model import WorkloadKind
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.qos import target_fits
from sextant_core.workflow import Decider
from sextant_kit.problems import Problem, not_found_route, problem_responses, problem_route

from . import contracts, stages, tenants, views
from .auth import Gatekeeper, Principal, Throttled, Unauthenticated
from .handlers import (
    Conflict,
    KeyReused,
    NotFound,
    QuotaExceeded,
    Store,
    check_quota,
    live_workload,
    new_workload_id,
    revoke,
    submit_once,
    update_target,
)
from .schemas import Accepted, StateView, TargetPatch, WorkloadPage, WorkloadRequest, WorkloadView, misfit


@dataclass
class ApiContext:
    decider: Decider
    store: Store
    gate: Gatekeeper
    catch_up: Callable[[], Awaitable[object]]
    max_body_bytes: int = 64 * 1024


BEARER = HTTPBearer(auto_error=False, scheme_name="tenantToken",
                    description="a tenant's API token, `sxt_...` (see `sextant tenants create`)")
_ID = Path(min_length=1, max_length=128, description="the workload id")
AUTH = (401, 429)
BODY = (413, 415, 422)


def routers(ctx: ApiContext) -> list[APIRouter]:
    r = APIRouter(prefix="/v1", tags=["workloads"], route_class=problem_route(ctx.max_body_bytes))

    async def caller(request: Request,
                     _: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)] = None) -> Principal:
        try:  # the raw header: a scheme other than Bearer is refused, not ignored
            principal = await ctx.gate.principal(request.headers.get("authorization"))
        except Unauthenticated as exc:
            raise Problem(401, "unauthenticated", str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
        try:
            ctx.gate.throttle(principal)
        except Throttled as exc:
            raise Problem(429, "rate-limited", f"too many requests; {exc}",
                          headers={"Retry-After": str(max(1, int(exc.retry_after_s + 0.999)))},
                          retry_after_s=round(exc.retry_after_s, 3)) from None
        return principal

    Caller = Annotated[Principal, Depends(caller)]

    @r.post("/workloads", status_code=202, response_model=Accepted,
            responses=problem_responses(*AUTH, 403, *BODY), summary="Submit a workload")
    async def create(body: WorkloadRequest, who: Caller, response: Response,
                     idempotency_key: Annotated[str | None, Header(
                         min_length=1, max_length=200,
                         description="retries with the same key and body return the first result")] = None
                     ) -> Accepted:
        tenant = _acting_for(who, body.tenant)
        command = SubmitWorkload(workload_id=new_workload_id(tenant, idempotency_key),
                                 **{**body.model_dump(), "tenant": tenant})
        await ctx.catch_up()
        w = ctx.decider.state.workloads.get(command.workload_id)
        if w is None:  # a replay of a known key is answered even over quota
            try:
                check_quota(ctx.decider.state, tenant, max_active=who.max_active_workloads,
                            max_cores=who.max_cores, requested_cores=command.requested_cores)
            except QuotaExceeded as exc:
                raise Problem(429, "quota-exceeded", str(exc)) from None
        try:
            wid, created = await submit_once(ctx.store, command, idempotency_key)
        except KeyReused:
            raise Problem(422, "idempotency-key-reused", "this Idempotency-Key was used with another body; "
                          "use a new key for a new submission") from None
        if not created:
            response.headers["Idempotent-Replayed"] = "true"
        state = w.phase.value if w is not None else WorkloadPhase.SUBMITTED.value
        return Accepted(id=wid, created=created, state=state,
                        template_id=contracts.recognised(ctx.decider.state, tenant, command.name))

    @r.get("/workloads/{workload_id}", response_model=WorkloadView,
           responses=problem_responses(*AUTH, 404, 422), summary="Read one workload")
    async def read(workload_id: Annotated[str, _ID], who: Caller) -> WorkloadView:
        await ctx.catch_up()
        view = views.get_workload(ctx.decider, workload_id)
        if view is None or (who.scope is not None and view["tenant"] != who.scope):
            raise Problem(404, "workload-not-found", f"no workload {workload_id}")
        return WorkloadView.model_validate(view)

    @r.get("/workloads", response_model=WorkloadPage, responses=problem_responses(*AUTH, 403, 422),
           summary="List workloads (newest last, by id), a page at a time")
    async def listing(who: Caller, state: WorkloadPhase | None = None, kind: WorkloadKind | None = None,
                      tenant: Annotated[str | None, Query(max_length=64, description=(
                          "open mode only: one tenant's workloads (a token sees its own)"))] = None,
                      limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                      cursor: Annotated[str | None, Query(max_length=400, description="next_cursor of the "
                                                          "previous page")] = None,
                      after: Annotated[str | None, Query(max_length=128, deprecated=True,
                                                         description="a workload id to start after")] = None
                      ) -> WorkloadPage:
        if who.scope is not None and tenant is not None and tenant != who.scope:
            raise Problem(403, "forbidden-tenant", "a token lists its own tenant's workloads only")
        start = _decode_cursor(cursor) if cursor else after
        await ctx.catch_up()
        items = views.list_workloads(ctx.decider, tenant=who.scope or tenant, state=state, kind=kind,
                                     limit=limit + 1, after=start)
        more = len(items) > limit
        items = items[:limit]
        last = items[-1]["id"] if more and items else None
        nxt = _encode_cursor(last) if last else None
        return WorkloadPage(items=[WorkloadView.model_validate(v) for v in items], next_cursor=nxt, next=last)

    @r.patch("/workloads/{workload_id}", status_code=202, response_model=Accepted,
             responses=problem_responses(*AUTH, 404, 409, *BODY), summary="Change the performance target")
    async def patch(workload_id: Annotated[str, _ID], body: TargetPatch, who: Caller) -> Accepted:
        await ctx.catch_up()
        _owned(ctx, who, workload_id)
        kind = ctx.decider.state.workloads[workload_id].kind
        if not target_fits(kind, body.target):
            raise Problem(422, "validation-failed", "1 invalid field: $.target",
                          errors=[{"path": "$.target", "in": "body", "detail": misfit(kind), "code": "target_kind"}])
        try:
            await update_target(ctx.store, ctx.decider.state, workload_id, body.target)
        except Conflict as exc:
            raise Problem(409, "workload-ended", str(exc)) from None
        return Accepted(id=workload_id, created=False, state=ctx.decider.state.workloads[workload_id].phase.value)

    @r.delete("/workloads/{workload_id}", status_code=202, response_model=Accepted,
              responses=problem_responses(*AUTH, 404, 409, 422), summary="Revoke a workload")
    async def delete(workload_id: Annotated[str, _ID], who: Caller) -> Accepted:
        await ctx.catch_up()
        _owned(ctx, who, workload_id)
        try:
            await revoke(ctx.store, ctx.decider.state, workload_id)
        except Conflict as exc:
            raise Problem(409, "workload-ended", str(exc)) from None
        return Accepted(id=workload_id, created=False, state=WorkloadPhase.REVOKED.value)

    @r.get("/state", response_model=StateView, responses=problem_responses(*AUTH),
           summary="An operator: the cluster as the admission decider sees it (counts, capacity, every "
                   "queue); a tenant: its own workloads' counts and queue places")
    async def state(who: Caller) -> dict[str, Any]:
        await ctx.catch_up()
        if who.scope is None:
            return views.state_view(ctx.decider)
        return views.tenant_state_view(ctx.decider, who.scope)

    not_found_route(r)
    from . import console  # the web console on the same app (its routes are not in the OpenAPI document)

    return [contracts.router(ctx, caller, time.time), tenants.router(ctx, caller, time.time),
            stages.router(ctx, caller, time.time), r,
            console.router(ctx)]  # before the 404 catch-all


def _acting_for(who: Principal, named: str | None) -> str:
    if who.scope is not None and named is not None and named != who.scope:
        raise Problem(403, "forbidden-tenant", f"this token may not act for tenant {named!r}")
    return who.acting_for(named)


def _owned(ctx: ApiContext, who: Principal, workload_id: str) -> None:
    try:
        live_workload(ctx.decider.state, workload_id, who.scope)
    except NotFound:
        raise Problem(404, "workload-not-found", f"no workload {workload_id}") from None
    except Conflict as exc:
        raise Problem(409, "workload-ended", str(exc)) from None


_CURSOR = "after:"


def _encode_cursor(last_id: str) -> str:
    """Opaque to clients: base64url of `after:<last id of the page>`."""
    return base64.urlsafe_b64encode((_CURSOR + last_id).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        text = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
        if not text.startswith(_CURSOR):
            raise ValueError(cursor)
        return text[len(_CURSOR):]
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise Problem(422, "bad-cursor", "the cursor is not one this API returned",
                      errors=[{"path": "query.cursor", "in": "query", "detail": "not a cursor",
                               "code": "cursor"}]) from None
