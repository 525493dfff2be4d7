"""Corral: the resource selector against Baseline, and the speed of selection and planning.

    .venv/bin/python bench/corral.py --json bench/results/corral.json [--quick] [--seeds 6-10]

Parts (`--parts`, default all; parts not run are kept from an existing `--json` file):

- batch (§4.5, the Corral twin `sextant_sim.corral`): W1, W2, W3 on 7 racks × 30 machines × 16
  containers, 10 Gbps NICs, 5:1 core, background up to 50 % of each core link; Corral (offline
  plan, one input replica in the job's racks, rack-restricted priority scheduling) against Yarn-CS
  (FIFO capacity scheduler, delay scheduling with node-locality delay 30, random replicas), same
  seed. Per workload: makespan and cross-rack bytes vs Yarn-CS, and lp_gap = the plan's makespan
  (on its Model B latencies) vs the LP-Batch bound on the same latencies. `--plan-oversubscription`
  is the O the planner assumes (chosen on seeds 1–5, see docs/corral/twin.md). Beside them, reported
  (no bar): LocalShuffle (Corral's plan and task placement, random replicas) and ShuffleWatcher-like
  (each job alone in the racks minimising its own cross-rack bytes, random replicas, FIFO), and a
  fourth, real workload, SWIM (200 jobs of the Facebook 2010 SWIM samples); `baselines` holds their
  range over the seeds.
- online: the same jobs arriving uniformly over 60 minutes (Corral's online plan, Yarn-CS by
  arrival): median job completion time vs Yarn-CS per workload, and lp_gap = the plan's mean
  completion − arrival (on its Model B latencies) vs the LP-Online bound on the same latencies
  (`lp_gap_thesis_path`: the thesis's provisioning path alone); `online` holds the worst over
  workloads and seeds. SWIM (the 200-job sample) runs online too, reported beside the bar
  (`swim_median_jct_vs_yarn`, `swim_lp_gap`), not in it.
- online-sweep (diagnosis, no bar; docs/corral/online.md): the online scenario at `--sweep-loads`
  times its work over the same hour, on W1, W2, W3 (`--sweep-mode sizes`: every job's bytes × K;
  `jobs`: K times the jobs): Corral and Yarn-CS median and mean JCT, queueing share, container busy
  share (mean, peak), core-link utilisation and saturation, the isolated-floor headroom, and the
  plan vs LP-Online (`sextant_sim.corral.online_load`; LP-Online only up to `--sweep-lp-jobs`
  jobs). JSON key `online_sweep`: per seed, `W/K` rows; `worst` holds the worst median vs
  Yarn-CS per workload and load.
- robustness (§4.6, reported, no bar): the online scenario with the planner told job sizes off by
  U(−50 %, +50 %) and half the jobs starting U(−4, +4) min off schedule
  (`sextant_sim.corral.perturbation`); Corral vs Yarn-CS median (and mean) JCT with and without the
  perturbation, on W1 (100 jobs over the hour) and W1x10 (1 000: the load where Corral gains on
  this twin, docs/corral/twin.md "Online").
- replan (§4.4 × §4.6, reported, no bar; stored as `runtime.replan_under_perturbation`): W1 (the
  robustness part's 100 jobs over the hour) and W1s10 (W1's 100 jobs with bytes × 10: the thesis's mean JCT,
  docs/corral/online.md), perturbed, with Corral re-planning every `--replan-period` seconds on what
  it has observed (a job's true arrival and size once it has arrived, the told ones before):
  median and mean JCT vs Yarn-CS without and with re-planning, and `recovered`: the share of the
  perturbation's loss (perturbed − nominal median) the re-plan wins back.
- selector (§4.4.1): a tree of pods × racks × 40 machines × 4 VMs, 1 Gbps machine links, 10:1
  oversubscription at each level, disk 125 MB/s; per request a program with map and reduce rates
  exponential (mean 500 Mbps), selectivities log-uniform in [1/2, 2], a designated ⟨N_base, B_base⟩
  (N exponential, mean 50; B exponential, mean 500 Mbps, at most the NIC), one VM = one map and one
  reduce slot, 4 map tasks and 1 reduce task per designated VM, input N_base × 1 GB × U(0.5, 2);
  the deadline is Model A's time of the designated tuple. Poisson arrivals at 75 % target
  occupancy λ·N·T/M, counted over the simulated window (`arrival_rate`: Model A times are
  heavy-tailed, and λ from the mean N·T over all requests loaded the cluster to 15 %). An accepted
  request holds its virtual cluster for its Model A time (the shuffle is not simulated flow by flow
  here; no outliers, so no late jobs and no slack study). Rejected = share of requests no tuple
  fits; goodput = input bytes of accepted requests over those of all requests.
- runtime (§4.4, the Corral twin; reported, no bars): *failure*, per workload (batch): the rack
  holding the most planned rack-time (ties: lowest index) goes down at half of Corral's makespan
  without failure, for `--fail-duration` seconds; Yarn-CS, Corral without fall-back, Corral with
  fall-back (threshold 0.5: a majority of a rack) and with fall-back and re-planning every
  `--replan-period` seconds, all with the same failure: `makespan_vs_yarn` (fall-back vs Yarn-CS),
  `fallback_vs_no_fallback`, `replan_vs_fallback`. *adhoc* (W1, online): the 100 recurring jobs
  arriving over 60 minutes are planned; `--adhoc-share` of all jobs are ad hoc (W1 jobs of another
  stream, the thesis's §4.5.5 mix: a batch at t = 0, random replicas, Yarn-CS-like service after
  the planned jobs of a rack); planned median JCT and makespan, ad hoc median and p90 JCT and
  makespan vs Yarn-CS (every job on Yarn-CS), and with re-planning (`replan_vs_plan`: planned
  median JCT with re-planning vs without).
- speed: CPU ms of one Corral-I selection on 64 000 VMs (16 000 machines) at ≈ 75 % occupancy
  (median of 40 requests), and CPU seconds of planning 200 jobs on 50 racks (Model B, 40 machines,
  5:1).

Fractions: negative = reduction. The claims are the worst of `--seeds`; the selector has no
tuned parameter (candidates: every wave breakpoint N up to 4 × N_base, B in 5 Mbps steps); the
twin's one planner parameter is `--plan-oversubscription`. `quick_parts` says which parts ran
with `--quick` (parts kept from an earlier run keep theirs).
`--quick`: 1 500 requests on 3 200 VMs per seed (the full run: 15 000 on 16 000 VMs), and the
twin's task counts divided by 4 (same bytes, larger tasks).
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
from sextant_sim.corral import TWIN_VERSION

MBIT = 1e6 / 8
PLAN_O = 5.0  # the planner's assumed core oversubscription (chosen on seeds 1-5)
GB = 1e9
ALL_PARTS = ("batch", "online", "robustness", "selector", "speed", "runtime", "online-sweep", "replan")
SWEEP_LOADS = "1,2,5,10,20"
SWEEP_LP_JOBS = 1000  # LP-Online's size grows with the job count: above this, no bound
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
    unit = np.cumsum(np.random.default_rng(seed + 1000).exponential(1.0, size=len(reqs)))  # arrivals at rate 1
    arrivals = unit / arrival_rate(unit, reqs, t.vms, occupancy)
    rng = np.random.default_rng(seed + 2000)
    live: list[tuple[float, int, Any]] = []
    rejected, slots_free, goodput, total, occ = 0, 0, 0.0, 0.0, []
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
            slots_free += int(t.free.sum()) >= min((c.n for c in cands), default=0)
        else:
            commit(t, sel.allocation)
            heapq.heappush(live, (at + sel.candidate.time, i, sel.allocation))
            goodput += r["size"]
        occ.append(t.occupancy())
    return {"rejected": rejected / len(reqs), "goodput": goodput / total, "mean_occupancy": float(np.mean(occ)),
            "rejected_with_free_slots": slots_free / max(rejected, 1)}  # refused by link bandwidth, not VM slots


def offered_occupancy(unit: np.ndarray, reqs: list[dict[str, Any]], vms: int, lam: float) -> float:
    """λ·N·T / M over the simulated window: the VM-time Baseline's tuples ask for (each request
    counted until the last arrival) over the window's VM-time, arrivals at `unit` / λ."""
    n = np.array([r["n"] for r in reqs], dtype=float)
    t = np.array([r["deadline"] for r in reqs])
    return float((n * np.minimum(lam * t, unit[-1] - unit)).sum() / (vms * unit[-1]))


