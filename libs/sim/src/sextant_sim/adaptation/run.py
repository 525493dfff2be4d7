"""One twin run for bench/adaptation.py: like `runner.run_profile`, plus the sim-side baselines
(`autoscaling[-threshold]`, `hadoop-speculative`, `late`), the events kept for scoring, and the
phase-change and straggler truths.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from sextant_contracts import events as ev

from .. import baselines as sim_baselines
from ..engine import Engine
from ..oracle import OracleView
from ..runner import estimate_source, setup_of, summary_of
from ..scenarios import Scenario
from ..setup import Setup
from . import baselines

KEPT = (ev.WorkloadStarted, ev.PlacementDecided, ev.AllocationAdjusted, ev.MigrationDecided,
        ev.ReclassificationRequested, ev.ProbeRequested, ev.InterferenceProbed, ev.PerformanceObserved,
        ev.WorkloadClassified, ev.WorkloadCompleted, ev.WorkloadFailed, ev.WorkloadRevoked, ev.TasksObserved, ev.ProfileSampleRecorded)


class _Recording(Engine):
    """An engine that keeps the events scoring needs (the log itself is unchanged)."""

    kept: list[ev.Event]

    def emit(self, e: ev.Event, cause: str | None = None) -> None:
        if isinstance(e, KEPT):
            self.kept.append(e)
        super().emit(e, cause)


@dataclass(slots=True)
class Run:
    profile: str
    summary: dict[str, Any]
    engine: Engine
    events: list[ev.Event]
    phase_changes: list[tuple[str, float, int]]
    wall_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


def utilisation_view(holder: list[Engine]) -> baselines.Utilisation:
    """Mean queueing utilisation λ/μ of a service's nodes (what a cloud autoscaler's CPU metric tracks)."""

    def util(wid: str) -> float | None:
        if not holder:
            return None
        world = holder[0].world
        a = world.active.get(wid)
        if a is None or a.paused or a.truth.service is None:
            return None
        sv = a.truth.service
        lam = sv.peak_qps * a.load / len(a.nodes)
        eff = sv.node_efficiency(len(a.nodes))
        us = []
        for n in a.nodes:
            mu = sv.qps_per_core * float(a.truth.speed[world.platform[n.server]]) * a.truth.scale_up(n.cores) * eff * n.factor
            us.append(lam / mu if mu > 0 else 10.0)
        return sum(us) / len(us)

    return util


def run(scenario: str | Scenario | Setup, profile: str, seed: int = 1) -> Run:
    setup = setup_of(scenario, seed)
    started = time.perf_counter()
    view = OracleView(setup)
    holder: list[Engine] = []
    if baselines.is_baseline(profile):
        params = baselines.policy_set(profile, utilisation_view(holder))
    else:
        params = sim_baselines.policy_set(profile, estimates=estimate_source(setup, holder), oracle=view)
    engine = _Recording(setup, params)
    engine.kept = []
    holder.append(engine)
    view.bind(engine.world, engine.ledger)
    engine.run()
    wall = time.perf_counter() - started
    return Run(profile=profile, summary=summary_of(engine, wall), engine=engine, events=engine.kept,
               phase_changes=list(engine.agent.adaptation.phase_changes), wall_seconds=wall)
