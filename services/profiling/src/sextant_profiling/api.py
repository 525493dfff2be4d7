"""HTTP API of the profiling service: `GET /v1/state` (its view of the cluster) and `GET /v1/stats`
(consumer counters); /healthz and /readyz come from the kit's app factory."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter
from sextant_core.workflow import Decider
from sextant_kit.bootstrap import Runtime

from .views import state_view


def routers(decider: Decider, runtime: Runtime) -> list[APIRouter]:
    r = APIRouter(prefix="/v1", tags=["profiling"])

    @r.get("/state")
    async def state() -> dict[str, Any]:
        return state_view(decider)

    @r.get("/stats")
    async def stats() -> dict[str, Any]:
        loop = runtime.consumers.get(decider.service)
        return {"position": decider.position, "consumer": asdict(loop.stats) if loop else None}

    return [r]