def arrival_rate(unit: np.ndarray, reqs: list[dict[str, Any]], vms: int, occupancy: float) -> float:
    """The Poisson rate λ whose offered occupancy over the window is `occupancy` (bisection; the
    offered occupancy grows with λ). Model A times are heavy-tailed (rates exponential down to
    ~0): one request can hold over half of Σ N·T for a hundred windows, so λ = occupancy·M / mean(N·T)
    left the cluster at 15 % occupancy (seed 1, full size); the window-truncated load is the 75 %
    the thesis targets."""
    lo, hi = 1e-9, 1e3
    for _ in range(100):
        mid = float(np.sqrt(lo * hi))
        lo, hi = (mid, hi) if offered_occupancy(unit, reqs, vms, mid) < occupancy else (lo, mid)
    return float(np.sqrt(lo * hi))


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


WORKLOADS = ("W1", "W2", "W3")
FAIL_DURATION = 600.0  # seconds a failed rack stays down (a scenario parameter, set on seeds 1-5)
REPLAN_PERIOD = 600.0  # seconds between re-plans (set on seeds 1-5)
ADHOC_SHARE = 0.25  # ad hoc jobs / all jobs in the ad hoc mix (the brief: 20-30 %)
FALLBACK = 0.5  # a majority of a rack's machines down (the spec's "majority")
RUNTIME_KEYS = ("makespan_vs_yarn", "fallback_vs_no_fallback", "replan_vs_fallback")
ADHOC_KEYS = ("planned_median_jct_vs_yarn", "planned_makespan_vs_yarn", "adhoc_median_jct_vs_yarn",
              "adhoc_p90_jct_vs_yarn", "adhoc_makespan_vs_yarn", "replan_vs_plan")
