"""HTTP API of the telemetry service: `GET /v1/state` (open windows, its view of the cluster)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sextant_core.workflow import Decider

from .handlers import Aggregator
from .views import state_view


def routers(decider: Decider, aggregator: Aggregator) -> list[APIRouter]:
    r = APIRouter(prefix="/v1", tags=["telemetry"])

    @r.get("/state")
    async def state() -> dict[str, Any]:
        return state_view(decider, aggregator)

    return [r]
