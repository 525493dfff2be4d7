"""The online scenario under more load: Corral and Yarn-CS side by side (docs/corral/online.md).

The online yardstick runs W1, W2 or W3 with arrivals uniform over 60 minutes. The thesis's testbed
runs the same hour far more loaded than this twin (its ±4 min start jitter is "20 % of the average
job completion time": a 20-minute mean JCT, against ≈ 2 minutes for W1 here). A *load point* keeps
the hour and the arrivals and multiplies the work, either

- `sizes` (`scale_sizes`): every job's input, shuffle and output bytes × K, the same jobs, task
  counts and arrival times (the tasks are K times longer); or
- `jobs`: K times the jobs over the same hour (the generator's own draws, `n_jobs` × K).

`load_point(jobs, topo, seed)` runs Yarn-CS and Corral's online plan (`experiment.run_policy`) and
returns, per policy: median and mean JCT, the median queueing delay (first task start − arrival)
and the queueing share (Σ queueing / Σ JCT), the median service time (JCT − queueing), container
busy share (mean and peak), core-link utilisation and the share of time some core link is
saturated; for the pair: median and mean JCT of Corral vs Yarn-CS, the *headroom* (the median of
every job's `twin.isolated_floor` vs Yarn-CS's median: the most any policy could gain there), the
plan's objective against LP-Online on the same latencies (`lp_gap`), and the share of jobs
whose plan is wider than one rack. Deterministic: a function of the jobs, the topology and the
seed. LP-Online is skipped (None) when `lp` is False (its size grows with the job count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .experiment import run_policy
from .network import Topology
from .twin import Result, isolated_floor
from .workloads import Job

MODES = ("sizes", "jobs")


def scale_sizes(jobs: Sequence[Job], k: float) -> list[Job]:
    """`jobs` with input, shuffle and output bytes × `k` (same ids, tasks, rates and arrivals)."""
    if k <= 0:
        raise ValueError("a load factor must be > 0")
    return [replace(j, input_bytes=j.input_bytes * k, shuffle_bytes=j.shuffle_bytes * k,
                    output_bytes=j.output_bytes * k) for j in jobs]


def policy_stats(res: Result) -> dict[str, float]:
    """One policy's JCT, queueing and utilisation figures (module docstring)."""
    jct = res.completion
    queue = res.first_start if res.first_start is not None else np.zeros_like(jct)
    return {"median_jct": round(float(np.median(jct)), 3), "mean_jct": round(float(jct.mean()), 3),
            "queue_median": round(float(np.median(queue)), 3),
            "queue_share": round(float(queue.sum() / max(jct.sum(), 1e-12)), 4),
            "service_median": round(float(np.median(jct - queue)), 3),
            "busy": round(res.busy_fraction, 4), "peak_busy": round(res.peak_busy_fraction, 4),
            "core_utilisation": round(res.core_utilisation, 4), "core_saturated": round(res.core_saturated_fraction, 4),
            "cross_rack_tb": round(res.cross_rack_bytes / 1e12, 4), "makespan": round(res.makespan, 3)}


def _rel(x: float, base: float) -> float | None:
    return None if base == 0 else round((x - base) / base, 4)


def load_point(jobs: Sequence[Job], topo: Topology, seed: int, *, plan_oversubscription: float | None = None,
               lp: bool = True) -> dict[str, Any]:
    """Yarn-CS and Corral (online plan) on `jobs` (arrivals set): the figures of the module docstring."""
    yarn = run_policy("yarn", jobs, topo, seed, online=True)
    corral = run_policy("corral", jobs, topo, seed, online=True, plan_oversubscription=plan_oversubscription,
                        lp_online=lp)
    ry, rc = yarn["result"], corral["result"]
    floor = np.array([isolated_floor(j, topo) for j in jobs])
    out: dict[str, Any] = {"jobs": len(jobs), "yarn": policy_stats(ry), "corral": policy_stats(rc)}
    out["median_jct_vs_yarn"] = _rel(float(np.median(rc.completion)), float(np.median(ry.completion)))
    out["mean_jct_vs_yarn"] = _rel(float(rc.completion.mean()), float(ry.completion.mean()))
    out["headroom_median"] = _rel(float(np.median(floor)), float(np.median(ry.completion)))
    out["plan_objective"] = round(corral["plan_objective"], 3)
    out["lp_online"] = None if corral["lp_online"] is None else round(corral["lp_online"], 3)
    out["lp_gap"] = None if corral["lp_online"] is None else _rel(corral["plan_objective"], corral["lp_online"])
    out["plan_wider_than_one_rack"] = round(float(np.mean(corral["plan"].widths > 1)), 4)
    return out