BATCH_WORKLOADS = (*WORKLOADS, "SWIM")
BASELINES = ("localshuffle", "shufflewatcher")
ROBUSTNESS = {"W1": 1, "W1x10": 10}  # scenario → jobs per hour as a multiple of W1's 100


def run_twin(seed: int, quick: bool, plan_o: float, online: bool) -> dict[str, Any]:
    """Per workload: Yarn-CS and Corral on the Corral twin (batch, or arrivals over 60 minutes)."""
    from sextant_sim.corral.experiment import run_policy
    from sextant_sim.corral.network import Topology
    from sextant_sim.corral.workloads import WORKLOADS as GEN
    from sextant_sim.corral.workloads import with_arrivals

    topo = Topology()
    out: dict[str, Any] = {}
    for w in BATCH_WORKLOADS:
        jobs = GEN[w](seed, 4.0 if quick else 1.0)
        if online:
            jobs = with_arrivals(jobs, seed)
        c0 = time.process_time()
        yarn = run_policy("yarn", jobs, topo, seed, online=online)
        corral = run_policy("corral", jobs, topo, seed, online=online, plan_oversubscription=plan_o)
        cpu = time.process_time() - c0
        keep = ("makespan", "median_jct", "mean_jct", "cross_rack_bytes", "maps_local", "maps_rack", "maps_remote")
        row: dict[str, Any] = {
            "yarn": {k: round(float(yarn[k]), 3) for k in keep},
            "corral": {**{k: round(float(corral[k]), 3) for k in keep}, "plan_objective": round(corral["plan_objective"], 3),
                       "plan_widths": corral["plan_widths"]},
            "cpu_seconds": round(cpu, 2),
        }
        if online:
            row["median_jct_vs_yarn"] = rel(corral["median_jct"], yarn["median_jct"])
            row["mean_jct_vs_yarn"] = rel(corral["mean_jct"], yarn["mean_jct"])
            row["lp_gap"] = rel(corral["plan_objective"], corral["lp_online"])
            row["lp_gap_thesis_path"] = rel(corral["plan_objective_thesis_path"], corral["lp_online"])
            row["corral"]["lp_online"] = round(corral["lp_online"], 3)
        else:
            row["makespan_vs_yarn"] = rel(corral["makespan"], yarn["makespan"])
            row["cross_rack_vs_yarn"] = rel(corral["cross_rack_bytes"], yarn["cross_rack_bytes"])
            row["lp_gap"] = rel(corral["plan_objective"], corral["lp_batch"])
            row["corral"]["lp_batch"] = round(corral["lp_batch"], 3)
            for b in BASELINES:
                c0 = time.process_time()
                res = run_policy(b, jobs, topo, seed)
                row[b] = {**{k: round(float(res[k]), 3) for k in keep},
                          "makespan_vs_yarn": rel(res["makespan"], yarn["makespan"]),
                          "cross_rack_vs_yarn": rel(res["cross_rack_bytes"], yarn["cross_rack_bytes"])}
                if b == "shufflewatcher":
                    row[b]["widths"] = np.bincount([len(r) for r in res["racks"]], minlength=topo.racks + 1)[1:].tolist()
                row["cpu_seconds"] = round(row["cpu_seconds"] + time.process_time() - c0, 2)
        out[w] = row
    return out


def busiest_rack(plan: Any, racks: int) -> int:
    """The rack holding the most planned rack-time (finish − start summed over its jobs)."""
    load = np.zeros(racks)
    for i, held in enumerate(plan.racks):
        load[list(held)] += plan.finishes[i] - plan.starts[i]
    return int(np.argmax(load))


