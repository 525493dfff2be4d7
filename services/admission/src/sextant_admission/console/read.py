"""The console's read models: pure functions of the admission decider's state (and of envelopes),
always given the caller's scope (`Principal.scope`: one tenant, or None for an operator).

A tenant's scope hides every other tenant's workload — from listings, counts, queues, the log
and its live tail — and a workload outside the scope is answered exactly like a missing one.
Events that belong to no workload (servers, models, ticks) are an operator's only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sextant_contracts.envelope import Envelope
from sextant_core.admission.queues import class_queues
from sextant_core.state.model import ClusterState, WorkloadState

from .. import views

WORKLOAD_STREAM = "workload-"
QOS_FILTERS = ("met", "missed", "unmeasured")
# the rows of a classification (WorkloadClassified) and the classification their confidence is of
ROWS = (("scale_up", "scale_up"), ("scale_out", "scale_out"), ("heterogeneity", "heterogeneity"),
        ("tolerated", "interference"), ("caused", "interference"))


def visible(state: ClusterState, scope: str | None, workload_id: str) -> WorkloadState | None:
    w = state.workloads.get(workload_id)
    return w if w is not None and (scope is None or w.tenant == scope) else None


def stream_visible(state: ClusterState, scope: str | None, stream: str) -> bool:
    """May `scope` see an event of `stream`? (the decider must have folded the event first)"""
    if scope is None:
        return True
    return stream.startswith(WORKLOAD_STREAM) and \
        visible(state, scope, stream[len(WORKLOAD_STREAM):]) is not None


def qos_of(w: WorkloadState) -> str:
    return "unmeasured" if w.last_verdict is None else ("met" if w.last_verdict else "missed")


@dataclass(frozen=True)
class Filters:
    tenant: str | None = None
    kind: str | None = None
    state: str | None = None
    qos: str | None = None


@dataclass
class Page:
    rows: list[dict[str, Any]]
    matching: int
    next_after: str | None


def listing(state: ClusterState, scope: str | None, f: Filters, *, after: str | None, limit: int) -> Page:
    """One page of the workloads in scope matching `f`, by id after `after`; `matching` counts all
    that match (one pass over the state's workloads: tens of thousands take milliseconds)."""
    tenant = scope if scope is not None else f.tenant
    rows: list[dict[str, Any]] = []
    matching = 0
    more = False
    for wid, w in sorted(state.workloads.items()):
        if (tenant and w.tenant != tenant) or (f.kind and w.kind.value != f.kind) \
                or (f.state and w.phase.value != f.state) or (f.qos and qos_of(w) != f.qos):
            continue
        matching += 1
        if after is not None and wid <= after:
            continue
        if len(rows) < limit:
            rows.append({**views.view(state, w), "qos_state": qos_of(w)})
        else:
            more = True
    return Page(rows, matching, rows[-1]["id"] if more and rows else None)


def overview(state: ClusterState, scope: str | None) -> dict[str, Any]:
    """Counts per phase, QoS met / missed, the ARQ queue per class; an operator also the servers."""
    mine = [w for _, w in sorted(state.workloads.items()) if scope is None or w.tenant == scope]
    out: dict[str, Any] = {
        "position": state.position, "now": state.now, "scope": scope,
        "phases": dict(sorted(Counter(w.phase.value for w in mine).items())),
        "qos": dict(sorted(Counter(qos_of(w) for w in mine).items())),
        "queues": [(k, [wid for wid in q if visible(state, scope, wid)])
                   for k, q in enumerate(class_queues(state))],
        "total": len(mine),
    }
    if scope is None:
        servers = state.sorted_servers()
        out["servers"] = [{"id": s.server_id, "platform": s.platform, "up": s.up, "cores": s.capacity.cores,
                           "used": s.used_cores, "load": s.used_cores / s.capacity.cores if s.capacity.cores else 0.0,
                           "residents": len(s.residents)} for s in servers]
        out["cores"] = sum(s.capacity.cores for s in servers if s.up)
        out["cores_used"] = sum(s.used_cores for s in servers if s.up)
    return out


def classification_rows(w: WorkloadState) -> list[dict[str, Any]]:
    """The latest classification's five rows, each with the confidence of its classification."""
    c = w.classification
    if c is None:
        return []
    out = []
    for row, of in ROWS:
        values: dict[str, float] = getattr(c, row)
        if values:
            out.append({"row": row, "classification": of, "confidence": c.confidence.get(of),
                        "model": c.model_versions.get(of, ""), "values": sorted(values.items())})
    return out


def measured(w: WorkloadState) -> list[dict[str, float]]:
    """Measured performance over time as a ratio to the target (1.0 = exactly the target; the
    target's own unit is on the page): the observations the state keeps, oldest first."""
    return [{"at": at, "ratio": ratio} for at, ratio, _ in w.observed]


def event_row(env: Envelope) -> dict[str, Any]:
    decision = env.payload.get("decision") or {}
    return {"position": env.position, "type": env.type, "stream": env.stream, "source": env.source,
            "time": env.time, "decision": decision.get("decision_id", ""),
            "workload": env.stream[len(WORKLOAD_STREAM):] if env.stream.startswith(WORKLOAD_STREAM) else ""}
