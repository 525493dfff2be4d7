"""A service that only decides: its HTTP routes and its process, written once.

Profiling, classification, planning and reprovisioning are each nothing but the core's decider
for their name wired to the log (`runtime.decider_task`); their `api.py` and `main.py` call these
two functions with what differs — the service's name and its `/v1/state` view.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Depends

from .bootstrap import Runtime, serve
from .operators import OperatorGate
from .problems import problem_route
from .runtime import DeciderPort, decider_task
from .settings import KitSettings


def decider_routers(service: str, decider: DeciderPort, runtime: Runtime,
                    view: Callable[[], dict[str, Any]], gate: OperatorGate | None = None) -> list[APIRouter]:
    """`GET /v1/state` (the service's view of the cluster, `view()`) and `GET /v1/stats` (the
    decider's log position and its consumer's counters), for operators only (`gate`, default the
    runtime's: `sextant_kit.operators`); errors are problem documents."""
    r = APIRouter(prefix="/v1", tags=[service], route_class=problem_route(),
                  dependencies=[Depends(gate or runtime.operator_gate())])

    @r.get("/state")
    async def state() -> dict[str, Any]:
        return view()

    @r.get("/stats")
    async def stats() -> dict[str, Any]:
        loop = runtime.consumers.get(service)
        return {"position": decider.position, "consumer": asdict(loop.stats) if loop else None}

    return [r]


def run_decider(settings: KitSettings, decider: DeciderPort,
                routers: Callable[[Runtime], Sequence[APIRouter]]) -> None:
    """Run the process: `decider` consuming the event topics, and the HTTP app with `routers`,
    until SIGTERM or SIGINT (`bootstrap.serve`)."""
    asyncio.run(serve(settings, [decider_task(decider)], routers=routers))