def run_runtime(seed: int, quick: bool, plan_o: float, fail_duration: float, replan_period: float,
                adhoc_share: float) -> dict[str, Any]:
    """The runtime part (see the module docstring): failure per workload, then the ad hoc mix."""
    from dataclasses import replace

    from sextant_sim.corral.experiment import run_policy
    from sextant_sim.corral.failures import rack_failure
    from sextant_sim.corral.network import Topology
    from sextant_sim.corral.workloads import WORKLOADS as GEN
    from sextant_sim.corral.workloads import w1, with_arrivals

    topo = Topology()
    scale = 4.0 if quick else 1.0
    out: dict[str, Any] = {"failure": {}}
    for w in WORKLOADS:
        jobs = GEN[w](seed, scale)
        c0 = time.process_time()
        clean = run_policy("corral", jobs, topo, seed, plan_oversubscription=plan_o)
        rack = busiest_rack(clean["plan"], topo.racks)
        fail = [rack_failure(topo, rack, at=round(0.5 * clean["makespan"], 3), duration=fail_duration)]
        runs = {"yarn": run_policy("yarn", jobs, topo, seed, failures=fail),
                "no_fallback": run_policy("corral", jobs, topo, seed, plan_oversubscription=plan_o, failures=fail),
                "fallback": run_policy("corral", jobs, topo, seed, plan_oversubscription=plan_o, failures=fail,
                                       fallback=FALLBACK),
                "fallback_replan": run_policy("corral", jobs, topo, seed, plan_oversubscription=plan_o, failures=fail,
                                              fallback=FALLBACK, replan_period=replan_period)}
        rp = runs["fallback_replan"]["replanner"]
        out["failure"][w] = {
            "rack": rack, "at": fail[0].at, "corral_no_failure_makespan": round(clean["makespan"], 3),
            **{f"{k}_makespan": round(r["makespan"], 3) for k, r in runs.items()},
            **{f"{k}_tasks_lost": r["result"].tasks_lost for k, r in runs.items()},
            "replans": rp.replans, "replan_moved": rp.moved,
            "makespan_vs_yarn": rel(runs["fallback"]["makespan"], runs["yarn"]["makespan"]),
            "fallback_vs_no_fallback": rel(runs["fallback"]["makespan"], runs["no_fallback"]["makespan"]),
            "replan_vs_fallback": rel(runs["fallback_replan"]["makespan"], runs["fallback"]["makespan"]),
            "cpu_seconds": round(time.process_time() - c0, 2)}
    recurring = with_arrivals(w1(seed, scale), seed)
    n_adhoc = round(adhoc_share * len(recurring) / (1 - adhoc_share))
    adhoc = [replace(j, id=len(recurring) + i) for i, j in enumerate(w1(seed + 1000, scale, n_jobs=n_adhoc))]
    jobs = recurring + adhoc
    ids = list(range(len(recurring), len(jobs)))
    c0 = time.process_time()
    runs = {"yarn": run_policy("yarn", jobs, topo, seed, online=True),
            "corral": run_policy("corral", jobs, topo, seed, online=True, plan_oversubscription=plan_o, adhoc=ids),
            "corral_replan": run_policy("corral", jobs, topo, seed, online=True, plan_oversubscription=plan_o,
                                        adhoc=ids, replan_period=replan_period)}
    arrival = np.array([j.arrival for j in jobs])
    stats: dict[str, dict[str, float]] = {}
    for k, r in runs.items():
        jct = r["result"].completion
        fin = jct + arrival
        p, a = slice(0, len(recurring)), slice(len(recurring), len(jobs))
        stats[k] = {"planned_median_jct": float(np.median(jct[p])), "planned_mean_jct": float(jct[p].mean()),
                    "planned_makespan": float(fin[p].max()), "adhoc_median_jct": float(np.median(jct[a])),
                    "adhoc_mean_jct": float(jct[a].mean()), "adhoc_p90_jct": float(np.percentile(jct[a], 90)),
                    "adhoc_makespan": float(fin[a].max())}
    y, c = stats["yarn"], stats["corral"]
    rp = runs["corral_replan"]["replanner"]
    out["adhoc"] = {
        "jobs": len(jobs), "adhoc_jobs": n_adhoc,
        **{k: {m: round(v, 3) for m, v in st.items()} for k, st in stats.items()},
        "replans": rp.replans, "replan_moved": rp.moved, "replan_uploads": rp.uploads,
        **{f"{m}_vs_yarn": rel(c[m], y[m]) for m in ("planned_median_jct", "planned_mean_jct", "planned_makespan",
                                                      "adhoc_median_jct", "adhoc_mean_jct", "adhoc_p90_jct",
                                                      "adhoc_makespan")},
        "replan_vs_plan": rel(stats["corral_replan"]["planned_median_jct"], c["planned_median_jct"]),
        "cpu_seconds": round(time.process_time() - c0, 2)}


def run_robustness(seed: int, quick: bool, plan_o: float) -> dict[str, Any]:
    """Per scenario: Corral vs Yarn-CS median and mean JCT, nominal and perturbed (module docstring)."""
    from sextant_sim.corral.experiment import run_policy
    from sextant_sim.corral.network import Topology
    from sextant_sim.corral.perturbation import perturb, run_corral_on
    from sextant_sim.corral.workloads import w1, with_arrivals

    topo = Topology()
    out: dict[str, Any] = {}
    for name, load in ROBUSTNESS.items():
        c0 = time.process_time()
        jobs = with_arrivals(w1(seed, 4.0 if quick else 1.0, n_jobs=100 * load), seed)
        planned, actual = perturb(jobs, seed)
        yarn = run_policy("yarn", jobs, topo, seed, online=True)
        corral = run_corral_on(jobs, jobs, topo, seed, plan_oversubscription=plan_o)
        yarn_p = run_policy("yarn", actual, topo, seed, online=True)
        corral_p = run_corral_on(planned, actual, topo, seed, plan_oversubscription=plan_o)
        out[name] = {"jobs": len(jobs),
                     "nominal_median_vs_yarn": rel(corral["median_jct"], yarn["median_jct"]),
                     "perturbed_median_vs_yarn": rel(corral_p["median_jct"], yarn_p["median_jct"]),
                     "nominal_mean_vs_yarn": rel(corral["mean_jct"], yarn["mean_jct"]),
                     "perturbed_mean_vs_yarn": rel(corral_p["mean_jct"], yarn_p["mean_jct"]),
                     "median_jct": {"yarn": round(yarn["median_jct"], 3), "corral": round(corral["median_jct"], 3),
                                    "yarn_perturbed": round(yarn_p["median_jct"], 3),
                                    "corral_perturbed": round(corral_p["median_jct"], 3)},
                     "cpu_seconds": round(time.process_time() - c0, 2)}
    return out


