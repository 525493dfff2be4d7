"""HTTP API of the admission service (minimal `/v1/workloads`; tenants, tokens and RFC 9457
problems are issue 7's).

`POST /v1/workloads` → 202 with the new id; `GET /v1/workloads/{id}` reads the admission
decider's state after catching up with the log (read-your-writes); `GET /v1/workloads` lists.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException
from pydantic import BaseModel, ConfigDict, Field
from sextant_contracts.commands import SubmitWorkload
from sextant_contracts.model import PerformanceTarget, WorkloadKind, WorkloadSpec
from sextant_core.workflow import Decider
from sextant_kit.bootstrap import Runtime

from . import views
from .handlers import Conflict, NotFound, new_workload_id, revoke, submit


class WorkloadRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: str = Field(default="default", min_length=1, max_length=64)
    name: str = Field(default="", max_length=200)
    kind: WorkloadKind
    target: PerformanceTarget
    spec: WorkloadSpec
    priority: int = Field(default=0, ge=0, le=9)
    best_effort: bool = False
    requested_cores: int | None = Field(default=None, gt=0, le=100_000)
    requested_memory_gb: float | None = Field(default=None, gt=0, le=1e6)


def routers(decider: Decider, runtime: Runtime) -> list[APIRouter]:
    r = APIRouter(prefix="/v1", tags=["workloads"])

    async def fresh() -> None:
        handler = runtime.handlers.get("admission")
        if handler is not None:
            await handler.catch_up()

    @r.post("/workloads", status_code=202)
    async def create(body: WorkloadRequest,
                     idempotency_key: Annotated[str | None, Header()] = None) -> dict[str, Any]:
        command = SubmitWorkload(workload_id=new_workload_id(body.tenant, idempotency_key), **body.model_dump())
        wid, created = await submit(runtime.store, command, idempotency_key=idempotency_key)
        return {"id": wid, "created": created}

    @r.get("/workloads/{workload_id}")
    async def read(workload_id: str) -> dict[str, Any]:
        await fresh()
        view = views.get_workload(decider, workload_id)
        if view is None:
            raise HTTPException(status_code=404, detail="no such workload")
        return view

    @r.delete("/workloads/{workload_id}", status_code=202)
    async def delete(workload_id: str) -> dict[str, Any]:
        await fresh()
        try:
            await revoke(runtime.store, decider.state, workload_id)
        except NotFound:
            raise HTTPException(status_code=404, detail="no such workload") from None
        except Conflict as exc:
            raise HTTPException(status_code=409, detail=str(exc)) from None
        return {"id": workload_id, "revoked": True}

    @r.get("/workloads")
    async def listing(tenant: str | None = None, state: str | None = None, limit: int = 100,
                      after: str | None = None) -> dict[str, Any]:
        await fresh()
        items = views.list_workloads(decider, tenant=tenant, state=state, limit=min(limit, 1000), after=after)
        return {"items": items, "next": items[-1]["id"] if len(items) == limit else None}

    @r.get("/state")
    async def state() -> dict[str, Any]:
        await fresh()
        return views.state_view(decider)

    return [r]
