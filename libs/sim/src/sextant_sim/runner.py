"""Running profiles on scenarios: `run_profile` (one) and `compare` (several on the same arrivals).

This is the Python API behind `sextant sim run|compare`:

    from sextant_sim.runner import compare, run_profile
    result = run_profile("smoke", "least-loaded", seed=1)
    result.summary["qos_met_fraction"]

A profile's result inside `compare` equals its `run_profile` result: both build the same `Setup`
from (scenario, seed) and every random draw comes from the scenario seed and the workload id.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sextant_core.policies import Classifier

from . import baselines
from .engine import Engine, Progress
from .estimates import EstimateSource
from .logsink import LogSink
from .metrics import summarize
from .oracle import oracle_view
from .scenarios import Scenario, load_scenario
from .setup import Setup, prepare


@dataclass(slots=True)
class RunResult:
    profile: str
    summary: dict[str, Any]
    engine: Engine
    wall_seconds: float
    log_sha256: str | None = None


def setup_of(scenario: str | Scenario | Setup, seed: int) -> Setup:
    """The prepared scenario: `scenario` itself, or the named / given one prepared with `seed`."""
    if isinstance(scenario, Setup):
        return scenario
    return prepare(scenario if isinstance(scenario, Scenario) else load_scenario(scenario), seed)


def estimate_source(setup: Setup, holder: list[Engine]) -> EstimateSource:
    """The twin's estimate port for `setup`; it reports a workload's current phase, read from the
    engine put in `holder` once it exists (phase 0 before, or for a workload not running)."""

    def phase_of(wid: str) -> int:
        a = holder[0].world.active.get(wid) if holder else None
        return a.phase if a is not None else 0

    return EstimateSource(setup.truths, setup.profiler, setup.cat, setup.gt, setup.seed,
                          setup.scenario.noise_scale, phase_of)


def run_profile(scenario: str | Scenario | Setup, profile: str, seed: int = 1, *, log_out: IO[str] | None = None,
                keep_log: bool = False, progress: Progress | None = None, keep_heatmap: bool = False,
                classifier: Classifier | str | None = None) -> RunResult:
    setup = setup_of(scenario, seed)
    started = time.perf_counter()
    holder: list[Engine] = []
    source = estimate_source(setup, holder)
    view = oracle_view(profile, setup, source, lambda: holder[0].state if holder else None)
    params = baselines.policy_set(profile, estimates=source, oracle=view, classifier=classifier, setup=setup)
    sink = LogSink(log_out, keep=keep_log) if (log_out is not None or keep_log) else None
    engine = Engine(setup, params, log=sink, progress=progress, keep_heatmap=keep_heatmap)
    holder.append(engine)
    view.bind(engine.world, engine.ledger)
    engine.run()
    wall = time.perf_counter() - started
    return RunResult(profile=profile, summary=summary_of(engine, wall), engine=engine, wall_seconds=wall,
                     log_sha256=None if sink is None else sink.sha256)


def summary_of(engine: Engine, wall: float) -> dict[str, Any]:
    st = engine.setup
    records = [engine.ledger.records[s.workload_id] for s in st.subs]
    first_load = {s.workload_id: s.truth.service.trace[0][1] for s in st.subs if s.truth.service is not None}
    peak = {s.workload_id: s.truth.service.peak_qps for s in st.subs if s.truth.service is not None}
    out = summarize(records, engine.world.usage, st.cat.cores, engine.now, first_load, peak)
    out.update({
        "wall_seconds": round(wall, 3),
        "events": engine.counters.events,
        "decisions": engine.counters.decisions,
        "simulated_seconds": round(engine.now, 3),
        "events_per_second": round(engine.counters.events / wall, 1) if wall > 0 else 0.0,
        "policy_version": engine.params.version,
        # profiling is accounted, not charged: its runs occupy sandbox servers (profiler.py)
        "profiling_runs_per_workload": round(engine.agent.profile_runs / len(st.subs), 4) if st.subs else 0.0,
        "profiling_server_share": round(engine.agent.profile_core_seconds / (st.cat.cores * engine.now), 6)
        if st.cat.cores and engine.now > 0 else 0.0,
    })
    return out


def compare(scenario: str | Scenario, profiles: list[str], seed: int = 1,
            progress: Progress | None = None, classifier: str = "cf") -> dict[str, Any]:
    """All `profiles` on the same arrivals; the JSON of `sextant sim compare --json`."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    setup = prepare(sc, seed)
    out: dict[str, Any] = {"scenario": sc.name, "seed": seed, "twin_version": setup.twin_version, "world": sc.world,
                           "interference_model": sc.interference_model, "noise_scale": sc.noise_scale,
                           "servers": len(setup.servers), "cores": setup.cat.cores,
                           "demand_capacity_ratio": round(setup.demand_capacity_ratio, 4),
                           "peak_demand_ratio": round(setup.peak_demand_ratio(), 4), "classifier": classifier,
                           "profiles": {}}
    for p in profiles:
        res = run_profile(setup, p, seed, progress=progress, classifier=classifier)
        out["profiles"][p] = {k: v for k, v in res.summary.items() if k != "normalized_performance"}
    return out


def write_json(data: dict[str, Any], path: str | Path) -> None:
    from sextant_contracts import codec

    Path(path).write_text(codec.dumps(data) + "\n")
