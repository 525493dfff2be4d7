"""Read models of the admission service: a workload as its owner sees it, and listings."""

from __future__ import annotations

from typing import Any

from sextant_core.views import cluster_view, workload_view
from sextant_core.workflow import Decider


def get_workload(decider: Decider, workload_id: str) -> dict[str, Any] | None:
    w = decider.state.workloads.get(workload_id)
    return None if w is None else workload_view(w)


def list_workloads(decider: Decider, *, tenant: str | None = None, state: str | None = None,
                   limit: int = 100, after: str | None = None) -> list[dict[str, Any]]:
    out = []
    for wid, w in sorted(decider.state.workloads.items()):
        if after is not None and wid <= after:
            continue
        if (tenant is None or w.tenant == tenant) and (state is None or w.phase.value == state):
            out.append(workload_view(w))
            if len(out) >= limit:
                break
    return out


def state_view(decider: Decider) -> dict[str, Any]:
    return {"service": decider.service, "profile": decider.params.profile, **cluster_view(decider.state)}
