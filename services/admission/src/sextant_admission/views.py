"""Read models of the admission service: a workload as its owner sees it, and listings."""

from __future__ import annotations

from typing import Any

from sextant_core.admission.queues import class_queues
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.state.model import ClusterState, WorkloadState
from sextant_core.views import cluster_view, workload_view
from sextant_core.workflow import Decider


def view(state: ClusterState, w: WorkloadState) -> dict[str, Any]:
    """The core's workload view; while queued, the position is the live one (its place in its ARQ
    class queue now: 0 = next), not the one recorded when it was queued."""
    out = workload_view(w)
    if w.phase == WorkloadPhase.QUEUED and "queue" in out and w.arq_class is not None:
        queue = class_queues(state)[min(max(w.arq_class, 0), len(class_queues(state)) - 1)]
        if w.workload_id in queue:
            out["queue"] = {**out["queue"], "position": queue.index(w.workload_id)}
    elif w.phase != WorkloadPhase.QUEUED:
        out.pop("queue", None)
    return out


def get_workload(decider: Decider, workload_id: str) -> dict[str, Any] | None:
    w = decider.state.workloads.get(workload_id)
    return None if w is None else view(decider.state, w)


def list_workloads(decider: Decider, *, tenant: str | None = None, state: str | None = None,
                   kind: str | None = None, limit: int = 100, after: str | None = None) -> list[dict[str, Any]]:
    out = []
    for wid, w in sorted(decider.state.workloads.items()):
        if after is not None and wid <= after:
            continue
        if (tenant is None or w.tenant == tenant) and (state is None or w.phase.value == state) \
                and (kind is None or w.kind.value == kind):
            out.append(view(decider.state, w))
            if len(out) >= limit:
                break
    return out


def state_view(decider: Decider) -> dict[str, Any]:
    return {"service": decider.service, "profile": decider.params.profile, **cluster_view(decider.state)}


def tenant_state_view(decider: Decider, tenant: str) -> dict[str, Any]:
    """`GET /v1/state` for a tenant's token: the log position, its own workloads' counts per phase
    and its own queued and deferred workloads (in queue order) — no other tenant's id, no
    cluster-wide capacity (those are an operator's)."""
    state = decider.state
    mine = {wid for wid, w in state.workloads.items() if w.tenant == tenant}
    phases: dict[str, int] = {}
    for wid in mine:
        phase = state.workloads[wid].phase.value
        phases[phase] = phases.get(phase, 0) + 1
    return {"position": state.position, "tenant": tenant, "workloads": dict(sorted(phases.items())),
            "queued": [w for w in state.queued if w in mine], "deferred": [w for w in state.deferred if w in mine]}
