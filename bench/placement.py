"""Placement decision speed (DESIGN §7: size + place one workload on a 10 000-server cell ≤ 2 ms median).

For each cell size, a cluster of `n` servers over 14 platforms is folded from events with about
half of its cores taken by classified residents. Then, per profile, `--decisions` workloads
arrive one by one; each decision is `decide(PlaceWorkload)` end to end (request, incremental
table, filters, scores, selection, trace, decision event) and is timed alone; its events and
an occasional completion are folded untimed before the next arrival, so the planner's index
follows a moving state as it does in the twin and the planning service. `composite` is not a
baseline: it has the shape of Paragon's placement (D1 + D2 filters, platform,
interference-fit and least-added-pressure scores) and shows the headroom left for it. The cold first decision
(full table build) is reported separately and excluded from the median/p99.

    .venv/bin/python bench/placement.py [--sizes 1000,10000] [--decisions 300] [--json PATH]
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any

import numpy as np
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import INTERFERENCE_SOURCES, Allocation, Assignment
from sextant_core.decide import decide, seed_for
from sextant_core.placement import ProfilePlanner, make_profile, planner_for
from sextant_core.policies import AdmitAll, NoAdaptation, ObservedOnlyClassifier, PolicySet
from sextant_core.profiling.plan import DefaultProfilingPlan
from sextant_core.state import ClusterState, fold
from sextant_core.testing.builders import record

PLATFORMS = [f"P{i:02d}" for i in range(14)]
PROFILES = ("least-loaded", "heterogeneity-oblivious", "interference-oblivious", "random", "composite")
# Paragon's shape, to show the headroom left for it: both interference filters, platform and best-fit scores
COMPOSITE = make_profile("composite", filters=["fit", "interference-d1", "interference-d2"],
                         scorers=[("platform", 10.0), ("interference-fit", 1.0), ("least-added-pressure", 1.0)])
SOURCES = [s.value for s in INTERFERENCE_SOURCES]


def arrival(wid: str, rng: np.random.Generator, at: float) -> list[ev.Event]:
    """Submission, classification (random heterogeneity and interference) and admission."""
    cores = int(rng.integers(1, 5))
    het = {p: float(v) for p, v in zip(PLATFORMS, rng.uniform(0.5, 2.0, len(PLATFORMS)), strict=True)}
    return [
        ev.WorkloadSubmitted(at=at, workload_id=wid, tenant="t", kind="batch",
                             target={"type": "instruction_rate", "ips": 1.0}, spec={"type": "twin", "ref": wid},
                             requested_cores=cores, requested_memory_gb=2.0 * cores, fast_path=True),
        ev.WorkloadClassified(at=at, workload_id=wid, decision=record(1), heterogeneity=het,
                              tolerated={s: float(v) for s, v in zip(SOURCES, rng.uniform(40, 100, 10), strict=True)},
                              caused={s: float(v) for s, v in zip(SOURCES, rng.uniform(0, 25, 10), strict=True)}),
        ev.WorkloadAdmitted(at=at, workload_id=wid, decision=record(2), arq_class=0),
    ]


def cell(n: int, seed: int) -> tuple[ClusterState, list[str]]:
    """n servers (8–32 cores), about half the cores held by classified residents."""
    rng = np.random.default_rng(seed)
    events: list[ev.Event] = []
    caps = rng.choice([8, 16, 24, 32], n)
    for i in range(n):
        events.append(ev.ServerRegistered(at=0, server_id=f"srv{i:05d}", platform=PLATFORMS[i % len(PLATFORMS)],
                                          capacity={"cores": int(caps[i]), "memory_gb": float(caps[i] * 4)}))
    residents = []
    for i in range(n):
        free = int(caps[i]) // 2
        k = 0
        while free > 0:
            c = min(free, int(rng.integers(1, 5)))
            wid = f"r{i:05d}-{k}"
            events += arrival(wid, rng, 1.0)[:3]
            events.append(ev.PlacementDecided(at=1.0, workload_id=wid, decision=record(3), allocation=Allocation(
                assignments=(Assignment(server_id=f"srv{i:05d}", cores=c, memory_gb=2.0 * c),))))
            residents.append(wid)
            free -= c
            k += 1
    return fold(events), residents


def policy(name: str) -> PolicySet:
    return PolicySet(profile=name, version="1", profiling=DefaultProfilingPlan(), classifier=ObservedOnlyClassifier(),
                     admission=AdmitAll(), reprovisioner=NoAdaptation(),
                     planner=ProfilePlanner(COMPOSITE) if name == "composite" else planner_for(name))


def run(state: ClusterState, residents: list[str], profile: str, decisions: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    params = policy(profile)
    times: list[float] = []
    cold = 0.0
    placed = scale_out = deferred = 0
    residents = list(residents)
    for k in range(decisions + 1):
        wid = f"new-{k}"
        state = fold(arrival(wid, rng, 2.0 + k), state)
        c = cmd.PlaceWorkload(workload_id=wid)
        t0 = time.perf_counter_ns()
        d = decide(state, c, params=params, seed=seed_for(c, state), at=2.0 + k)
        dt = (time.perf_counter_ns() - t0) / 1e6
        if k == 0:
            cold = dt
        else:
            times.append(dt)
        e = d.events[0]
        if isinstance(e, ev.PlacementDecided):
            placed += 1
            scale_out += len(e.allocation.assignments) > 1
            residents.append(wid)
        else:
            deferred += 1
        state = fold(d.events, state)
        if k % 2 == 0 and residents:  # churn: complete a resident
            gone = residents.pop(int(rng.integers(0, len(residents))))
            w = state.workloads[gone]
            if w.phase == "placed":
                state = fold([ev.WorkloadCompleted(at=2.0 + k, workload_id=gone)], state)
    times.sort()
    stats = params.planner.index.stats  # type: ignore[attr-defined]
    return {"median_ms": statistics.median(times), "p99_ms": times[int(0.99 * (len(times) - 1))],
            "mean_ms": statistics.fmean(times), "max_ms": times[-1], "cold_ms": cold,
            "decisions": len(times), "placed": placed, "scale_out": scale_out, "deferred": deferred,
            "index_rebuilds": stats.rebuilds, "index_syncs": stats.syncs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--decisions", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    results: dict[str, Any] = {"benchmark": "placement", "target_median_ms_at_10000": 2.0,
                               "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                                           "cpus": os.cpu_count()},
                               "decisions": args.decisions, "seed": args.seed, "sizes": {}}
    print(f"{'servers':>8} {'profile':<26} {'median ms':>9} {'p99 ms':>8} {'mean ms':>8} {'cold ms':>8} "
          f"{'placed':>6} {'scale-out':>9} {'rebuilds':>8} {'syncs':>6}")
    for n in (int(x) for x in args.sizes.split(",")):
        t0 = time.perf_counter()
        state, residents = cell(n, args.seed)
        setup = time.perf_counter() - t0
        per: dict[str, Any] = {"setup_s": round(setup, 2), "residents": len(residents), "profiles": {}}
        for profile in PROFILES:
            r = run(state, residents, profile, args.decisions, args.seed)
            per["profiles"][profile] = r
            print(f"{n:>8} {profile:<26} {r['median_ms']:>9.3f} {r['p99_ms']:>8.3f} {r['mean_ms']:>8.3f} "
                  f"{r['cold_ms']:>8.1f} {r['placed']:>6} {r['scale_out']:>9} {r['index_rebuilds']:>8} "
                  f"{r['index_syncs']:>6}")
        results["sizes"][str(n)] = per
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
