"""What the LCG replay allows: how far any sharing rule moves the large bursty VC before another
VC pays more than the issue's price (its stretch > 2 × its stretch under MaxMin).

`bench/fairness.py` compares the policies; this bench asks whether its LCG bars can be met at
all. It runs a ladder of rules, from MaxMin to giving the large VC the whole free pool first
(`priority_large`), each with the simulator's default reclamation (`settle`: borrowers keep their
servers until their jobs end) and with immediate reclamation (`reclaim`: a VC above its target is
preempted at once, work lost counted). For every rule it reports the large VC's overall and
overload-day stretch, the VC that pays most against MaxMin and by how much, the similar-load
stretch ratio and the work lost, and whether the two LCG bars (large VC's overload excess halved,
similar-load ratio excess halved) hold together with the price (every VC ≤ 2 × MaxMin, work lost
≤ 1 %).

    .venv/bin/python bench/fairness_frontier.py --json bench/results/fairness-frontier.json [--quick]

`--quick`: the issue's capacity rule only; otherwise also the 75th-percentile rule (held out: the
ladder was drawn up on the issue's rule). `--seeds` is accepted for the benches' common interface
and ignored: the log is one real trace, no seed enters. Runs are cached under
bench/results/fairness-frontier/ by code version.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels)

# isort: split
import argparse
import json
import os
import platform
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
from fairness import PriorityTo, code_version, workload

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / "results" / "fairness-frontier"
# rung: (policy, its arguments, reclaim)
LADDER: dict[str, tuple[str, dict[str, Any], bool]] = {
    "maxmin": ("maxmin", {}, False),
    "maxmin+reclaim": ("maxmin", {}, True),
    "sextant": ("sextant", {}, False),
    "sextant+reclaim": ("sextant", {}, True),
    "decayed-equal-k1+reclaim": ("decayed", {"strength": 1.0, "equal_base": True}, True),
    "decayed-equal-k3+reclaim": ("decayed", {"strength": 3.0, "equal_base": True}, True),
    "priority_large": ("priority_large", {}, False),
    "priority_large+reclaim": ("priority_large", {}, True),
}


def run(task: tuple[str, str, str]) -> dict[str, Any]:
    """One rung on one capacity rule, summarised with every VC's stretch; cached by code version."""
    rule, rung, version = task
    path = CACHE / f"{version}-{rule}-{rung}.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    from sextant_core.fairness import make_policy
    from sextant_sim.fairness import metrics
    from sextant_sim.fairness.engine import simulate

    jobs, cap, total, rigid = workload(f"lcg:{rule}")
    sub = metrics.subjects(jobs, cap)
    name, args, reclaim = LADDER[rung]
    pol: Any = PriorityTo(sub.large) if name == "priority_large" else make_policy(name, **args)
    started = time.process_time()
    res = simulate(jobs, cap, total, pol, rigid=rigid, reclaim=reclaim)
    out = metrics.summary(jobs, cap, total, res, sub)
    out = {k: (float(v) if isinstance(v, np.floating) else v) for k, v in out.items()}
    out.update(large_vc=sub.large, cpu_s=round(time.process_time() - started, 1),
               in_pairs=sorted({v for p in sub.pairs for v in p}))
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out))
    return out


def rung_row(r: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """The frontier's figures of one rung against MaxMin (same rule, default reclamation)."""
    vs, bs = np.array(r["vc_stretch"]), np.array(base["vc_stretch"])
    factor = vs / bs
    worst = int(np.argmax(factor))
    large = r["large_vc"]
    def reduction(before: float, after: float) -> float:  # excess over 1 divided; none left: inf
        return (before - 1) / (after - 1) if after > 1 else float("inf")

    over_red = reduction(base["large_vc_overload_stretch"], r["large_vc_overload_stretch"])
    ratio_red = reduction(base["similar_load_stretch_ratio"], r["similar_load_stretch_ratio"])
    price = bool(factor.max() <= 2.0 and r["preempted_work_share"] <= 0.01 and r["idle_while_waiting_s"] <= 0)
    return {
        "large_vc_stretch": round(float(vs[large]), 3),
        "large_vc_overload_stretch": round(r["large_vc_overload_stretch"], 3),
        "overload_excess_reduction": round(over_red, 3),
        "similar_load_stretch_ratio": round(r["similar_load_stretch_ratio"], 3),
        "ratio_excess_reduction": round(ratio_red, 3),
        "most_hurt_vc": worst,
        "max_vc_stretch_vs_maxmin": round(float(factor.max()), 3),
        "preempted_work_share": round(r["preempted_work_share"], 5),
        "price_kept": price,
        "bars_met": bool(price and over_red >= 2 and ratio_red >= 2),
        "vc_stretch": [round(float(x), 3) for x in vs],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", dest="json_path")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", default="-", help="ignored: one real log, no seed")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    version = code_version()
    rules = ["mean"] if args.quick else ["mean", "p75"]
    tasks = [(rule, rung, version) for rule in rules for rung in LADDER]
    with Pool(args.jobs) as pool:
        done = dict(zip(tasks, pool.map(run, tasks, chunksize=1), strict=True))
    frontier: dict[str, dict[str, Any]] = {}
    for rule in rules:
        base = done[(rule, "maxmin", version)]
        frontier[rule] = {rung: rung_row(done[(rule, rung, version)], base) for rung in LADDER}
        print(f"\nLCG, capacity rule {rule!r}: large VC {base['large_vc']}")
        print(f"{'rung':26s} {'large':>7s} {'overload':>9s} {'red':>6s} {'ratio':>8s} {'red':>6s} "
              f"{'hurt VC':>8s} {'×MaxMin':>8s} {'lost':>7s}  bars")
        for rung, row in frontier[rule].items():
            print(f"{rung:26s} {row['large_vc_stretch']:7.2f} {row['large_vc_overload_stretch']:9.2f} "
                  f"{row['overload_excess_reduction']:6.2f} {row['similar_load_stretch_ratio']:8.2f} "
                  f"{row['ratio_excess_reduction']:6.2f} {row['most_hurt_vc']:8d} "
                  f"{row['max_vc_stretch_vs_maxmin']:8.2f} {row['preempted_work_share']:7.4f}  "
                  f"{'met' if row['bars_met'] else 'price' if not row['price_kept'] else 'unmet'}")
    doc = {
        "benchmark": "fairness-frontier",
        "frontier": frontier,
        "any_rung_meets_bars": {rule: any(r["bars_met"] for r in rows.values()) for rule, rows in frontier.items()},
        "rules": rules,
        "quick": args.quick,
        "per_seed": {},
        "worst": {},
        "code_version": version,
        "load_avg": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "elapsed_seconds": round(time.perf_counter() - started, 1),
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
    }
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
