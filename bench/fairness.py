"""Fairness over time between virtual clusters (VCs): MaxMin's diagnosis reproduced and Sextant's
history-aware policy (ours) against MaxMin and the baselines, on the LCG grid log (28 groups as
VCs, one-processor rigid jobs killed on preemption) and on the spec's synthetic six-VC month
(malleable jobs). Definitions: libs/sim/src/sextant_sim/fairness/metrics.py, docs/fairness.md.

    .venv/bin/python bench/fairness.py --json bench/results/fairness.json [--quick] [--seeds 6-10]

Parameters of Sextant's policy (`beta`) are chosen on the synthetic seeds 1–5 (`--tune-seeds`);
the synthetic claims are the worst of `--seeds` (6–10). `--quick`: the LCG log under the issue's
capacity rule and synthetic seed 6 only, no tuning (the chosen default), no other rules (≤ 10 min).
Runs go to a pool of `--jobs` processes and are cached under bench/results/fairness/ by code
version. JSON: `lcg` {POLICY: metrics}, `lcg_rules`, `synthetic` {per_seed, worst, claims,
tuning}, `allocate_ms_median`, `platform_allocate_ms_median`, `strict_cost`, `code_version`, `load_avg`.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels)

# isort: split
import argparse
import hashlib
import json
import math
import os
import platform
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
from quality import seeds_of  # the seed syntax of the other benches

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / "results" / "fairness"
LCG = ROOT.parent / "shared" / "data" / "lcg-2005-swf" / "LCG.swf.gz"
SOURCES = ("libs/core/src/sextant_core/fairness", "libs/sim/src/sextant_sim/fairness")
POLICY_NAMES = ("maxmin", "capacity_weighted", "strict", "decayed", "sextant")
# Sextant's policy, the candidates tuned on seeds 1–5: (repay_first, rest_equal, beta)
CONFIGS = {"repay": (True, True, 0.0), "repay-cw": (True, False, 0.0), "weight-b2": (False, False, 2.0),
           "weight-b4": (False, False, 4.0)}
DEFAULT_CONFIG = "repay"
KEYS = ("similar_load_pairs", "similar_load_stretch_ratio", "similar_load_stretch_cv",
        "large_vc_overload_stretch", "max_vc_stretch_vs_maxmin", "idle_while_waiting_s",
        "preempted_work_share", "utilisation", "weighted_mean_job_stretch")
HIGHER_IS_BETTER = {"utilisation", "similar_load_pairs"}


def code_version() -> str:
    h = hashlib.sha256()
    for base in SOURCES:
        for p in sorted((ROOT / base).rglob("*.py")):
            h.update(str(p.relative_to(ROOT)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def workload(source: str) -> tuple[Any, Any, int, bool]:
    from sextant_sim.fairness import workloads as wl

    if source.startswith("lcg:"):
        jobs, _ = wl.load_lcg(LCG)
        cap, total = wl.lcg_capacities(jobs, source.split(":")[1])
        return jobs, cap, total, True
    jobs, cap, total = wl.synthetic(int(source.split(":")[1]))
    return jobs, cap, total, False


class PriorityTo:
    """A reference, not a policy to use: the free pool goes first to one VC (the large bursty
    one), the rest by capacity — the best its overload days can get without touching guarantees."""

    NAME = "priority_large"
    WORK_CONSERVING = True

    def __init__(self, vc: int) -> None:
        self.vc = vc

    def targets(self, capacity: Any, demand: Any, total: int, history: Any) -> Any:
        from sextant_core.fairness.policies import capacity_weights, split

        w = capacity_weights(capacity)
        if self.vc >= 0:
            w[self.vc] = 1e12
        return split(capacity, demand, total, w)


def run(task: tuple[str, str, str, str]) -> dict[str, Any]:
    """One simulation (`source`, `policy`, Sextant's `config`), summarised; cached by code version."""
    source, policy, config, version = task
    path = CACHE / f"{version}-{source.replace(':', '_')}-{policy}-{config}.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    from sextant_core.fairness import make_policy
    from sextant_sim.fairness import metrics
    from sextant_sim.fairness.engine import simulate

    jobs, cap, total, rigid = workload(source)
    pol: Any
    if policy == "sextant":
        repay_first, rest_equal, beta = CONFIGS[config]
        pol = make_policy(policy, beta=beta, repay_first=repay_first, rest_equal=rest_equal)
    elif policy == "priority_large":
        pol = PriorityTo(metrics.subjects(jobs, cap).large)
    else:
        pol = make_policy(policy)
    started = time.process_time()
    res = simulate(jobs, cap, total, pol, rigid=rigid)
    out = metrics.summary(jobs, cap, total, res, metrics.subjects(jobs, cap))
    js = metrics.job_stretch(jobs, res)
    out["daily_stretch"] = np.nan_to_num(metrics.daily_stretch(jobs, js), nan=-1.0).round(3).tolist()
    out["daily_load"] = metrics.daily_loads(jobs, cap).round(3).tolist()
    sub = metrics.subjects(jobs, cap)
    out["large_vc"], out["small_vc"], out["capacity"] = sub.large, sub.small, cap.tolist()
    if not rigid:
        ps = metrics.paper_stretch(jobs, res, cap)
        out["paper_vc_stretch"] = metrics.vc_stretch(jobs, ps).tolist()
    out["events"], out["cpu_s"] = res.events, round(time.process_time() - started, 1)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out))
    return out


