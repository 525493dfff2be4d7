"""A service's Kwiken stages over REST (docs/kwiken/platform.md), on the admission app:

    PUT /v1/workloads/{workload_id}/stages   declare the service's stage DAG and budgets   202

The body is `sextant_contracts.kwiken.ServiceStages`; it is recorded as `ServiceStagesDeclared` on
the workload's stream (optimistic concurrency on it). A cycle, an edge naming an unknown stage,
duplicate stage names or a budget outside (0, 1] is a 422 whose `errors[0].path` names the field
(`$.edges`, `$.stages`, `$.reissue_budget`, `$.loss_budget`); an unknown workload (or another
tenant's) is a 404; a workload that is not a service, or has finished, a 409. Nothing is written
on any refusal.
"""

# no `from __future__ import annotations`: FastAPI reads the routes' annotations (`Caller` is local)
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel
from sextant_contracts import kwiken as kw
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_contracts.model import WorkloadKind
from sextant_core.domain.lifecycle import TERMINAL
from sextant_kit.errors import ConcurrencyError
from sextant_kit.problems import Problem, problem_responses, problem_route
from sextant_kit.telemetry import current_traceparent

from .auth import Principal
from .handlers import SERVICE

_ID = Path(min_length=1, max_length=128, description="the workload id")


class StagesAccepted(BaseModel):
    workload_id: str
    stages: int
    edges: int


def router(ctx: Any, caller: Any, clock: Any) -> APIRouter:
    """The route (module doc) on `ctx` (`api.ApiContext`), authenticated by `caller`; `clock()` gives
    the time the declaration is recorded at."""
    r = APIRouter(prefix="/v1/workloads", tags=["workloads"], route_class=problem_route(ctx.max_body_bytes))
    Caller = Annotated[Principal, Depends(caller)]

    @r.put("/{workload_id}/stages", status_code=202, response_model=StagesAccepted,
           responses=problem_responses(401, 429, 404, 409, 413, 415, 422),
           summary="Declare a service's stage DAG, reissue budget and utility-loss budget (Kwiken)")
    async def declare(workload_id: Annotated[str, _ID], body: kw.ServiceStages, who: Caller) -> StagesAccepted:
        await ctx.catch_up()
        w = ctx.decider.state.workloads.get(workload_id)
        if w is None or (who.scope is not None and w.tenant != who.scope):
            raise Problem(404, "workload-not-found", f"no workload {workload_id}")
        if w.kind != WorkloadKind.SERVICE or w.phase in TERMINAL:
            raise Problem(409, "not-a-live-service", f"workload {workload_id} is not a live service")
        event = kw.ServiceStagesDeclared(at=clock(), workload_id=workload_id, **dict(body))
        for _ in range(3):
            v = await ctx.store.stream_version(event.stream)
            env = Envelope.wrap(event, id=derive_id("stages", workload_id, v), source=SERVICE, stream_version=v + 1,
                                time=event.at, traceparent=current_traceparent())
            try:
                await ctx.store.append(event.stream, v, [env])
                return StagesAccepted(workload_id=workload_id, stages=len(body.stages), edges=len(body.edges))
            except ConcurrencyError:
                continue
        raise Problem(409, "workload-busy", "the workload's stream keeps changing; retry")

    return r
