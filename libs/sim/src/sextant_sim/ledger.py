"""Per-workload ledger of one run: when each lifecycle step happened and how it ended.

Filled from the events the engine emits (so it says exactly what the log says) plus, at the end of
a workload, the world's integrals (time on a slower platform, interference, requests within the
bound). `metrics.py` turns it into the reported figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sextant_contracts import events as ev

from .cluster import Active


@dataclass(slots=True)
class Record:
    workload_id: str
    family: str
    group: str
    kind: str
    best_effort: bool
    submitted_at: float
    ideal_s: float
    needed_cores: int
    requested_cores: int
    profiled_at: float | None = None
    classified_at: float | None = None
    admitted_at: float | None = None
    placed_at: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    status: str = "pending"  # pending | completed | failed | revoked (| unfinished at the end)
    reason: str = ""
    deferrals: int = 0
    queued: int = 0
    placements: int = 0
    # from the world at the end
    run_time: float = 0.0
    het_factor: float = 1.0  # time-averaged platform factor (1 = best platform)
    intf_factor: float = 1.0  # time-averaged interference factor (1 = none)
    met_requests: float = 0.0
    offered_requests: float = 0.0
    lost_work: float = 0.0
    migrations: int = 0
    progress: float = 0.0  # fraction of its work done when it left the world (or the run ended)
    platforms: tuple[str, ...] = field(default_factory=tuple)


class Ledger:
    def __init__(self) -> None:
        self.records: dict[str, Record] = {}

    def add(self, rec: Record) -> None:
        self.records[rec.workload_id] = rec

    def on_event(self, e: ev.Event) -> None:
        wid = getattr(e, "workload_id", None)
        r = self.records.get(wid) if wid is not None else None
        if r is None:
            return
        if isinstance(e, ev.ProfilingCompleted) and r.profiled_at is None:
            r.profiled_at = e.at
        elif isinstance(e, ev.WorkloadClassified) and r.classified_at is None:
            r.classified_at = e.at
        elif isinstance(e, ev.WorkloadAdmitted) and r.admitted_at is None:
            r.admitted_at = e.at
        elif isinstance(e, ev.WorkloadQueued):
            r.queued += 1
        elif isinstance(e, ev.PlacementDeferred):
            r.deferrals += 1
        elif isinstance(e, ev.PlacementDecided):
            r.placements += 1
            if r.placed_at is None:
                r.placed_at = e.at
        elif isinstance(e, ev.WorkloadStarted) and r.started_at is None:
            r.started_at = e.at
        elif isinstance(e, ev.WorkloadCompleted):
            r.ended_at, r.status = e.at, "completed"
        elif isinstance(e, ev.WorkloadFailed):
            r.ended_at, r.status, r.reason = e.at, "failed", e.reason
        elif isinstance(e, ev.WorkloadRevoked):
            r.ended_at, r.status, r.reason = e.at, "revoked", e.reason

    def close(self, wid: str, a: Active, platforms: tuple[str, ...]) -> None:
        """Copy the world's integrals for a workload that left the world."""
        r = self.records[wid]
        r.run_time = a.run_time
        if a.run_time > 0:
            r.het_factor = a.het_time / a.run_time
            r.intf_factor = a.intf_time / a.run_time
        r.met_requests = a.met_req
        r.offered_requests = a.off_req
        r.lost_work = a.lost_work
        r.migrations = a.migrations
        r.progress = min(1.0, a.progress / a.truth.work) if a.truth.work > 0 else 1.0
        r.platforms = platforms
