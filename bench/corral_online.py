"""Why Corral's online plan gains little on the Corral twin (docs/corral/twin.md, "Online").

    .venv/bin/python bench/corral_online.py [--seeds 1-5] [--quick] [--load 1] [--workloads W1,W2,W3] [--json PATH]

Per seed and workload, the online scenario of `bench/corral.py` (arrivals uniform over 60 minutes;
`--load K` draws K times the workload's jobs over the same hour, a diagnosis of how the gain grows
with load, not the yardstick) under Yarn-CS and Corral, and per policy:

- `median_jct`, `mean_jct`; `floor_median`, `floor_mean`: the same statistics of every job's
  `isolated_floor` (the job alone on an idle cluster, every read and fetch at its container's
  cap: no policy does better), so `headroom_median` = floor / Yarn-CS − 1 is the most any
  scheduler could gain at the median;
- `busy` (container-seconds used / available), `peak_busy` (highest share of containers busy at a
  heartbeat), `core_utilisation` (bytes carried by the racks' core links / their nominal capacity),
  `core_saturated` (share of time some core link runs at ≥ 99 % of its current capacity);
- `queue_median`, `queue_p90`: first task start − arrival; `cross_rack_tb`; map locality;
- Corral only: `outside_plan` (jobs with a task on a rack not in their plan: 0 when the runtime
  follows the plan), `same_as_yarn` (share of jobs whose JCT is within 1 % of Yarn-CS's).

Diagnosis only: no claims, no timing in the output but CPU seconds per run.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from quality import code_version, seeds_of
from sextant_sim.corral import TWIN_VERSION


def _stats(res: Any, floor: np.ndarray) -> dict[str, Any]:
    return {
        "median_jct": round(float(np.median(res.completion)), 3),
        "mean_jct": round(float(res.completion.mean()), 3),
        "busy": round(res.busy_fraction, 4),
        "peak_busy": round(res.peak_busy_fraction, 4),
        "core_utilisation": round(res.core_utilisation, 4),
        "core_saturated": round(res.core_saturated_fraction, 4),
        "queue_median": round(float(np.median(res.first_start)), 3),
        "queue_p90": round(float(np.percentile(res.first_start, 90)), 3),
        "cross_rack_tb": round(res.cross_rack_bytes / 1e12, 3),
        "maps_local_rack_remote": [res.maps_local, res.maps_rack, res.maps_remote],
        "above_floor_median": round(float(np.median(res.completion / floor - 1)), 4),
    }


def diagnose(seed: int, workload: str, quick: bool, load: float) -> dict[str, Any]:
    from sextant_sim.corral.experiment import run_policy
    from sextant_sim.corral.network import Topology
    from sextant_sim.corral.twin import isolated_floor
    from sextant_sim.corral.workloads import WORKLOADS, with_arrivals

    gen = WORKLOADS[workload]
    topo = Topology()
    n_jobs = len(gen(seed, 4.0))
    jobs = with_arrivals(gen(seed, 4.0 if quick else 1.0, n_jobs=round(n_jobs * load)), seed)
    c0 = time.process_time()
    yarn = run_policy("yarn", jobs, topo, seed, online=True)
    corral = run_policy("corral", jobs, topo, seed, online=True)
    floor = np.array([isolated_floor(j, topo) for j in jobs])
    ry, rc = yarn["result"], corral["result"]
    allowed = np.zeros((len(jobs), topo.racks), dtype=bool)
    for i, racks in enumerate(corral["plan"].racks):
        allowed[i, list(racks)] = True
    out = {
        "jobs": len(jobs),
        "floor_median": round(float(np.median(floor)), 3),
        "floor_mean": round(float(floor.mean()), 3),
        "yarn": _stats(ry, floor),
        "corral": {**_stats(rc, floor), "plan_widths": corral["plan_widths"],
                   "outside_plan": int((rc.job_racks & ~allowed).any(axis=1).sum()),
                   "same_as_yarn": round(float(np.mean(np.abs(rc.completion / ry.completion - 1) < 0.01)), 4)},
        "cpu_seconds": round(time.process_time() - c0, 2),
    }
    y_med, y_mean = out["yarn"]["median_jct"], out["yarn"]["mean_jct"]
    out["median_jct_vs_yarn"] = round(out["corral"]["median_jct"] / y_med - 1, 4)
    out["mean_jct_vs_yarn"] = round(out["corral"]["mean_jct"] / y_mean - 1, 4)
    out["headroom_median"] = round(out["floor_median"] / y_med - 1, 4)
    out["headroom_mean"] = round(out["floor_mean"] / y_mean - 1, 4)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--load", default="1", help="comma list of job-count multipliers over the same hour")
    ap.add_argument("--workloads", default="W1,W2,W3")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    load_start = os.getloadavg()
    rows: dict[str, Any] = {}
    for seed in seeds_of(args.seeds):
        for w in args.workloads.split(","):
            for load in (float(x) for x in args.load.split(",")):
                r = diagnose(seed, w, args.quick, load)
                rows[f"{seed}/{w}/x{load:g}"] = r
                y, c = r["yarn"], r["corral"]
                print(f"{seed:>3} {w} x{load:g} ({r['jobs']} jobs): median {r['median_jct_vs_yarn']:+.1%} "
                      f"mean {r['mean_jct_vs_yarn']:+.1%} | floor median {r['headroom_median']:+.1%} mean "
                      f"{r['headroom_mean']:+.1%} | busy {y['busy']:.1%} peak {y['peak_busy']:.0%} | core yarn "
                      f"{y['core_utilisation']:.1%} sat {y['core_saturated']:.0%}, corral {c['core_utilisation']:.1%} "
                      f"sat {c['core_saturated']:.0%} | queue {y['queue_median']:.2f}/{c['queue_median']:.2f} s | "
                      f"same {c['same_as_yarn']:.0%} | outside plan {c['outside_plan']} ({r['cpu_seconds']} s CPU)",
                      flush=True)
    if args.json:
        doc = {"benchmark": "corral-online-diagnosis", "code_version": code_version(), "twin_version": TWIN_VERSION,
               "seeds": seeds_of(args.seeds), "quick": args.quick, "per_seed": rows,
               "load_avg": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]}}
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
