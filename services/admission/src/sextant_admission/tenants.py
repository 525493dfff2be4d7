"""Virtual clusters over REST (docs/fairness/platform.md), on the admission app:

    PUT /v1/tenants/{tenant}/capacity   an operator sets a tenant's VC capacity (servers)   202
    GET /v1/tenants/{tenant}/usage      capacity, load, stretch, credit, lent and received  200

A capacity is the fact `VcCapacitySet` on the tenant's stream `tenant-<tenant>` (optimistic
concurrency on it); planning then recomputes the allocation between tenants. Only an operator's
token may set one (or open mode, the single-user machine where the caller sees the whole cluster,
as for `/v1/state`): a tenant's token is a 403, before the body is read. A malformed capacity is a
422 naming the field; a tenant the registry does not know is a 404. Nothing is written on refusal.
A tenant reads its own usage; another tenant's is a 404 (indistinguishable from a missing one);
an operator reads any tenant the log knows.
"""

# no `from __future__ import annotations`: FastAPI reads the routes' annotations (`Caller` is local)
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, ConfigDict, Field
from sextant_contracts import vc
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_core.fairness.platform import Usage, known, usage
from sextant_kit.errors import ConcurrencyError
from sextant_kit.problems import Problem, not_found_route, problem_responses, problem_route
from sextant_kit.telemetry import current_traceparent
from sextant_kit.tenancy import NAME_PATTERN

from .auth import Principal
from .handlers import SERVICE, Store

_TENANT = Path(pattern=NAME_PATTERN, description="the tenant's name")


class CapacityRequest(BaseModel):
    """`servers`: the tenant's VC capacity, whole servers (0: it owns none and only borrows)."""

    model_config = ConfigDict(extra="forbid")
    servers: int = Field(ge=0, le=1_000_000, strict=True)


class CapacitySet(BaseModel):
    tenant: str
    servers: int
    previous: int | None = Field(description="the capacity before (None: the tenant had none)")


async def record_capacity(store: Store, tenant: str, servers: int, by: str, *, now: float,
                          attempts: int = 3) -> None:
    """Append `VcCapacitySet` on the tenant's stream (retried on a concurrent append)."""
    event = vc.VcCapacitySet(at=now, tenant=tenant, servers=servers, by=by)
    stream = event.stream
    for _ in range(attempts):
        v = await store.stream_version(stream)
        env = Envelope.wrap(event, id=derive_id("capacity", tenant, v), source=SERVICE, stream_version=v + 1,
                            time=now, traceparent=current_traceparent())
        try:
            await store.append(stream, v, [env])
            return
        except ConcurrencyError:
            continue
    raise Problem(409, "tenant-busy", "the tenant's capacity keeps changing; retry")


def router(ctx: Any, caller: Any, clock: Any) -> APIRouter:
    """The routes (module doc) on `ctx` (`api.ApiContext`), authenticated by `caller`; `clock()`
    gives the time a capacity is recorded at."""
    r = APIRouter(prefix="/v1/tenants", tags=["tenants"], route_class=problem_route(ctx.max_body_bytes))
    Caller = Annotated[Principal, Depends(caller)]
    auth = (401, 429)

    async def operator(who: Caller) -> Principal:
        """An operator (or open mode): checked before the body is read."""
        if not who.sees_all:
            raise Problem(403, "operator-only", "only an operator's token may set a tenant's capacity")
        return who

    Operator = Annotated[Principal, Depends(operator)]

    @r.put("/{tenant}/capacity", status_code=202, response_model=CapacitySet,
           responses=problem_responses(*auth, 403, 404, 409, 413, 415, 422),
           summary="An operator sets a tenant's virtual-cluster capacity (servers)")
    async def set_capacity(tenant: Annotated[str, _TENANT], body: CapacityRequest, who: Operator) -> CapacitySet:
        if who.operator and await ctx.gate.registry.get(tenant) is None:
            raise Problem(404, "tenant-not-found", f"no tenant {tenant}")
        await ctx.catch_up()
        previous = ctx.decider.state.vcs.capacities.get(tenant)
        await record_capacity(ctx.store, tenant, body.servers, who.tenant or "", now=clock())
        return CapacitySet(tenant=tenant, servers=body.servers, previous=previous)

    @r.get("/{tenant}/usage", response_model=Usage, responses=problem_responses(*auth, 404, 422),
           summary="A tenant's virtual cluster: capacity, load, stretch, credit, lent and received server-hours")
    async def read_usage(tenant: Annotated[str, _TENANT], who: Caller) -> Usage:
        await ctx.catch_up()
        state = ctx.decider.state
        if (who.scope is not None and tenant != who.scope) or (who.scope is None and not known(state, tenant)):
            raise Problem(404, "tenant-not-found", f"no tenant {tenant}")
        last = state.vcs.last
        return usage(state, tenant, max(state.now, last.at if last is not None else 0.0))

    not_found_route(r)
    return r
