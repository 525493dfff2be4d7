"""A small cluster world for decision tests: clusters folded from real events, workloads with any
target, kind, classification rows and reference (profiling) platform, and the policy-set and
candidate-table plumbing to run one decision on it (no pytest import).

Contracts: `World` appends events in call order and `state()` is `fold` of them (servers first,
then workloads: placed residents, admitted newcomers, queued ones); decision records are numbered
by workload (`record(n)`), so two worlds built by the same calls fold to equal states. `place`
runs one `PlaceWorkload` through `decide` with the planner under test and seed `seed_for` of the
command; `table_of(n)` is a hand-made candidate table of servers s0..s{n-1}, 8 cores and 32 GiB
each, empty and up, with the given columns overridden.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import INTERFERENCE_SOURCES, Classification

from sextant_core.decide import Decision, DecisionContext, decide, seed_for
from sextant_core.placement import CandidateTable
from sextant_core.policies import AdmitAll, NoAdaptation, ObservedOnlyClassifier, PolicySet
from sextant_core.profiling.plan import DefaultProfilingPlan
from sextant_core.state import ClusterState, fold

from .builders import alloc, record

SOURCES = [s.value for s in INTERFERENCE_SOURCES]
IPS = {"type": "instruction_rate", "ips": 100.0}


def vec(default: float, **by_source: float) -> dict[str, float]:
    return {s: float(by_source.get(s, default)) for s in SOURCES}


def row10(default: float, **by_source: float) -> list[float]:
    return [float(by_source.get(s, default)) for s in SOURCES]


@dataclass
class World:
    """Servers, then workloads (placed residents or waiting newcomers), folded in order."""

    events: list[ev.Event] = field(default_factory=list)
    n: int = 0

    def server(self, sid: str, *, platform: str = "A", cores: int = 8, memory_gb: float = 32.0) -> World:
        self.events.append(ev.ServerRegistered.model_validate(dict(
            at=0.0, server_id=sid, platform=platform, capacity={"cores": cores, "memory_gb": memory_gb})))
        return self

    def workload(self, wid: str, *, kind: str = "batch", target: Mapping[str, Any] | None = None,
                 cores: int | None = None, memory_gb: float | None = 1.0, best_effort: bool = False,
                 heterogeneity: Mapping[str, float] | None = None, scale_up: Mapping[str, float] | None = None,
                 scale_out: Mapping[str, float] | None = None, tolerated: Mapping[str, float] | None = None,
                 caused: Mapping[str, float] | None = None, ref: str | None = "A", at: float = 1.0,
                 on: tuple[tuple[str, int, float], ...] | None = None, admit: bool = True,
                 confidence: Mapping[str, float] | None = None) -> World:
        self.n += 1
        e: list[ev.Event] = [ev.WorkloadSubmitted.model_validate(dict(
            at=at, workload_id=wid, tenant="t", kind=kind, target=dict(target or IPS),
            spec={"type": "twin", "ref": wid}, requested_cores=cores, requested_memory_gb=memory_gb,
            best_effort=best_effort))]
        runs = (ev.ProfileRun(run_id=f"{wid}-r0", classification=Classification.SCALE_UP, column="c1",
                              platform=ref),) if ref is not None else ()
        e += [ev.ProfilingPlanned(at=at, workload_id=wid, runs=runs, decision=record(self.n)),
              ev.ProfilingCompleted(at=at, workload_id=wid, samples=0),
              ev.WorkloadClassified(at=at, workload_id=wid, decision=record(self.n),
                                    heterogeneity=dict(heterogeneity or {}), scale_up=dict(scale_up or {}),
                                    scale_out=dict(scale_out or {}), tolerated=dict(tolerated or {}),
                                    caused=dict(caused or {}), confidence=dict(confidence or {}))]
        if admit or on is not None:
            e.append(ev.WorkloadAdmitted(at=at, workload_id=wid, decision=record(self.n), arq_class=0))
        if on is not None:
            e += [ev.PlacementDecided(at=at, workload_id=wid, decision=record(self.n), allocation=alloc(*on)),
                  ev.WorkloadStarted(at=at, workload_id=wid, allocation=alloc(*on))]
        self.events += e
        return self

    def queued(self, wid: str, arq_class: int, *, position: int = 0, **kw: Any) -> World:
        """A classified workload sitting in the queue of `arq_class`."""
        self.workload(wid, admit=False, **kw)
        self.events.append(ev.WorkloadQueued(at=1.0, workload_id=wid, decision=record(self.n), arq_class=arq_class,
                                             position=position, expected_wait_s=10.0, reason="test"))
        return self

    def state(self) -> ClusterState:
        return fold(self.events)


def policy(planner: Any, name: str = "t", admission: Any = None) -> PolicySet:
    return PolicySet(profile=name, version="1", profiling=DefaultProfilingPlan(), classifier=ObservedOnlyClassifier(),
                     admission=admission or AdmitAll(), planner=planner, reprovisioner=NoAdaptation())


def place(state: ClusterState, planner: Any, wid: str = "new", at: float = 5.0) -> Decision:
    c = cmd.PlaceWorkload(workload_id=wid)
    return decide(state, c, params=policy(planner), seed=seed_for(c, state), at=at)


def ctx(at: float = 5.0, seed: int = 7) -> DecisionContext:
    return DecisionContext(at=at, seed=seed, state_position=0, causation=(), profile="t", policy_version="1")


def chosen(d: Decision) -> tuple[tuple[str, int, float], ...]:
    e = d.events[0]
    assert isinstance(e, ev.PlacementDecided), e
    return tuple((a.server_id, a.cores, a.memory_gb) for a in e.allocation.assignments)


def table_of(n: int, *, platforms: tuple[str, ...] = ("A",), extra: Mapping[str, Any] | None = None,
             zero_pad: bool = False, **columns: Any) -> CandidateTable:
    """A hand-made table of n servers s0..s{n-1} (8 cores, 32 GiB, empty, up) with the given columns
    overridden (lists are fine); `zero_pad` pads the ids (s00..) so that they sort like rows."""
    base: dict[str, Any] = {
        "platform_code": np.zeros(n, np.int64), "up": np.ones(n, bool), "drained": np.zeros(n, bool),
        "cap_cores": np.full(n, 8, np.int64), "free_cores": np.full(n, 8, np.int64),
        "cap_memory_gb": np.full(n, 32.0), "free_memory_gb": np.full(n, 32.0),
        "residents": np.zeros(n, np.int64), "caused_sum": np.zeros((n, 10)),
        "tolerated_min": np.full((n, 10), 100.0), "best_effort_cores": np.zeros(n, np.int64),
        "best_effort_memory_gb": np.zeros(n),
    }
    for k, v in columns.items():
        base[k] = np.asarray(v, dtype=base[k].dtype)
    width = len(str(max(n - 1, 0))) if zero_pad else 0
    t = CandidateTable(server_ids=tuple(f"s{i:0{width}d}" for i in range(n)), platforms=platforms, **base)
    return t.with_extra({k: np.asarray(v) for k, v in (extra or {}).items()}) if extra else t