def compare(runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The issue's keys per policy, with every VC's stretch against its stretch under MaxMin."""
    base = np.array(runs["maxmin"]["vc_stretch"])
    table: dict[str, dict[str, Any]] = {}
    for name, r in runs.items():
        row = {k: r[k] for k in KEYS if k in r}
        row["max_vc_stretch_vs_maxmin"] = float(np.max(np.array(r["vc_stretch"]) / base))
        row["small_vc_overload_stretch"] = r["small_vc_overload_stretch"]
        row["spearman_load_stretch"] = r["spearman_load_stretch"]
        table[name] = {k: _round(row[k]) for k in (*KEYS, "small_vc_overload_stretch", "spearman_load_stretch")}
    return table


def claims(t: dict[str, dict[str, Any]], policy: str = "sextant") -> dict[str, Any]:
    """Improvement factors of `policy` over MaxMin (≥ 2 is the issue's "at least halved")."""
    m, s = t["maxmin"], t[policy]

    def factor(a: float, b: float) -> float:
        return float("inf") if b <= 0 else a / b

    return {
        "ratio_excess_reduction": _round(factor(m["similar_load_stretch_ratio"] - 1, s["similar_load_stretch_ratio"] - 1)),
        "overload_excess_reduction": _round(factor(m["large_vc_overload_stretch"] - 1, s["large_vc_overload_stretch"] - 1)),
        "max_vc_stretch_vs_maxmin": s["max_vc_stretch_vs_maxmin"],
        "idle_while_waiting_s": s["idle_while_waiting_s"],
        "preempted_work_share": s["preempted_work_share"],
        "pairs": s["similar_load_pairs"],
    }


def _round(v: Any) -> Any:
    if isinstance(v, float):
        return v if not math.isfinite(v) else round(v, 4)
    return v


def _score(c: dict[str, Any]) -> tuple[int, float]:
    """Tuning objective on seeds 1–5: the price kept (max VC stretch ≤ 2 × MaxMin, nothing idle
    while waiting, ≤ 1 % work lost) first, then the smaller of the two improvement factors."""
    ok = c["max_vc_stretch_vs_maxmin"] <= 2 and c["preempted_work_share"] <= 0.01 and c["idle_while_waiting_s"] <= 0
    return int(ok), min(c["ratio_excess_reduction"], c["overload_excess_reduction"])


def allocate_ms(n_vcs: int = 100, n_jobs: int = 10_000, events: int = 300) -> float:
    """Median thread time (ms) of one allocation — targets, settle, the history fold and FIFO over
    the jobs — for `n_vcs` VCs and `n_jobs` running jobs, Sextant's policy, demands perturbed."""
    from sextant_core.fairness import Fifo, History, HistoryParams, advance, make_policy, settle

    rng = np.random.default_rng(1)
    cap = rng.integers(20, 200, n_vcs)
    total = int(cap.sum() * 1.3)
    vc = np.sort(rng.integers(0, n_vcs, n_jobs))
    par = rng.integers(1, 4, n_jobs)
    demand = np.bincount(vc, weights=par, minlength=n_vcs).astype(np.int64)
    hist, params, pol, fifo = History.empty(n_vcs), HistoryParams(), make_policy("sextant"), Fifo()
    held = np.minimum(demand, cap)
    times = []
    for _ in range(events):
        i = int(rng.integers(0, n_vcs))
        demand[i] = max(0, demand[i] + int(rng.integers(-3, 4)))
        t0 = time.thread_time_ns()
        hist = advance(hist, 1.0, cap, demand, held, total, params)
        held = settle(pol.targets(cap, demand, total, hist), held, cap, demand, total)
        fifo.shares(vc, par, held)
        times.append((time.thread_time_ns() - t0) / 1e6)
    return round(statistics.median(times), 3)


def platform_allocate_ms(n_tenants: int = 100, n_running: int = 10_000, n_servers: int = 12_000,
                         events: int = 300) -> float:
    """Median thread time (ms) of one platform allocation step — fold an arrival or a completion,
    planning's `AllocateVcs` decision (demand, held, the policy, the record), fold the decision —
    with `n_tenants` tenants that have a VC capacity and `n_running` running one-server workloads
    on `n_servers` servers, Sextant's policy; arrivals and completions alternate."""
    from sextant_contracts import events as ev
    from sextant_contracts import vc as vcs
    from sextant_core.decide import decide, seed_for
    from sextant_core.profiles import policy_set
    from sextant_core.state import evolve, fold
    from sextant_core.testing.builders import alloc, server, submitted, through_placement

    rng = np.random.default_rng(1)
    tenants = [f"t{i:03d}" for i in range(n_tenants)]
    log: list[Any] = [server(f"s{k:05d}") for k in range(n_servers)]
    log += [vcs.VcCapacitySet(at=1.0, tenant=t, servers=n_servers * 4 // 5 // n_tenants) for t in tenants]
    running = [f"w{k:05d}" for k in range(n_running)]
    for k, wid in enumerate(running):
        a = alloc((f"s{k:05d}", 8, 16.0))
        log += [submitted(wid, tenant=tenants[int(rng.integers(n_tenants))], fast_path=True),
                *through_placement(wid, a), ev.WorkloadStarted(at=2.0, workload_id=wid, allocation=a)]
    state, params, times = fold(log), policy_set("foundation"), []
    for i in range(events):
        at = 10.0 + i
        if i % 2:
            e: Any = ev.WorkloadCompleted(at=at, workload_id=running.pop(int(rng.integers(len(running)))))
        else:
            e = submitted(f"n{i:05d}", at=at, tenant=tenants[int(rng.integers(n_tenants))], fast_path=True)
        c = vcs.AllocateVcs(reason="completion" if i % 2 else "arrival")
        t0 = time.thread_time_ns()
        state = evolve(state, e)
        (decided,) = decide(state, c, params=params, seed=seed_for(c, state), at=at).events
        state = evolve(state, decided)
        times.append((time.thread_time_ns() - t0) / 1e6)
    return round(statistics.median(times), 3)


def plots(lcg: dict[str, dict[str, Any]], syn: dict[str, dict[str, Any]], folder: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, runs in (("lcg", lcg), ("synthetic", syn)):
        fig, ax = plt.subplots(figsize=(6, 4))
        for pol, mk in (("maxmin", "o"), ("capacity_weighted", "^"), ("sextant", "s")):
            r = runs[pol]
            ax.scatter(r["vc_load"], r["vc_stretch"], marker=mk, label=pol, alpha=0.7)
        ax.set(xlabel="VC load (work / capacity / window)", ylabel="VC stretch (mean job stretch)",
               yscale="log", title=f"Stretch vs load per VC ({name})")
        ax.legend()
        fig.tight_layout()
        p = folder / f"{name}-stretch-vs-load.png"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        out.append(str(p.relative_to(ROOT)))
        fig, axes = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
        m = runs["maxmin"]
        for vc, style in ((m["large_vc"], "-"), (m["small_vc"], "--")):
            if vc < 0:
                continue
            lab = f"VC {vc} (capacity {m['capacity'][vc]})"
            axes[0].plot(m["daily_load"][vc], style, label=lab)
            for pol, col in (("maxmin", "C0"), ("sextant", "C2")):
                ds = np.array(runs[pol]["daily_stretch"][vc], dtype=float)
                ds[ds < 0] = np.nan
                axes[1].plot(ds, style, color=col, label=f"{lab}, {pol}")
        axes[0].axhline(1.0, color="grey", lw=0.5)
        axes[0].set(ylabel="daily load")
        axes[0].legend(fontsize=7)
        axes[1].set(ylabel="daily stretch", xlabel="day (submission)", yscale="log")
        axes[1].legend(fontsize=7)
        fig.suptitle(f"Large bursty VC vs a small one ({name})")
        fig.tight_layout()
        p = folder / f"{name}-daily.png"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        out.append(str(p.relative_to(ROOT)))
    return out


def worst_of(per_seed: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for pol in (*POLICY_NAMES, "priority_large"):
        out[pol] = {}
        for k in (*KEYS, "small_vc_overload_stretch"):
            vals = [float(per_seed[s][pol][k]) for s in per_seed]
            out[pol][k] = _round(min(vals) if k in HIGHER_IS_BETTER else max(vals))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", dest="json_path")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", default="6-10")
    ap.add_argument("--tune-seeds", default="1-5")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--rules", default="mean,p75,equal", help="LCG capacity rules (mean is always run)")
    ap.add_argument("--plots", default="docs/fairness")
    args = ap.parse_args()
    started = time.perf_counter()
    version = code_version()
    seeds = seeds_of(args.seeds)[:1] if args.quick else seeds_of(args.seeds)
    tune = [] if args.quick else seeds_of(args.tune_seeds)
    with Pool(args.jobs) as pool:
        tasks = [(f"syn:{s}", p, k, version) for s in tune for p, k in
                 [("maxmin", "-")] + [("sextant", k) for k in CONFIGS]]
        tuned = dict(zip(tasks, pool.map(run, tasks, chunksize=1), strict=True))
        tuning: dict[str, Any] = {}
        for k in CONFIGS:
            cs = [claims(compare({"maxmin": tuned[(f"syn:{s}", "maxmin", "-", version)],
                                  "sextant": tuned[(f"syn:{s}", "sextant", k, version)]})) for s in tune]
            worst = min(_score(c) for c in cs) if cs else (0, 0.0)
            tuning[k] = {"price_kept_on_all_seeds": bool(worst[0]), "worst_improvement_factor": _round(worst[1])}
        keys = list(CONFIGS)
        config = max(keys, key=lambda k: (tuning[k]["price_kept_on_all_seeds"], tuning[k]["worst_improvement_factor"],
                                          -keys.index(k))) if tune else DEFAULT_CONFIG
        rules = ["mean"] if args.quick else ["mean", *(r for r in args.rules.split(",") if r != "mean")]
        every = (*POLICY_NAMES, "priority_large")
        tasks = [(f"lcg:{r}", p, config if p == "sextant" else "-", version) for r in rules for p in
                 (every if r == "mean" else ("maxmin", "sextant"))]
        tasks += [(f"syn:{s}", p, config if p == "sextant" else "-", version) for s in seeds for p in every]
        done = dict(zip(tasks, pool.map(run, tasks, chunksize=1), strict=True))

    def got(source: str, p: str) -> dict[str, Any]:
        return done[(source, p, config if p == "sextant" else "-", version)]

    lcg_runs = {p: got("lcg:mean", p) for p in every}
    lcg = compare(lcg_runs)
    lcg_rules = {r: compare({p: got(f"lcg:{r}", p) for p in ("maxmin", "sextant")}) for r in rules if r != "mean"}
    per_seed = {str(s): compare({p: got(f"syn:{s}", p) for p in every}) for s in seeds}
    seed_claims = {s: {p: claims(t, p) for p in ("sextant", "capacity_weighted")} for s, t in per_seed.items()}
    worst_claims = {p: {k: _round(max(c[p][k] for c in seed_claims.values()) if k in
                                  ("max_vc_stretch_vs_maxmin", "idle_while_waiting_s", "preempted_work_share")
                                  else min(c[p][k] for c in seed_claims.values()))
                        for k in seed_claims[str(seeds[0])][p]} for p in ("sextant", "capacity_weighted")}
    syn_runs = {p: got(f"syn:{seeds[0]}", p) for p in every}
    figures = plots(lcg_runs, syn_runs, ROOT / args.plots)
    alloc = allocate_ms()
    strict_cost = {
        "lcg": {k: {p: lcg[p][k] for p in ("maxmin", "strict")} for k in ("utilisation", "idle_while_waiting_s")},
        "synthetic_worst": {k: {p: worst_of(per_seed)[p][k] for p in ("maxmin", "strict")}
                            for k in ("utilisation", "idle_while_waiting_s")},
    }
    doc = {
        "benchmark": "fairness",
        "rules": rules,
        "lcg": lcg,
        "lcg_claims": {p: claims(lcg, p) for p in ("sextant", "capacity_weighted")},
        "lcg_large_vc": {"vc": lcg_runs["maxmin"]["large_vc"], "small_vc": lcg_runs["maxmin"]["small_vc"],
                         "capacity_sum": sum(lcg_runs["maxmin"]["capacity"])},
        "lcg_rules": lcg_rules,
        "synthetic": {"per_seed": per_seed, "worst": worst_of(per_seed), "claims_worst": worst_claims,
                      "tuning": {"seeds": tune, "chosen": config, "repay_first": CONFIGS[config][0],
                                 "rest_equal": CONFIGS[config][1], "beta": CONFIGS[config][2],
                                 "candidates": tuning}},
        "strict_cost": strict_cost,
        "allocate_ms_median": alloc,
        "platform_allocate_ms_median": platform_allocate_ms(),
        "plots": figures,
        "seeds": seeds, "quick": args.quick,
        "code_version": version,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "elapsed_seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count()},
    }
    cols = (*POLICY_NAMES, "priority_large")
    print(f"{'LCG (mean rule)':<30}" + "".join(f"{p[:12]:>13}" for p in cols))
    for k in (*KEYS, "small_vc_overload_stretch", "spearman_load_stretch"):
        print(f"{k[:30]:<30}" + "".join(f"{lcg[p][k]!s:>13}"[:13].rjust(13) for p in cols))
    print(f"\nsynthetic, worst of seeds {seeds} (Sextant's configuration {config}: {CONFIGS[config]})")
    w = doc["synthetic"]["worst"]
    for k in (*KEYS, "small_vc_overload_stretch"):
        print(f"{k[:30]:<30}" + "".join(f"{w[p][k]!s:>13}"[:13].rjust(13) for p in cols))
    print(f"\nclaims (LCG): {doc['lcg_claims']}\nclaims (synthetic worst): {worst_claims}")
    print(f"allocate_ms_median {alloc}; plots {figures}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
