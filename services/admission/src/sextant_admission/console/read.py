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
from sextant_contracts.model import INTERFERENCE_SOURCES
from sextant_core.admission.queues import class_queues
from sextant_core.domain.lifecycle import HOLDING, TERMINAL
from sextant_core.state.model import ClusterState, WorkloadState

from .. import views

WORKLOAD_STREAM = "workload-"
TEMPLATE_STREAM = "template-"
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
    if stream.startswith(TEMPLATE_STREAM):  # a recurring template's: its tenant's
        t = state.recurring.templates.get(stream[len(TEMPLATE_STREAM):])
        return t is not None and t.tenant == scope
    if stream == f"tenant-{scope}":  # its own VC capacity; the allocation between tenants is operators'
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


HEAT_STEPS = 5  # colour buckets of the heat map (`heat0` .. `heat4` in console.css)


def heat(value: float) -> int:
    """The heat map bucket of a share in [0, 1] (values outside are clamped)."""
    return min(HEAT_STEPS - 1, max(0, int(value * HEAT_STEPS)))


def servers(state: ClusterState) -> dict[str, Any]:
    """Every server (an operator's view): load (cores used / cores), the interference pressure its
    residents cause per source (`ServerState.caused_sum`, 0..100 per resident: a share of 100 for
    the heat map's colour, the number as is), and who runs there (workload, tenant)."""
    rows = []
    for s in state.sorted_servers():
        load = s.used_cores / s.capacity.cores if s.capacity.cores else 0.0
        residents = [(wid, w.tenant if (w := state.workloads.get(wid)) is not None else "") for wid in s.residents]
        rows.append({"id": s.server_id, "platform": s.platform, "up": s.up, "drained": s.drained,
                     "cores": s.capacity.cores, "used": s.used_cores, "load": load, "load_heat": heat(load),
                     "pressure": [(p, heat(p / 100.0)) for p in s.caused_sum], "residents": residents})
    return {"sources": [src.value for src in INTERFERENCE_SOURCES], "rows": rows, "position": state.position}


def tenants_usage(state: ClusterState, scope: str | None) -> dict[str, dict[str, Any]]:
    """Per tenant in scope (every tenant that has a workload, for an operator): its workloads, the
    live ones, the cores its placed and running workloads hold, and the QoS of its latest verdicts."""
    out: dict[str, dict[str, Any]] = {}
    for _, w in sorted(state.workloads.items()):
        if scope is not None and w.tenant != scope:
            continue
        u = out.setdefault(w.tenant, {"workloads": 0, "live": 0, "cores": 0, "met": 0, "missed": 0,
                                      "unmeasured": 0, "phases": Counter()})
        u["workloads"] += 1
        u["phases"][w.phase.value] += 1
        if w.phase not in TERMINAL:
            u["live"] += 1
        if w.phase in HOLDING and w.allocation is not None:
            u["cores"] += w.allocation.total_cores
        u[qos_of(w)] += 1
    for u in out.values():
        u["phases"] = dict(sorted(u["phases"].items()))
    return dict(sorted(out.items()))


def qos_over_time(state: ClusterState, scope: str | None, bins: int = 60) -> dict[str, list[float]]:
    """QoS met over time for the overview's chart: the observations of the workloads in scope
    (`WorkloadState.observed`), in `bins` equal spans of time, each with the share of its
    observations at or above the target (ratio ≥ 1). Spans without an observation are left out."""
    points = [(at, ratio) for _, w in sorted(state.workloads.items()) if scope is None or w.tenant == scope
              for at, ratio, _ in w.observed]
    if not points:
        return {"t": [], "met": []}
    lo, hi = min(p[0] for p in points), max(p[0] for p in points)
    width = (hi - lo) / bins or 1.0
    met, seen = [0] * bins, [0] * bins
    for at, ratio in points:
        k = min(bins - 1, int((at - lo) / width))
        seen[k] += 1
        met[k] += ratio >= 1.0
    keep = [k for k in range(bins) if seen[k]]
    return {"t": [round(lo + (k + 0.5) * width, 3) for k in keep],
            "met": [round(met[k] / seen[k], 4) for k in keep]}
