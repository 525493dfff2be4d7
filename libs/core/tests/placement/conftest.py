"""Builders for placement tests: clusters made by folding real events, so the per-server
aggregates and the journal are the ones `evolve` maintains."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from sextant_contracts import events as ev
from sextant_contracts.model import INTERFERENCE_SOURCES
from sextant_core.placement import CandidateTable, PlacementRequest
from sextant_core.state import ClusterState, fold
from sextant_core.testing import world
from sextant_core.testing.builders import alloc, record, server, submitted

SOURCES = [s.value for s in INTERFERENCE_SOURCES]


def vec(default: float, **by_source: float) -> dict[str, float]:
    """A full 10-source score dict: `default` everywhere except the named sources."""
    return {s: float(by_source.get(s, default)) for s in SOURCES}


def classified(workload_id: str, *, tolerated: Mapping[str, float] | None = None,
               caused: Mapping[str, float] | None = None,
               heterogeneity: Mapping[str, float] | None = None, at: float = 2.0,
               n: int = 1) -> ev.WorkloadClassified:
    return ev.WorkloadClassified(at=at, workload_id=workload_id, decision=record(n),
                                 tolerated=dict(tolerated or {}), caused=dict(caused or {}),
                                 heterogeneity=dict(heterogeneity or {}))


@dataclass
class Cluster:
    """Collects events: servers, then residents placed where told, then admitted newcomers."""

    events: list[ev.Event] = field(default_factory=list)

    def server(self, sid: str, *, platform: str = "A", cores: int = 8, memory_gb: float = 32.0) -> Cluster:
        self.events.append(server(sid, platform=platform, cores=cores, memory_gb=memory_gb))
        return self

    def resident(self, wid: str, on: tuple[tuple[str, int, float], ...] | tuple[str, int, float],
                 *, best_effort: bool = False, **scores: Any) -> Cluster:
        parts = on if isinstance(on[0], tuple) else (on,)
        cores = sum(p[1] for p in parts)  # type: ignore[index, misc]
        mem = sum(p[2] for p in parts)  # type: ignore[index, misc]
        self.events += [submitted(wid, cores=cores, memory_gb=mem, fast_path=True, best_effort=best_effort),
                        classified(wid, **scores),
                        ev.WorkloadAdmitted(at=2.0, workload_id=wid, decision=record(2), arq_class=0),
                        ev.PlacementDecided(at=2.0, workload_id=wid, decision=record(3),
                                            allocation=alloc(*parts))]  # type: ignore[arg-type]
        return self

    def newcomer(self, wid: str, *, cores: int | None = None, memory_gb: float | None = None,
                 best_effort: bool = False, **scores: Any) -> Cluster:
        self.events += [submitted(wid, cores=cores, memory_gb=memory_gb, fast_path=True,
                                  best_effort=best_effort),
                        classified(wid, **scores),
                        ev.WorkloadAdmitted(at=2.0, workload_id=wid, decision=record(2), arq_class=0)]
        return self

    def state(self) -> ClusterState:
        return fold(self.events)


@pytest.fixture(scope="session")
def cluster() -> type[Cluster]:
    return Cluster


def table_of(n: int, *, platforms: tuple[str, ...] = ("A",), **columns: Any) -> CandidateTable:
    """`sextant_core.testing.world.table_of` with zero-padded ids (s00..), so that ids sort like rows."""
    return world.table_of(n, platforms=platforms, zero_pad=True, **columns)


def request(cores: int = 1, memory_gb: float = 1.0, *, tolerated: Any = None, caused: Any = None,
            performance: Mapping[str, float] | None = None, seed: int = 0,
            best_effort: bool = False) -> PlacementRequest:
    return PlacementRequest(workload_id="new", cores=cores, memory_gb=memory_gb,
                            performance=dict(performance or {}),
                            tolerated=np.full(10, 100.0) if tolerated is None else np.asarray(tolerated, float),
                            caused=np.zeros(10) if caused is None else np.asarray(caused, float),
                            seed=seed, best_effort=best_effort)


def src(name: str) -> int:
    """Canonical column of a source name."""
    return SOURCES.index(name)


def row10(default: float, **by_source: float) -> list[float]:
    return [float(by_source.get(s, default)) for s in SOURCES]
