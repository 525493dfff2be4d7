"""Corral: the resource selector against Baseline, and the speed of selection and planning.

    .venv/bin/python bench/corral.py --json bench/results/corral.json [--quick] [--seeds 6-10]

What exists (milestone 1, first half): the pure core (`sextant_core.corral`). The twin's racks and
flow-level network, the W1/W2/W3 generators and Yarn-CS are not built yet, so the `batch` and
`online` keys are null; the selector runs on a request-level simulator written here:

- selector (§4.4.1): a tree of pods × racks × 40 machines × 4 VMs, 1 Gbps machine links, 10:1
  oversubscription at each level, disk 125 MB/s; per request a program with map and reduce rates
  exponential (mean 500 Mbps), selectivities log-uniform in [1/2, 2], a designated ⟨N_base, B_base⟩
  (N exponential, mean 50; B exponential, mean 500 Mbps, at most the NIC), one VM = one map and one
  reduce slot, 4 map tasks and 1 reduce task per designated VM, input N_base × 1 GB × U(0.5, 2);
  the deadline is Model A's time of the designated tuple. Poisson arrivals at 75 % target
  occupancy (λ·N·T/M). An accepted request holds its virtual cluster for its Model A time (the
  shuffle is not simulated flow by flow here; no outliers, so no late jobs and no slack study).
  Rejected = share of requests no tuple fits; goodput = input bytes of accepted requests.
- speed: CPU ms of one Corral-I selection on 64 000 VMs (16 000 machines) at ≈ 75 % occupancy
  (median of 40 requests), and CPU seconds of planning 200 jobs on 50 racks (Model B, 40 machines,
  5:1).

Fractions: negative = reduction. The claims are the worst of `--seeds`; nothing here is tuned
(the candidate grid is fixed: 16 geometric N values up to 4 × N_base, B in 5 Mbps steps).
`--quick`: 1 500 requests on 3 200 VMs per seed (the full run: 15 000 on 16 000 VMs).
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import heapq
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from quality import code_version, seeds_of

MBIT = 1e6 / 8
GB = 1e9
STRATEGIES = ("baseline", "corral-i", "corral-r", "corral-t")


def tree(pods: int, racks_per_pod: int) -> Any:
    from sextant_core.corral.selector import Tree

    return Tree(pods=pods, racks_per_pod=racks_per_pod, machines_per_rack=40, slots_per_machine=4,
                nic=1000 * MBIT, oversubscription=10.0)


def requests(seed: int, count: int) -> list[dict[str, Any]]:
    from sextant_core.corral.mrcute import JobProfile, latency_a

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(np.clip(np.ceil(rng.exponential(50.0)), 1, 400))
        b = float(np.clip(np.ceil(rng.exponential(500.0) / 5) * 5, 5, 1000)) * MBIT
        p = JobProfile(s_map=float(np.exp(rng.uniform(np.log(0.5), np.log(2.0)))),
                       s_reduce=float(np.exp(rng.uniform(np.log(0.5), np.log(2.0)))),
                       b_map_p=float(rng.exponential(500.0)) * MBIT + 1.0, b_reduce_p=float(rng.exponential(500.0)) * MBIT + 1.0,
                       b_disk=1000 * MBIT, map_tasks=4 * n, reduce_tasks=n, map_slots=1, reduce_slots=1)
        size = n * GB * float(rng.uniform(0.5, 2.0))
        out.append({"p": p, "size": size, "n": n, "b": b, "deadline": float(latency_a(p, size, n, b))})
    return out


def run_selector(seed: int, strategy: str, reqs: list[dict[str, Any]], pods: int, occupancy: float) -> dict[str, float]:
    from sextant_core.corral.selector import Candidate, Strategy, candidates, commit, release, select

    t = tree(pods, 10)
    mean_nt = float(np.mean([r["n"] * r["deadline"] for r in reqs]))
    lam = occupancy * t.vms / mean_nt
    arrivals = np.cumsum(np.random.default_rng(seed + 1000).exponential(1.0 / lam, size=len(reqs)))
    rng = np.random.default_rng(seed + 2000)
    live: list[tuple[float, int, Any]] = []
    rejected, goodput, total, occ = 0, 0.0, 0.0, []
    for i, (at, r) in enumerate(zip(arrivals, reqs, strict=True)):
        while live and live[0][0] <= at:
            release(t, heapq.heappop(live)[2])
        total += r["size"]
        if strategy == "baseline":
            cands = [Candidate(r["n"], r["b"], r["deadline"])]
        else:
            cands = candidates(r["p"], r["size"], r["deadline"], n_max=4 * r["n"], b_step=5 * MBIT,
                               b_max=1000 * MBIT, faster=2 if strategy == "corral-t" else 0)
        sel = select(t, cands, Strategy(strategy), deadline=r["deadline"], rng=rng)
        if sel is None:
            rejected += 1
        else:
            commit(t, sel.allocation)
            heapq.heappush(live, (at + sel.candidate.time, i, sel.allocation))
            goodput += r["size"]
        occ.append(t.occupancy())
    return {"rejected": rejected / len(reqs), "goodput": goodput / total, "mean_occupancy": float(np.mean(occ))}


def select_ms(seed: int, samples: int = 40) -> float:
    """Median CPU ms of one Corral-I selection on 64 000 VMs at ≈ 75 % occupancy."""
    from sextant_core.corral.selector import Strategy, candidates, commit, place, select

    t = tree(16, 25)
    reqs = requests(seed, 4000 + samples)
    rng = np.random.default_rng(seed)
    for r in reqs[:4000]:
        if t.occupancy() >= 0.75:
            break
        a = place(t, r["n"], float(r["b"]) * float(rng.uniform(0.2, 1.0)))
        if a is not None:
            commit(t, a)
    ms = []
    for r in reqs[-samples:]:
        c0 = time.thread_time()
        cands = candidates(r["p"], r["size"], r["deadline"], n_max=4 * r["n"], b_step=5 * MBIT, b_max=1000 * MBIT)
        select(t, cands, Strategy.CORRAL_I, deadline=r["deadline"])
        ms.append((time.thread_time() - c0) * 1000)
    return float(np.median(ms))


def plan_seconds(seed: int) -> float:
    from sextant_core.corral.mrcute import JobProfile, latency_b
    from sextant_core.corral.planner import plan, with_data_penalty

    rng = np.random.default_rng(seed)
    lat = np.empty((200, 50))
    sizes = rng.lognormal(np.log(7.1e9), 1.9, size=200)
    for j in range(200):
        tasks = int(np.clip(rng.lognormal(np.log(180), 1.5), 1, 20000))
        p = JobProfile(s_map=float(np.exp(rng.uniform(np.log(0.25), np.log(4)))), s_reduce=1.0, b_map_p=100e6,
                       b_reduce_p=100e6, b_disk=200e6, map_tasks=tasks, reduce_tasks=max(1, tasks // 4),
                       map_slots=20, reduce_slots=20)
        lat[j] = latency_b(p, float(sizes[j]), np.arange(1, 51), machines_per_rack=40, nic=125e6, oversubscription=5.0)
    lat = with_data_penalty(lat, sizes, 40 * 125e6 / 5)
    c0 = time.thread_time()
    plan(lat)
    return time.thread_time() - c0


def rel(x: float, base: float) -> float | None:
    return None if base == 0 else round((x - base) / base, 4)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", default="6-10")
    args = ap.parse_args()
    seeds = seeds_of(args.seeds)
    load_start = os.getloadavg()
    pods, count = (2, 1500) if args.quick else (10, 15000)
    per_seed: dict[str, Any] = {}
    print(f"{'seed':>4} {'strategy':>9} {'rejected':>9} {'goodput':>8} {'occ':>6}")
    for seed in seeds:
        reqs = requests(seed, count)
        rows = {s: run_selector(seed, s, reqs, pods, 0.75) for s in STRATEGIES}
        for s, row in rows.items():
            print(f"{seed:>4} {s:>9} {row['rejected']:>9.4f} {row['goodput']:>8.4f} {row['mean_occupancy']:>6.3f}")
        base = rows["baseline"]
        per_seed[str(seed)] = {
            "selector": {"rejected_vs_baseline": rel(rows["corral-i"]["rejected"], base["rejected"]),
                         "goodput_vs_baseline": rel(rows["corral-i"]["goodput"], base["goodput"]),
                         "strategies": {s: {k: round(v, 4) for k, v in row.items()} for s, row in rows.items()}},
            "speed": {"select_ms_median": round(select_ms(seed), 2), "plan_200_seconds": round(plan_seconds(seed), 3)},
        }
        print(f"{seed:>4} speed: select {per_seed[str(seed)]['speed']['select_ms_median']} ms CPU, "
              f"plan 200 jobs x 50 racks {per_seed[str(seed)]['speed']['plan_200_seconds']} s CPU")
    def worst_of(part: str, key: str) -> float | None:
        vals = [v[part][key] for v in per_seed.values() if v[part][key] is not None]
        if not vals:
            return None
        return max(vals) if key in ("rejected_vs_baseline", "select_ms_median", "plan_200_seconds") else min(vals)
    worst = {"selector": {k: worst_of("selector", k) for k in ("rejected_vs_baseline", "goodput_vs_baseline")},
             "speed": {k: worst_of("speed", k) for k in ("select_ms_median", "plan_200_seconds")}}
    doc = {"benchmark": "corral", "code_version": code_version(), "seeds": seeds, "quick": args.quick,
           "setup": {"requests_per_seed": count, "vms": pods * 10 * 40 * 4, "occupancy_target": 0.75,
                     "oversubscription": 10, "speed_vms": 64000},
           "batch": None, "online": None,
           "selector": worst["selector"], "speed": worst["speed"],
           "per_seed": per_seed, "worst": worst,
           "not_built": "twin racks + flow-level network, W1/W2/W3, Yarn-CS baselines, LP-Online: batch and online are null",
           "load_avg": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]}}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
    print("worst:", json.dumps(worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
