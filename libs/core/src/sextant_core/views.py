"""Read models as pure functions of the state: what the API, the CLI and `explain` show."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .state.model import ClusterState, WorkloadState


def workload_view(w: WorkloadState) -> dict[str, Any]:
    """A workload as users see it (`GET /v1/workloads/{id}`)."""
    view: dict[str, Any] = {
        "id": w.workload_id, "tenant": w.tenant, "name": w.name, "kind": w.kind.value,
        "state": w.phase.value, "target": w.target.model_dump(mode="json"),
        "priority": w.priority, "best_effort": w.best_effort, "submitted_at": w.submitted_at,
        "started_at": w.started_at, "ended_at": w.ended_at,
        "allocation": None if w.allocation is None else w.allocation.model_dump(mode="json"),
        "qos": None if w.last_verdict is None else {"met": w.last_verdict, "ratio_to_target": w.last_ratio,
                                                     "verdicts": w.verdicts, "violations": w.violations},
    }
    if w.queue_position is not None:
        view["queue"] = {"arq_class": w.arq_class, "position": w.queue_position,
                         "expected_wait_s": w.expected_wait_s}
    if w.end_reason:
        view["end_reason"] = w.end_reason
    return view


def cluster_view(state: ClusterState) -> dict[str, Any]:
    """Counts per phase and capacity in use: a service's `/v1/state`."""
    phases = Counter(w.phase.value for w in state.workloads.values())
    servers = list(state.servers.values())
    cap = sum(s.capacity.cores for s in servers if s.up)
    used = sum(s.used_cores for s in servers if s.up)
    return {"position": state.position, "now": state.now, "tick": state.tick,
            "workloads": dict(sorted(phases.items())), "servers": len(servers),
            "servers_up": sum(1 for s in servers if s.up), "cores": cap, "cores_used": used,
            "queued": list(state.queued), "deferred": list(state.deferred)}


def kwiken_plan_view(state: ClusterState, workload_id: str) -> dict[str, Any] | None:
    """A service's Kwiken plan in force (`GET /v1/workloads/{id}/kwiken/plan`,
    docs/kwiken/platform.md): per stage the reissue policy, fraction and timeout and the stopping
    rule of a partial-answer stage; the budgets, the work spent, when and why it was decided and
    the decision's id (what `sextant explain` takes). None without declared stages or a plan."""
    svc = state.kwiken.get(workload_id)
    if svc is None or svc.plan is None:
        return None
    p = svc.plan
    return {
        "workload_id": workload_id, "decided_at": p.at, "decision_id": p.decision.decision_id,
        "trigger": p.trigger, "drift": list(p.drift), "reissue_budget": p.reissue_budget,
        "loss_budget": p.loss_budget, "reissue_spent": p.reissue_spent,
        "stages": [{"stage": s.stage, "policy": s.policy, "fraction": s.fraction, "timeout_ms": s.timeout_ms,
                    "samples": s.samples,
                    "partial": None if s.partial_p is None else {
                        "p": s.partial_p, "t_c_ms": s.partial_t_c_ms, "t_d_ms": s.partial_t_d_ms,
                        "t_min_ms": 0.0 if s.partial_t_min_ms is None else s.partial_t_min_ms}}
                   for s in p.stages],
    }
