"""Decision speed of the admission and planning policies (DESIGN §7: size + place one workload on a
10 000-server cell ≤ 2 ms median; p99, backtracking and exhausted-budget rates reported).

A cell of `n` servers over 14 platforms is folded from events, about half of its cores held by
classified residents (heterogeneity, scale-up and interference rows). Then `--decisions`
workloads arrive one by one (80 % single-node batch jobs with an instruction-rate target, 10 %
analytics jobs with a completion time, 10 % services with a QPS target; rows in the target's
units). For each: ARQ admission (`decide(AdmitWorkload)`) and, when admitted, sizing + placement
(`decide(PlaceWorkload)`), each timed alone, end to end (state → decision events); their events
and an occasional completion are folded untimed, so the incremental indexes follow a moving
state as in the twin and in the planning service. The first (cold) decision builds the indexes
and is reported apart (its admission, plus its placement when admitted). A placement right after
its admission on unchanged servers reuses the admission's assessment (`planning/assess.py`), so
`admit+place` — both decisions of each placed workload — is reported too.

    .venv/bin/python bench/decision_speed.py [--sizes 1000,10000] [--decisions 300] [--json PATH]
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
from quality import code_version  # the same code version as bench/quality.py
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import INTERFERENCE_SOURCES, Allocation, Assignment, Classification
from sextant_core.decide import decide, seed_for
from sextant_core.planning.policysets import paragon_policy_set, sextant_policy_set
from sextant_core.policies import ObservedOnlyClassifier, PolicySet
from sextant_core.state import ClusterState, fold
from sextant_core.testing.builders import record

PLATFORMS = [f"P{i:02d}" for i in range(14)]
SOURCES = [s.value for s in INTERFERENCE_SOURCES]
UNITS = {"batch": 1e9, "analytics": 1e-3, "service": 1e4}  # IPS, 1/s, QPS
PROFILES = ("sextant", "paragon")


def _amdahl(c: int, f: float) -> float:
    return 1.0 / ((1.0 - f) + f / c)


def arrival(wid: str, rng: np.random.Generator, at: float, caps: dict[str, int]) -> list[ev.Event]:
    """Submission, profiling plan (scale-up on P13, the high end), classification."""
    u = rng.random()
    kind = "batch" if u < 0.8 else ("analytics" if u < 0.9 else "service")
    threads = int(rng.choice([1, 2, 4])) if kind == "batch" else 8
    unit = UNITS[kind]
    f = float(rng.uniform(0.8, 0.98))
    speed = rng.uniform(0.55, 1.0, len(PLATFORMS))
    speed /= speed.max()
    ref = "P13"
    s_ref = float(speed[PLATFORMS.index(ref)])
    ups = [c for c in (1, 2, 4, 8, 16, 32) if c <= caps[ref]]
    scale_up = {f"c{c}": unit * s_ref * _amdahl(min(c, threads), f) / _amdahl(threads, f) for c in ups}
    het = {p: unit * float(s) * _amdahl(1, f) / _amdahl(threads, f) for p, s in zip(PLATFORMS, speed, strict=True)}
    target: dict[str, Any]
    scale_out: dict[str, float] = {}
    if kind == "batch":
        target = {"type": "instruction_rate", "ips": 0.9 * unit}
    else:
        scale_out = {f"n{k}": k * unit * s_ref * (0.97 ** (k - 1)) for k in (1, 2, 4, 8)}
        nodes = int(rng.integers(2, 6))
        if kind == "analytics":  # R = 1/T in the rows' units: aggregate ≈ nodes · U(8)
            target = {"type": "completion_time", "seconds": 1.0 / (nodes * unit * s_ref * 0.9)}
        else:
            target = {"type": "throughput_latency", "qps": nodes * unit * s_ref * 0.9, "p99_latency_ms": 1.0}
    run = ev.ProfileRun(run_id=f"{wid}-r0", classification=Classification.SCALE_UP, column="c1", platform=ref)
    return [
        ev.WorkloadSubmitted(at=at, workload_id=wid, tenant="t", kind=kind, target=target,
                             spec={"type": "twin", "ref": wid}, requested_cores=threads,
                             requested_memory_gb=2.0 * threads),
        ev.ProfilingPlanned(at=at, workload_id=wid, runs=(run,), decision=record(1)),
        ev.ProfilingCompleted(at=at, workload_id=wid, samples=1),
        ev.WorkloadClassified(at=at, workload_id=wid, decision=record(2), heterogeneity=het, scale_up=scale_up,
                              scale_out=scale_out,
                              tolerated={s: float(v) for s, v in zip(SOURCES, rng.uniform(40, 100, 10), strict=True)},
                              caused={s: float(v) for s, v in zip(SOURCES, rng.uniform(0, 25, 10), strict=True)}),
    ]


def cell(n: int, seed: int) -> tuple[ClusterState, list[str], dict[str, int]]:
    """n servers (4–32 cores, the platform decides), about half of the cores held by residents."""
    rng = np.random.default_rng(seed)
    caps = {p: [4, 8, 16, 32][i % 4] for i, p in enumerate(PLATFORMS)}
    caps["P13"] = 32
    events: list[ev.Event] = []
    for i in range(n):
        p = PLATFORMS[i % len(PLATFORMS)]
        events.append(ev.ServerRegistered(at=0, server_id=f"srv{i:05d}", platform=p,
                                          capacity={"cores": caps[p], "memory_gb": float(caps[p] * 4)}))
    residents = []
    for i in range(n):
        free = caps[PLATFORMS[i % len(PLATFORMS)]] // 2
        k = 0
        while free > 0:
            c = min(free, int(rng.integers(1, 5)))
            wid = f"r{i:05d}-{k}"
            events += arrival(wid, rng, 1.0, caps)
            a = Allocation(assignments=(Assignment(server_id=f"srv{i:05d}", cores=c, memory_gb=2.0 * c),))
            events += [ev.WorkloadAdmitted(at=1.0, workload_id=wid, decision=record(3), arq_class=0),
                       ev.PlacementDecided(at=1.0, workload_id=wid, decision=record(4), allocation=a),
                       ev.WorkloadStarted(at=1.0, workload_id=wid, allocation=a)]
            residents.append(wid)
            free -= c
            k += 1
    return fold(events), residents, caps


def policy(name: str) -> PolicySet:
    """`sextant` (or `sextant@VERSION`, an earlier planner version kept for replay) or `paragon`."""
    base, _, version = name.partition("@")
    if base == "sextant":
        return sextant_policy_set(classifier=ObservedOnlyClassifier(), **({"version": version} if version else {}))
    return paragon_policy_set(classifier=ObservedOnlyClassifier())


def _stats(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    if not times:
        return {"median_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0, "max_ms": 0.0}
    return {"median_ms": statistics.median(times), "p99_ms": times[int(0.99 * (len(times) - 1))],
            "mean_ms": statistics.fmean(times), "max_ms": times[-1]}


def run(state: ClusterState, residents: list[str], caps: dict[str, int], profile: str, decisions: int,
        seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed + 1)
    params = policy(profile)
    place_t: list[float] = []
    place_cpu: list[float] = []  # the placement's CPU time (thread time: the load of other processes left out)
    admit_t: list[float] = []
    both_t: list[float] = []
    cold = 0.0
    counts = dict(placed=0, scale_out=0, deferred=0, queued=0, backtracked=0, exhausted=0)
    residents = list(residents)
    for k in range(decisions + 1):
        wid = f"new-{k}"
        at = 2.0 + k
        state = fold(arrival(wid, rng, at, caps), state)
        c: cmd.Command = cmd.AdmitWorkload(workload_id=wid)
        t0 = time.perf_counter_ns()
        d = decide(state, c, params=params, seed=seed_for(c, state), at=at)
        dt_admit = (time.perf_counter_ns() - t0) / 1e6
        if k == 0:
            cold = dt_admit
        state = fold(d.events, state)
        if not d.events or not isinstance(d.events[0], ev.WorkloadAdmitted):
            counts["queued"] += 1
            continue
        c = cmd.PlaceWorkload(workload_id=wid)
        c0 = time.thread_time_ns()
        t0 = time.perf_counter_ns()
        d = decide(state, c, params=params, seed=seed_for(c, state), at=at)
        dt = (time.perf_counter_ns() - t0) / 1e6
        dc = (time.thread_time_ns() - c0) / 1e6
        if k == 0:
            cold += dt
        else:
            place_t.append(dt)
            place_cpu.append(dc)
            admit_t.append(dt_admit)
            both_t.append(dt_admit + dt)
        e = d.events[0]
        trace = getattr(e, "trace", None)
        if trace is not None:
            counts["backtracked"] += trace.backtracks > 0
            counts["exhausted"] += trace.budget_exhausted
        if isinstance(e, ev.PlacementDecided):
            counts["placed"] += 1
            counts["scale_out"] += len(e.allocation.assignments) > 1
            state = fold(d.events + (ev.WorkloadStarted(at=at, workload_id=wid, allocation=e.allocation),), state)
            residents.append(wid)
        else:
            counts["deferred"] += 1
            state = fold(d.events, state)
        if k % 2 == 0 and residents:  # churn: a resident completes
            gone = residents.pop(int(rng.integers(0, len(residents))))
            if state.workloads[gone].phase == "running":
                state = fold([ev.WorkloadCompleted(at=at, workload_id=gone)], state)
    decided = max(1, counts["placed"] + counts["deferred"])
    return {"place": _stats(place_t), "place_cpu": _stats(place_cpu), "admit": _stats(admit_t), "admit_place": _stats(both_t), "cold_ms": cold,
            **counts,
            "backtracking_rate": counts["backtracked"] / decided, "exhausted_rate": counts["exhausted"] / decided}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--decisions", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    load_start = [round(x, 2) for x in os.getloadavg()]
    results: dict[str, Any] = {"benchmark": "decision_speed", "target_median_ms_at_10000": 2.0,
                               "code_version": code_version(),
                               "machine": {"python": sys.version.split()[0], "platform": platform.platform(),
                                           "cpus": os.cpu_count(), "processor": platform.processor()},
                               "decisions": args.decisions, "seed": args.seed, "sizes": {}}
    print(f"{'servers':>8} {'profile':<12} {'place med':>9} {'place p99':>9} {'cpu med':>8} {'admit med':>9} {'admit p99':>9} "
          f"{'a+p med':>8} {'a+p p99':>8} {'cold ms':>8} {'placed':>6} {'scale-out':>9} {'queued':>6} "
          f"{'backtrack':>9} {'exhausted':>9}")
    for n in (int(x) for x in args.sizes.split(",")):
        t0 = time.perf_counter()
        state, residents, caps = cell(n, args.seed)
        per: dict[str, Any] = {"setup_s": round(time.perf_counter() - t0, 2), "residents": len(residents),
                               "profiles": {}}
        for profile in args.profiles.split(","):
            r = run(state, residents, caps, profile, args.decisions, args.seed)
            per["profiles"][profile] = r
            print(f"{n:>8} {profile:<12} {r['place']['median_ms']:>9.3f} {r['place']['p99_ms']:>9.3f} "
                  f"{r['place_cpu']['median_ms']:>8.3f} "
                  f"{r['admit']['median_ms']:>9.3f} {r['admit']['p99_ms']:>9.3f} "
                  f"{r['admit_place']['median_ms']:>8.3f} {r['admit_place']['p99_ms']:>8.3f} {r['cold_ms']:>8.1f} "
                  f"{r['placed']:>6} {r['scale_out']:>9} {r['queued']:>6} {r['backtracking_rate']:>9.3f} "
                  f"{r['exhausted_rate']:>9.3f}")
        results["sizes"][str(n)] = per
    # the machine is shared: its load at the start and at the end of the run (1, 5, 15 min)
    results["load_avg"] = {"start": load_start, "end": [round(x, 2) for x in os.getloadavg()]}
    print(f"load average {results['load_avg']}")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
