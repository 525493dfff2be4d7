"""Kwiken's speed bars at the sizes the issue states them, without the whole `bench/kwiken.py` run.

    .venv/bin/python bench/kwiken_speed.py --json PATH [--quick] [--seeds 6-10] [--random 10000]
                                           [--repeats 3] [--merge-into bench/results/kwiken.json]

- `allocation_speedup_vs_random_min` (bar ≥ 1 000): per small DAG (the first 9 of ≤ 10 stages of
  `library(seed, 45)`, as in `bench/kwiken.py`'s full run; 6 000 training requests), the CPU time of
  the best-of-`--random` search over SumVar's. Both start from the same per-stage curves (not
  timed). The search is the baseline exactly as `bench/kwiken.py` runs it: draw the allocations on
  the budget simplex, score each by the p99 of the first 1 500 training requests
  (`sextant_sim.kwiken.requests.p99_many`), take the best. SumVar plans κ × 5 % at the chosen γ.
  Both sides on the thread's CPU clock, each DAG's ratio the median random search over the median
  SumVar call (`--repeats` searches, interleaved with 25 × `--repeats` SumVar calls, each timed
  alone); `..._of_fastest` is the ratio of the fastest runs, beside it;
  `..._without_policy_lookup` takes off the search's time the part a vectorised implementation
  would not spend (a Python loop per allocation and stage in `p99_many`, timed alone), the ratio
  against a faster baseline than the one the benchmark runs.
- `sumvar_ms_150_stages` (bar ≤ 50 ms): SumVar at 5 % on the 150-stage DAG of `bench/kwiken.py`'s
  combined policy, median of 5 (`..._fastest`: the fastest);
- `curve_ms_10000_samples` (bar ≤ 200 ms): one stage's variance curve from 10 000 samples, median
  over the first 5 stages of the seed's first DAG, each timed once.

γ and κ are read from `--params` (default `bench/results/kwiken.json`: the values chosen there on
seeds 1–5). Claims are the worst of `--seeds`. `--random 0` times SumVar and the curves only.
`--quick`: seed 6, 3 small DAGs, 2 repeats (the random search still at `--random`).
`--merge-into P` also writes this document as the `speed` section of the `bench/kwiken.py` JSON at
`P`, leaving its other keys as they are (each section carries the code version that wrote it).
Timings are never gated by tests. Definitions: docs/kwiken.md.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is scripts, not a package
from kwiken import BUDGET, SMALL, SMALL_DAGS  # noqa: E402  (the same DAG selection and budget)
from quality import code_version, seeds_of  # noqa: E402  (the same code version and seed syntax)

LIBRARY = 45
REQUESTS = 6000
RANDOM_ROWS = 1500
SUMVAR_CALLS = 25  # SumVar calls per random search
SPEED_BAR = 1000.0
SUMVAR_150_BAR_MS = 50.0
CURVE_BAR_MS = 200.0


def cpu_ms(fn: Callable[[], Any]) -> tuple[Any, float]:
    """`fn()` and the thread CPU milliseconds it took."""
    t = time.thread_time()
    out = fn()
    return out, 1000 * (time.thread_time() - t)


def random_search(tr: Any, c: np.ndarray, curves: list[Any], k: int, seed: int) -> np.ndarray:
    """The best-of-`k`-random-allocations baseline of `bench/kwiken.py`: draw, score, take the best."""
    from sextant_core.kwiken import sumvar
    from sextant_sim.kwiken import requests as rq

    alloc = sumvar.random_allocations(c, BUDGET, k, seed)
    p99 = rq.p99_many(tr, alloc, curves, tr.lat, RANDOM_ROWS)
    return alloc[int(np.argmin(p99))]


def policy_lookup(alloc: np.ndarray, curves: list[Any], batch: int = 250) -> None:
    """The part of `p99_many` that is a Python loop per allocation and stage (the policy of the
    curve's grid point nearest to each fraction), line for line: the random search's time that a
    vectorised lookup would save (`p99_many` itself is the frozen baseline and stays as it is)."""
    for b0 in range(0, alloc.shape[0], batch):
        fr = alloc[b0:b0 + batch]
        for s in range(fr.shape[1]):
            np.array([c if c != "none" else "timeout" for c in
                      (curves[s].policy[int(np.argmin(np.abs(curves[s].r - v)))] for v in fr[:, s])])


def small_dags(seed: int, count: int, random_k: int, repeats: int, gamma: float, kappa: float) -> list[dict[str, Any]]:
    """Per small DAG: SumVar's and the random search's CPU ms (median, fastest) and their ratios."""
    from sextant_core.kwiken import reissue, sumvar
    from sextant_sim.kwiken import library
    from sextant_sim.kwiken import requests as rq

    rows = []
    for svc in [s for s in library.library(seed, LIBRARY) if s.dag.n <= SMALL][:count]:
        n = svc.dag.n
        tr = rq.period(svc, seed, 0, REQUESTS)
        curves = [reissue.reissue_curve(tr.lat[:, s], seed=s) for s in range(n)]
        c = svc.dag.normalised_costs()
        alloc = sumvar.random_allocations(c, BUDGET, random_k, seed) if random_k else np.zeros((0, n))
        sv: list[float] = []
        rs: list[float] = []
        lk: list[float] = []
        one_sumvar = partial(sumvar.sumvar, curves, c, BUDGET * kappa, gamma=gamma)
        search = partial(random_search, tr, c, curves, random_k, seed)
        lookup = partial(policy_lookup, alloc, curves)
        for _ in range(repeats):  # interleaved, so that both sides see the same machine
            sv += [cpu_ms(one_sumvar)[1] for _ in range(SUMVAR_CALLS)]
            if random_k:
                rs.append(cpu_ms(search)[1])
                lk.append(cpu_ms(lookup)[1])
        row: dict[str, Any] = {"dag": svc.name, "stages": n, "sumvar_ms": round(statistics.median(sv), 4),
                               "sumvar_ms_fastest": round(min(sv), 4)}
        if rs:
            row |= {"random_ms": round(statistics.median(rs), 1), "random_ms_fastest": round(min(rs), 1),
                    "speedup": round(statistics.median(rs) / statistics.median(sv), 1),
                    "speedup_of_fastest": round(min(rs) / min(sv), 1),
                    "policy_lookup_ms": round(statistics.median(lk), 1),
                    "speedup_without_policy_lookup": round((statistics.median(rs) - statistics.median(lk))
                                                           / statistics.median(sv), 1)}
        rows.append(row)
    return rows


def sumvar_150(seed: int, gamma: float) -> tuple[float, float]:
    """SumVar at 5 % on the 150-stage DAG of `bench/kwiken.py`'s combined policy: CPU ms, median
    and fastest of 5 (1 200 training requests, as there)."""
    from sextant_core.kwiken import reissue, sumvar
    from sextant_sim.kwiken import library
    from sextant_sim.kwiken import requests as rq

    svc = library.dag_of_size(seed, 150, 150)
    tr = rq.period(svc, seed, 0, 1200)
    curves = [reissue.reissue_curve(tr.lat[:, s], seed=s) for s in range(svc.dag.n)]
    c = svc.dag.normalised_costs()
    ts = [cpu_ms(lambda: sumvar.sumvar(curves, c, BUDGET, gamma=gamma))[1] for _ in range(5)]
    return statistics.median(ts), min(ts)


def curve_ms_10000(seed: int) -> float:
    """CPU ms of one variance curve from 10 000 samples (median over the first 5 stages of the
    seed's first library DAG; the same measure as `bench/kwiken.py`)."""
    from sextant_core.kwiken import reissue
    from sextant_sim.kwiken import library
    from sextant_sim.kwiken import requests as rq

    svc = library.library(seed, 1)[0]
    lat = rq.period(svc, seed, 0, 10_000).lat
    return statistics.median(cpu_ms(lambda s=s: reissue.reissue_curve(lat[:, s], seed=s))[1]
                             for s in range(min(5, svc.dag.n)))


def measure(seed: int, count: int, random_k: int, repeats: int, gamma: float, kappa: float) -> dict[str, Any]:
    rows = small_dags(seed, count, random_k, repeats, gamma, kappa)
    med, fast = sumvar_150(seed, gamma)
    d: dict[str, Any] = {"sumvar_ms_small_max": max(r["sumvar_ms"] for r in rows)}
    if random_k:
        d |= {"allocation_speedup_vs_random_min": min(r["speedup"] for r in rows),
              "allocation_speedup_vs_random_of_fastest_min": min(r["speedup_of_fastest"] for r in rows),
              "allocation_speedup_without_policy_lookup_min": min(r["speedup_without_policy_lookup"] for r in rows)}
    d |= {"sumvar_ms_150_stages": round(med, 3), "sumvar_ms_150_stages_fastest": round(fast, 3),
          "curve_ms_10000_samples": round(curve_ms_10000(seed), 2), "dags": rows}
    return d


def worst(per_seed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The least speed-up, the most milliseconds, over the seeds."""
    seeds = list(per_seed.values())
    out: dict[str, Any] = {}
    for k in seeds[0]:
        if k == "dags":
            continue
        vals = [d[k] for d in seeds]
        out[k] = min(vals) if "speedup" in k else max(vals)
    return out


def bars(w: dict[str, Any]) -> dict[str, bool]:
    out = {"sumvar_ms_150_stages_le_50": w["sumvar_ms_150_stages"] <= SUMVAR_150_BAR_MS,
           "curve_ms_10000_samples_le_200": w["curve_ms_10000_samples"] <= CURVE_BAR_MS}
    if "allocation_speedup_vs_random_min" in w:
        out["allocation_speedup_ge_1000"] = w["allocation_speedup_vs_random_min"] >= SPEED_BAR
    return out


def merge_into(path: Path, speed: dict[str, Any]) -> None:
    """Write `speed` as the `speed` section of the `bench/kwiken.py` JSON at `path`; its other keys
    (and their `code_version`) stay as the run that wrote them left them."""
    doc = json.loads(path.read_text())
    doc["speed"] = speed
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", dest="json_path", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", default=None, help="claim seeds (default 6-10; --quick: 6)")
    ap.add_argument("--random", type=int, default=10_000, help="random allocations per small DAG (0: none)")
    ap.add_argument("--repeats", type=int, default=None, help="random searches per DAG (default 3; --quick: 2)")
    ap.add_argument("--params", default="bench/results/kwiken.json", help="JSON with the chosen gamma and kappa")
    ap.add_argument("--merge-into", default=None, help="also write the result as this kwiken JSON's speed section")
    args = ap.parse_args()
    q = args.quick
    seeds = seeds_of(args.seeds or ("6" if q else "6-10"))
    repeats = args.repeats or (2 if q else 3)
    count = 3 if q else SMALL_DAGS
    params = json.loads(Path(args.params).read_text())
    gamma, kappa = float(params["gamma"]), float(params["kappa"])
    load_start = os.getloadavg()
    started = time.perf_counter()
    per_seed: dict[str, dict[str, Any]] = {}
    for seed in seeds:
        per_seed[str(seed)] = d = measure(seed, count, args.random, repeats, gamma, kappa)
        print(f"seed {seed}: " + ", ".join(f"{k} {v}" for k, v in d.items() if k != "dags"), flush=True)
    w = worst(per_seed)
    doc: dict[str, Any] = {
        "benchmark": "kwiken-speed", "code_version": code_version(), "seeds": seeds, "quick": q,
        "random_allocations": args.random, "repeats": repeats, "small_dags_per_seed": count,
        "gamma": gamma, "kappa": kappa, "clock": "thread CPU time", **w, "bars_met": bars(w),
        "per_seed": per_seed, "worst": w,
        "load_avg": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]},
        "machine": {"python": sys.version.split()[0], "cpus": os.cpu_count()},
        "wall_seconds": round(time.perf_counter() - started, 1)}
    Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json_path).write_text(json.dumps(doc, indent=2) + "\n")
    if args.merge_into:
        merge_into(Path(args.merge_into), doc)
    print(f"worst of seeds {seeds}: {w}; bars met: {doc['bars_met']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
