"""Read models of the telemetry service."""

from __future__ import annotations

from typing import Any

from sextant_core.views import cluster_view
from sextant_core.workflow import Decider

from .handlers import Aggregator


def state_view(decider: Decider, aggregator: Aggregator) -> dict[str, Any]:
    return {"service": "telemetry", "open_windows": len(aggregator.open), **cluster_view(decider.state)}
