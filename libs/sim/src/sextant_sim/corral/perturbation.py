"""Corral's plan under wrong inputs: job-size error and start-time jitter (jalaparti.md §4.6, §8).

The thesis's robustness study (online, W1): the planner is given job sizes off by up to 50 % ("the
benefits stay between 25-35 %") and, for a fraction f of the jobs, start times shifted by a
uniform [−t, t], t = 4 min (f from 0 to 50 %: "benefits of Corral reduce from 40% to at most 25%").

- `perturb(jobs, seed, ...)` → (`planned`, `actual`): `planned` is what the planner is told, the
  jobs' bytes (input, shuffle, output) each × (1 + e), e ~ U(−size_error, size_error) drawn per
  job, arrivals as scheduled; `actual` is what runs, the true bytes and, for a random `fraction` of
  the jobs, the arrival shifted by U(−jitter, jitter), clipped at 0. [IMPL CHOICE] One factor per
  job for all three byte counts (a job's input predicts its stages); task counts are not perturbed
  (the planner knows the job's code and block size; its bytes per task are wrong).
- `run_corral_on(planned, actual, topo, seed)`: the online plan of `planned` (racks, priorities,
  one replica in the planned racks) run on `actual` by `CorralRuntime`. Yarn-CS needs no plan: the
  comparison runs it on `actual` (`run_policy("yarn", actual, ...)`). With `replan_period`, the
  runtime re-plans periodically (`replan.Replanner`) with what it has observed: a job's true
  arrival and size once it has arrived, the told ones before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .experiment import corral_latency, corral_plan
from .jobs import rack_replicas
from .network import Topology
from .replan import Replanner
from .schedulers import CorralRuntime, Scheduler
from .twin import run
from .workloads import Job

SIZE_ERROR = 0.5
JITTER = 240.0  # seconds
JITTER_FRACTION = 0.5


def perturb(jobs: Sequence[Job], seed: int, *, size_error: float = SIZE_ERROR, jitter: float = JITTER,
            fraction: float = JITTER_FRACTION) -> tuple[list[Job], list[Job]]:
    """(planned, actual) views of `jobs` (module docstring); a function of `seed` alone."""
    rng = np.random.default_rng([seed, 31])
    n = len(jobs)
    err = 1.0 + rng.uniform(-size_error, size_error, size=n)
    shifted = np.zeros(n, dtype=bool)
    shifted[rng.permutation(n)[: round(fraction * n)]] = True
    shift = rng.uniform(-jitter, jitter, size=n)
    planned = [replace(j, input_bytes=j.input_bytes * e, shuffle_bytes=j.shuffle_bytes * e,
                       output_bytes=j.output_bytes * e) for j, e in zip(jobs, err.tolist(), strict=True)]
    actual = [replace(j, arrival=max(0.0, j.arrival + s)) if m else j
              for j, m, s in zip(jobs, shifted.tolist(), shift.tolist(), strict=True)]
    return planned, actual


def run_corral_on(planned: Sequence[Job], actual: Sequence[Job], topo: Topology, seed: int, *,
                  plan_oversubscription: float | None = None, replan_period: float | None = None,
                  **twin: float) -> dict[str, Any]:
    """Corral's online plan of `planned`, run on `actual` (same ids, same order): makespan, median
    and mean completion − actual arrival, cross-rack bytes, the twin's `Result`, and the
    `replanner` (None without `replan_period`)."""
    pl, lat = corral_plan(planned, topo, online=True, plan_oversubscription=plan_oversubscription)
    rng = np.random.default_rng([seed, 5])
    replicas = [rack_replicas(topo, j.maps, pl.racks[i], rng) for i, j in enumerate(actual)]
    runtime = CorralRuntime(topo, pl.racks, pl.priorities.tolist())
    scheduler: Scheduler = runtime
    replanner = None
    if replan_period is not None:
        observed = corral_latency(actual, topo, plan_oversubscription=plan_oversubscription)
        replanner = Replanner(runtime, topo, lat, list(range(len(planned))), pl.widths.tolist(), period=replan_period,
                              online=True, seed=seed, told_arrivals=[j.arrival for j in planned],
                              observed_latency=observed)
        scheduler = replanner
    res = run(actual, replicas, scheduler, topo, seed=seed, failures=(), **twin)
    return {"makespan": res.makespan, "median_jct": float(np.median(res.completion)),
            "mean_jct": float(res.completion.mean()), "cross_rack_bytes": res.cross_rack_bytes, "result": res,
            "replanner": replanner}
