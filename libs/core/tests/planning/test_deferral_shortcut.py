"""The Sextant planner's deferral memo (`SextantPlanner._still_deferred`) never changes what is
recorded, whatever the planner's cache history:

- on random clusters, a retried deferral answered by the memo is placed-or-not exactly as a full
  evaluation by a fresh planner (no memo, cold indexes) decides, and every answer the memo does not
  give is the fresh planner's outcome itself;
- a decision discarded after it was taken (a head-conditional append refused, a process killed
  before its append) leaves a memo behind: deciding again records what a fresh planner records.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sextant_contracts import events as ev
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.planning.assess import SizingParams
from sextant_core.planning.sextant import SextantParams, SextantPlanner
from sextant_core.state import ClusterState, evolve
from sextant_core.testing.builders import alloc, record

from .conftest import IPS, SOURCES, World, ctx, place

HET = {"A": 1.0, "B": 0.7}
UP = {"c1": 1.0, "c2": 1.8, "c3": 2.4, "c4": 2.8}


def planner() -> SextantPlanner:
    return SextantPlanner(SextantParams(sizing=SizingParams(margin=0.0, alpha=3.0)))


def _vector(rng: np.random.Generator, lo: float, hi: float, default: float) -> dict[str, float]:
    """One to three of the first five sources drawn in [lo, hi] (so that vectors overlap), the
    others at `default`."""
    picked = rng.choice(5, size=int(rng.integers(1, 4)), replace=False)
    return {SOURCES[i]: (float(rng.uniform(lo, hi)) if i in picked else default) for i in range(len(SOURCES))}


def _world(rng: np.random.Generator) -> tuple[World, list[str], list[str], list[str]]:
    """Servers, running residents, admitted workloads waiting to be placed later, and the
    newcomer `new` (sensitive neighbours, a heavy newcomer: it is often deferred)."""
    w = World()
    servers = [f"s{i}" for i in range(int(rng.integers(2, 6)))]
    for sid in servers:
        w.server(sid, platform=str(rng.choice(["A", "B"])), cores=int(rng.integers(2, 5)),
                 memory_gb=float(rng.integers(4, 17)))
    free = {sid: (int(c), float(m)) for sid, c, m in
            ((e.server_id, e.capacity.cores, e.capacity.memory_gb) for e in w.events)}  # type: ignore[attr-defined]
    residents: list[str] = []
    for i in range(int(rng.integers(1, 3 * len(servers) + 1))):
        sid = str(rng.choice(servers))
        cores, mem = int(rng.integers(1, 3)), float(rng.integers(1, 4))
        if free[sid][0] < cores or free[sid][1] < mem:
            continue
        free[sid] = (free[sid][0] - cores, free[sid][1] - mem)
        rid = f"r{i}"
        w.workload(rid, on=((sid, cores, mem),), tolerated=_vector(rng, 5, 40, 100), caused=_vector(rng, 0, 40, 0))
        residents.append(rid)
    waiting = [f"p{i}" for i in range(int(rng.integers(0, 4)))]
    for pid in waiting:
        w.workload(pid, memory_gb=float(rng.integers(1, 4)), tolerated=_vector(rng, 5, 60, 100),
                   caused=_vector(rng, 0, 40, 0))
    kind = str(rng.choice(["batch", "analytics", "service"]))
    target = {"type": "instruction_rate", "ips": float(rng.uniform(50, 400))} if kind != "service" else {
        "type": "throughput_latency", "qps": float(rng.uniform(50, 400)), "p99_latency_ms": 10.0}
    w.workload("new", kind=kind, target=target if rng.random() < 0.8 else IPS, heterogeneity=HET, scale_up=UP,
               cores=int(rng.integers(1, 4)) if rng.random() < 0.5 else None, memory_gb=float(rng.integers(1, 6)),
               best_effort=bool(rng.random() < 0.15), caused=_vector(rng, 40, 95, 0),
               tolerated=_vector(rng, 10, 80, 100))
    return w, servers, residents, waiting


def _change(rng: np.random.Generator, st: ClusterState, servers: list[str], residents: list[str],
            waiting: list[str], n: int) -> ClusterState:
    """One random change of the cluster around the deferred newcomer."""
    at = 10.0 + n
    roll = rng.random()
    live = [r for r in residents if st.workloads[r].phase is WorkloadPhase.RUNNING]
    if roll < 0.35 and live:  # a resident leaves
        return evolve(st, ev.WorkloadCompleted(at=at, workload_id=str(rng.choice(live))))
    if roll < 0.6 and waiting:  # a waiting workload is placed where it fits
        pid = waiting.pop(0)
        need = st.workloads[pid].requested_memory_gb or 1.0
        fits = [s for s in servers if st.servers[s].free_cores >= 1 and st.servers[s].free_memory_gb >= need]
        if not fits:
            return st
        a = alloc((str(rng.choice(fits)), 1, need))
        residents.append(pid)
        st = evolve(st, ev.PlacementDecided(at=at, workload_id=pid, decision=record(900 + n), allocation=a))
        return evolve(st, ev.WorkloadStarted(at=at, workload_id=pid, allocation=a))
    if roll < 0.75 and live:  # a resident is reclassified (its servers' aggregates change)
        rid = str(rng.choice(live))
        return evolve(st, ev.WorkloadClassified(at=at, workload_id=rid, decision=record(950 + n),
                                                heterogeneity=HET, scale_up=UP, tolerated=_vector(rng, 5, 100, 100),
                                                caused=_vector(rng, 0, 40, 0), reclassification=True))
    sid = str(rng.choice(servers))
    s = st.servers[sid]
    if roll < 0.85:
        return evolve(st, ev.ServerFailed(at=at, server_id=sid) if s.up else ev.ServerRecovered(at=at, server_id=sid))
    return evolve(st, ev.ServerDrained(at=at, server_id=sid)) if not s.drained else st


def test_the_memo_answers_retries_exactly_as_a_full_evaluation_on_random_clusters() -> None:
    answered = placed = deferred_first = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        world, servers, residents, waiting = _world(rng)
        st = world.state()
        p = planner()
        first = place(st, p)
        if not first.events or not isinstance(first.events[0], ev.PlacementDeferred):
            continue
        deferred_first += 1
        st = evolve(st, first.events[0])
        for n in range(12):
            st = _change(rng, st, servers, residents, waiting, n)
            w = st.workloads["new"]
            warm = p.place(st, w, ctx(20.0 + n))
            full = planner().place(st, w, ctx(20.0 + n))  # no memo, cold indexes
            if warm.trace.notes == ("still_deferred",):
                answered += 1
                assert full.allocation is None, (seed, n, full)
            else:
                assert warm.allocation == full.allocation and warm.reasons == full.reasons, (seed, n)
                assert warm.trace == full.trace and warm.predicted_performance == full.predicted_performance
            if full.allocation is not None:
                placed += 1
                break
    # the comparison is not vacuous: many deferrals, many retries answered by the memo, some placed
    assert deferred_first >= 50 and answered >= 150 and placed >= 30, (deferred_first, answered, placed)


def test_a_discarded_deferral_leaves_no_trace_in_what_is_recorded() -> None:
    # the newcomer hurts a1's resident beyond any relaxation and a2 is full: deferred
    st = (World().server("a1").server("a2", cores=2)
          .workload("r1", on=(("a1", 1, 1.0),), tolerated={s: (10.0 if s == "core" else 100.0) for s in SOURCES})
          .workload("r2", on=(("a2", 2, 1.0),))
          .workload("new", target={"type": "instruction_rate", "ips": 90.0}, heterogeneity=HET, scale_up=UP,
                    caused={s: (60.0 if s == "core" else 0.0) for s in SOURCES})
          .state())
    p = planner()
    discarded = place(st, p)  # decided, then the append is refused: never folded
    assert isinstance(discarded.events[0], ev.PlacementDeferred) and p.deferrals == {"new"}
    again: Any = place(st, p).events[0]
    cold: Any = place(st, planner()).events[0]
    assert again == cold and "still_deferred" not in again.trace.notes
    assert again.reasons == discarded.events[0].reasons  # type: ignore[attr-defined]
