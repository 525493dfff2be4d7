"""Read models of the reprovisioning service: the decider's folded state, summarised."""

from __future__ import annotations

from typing import Any

from sextant_core.views import cluster_view
from sextant_core.workflow import Decider


def state_view(decider: Decider) -> dict[str, Any]:
    return {"service": decider.service, "profile": decider.params.profile, **cluster_view(decider.state)}