def sweep_jobs(w: str, seed: int, quick: bool, mode: str, k: float) -> list[Any]:
    """The online scenario of workload `w` at load factor `k` (`online_load`'s two modes)."""
    from sextant_sim.corral.online_load import scale_sizes
    from sextant_sim.corral.workloads import WORKLOADS as GEN
    from sextant_sim.corral.workloads import with_arrivals

    scale = 4.0 if quick else 1.0
    if mode == "sizes":
        return scale_sizes(with_arrivals(GEN[w](seed, scale), seed), k)
    return with_arrivals(GEN[w](seed, scale, n_jobs=round(len(GEN[w](seed, scale)) * k)), seed)


def run_sweep(seed: int, quick: bool, plan_o: float, loads: list[float], mode: str, workloads: list[str],
              lp_jobs: int) -> dict[str, Any]:
    """The online-sweep part (module docstring): `W/K` → `online_load.load_point`."""
    from sextant_sim.corral.network import Topology
    from sextant_sim.corral.online_load import load_point

    topo = Topology()
    out: dict[str, Any] = {}
    for w in workloads:
        for k in loads:
            jobs = sweep_jobs(w, seed, quick, mode, k)
            c0 = time.process_time()
            row = load_point(jobs, topo, seed, plan_oversubscription=plan_o, lp=len(jobs) <= lp_jobs)
            row["cpu_seconds"] = round(time.process_time() - c0, 2)
            out[f"{w}/{k:g}"] = row
            y, c = row["yarn"], row["corral"]
            print(f"{seed:>4} sweep {w} x{k:g} ({len(jobs)} jobs): median {row['median_jct_vs_yarn']} mean "
                  f"{row['mean_jct_vs_yarn']} headroom {row['headroom_median']} | yarn {y['median_jct']} s q "
                  f"{y['queue_share']} busy {y['busy']}/{y['peak_busy']} core {y['core_utilisation']}/"
                  f"{y['core_saturated']} | corral {c['median_jct']} s q {c['queue_share']} busy {c['busy']} core "
                  f"{c['core_utilisation']} | lp_gap {row['lp_gap']} ({row['cpu_seconds']} s CPU)", flush=True)
    return out


# name → (jobs ×, bytes ×). W1x10 (robustness's 1 000 jobs) is left out: there the perturbation costs
# Corral nothing at the median on seeds 6-10 (robustness part), so there is nothing to recover.
REPLAN_SCENARIOS = {"W1": (1, 1.0), "W1s10": (1, 10.0)}


def run_replan(seed: int, quick: bool, plan_o: float, replan_period: float) -> dict[str, Any]:
    """The replan part (module docstring): per robustness scenario, perturbed, Corral with and
    without periodic re-planning on observed arrivals and sizes."""
    from sextant_sim.corral.experiment import run_policy
    from sextant_sim.corral.network import Topology
    from sextant_sim.corral.online_load import scale_sizes
    from sextant_sim.corral.perturbation import perturb, run_corral_on
    from sextant_sim.corral.workloads import w1, with_arrivals

    topo = Topology()
    out: dict[str, Any] = {"period": replan_period}
    for name, (load, size) in REPLAN_SCENARIOS.items():
        c0 = time.process_time()
        jobs = scale_sizes(with_arrivals(w1(seed, 4.0 if quick else 1.0, n_jobs=100 * load), seed), size)
        planned, actual = perturb(jobs, seed)
        nominal = run_corral_on(jobs, jobs, topo, seed, plan_oversubscription=plan_o)
        yarn_p = run_policy("yarn", actual, topo, seed, online=True)
        corral_p = run_corral_on(planned, actual, topo, seed, plan_oversubscription=plan_o)
        corral_r = run_corral_on(planned, actual, topo, seed, plan_oversubscription=plan_o, replan_period=replan_period)
        rp = corral_r["replanner"]
        loss = corral_p["median_jct"] - nominal["median_jct"]
        out[name] = {"jobs": len(jobs),
                     "perturbed_median_vs_yarn": rel(corral_p["median_jct"], yarn_p["median_jct"]),
                     "replan_median_vs_yarn": rel(corral_r["median_jct"], yarn_p["median_jct"]),
                     "perturbed_mean_vs_yarn": rel(corral_p["mean_jct"], yarn_p["mean_jct"]),
                     "replan_mean_vs_yarn": rel(corral_r["mean_jct"], yarn_p["mean_jct"]),
                     "replan_vs_no_replan_median": rel(corral_r["median_jct"], corral_p["median_jct"]),
                     "recovered": None if loss <= 0 else round((corral_p["median_jct"] - corral_r["median_jct"]) / loss, 4),
                     "median_jct": {"corral_nominal": round(nominal["median_jct"], 3),
                                    "yarn_perturbed": round(yarn_p["median_jct"], 3),
                                    "corral_perturbed": round(corral_p["median_jct"], 3),
                                    "corral_perturbed_replan": round(corral_r["median_jct"], 3)},
                     "replans": rp.replans, "replan_moved": rp.moved, "replan_uploads": rp.uploads,
                     "cpu_seconds": round(time.process_time() - c0, 2)}
    return out


