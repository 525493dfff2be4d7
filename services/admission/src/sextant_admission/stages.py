"""A service's Kwiken stages and plan over REST (docs/kwiken/platform.md), on the admission app:

    PUT /v1/workloads/{workload_id}/stages        declare the service's stage DAG and budgets   202
    GET /v1/workloads/{workload_id}/kwiken/plan   the Kwiken plan in force                      200

The body is `sextant_contracts.kwiken.ServiceStages`; it is recorded as `ServiceStagesDeclared` on
the workload's stream (optimistic concurrency on it). A cycle, an edge naming an unknown stage,
duplicate stage names or a budget outside (0, 1] is a 422 whose `errors[0].path` names the field
(`$.edges`, `$.stages`, `$.reissue_budget`, `$.loss_budget`); an unknown workload (or another
tenant's) is a 404; a workload that is not a service, or has finished, a 409. Nothing is written
on any refusal.

The plan (`sextant_core.views.kwiken_plan_view`): per stage the reissue policy, fraction and
timeout and a partial-answer stage's stopping rule; the budgets and the work spent; when it was
decided (log time), its trigger, the decision's id (what `sextant explain` takes) and its event's
id and log position (the newest `KwikenPlanDecided` of the workload's stream, read back from the
store). 404 for an unknown workload or another tenant's (`workload-not-found`), a workload without
declared stages (`no-kwiken-stages`) or without a plan yet (`no-kwiken-plan`).
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
from sextant_core.views import kwiken_plan_view
from sextant_kit.errors import ConcurrencyError
from sextant_kit.ports import EventStore
from sextant_kit.problems import Problem, problem_responses, problem_route
from sextant_kit.telemetry import current_traceparent

from .auth import Principal
from .handlers import SERVICE

_ID = Path(min_length=1, max_length=128, description="the workload id")


class StagesAccepted(BaseModel):
    workload_id: str
    stages: int
    edges: int


class PartialRule(BaseModel):
    """A partial-answer stage's stopping rule `min(T_c, max(T_min, t_p + T_d), t_all)` (ms; None: ∞)."""

    p: float
    t_c_ms: float | None
    t_d_ms: float | None
    t_min_ms: float


class StagePlanView(BaseModel):
    stage: str
    policy: str
    fraction: float
    timeout_ms: float | None
    samples: int
    partial: PartialRule | None


class KwikenPlanView(BaseModel):
    workload_id: str
    decided_at: float
    decision_id: str
    event_id: str | None
    position: int | None
    trigger: str
    drift: list[str]
    reissue_budget: float
    loss_budget: float
    reissue_spent: float
    stages: list[StagePlanView]


async def plan_envelope(store: EventStore, stream: str, decision_id: str, page: int = 64) -> Envelope | None:
    """The `KwikenPlanDecided` envelope of `decision_id` on `stream`, newest pages first."""
    top = await store.stream_version(stream)
    while top > 0:
        low = max(top - page, 0)
        for env in reversed(await store.read_stream(stream, low, top - low)):
            if env.type == kw.KwikenPlanDecided.TYPE and (env.payload.get("decision") or {}).get(
                    "decision_id") == decision_id:
                return env
        top = low
    return None


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

    @r.get("/{workload_id}/kwiken/plan", response_model=KwikenPlanView, responses=problem_responses(401, 429, 404, 422),
           summary="Read a service's Kwiken plan in force: per-stage reissues and stopping rules, budgets, decision")
    async def plan(workload_id: Annotated[str, _ID], who: Caller) -> KwikenPlanView:
        await ctx.catch_up()
        state = ctx.decider.state
        w = state.workloads.get(workload_id)
        if w is None or (who.scope is not None and w.tenant != who.scope):
            raise Problem(404, "workload-not-found", f"no workload {workload_id}")
        svc = state.kwiken.get(workload_id)
        if svc is None:
            raise Problem(404, "no-kwiken-stages", f"workload {workload_id} has not declared its stages")
        view = kwiken_plan_view(state, workload_id)
        if view is None or svc.plan is None:
            raise Problem(404, "no-kwiken-plan", f"workload {workload_id} has no Kwiken plan yet")
        env = await plan_envelope(ctx.store, svc.plan.stream, view["decision_id"])
        return KwikenPlanView.model_validate({**view, "event_id": None if env is None else env.id,
                                              "position": None if env is None else env.position})

    return r
