"""HTTP API of the telemetry service: `GET /v1/state` (open windows, its view of the cluster), for
operators only (`sextant_kit.operators`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from sextant_core.workflow import Decider
from sextant_kit.operators import OperatorGate
from sextant_kit.problems import problem_route

from .handlers import Aggregator
from .views import state_view


def routers(decider: Decider, aggregator: Aggregator, gate: OperatorGate) -> list[APIRouter]:
    r = APIRouter(prefix="/v1", tags=["telemetry"], route_class=problem_route(), dependencies=[Depends(gate)])

    @r.get("/state")
    async def state() -> dict[str, Any]:
        return state_view(decider, aggregator)

    return [r]