def rel(x: float, base: float) -> float | None:
    return None if base == 0 else round((x - base) / base, 4)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", default="6-10")
    ap.add_argument("--parts", default=",".join(ALL_PARTS))
    ap.add_argument("--plan-oversubscription", type=float, default=PLAN_O)
    ap.add_argument("--fail-duration", type=float, default=FAIL_DURATION)
    ap.add_argument("--replan-period", type=float, default=REPLAN_PERIOD)
    ap.add_argument("--adhoc-share", type=float, default=ADHOC_SHARE)
    ap.add_argument("--sweep-loads", default=SWEEP_LOADS, help="online-sweep: comma list of load factors K")
    ap.add_argument("--sweep-mode", choices=("sizes", "jobs"), default="sizes")
    ap.add_argument("--sweep-workloads", default=",".join(WORKLOADS))
    ap.add_argument("--sweep-lp-jobs", type=int, default=SWEEP_LP_JOBS)
    args = ap.parse_args()
    seeds = seeds_of(args.seeds)
    parts = set(args.parts.split(","))
    load_start = os.getloadavg()
    pods, count = (2, 1500) if args.quick else (10, 15000)
    old: dict[str, Any] = json.loads(args.json.read_text()) if args.json.exists() else {}
    per_seed: dict[str, Any] = {}
    for seed in seeds:
        row = per_seed.setdefault(str(seed), {})
        for part in ("batch", "online"):
            if part in parts:
                row[part] = run_twin(seed, args.quick, args.plan_oversubscription, online=part == "online")
                for w, r in row[part].items():
                    keys = ("makespan_vs_yarn", "cross_rack_vs_yarn", "lp_gap") if part == "batch" else (
                        "median_jct_vs_yarn", "mean_jct_vs_yarn", "lp_gap", "lp_gap_thesis_path")
                    print(f"{seed:>4} {part:>6} {w}: " + ", ".join(f"{k} {r[k]}" for k in keys) + f" ({r['cpu_seconds']} s CPU)")
        if "robustness" in parts:
            row["robustness"] = run_robustness(seed, args.quick, args.plan_oversubscription)
            for name, r in row["robustness"].items():
                print(f"{seed:>4} robustness {name}: median vs Yarn-CS nominal {r['nominal_median_vs_yarn']}, "
                      f"perturbed {r['perturbed_median_vs_yarn']} ({r['cpu_seconds']} s CPU)")
        if "selector" in parts:
            reqs = requests(seed, count)
            rows = {s: run_selector(seed, s, reqs, pods, 0.75) for s in STRATEGIES}
            for s, r in rows.items():
                print(f"{seed:>4} {s:>9} rejected {r['rejected']:.4f} goodput {r['goodput']:.4f} occ {r['mean_occupancy']:.3f}")
            base = rows["baseline"]
            row["selector"] = {"rejected_vs_baseline": rel(rows["corral-i"]["rejected"], base["rejected"]),
                               "goodput_vs_baseline": rel(rows["corral-i"]["goodput"], base["goodput"]),
                               "strategies": {s: {k: round(v, 4) for k, v in r.items()} for s, r in rows.items()}}
        if "runtime" in parts:
            row["runtime"] = run_runtime(seed, args.quick, args.plan_oversubscription, args.fail_duration,
                                         args.replan_period, args.adhoc_share)
            for w, r in row["runtime"]["failure"].items():
                print(f"{seed:>4} runtime {w}: " + ", ".join(f"{k} {r[k]}" for k in RUNTIME_KEYS)
                      + f" ({r['cpu_seconds']} s CPU)")
            ad = row["runtime"]["adhoc"]
            print(f"{seed:>4} runtime adhoc: " + ", ".join(f"{k} {ad[k]}" for k in ADHOC_KEYS) + f" ({ad['cpu_seconds']} s CPU)")
        if "online-sweep" in parts:
            row["online_sweep"] = run_sweep(seed, args.quick, args.plan_oversubscription,
                                            [float(x) for x in args.sweep_loads.split(",")], args.sweep_mode,
                                            args.sweep_workloads.split(","), args.sweep_lp_jobs)
        if "replan" in parts:
            rr = run_replan(seed, args.quick, args.plan_oversubscription, args.replan_period)
            row.setdefault("runtime", {})["replan_under_perturbation"] = rr
            for name in REPLAN_SCENARIOS:
                r = rr[name]
                print(f"{seed:>4} replan {name}: median vs Yarn-CS perturbed {r['perturbed_median_vs_yarn']}, with "
                      f"re-planning {r['replan_median_vs_yarn']}, recovered {r['recovered']} ({r['cpu_seconds']} s CPU)")
        if "speed" in parts:
            row["speed"] = {"select_ms_median": round(select_ms(seed), 2), "plan_200_seconds": round(plan_seconds(seed), 3)}
            print(f"{seed:>4} speed: select {row['speed']['select_ms_median']} ms CPU, "
                  f"plan 200 jobs x 50 racks {row['speed']['plan_200_seconds']} s CPU")
    for seed, row in (old.get("per_seed") or {}).items():  # parts not run now: kept as measured
        for part, val in row.items():
            if seed not in per_seed:
                continue
            name = "online-sweep" if part == "online_sweep" else part
            if part == "runtime" and "runtime" not in parts:  # the replan part writes into runtime: keep the rest
                kept = {k: v for k, v in val.items() if k != "replan_under_perturbation" or "replan" not in parts}
                per_seed[seed]["runtime"] = {**kept, **per_seed[seed].get("runtime", {})}
            elif part == "runtime" and "replan" not in parts and "replan_under_perturbation" in val:
                per_seed[seed]["runtime"].setdefault("replan_under_perturbation", val["replan_under_perturbation"])
            elif name not in parts:
                per_seed[seed].setdefault(part, val)
    worst = worst_of(per_seed)
    all_parts = ALL_PARTS
    old_quick = old.get("quick_parts") or {q: old.get("quick", args.quick) for q in all_parts}
    quick_parts = {q: args.quick if q in parts else old_quick.get(q, args.quick) for q in all_parts}
    setup: dict[str, Any] = {"requests_per_seed": count, "vms": pods * 10 * 40 * 4, "occupancy_target": 0.75,
                             "occupancy_rule": "offered over the window (arrival_rate)", "candidates": "wave breakpoints",
                             "oversubscription": 10, "speed_vms": 64000,
                             "twin": {"racks": 7, "machines_per_rack": 30, "containers_per_machine": 16, "nic_gbps": 10,
                                      "core_oversubscription": 5, "background_max": 0.5, "task_scale": 4 if args.quick else 1,
                                      "plan_oversubscription": args.plan_oversubscription, "online_keep_if_better": True}}
    old_setup = old.get("setup") or {}
    if "runtime" in parts:
        setup["runtime"] = {"fail_duration": args.fail_duration, "fail_at": "half of Corral's makespan without failure",
                            "failed_rack": "the most planned rack-time", "fallback_threshold": FALLBACK,
                            "replan_period": args.replan_period, "adhoc_share": args.adhoc_share,
                            "adhoc_arrivals": "a batch at t = 0", "task_scale": 4 if args.quick else 1}
    elif "runtime" in old_setup:
        setup["runtime"] = old_setup["runtime"]
    if "selector" not in parts:  # the selector's figures keep the setup they were measured with
        setup.update({k: old_setup[k] for k in ("requests_per_seed", "vms", "occupancy_rule", "candidates") if k in old_setup})
    if not parts & {"batch", "online", "robustness", "online-sweep", "replan"} and "twin" in old_setup:
        setup["twin"] = old_setup["twin"]
    if "online-sweep" in parts:
        setup["online_sweep"] = {"loads": args.sweep_loads, "mode": args.sweep_mode, "workloads": args.sweep_workloads,
                                 "lp_online_up_to_jobs": args.sweep_lp_jobs, "seeds": seeds}
    elif "online_sweep" in old_setup:
        setup["online_sweep"] = old_setup["online_sweep"]
    if "replan" in parts:
        setup["replan_under_perturbation"] = {"period": args.replan_period, "scenarios": REPLAN_SCENARIOS}
    elif "replan_under_perturbation" in old_setup:
        setup["replan_under_perturbation"] = old_setup["replan_under_perturbation"]
    doc = {"benchmark": "corral", "code_version": code_version(), "seeds": seeds,
           "quick": any(quick_parts.values()), "quick_parts": quick_parts, "setup": setup,
           **worst, "baselines": baseline_ranges(per_seed), "per_seed": per_seed, "worst": worst,
           "not_built": "ShuffleWatcher's network-aware shuffle delay; the runtime on the platform",
           "twin_version": TWIN_VERSION,
           "load_avg": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]}}
    if old and parts != set(all_parts):
        doc["parts_kept_from_previous_run"] = sorted(set(all_parts) - parts)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
    print("worst:", json.dumps(worst))
    return 0


