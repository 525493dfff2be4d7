"""HTTP API of the planning service: `GET /v1/state` (its view of the cluster) and `GET /v1/stats`
(consumer counters); /healthz and /readyz come from the kit's app factory."""

from __future__ import annotations

from fastapi import APIRouter
from sextant_core.workflow import Decider
from sextant_kit.bootstrap import Runtime
from sextant_kit.deciding import decider_routers

from .views import state_view


def routers(decider: Decider, runtime: Runtime) -> list[APIRouter]:
    return decider_routers("planning", decider, runtime, lambda: state_view(decider))
