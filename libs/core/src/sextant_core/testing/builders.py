"""Event builders with sensible defaults, so tests state only what matters to them."""

from __future__ import annotations

from typing import Any

from sextant_contracts import events as ev
from sextant_contracts.model import (
    Allocation,
    Assignment,
    CompletionTimeTarget,
    DecisionRecord,
    InstructionRateTarget,
    ServerCapacity,
    TwinWorkloadRef,
    WorkloadKind,
)


def record(n: int = 0, **kw: Any) -> DecisionRecord:
    base: dict[str, Any] = dict(decision_id=f"d{n}", causation=(), state_position=0,
                                profile="test", policy_version="1", seed=0)
    base.update(kw)
    return DecisionRecord(**base)


def server(server_id: str, *, platform: str = "A", cores: int = 8, memory_gb: float = 32.0,
           at: float = 0.0) -> ev.ServerRegistered:
    return ev.ServerRegistered(at=at, server_id=server_id, platform=platform,
                               capacity=ServerCapacity(cores=cores, memory_gb=memory_gb))


def submitted(workload_id: str, *, at: float = 1.0, cores: int | None = None,
              memory_gb: float | None = None, fast_path: bool = False,
              tenant: str = "t1", **kw: Any) -> ev.WorkloadSubmitted:
    return ev.WorkloadSubmitted(at=at, workload_id=workload_id, tenant=tenant, kind=WorkloadKind.BATCH,
                                target=CompletionTimeTarget(seconds=100.0),
                                spec=TwinWorkloadRef(ref=workload_id), requested_cores=cores,
                                requested_memory_gb=memory_gb, fast_path=fast_path, **kw)


def alloc(*parts: tuple[str, int, float]) -> Allocation:
    return Allocation(assignments=tuple(Assignment(server_id=s, cores=c, memory_gb=m)
                                        for s, c, m in parts))


def through_placement(workload_id: str, allocation: Allocation, at: float = 2.0) -> list[ev.Event]:
    """The events that take a submitted workload (fast path) to PLACED."""
    return [
        ev.WorkloadClassified(at=at, workload_id=workload_id, decision=record(1)),
        ev.WorkloadAdmitted(at=at, workload_id=workload_id, decision=record(2), arq_class=0),
        ev.PlacementDecided(at=at, workload_id=workload_id, decision=record(3), allocation=allocation),
    ]


def running(workload_id: str, server_id: str, at: float = 0.0, caused: float = 10.0,
            kind: WorkloadKind = WorkloadKind.BATCH) -> list[ev.Event]:
    """A rate-target workload (1e9 instructions/s) classified (tolerates 50 and causes `caused`
    points of memory bandwidth), placed on `server_id` with 2 cores and started, all at `at`."""
    a = alloc((server_id, 2, 4.0))
    return [
        ev.WorkloadSubmitted(at=at, workload_id=workload_id, tenant="t", kind=kind,
                             target=InstructionRateTarget(ips=1.0e9), spec=TwinWorkloadRef(ref=workload_id),
                             fast_path=True),
        ev.WorkloadClassified(at=at, workload_id=workload_id, decision=record(1), scale_up={"c1": 1.0e9, "c2": 1.9e9},
                              heterogeneity={"A": 1.0e9}, tolerated={"memory_bw": 50.0},
                              caused={"memory_bw": caused}),
        ev.WorkloadAdmitted(at=at, workload_id=workload_id, decision=record(2), arq_class=0),
        ev.PlacementDecided(at=at, workload_id=workload_id, decision=record(3), allocation=a),
        ev.WorkloadStarted(at=at, workload_id=workload_id, allocation=a),
    ]