LOWER_IS_WORSE = ("goodput_vs_baseline",)
REPLAN_KEYS = ("perturbed_median_vs_yarn", "replan_median_vs_yarn", "replan_vs_no_replan_median")
ROBUSTNESS_KEYS = ("nominal_median_vs_yarn", "perturbed_median_vs_yarn", "nominal_mean_vs_yarn", "perturbed_mean_vs_yarn")


def baseline_ranges(per_seed: dict[str, Any]) -> dict[str, Any] | None:
    """Per batch workload and baseline: [lowest, highest] over the seeds of makespan and cross-rack
    bytes vs Yarn-CS (reported, not claims)."""
    rows = [r["batch"] for r in per_seed.values() if "batch" in r]
    if not rows or len(rows) != len(per_seed):
        return None
    out: dict[str, Any] = {}
    for w in BATCH_WORKLOADS:
        if not all(w in r and all(b in r[w] for b in BASELINES) for r in rows):
            continue
        out[w] = {}
        for b in ("corral", *BASELINES):
            got = [r[w] if b == "corral" else r[w][b] for r in rows]
            out[w][b] = {k: [min(v), max(v)] for k in ("makespan_vs_yarn", "cross_rack_vs_yarn")
                         for v in [[x[k] for x in got if x[k] is not None]] if v}
    return out or None


def worst_of(per_seed: dict[str, Any]) -> dict[str, Any]:
    """Each claim at its worst seed (the highest value, but for goodput the lowest); the batch per
    workload, the online over workloads and seeds."""
    def pick(vals: list[float | None], key: str) -> float | None:
        xs = [v for v in vals if v is not None]
        if not xs:
            return None
        return min(xs) if key in LOWER_IS_WORSE else max(xs)

    rows = list(per_seed.values())
    out: dict[str, Any] = {"batch": None, "online": None, "robustness": None, "selector": None, "speed": None,
                           "runtime": None, "online_sweep": None}
    if all("batch" in r for r in rows):
        ws = [w for w in BATCH_WORKLOADS if all(w in r["batch"] for r in rows)]
        out["batch"] = {w: {k: pick([r["batch"][w][k] for r in rows], k) for k in ("makespan_vs_yarn", "cross_rack_vs_yarn", "lp_gap")}
                        for w in ws}
    if all("online" in r for r in rows):
        out["online"] = {"median_jct_vs_yarn": pick([r["online"][w]["median_jct_vs_yarn"] for r in rows for w in WORKLOADS], "x"),
                         "lp_gap": pick([r["online"][w].get("lp_gap") for r in rows for w in WORKLOADS], "x"),
                         "per_workload": {w: pick([r["online"][w]["median_jct_vs_yarn"] for r in rows], "x") for w in WORKLOADS},
                         "lp_gap_per_workload": {w: pick([r["online"][w].get("lp_gap") for r in rows], "x") for w in WORKLOADS}}
        if all("SWIM" in r["online"] for r in rows):  # reported beside the bar, not in it
            out["online"]["swim_median_jct_vs_yarn"] = pick([r["online"]["SWIM"]["median_jct_vs_yarn"] for r in rows], "x")
            out["online"]["swim_lp_gap"] = pick([r["online"]["SWIM"].get("lp_gap") for r in rows], "x")
    if all("robustness" in r for r in rows):
        out["robustness"] = {s: {k: pick([r["robustness"][s][k] for r in rows], k) for k in ROBUSTNESS_KEYS}
                             for s in ROBUSTNESS if all(s in r["robustness"] for r in rows)}
    if all("selector" in r for r in rows):
        out["selector"] = {k: pick([r["selector"][k] for r in rows], k) for k in ("rejected_vs_baseline", "goodput_vs_baseline")}
    if all("failure" in r.get("runtime", {}) for r in rows):
        out["runtime"] = {"failure": {w: {k: pick([r["runtime"]["failure"][w][k] for r in rows], k) for k in RUNTIME_KEYS}
                                      for w in WORKLOADS},
                          "adhoc": {k: pick([r["runtime"]["adhoc"][k] for r in rows], k) for k in ADHOC_KEYS}}
    if rows and all("replan_under_perturbation" in r.get("runtime", {}) for r in rows):
        rep = [r["runtime"]["replan_under_perturbation"] for r in rows]
        out["runtime"] = out["runtime"] or {}
        out["runtime"]["replan_under_perturbation"] = {
            s: {k: pick([x[s][k] for x in rep], k) for k in REPLAN_KEYS} for s in REPLAN_SCENARIOS}
    if rows and all("online_sweep" in r for r in rows):
        points = sorted(set.intersection(*(set(r["online_sweep"]) for r in rows)),
                        key=lambda p: (p.split("/")[0], float(p.split("/")[1])))
        out["online_sweep"] = {p: {k: pick([r["online_sweep"][p][k] for r in rows], k)
                                   for k in ("median_jct_vs_yarn", "mean_jct_vs_yarn", "headroom_median", "lp_gap")}
                               for p in points}
    if all("speed" in r for r in rows):
        out["speed"] = {k: pick([r["speed"][k] for r in rows], k) for k in ("select_ms_median", "plan_200_seconds")}
    return out


if __name__ == "__main__":
    sys.exit(main())
