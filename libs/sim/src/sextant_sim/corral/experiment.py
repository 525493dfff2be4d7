"""One Corral-twin experiment: a workload under Yarn-CS, Corral or LocalShuffle (jalaparti.md §4.6).

- `corral_latency(jobs, topo, ...)`: L_j(r) for r = 1..R from MRCute Model B (the twin's slots,
  NIC, oversubscription and task disk rate as the profile), plus the data-balance penalty
  α·D_j/r with α = 1 / rack-to-core bandwidth (§4.3.4). `plan_oversubscription` is the O the
  planner assumes (the background traffic makes the core slower than its nominal 5:1; a planner
  parameter, chosen on seeds 1–5).
- `run_policy(name, jobs, topo, seed)`:
  - `yarn`: random replicas (3 racks), `YarnCS` in arrival order;
  - `corral`: the offline plan (`sextant_core.corral.planner.plan`, batch or online; online with
    `keep_if_better`, chosen on seeds 1–5: docs/corral/twin.md), one replica in the job's racks,
    `CorralRuntime` with the plan's racks and priorities;
  - `localshuffle`: Corral's plan and task placement with random replicas (§4.6's ablation);
  - `shufflewatcher`: Yarn-CS's replicas, each job alone in the racks minimising its own
    cross-rack bytes, FIFO (`baselines`); `racks` holds the subsets.
  The background traffic depends only on `seed` (the same for every policy).
- Runtime options (defaults off: the runs above unchanged): `failures` (module `failures`, for
  every policy), `fallback` (Corral's threshold, `schedulers.CorralRuntime`), `adhoc` (job ids not
  in the plan: random replicas, served after the planned jobs of a rack; Yarn-CS serves every job
  alike), `replan_period` (seconds, `replan.Replanner`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sextant_core.corral.mrcute import JobProfile, latency_b
from sextant_core.corral.planner import Plan, lp_batch_bound, lp_online_bound, plan, with_data_penalty

from .baselines import shufflewatcher
from .failures import Failure
from .jobs import rack_replicas, random_replicas
from .network import Topology
from .replan import Replanner
from .schedulers import CorralRuntime, Scheduler, YarnCS
from .twin import B_TASK, run
from .workloads import Job

POLICIES = ("yarn", "corral", "localshuffle", "shufflewatcher")


def corral_latency(jobs: Sequence[Job], topo: Topology, *, plan_oversubscription: float | None = None) -> np.ndarray:
    """(jobs × racks) L'_j(r): Model B plus the data-balance penalty (see the module docstring)."""
    o = topo.oversubscription if plan_oversubscription is None else plan_oversubscription
    r = np.arange(1, topo.racks + 1)
    lat = np.empty((len(jobs), topo.racks))
    for i, j in enumerate(jobs):
        p = JobProfile(s_map=j.input_bytes / j.shuffle_bytes, s_reduce=j.shuffle_bytes / j.output_bytes,
                       b_map_p=j.b_map, b_reduce_p=j.b_reduce, b_disk=B_TASK, map_tasks=j.maps,
                       reduce_tasks=j.reducers, map_slots=topo.slots, reduce_slots=topo.slots)
        lat[i] = latency_b(p, j.input_bytes, r, machines_per_rack=topo.machines, nic=topo.nic, oversubscription=o)
        lat[i, 0] *= min(1.0, max(j.maps, j.reducers) / (topo.machines * topo.slots))
    return with_data_penalty(lat, np.array([j.input_bytes for j in jobs]), topo.core_link)


def corral_plan(jobs: Sequence[Job], topo: Topology, *, online: bool = False,
                plan_oversubscription: float | None = None) -> tuple[Plan, np.ndarray]:
    lat = corral_latency(jobs, topo, plan_oversubscription=plan_oversubscription)
    arrivals = np.array([j.arrival for j in jobs]) if online else None
    return plan(lat, arrivals, online=online, keep_if_better=online), lat


def run_policy(name: str, jobs: Sequence[Job], topo: Topology, seed: int, *, online: bool = False,
               plan_oversubscription: float | None = None, failures: Sequence[Failure] = (),
               fallback: float | None = None, adhoc: Sequence[int] = (), replan_period: float | None = None,
               lp_online: bool = True, **twin: float) -> dict[str, Any]:
    """Run one policy; returns the twin's `Result` fields (and the `Result` itself as `result`, for
    its per-job diagnostics) plus, for planned policies, the `plan`, its objective and the LP-Batch
    (batch) or LP-Online (online) bound on the same latencies (`lp_online=False`: no LP-Online and
    no thesis-path plan, both None; their cost grows with the job count)."""
    rng = np.random.default_rng([seed, 5])
    out: dict[str, Any] = {}
    scheduler: Scheduler
    if name == "yarn":
        replicas = [random_replicas(topo, j.maps, rng) for j in jobs]
        scheduler = YarnCS(topo, sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival, i)))
    elif name == "shufflewatcher":
        replicas, scheduler, out["racks"] = shufflewatcher(jobs, topo, rng)
    elif name in ("corral", "localshuffle"):
        unplanned = set(adhoc)
        planned = [i for i in range(len(jobs)) if i not in unplanned]
        pl, lat = corral_plan([jobs[i] for i in planned], topo, online=online, plan_oversubscription=plan_oversubscription)
        racks: list[tuple[int, ...]] = [()] * len(jobs)
        priorities = [0] * len(jobs)
        for row, i in enumerate(planned):
            racks[i], priorities[i] = pl.racks[row], int(pl.priorities[row])
        replicas = [rack_replicas(topo, j.maps, racks[i], rng) if name == "corral" and racks[i]
                    else random_replicas(topo, j.maps, rng) for i, j in enumerate(jobs)]
        runtime = CorralRuntime(topo, racks, priorities, fallback=fallback,
                                adhoc=sorted(unplanned, key=lambda i: (jobs[i].arrival, i)))
        scheduler = runtime
        if replan_period is not None:
            scheduler = Replanner(runtime, topo, lat, planned, pl.widths.tolist(), period=replan_period, online=online,
                                  seed=seed, threshold=0.5 if fallback is None else fallback)
            out["replanner"] = scheduler
        out["planned"] = planned
        out["plan_objective"] = pl.objective
        out["lp_batch"] = None if online else lp_batch_bound(lat)
        lp = online and lp_online
        out["lp_online"] = lp_online_bound(lat, np.array([jobs[i].arrival for i in planned])) if lp else None
        out["plan_objective_thesis_path"] = None
        if lp:  # the thesis's provisioning path alone, for the record
            out["plan_objective_thesis_path"] = plan(lat, np.array([jobs[i].arrival for i in planned]), online=True).objective
        out["plan_widths"] = np.bincount(pl.widths, minlength=topo.racks + 1)[1:].tolist()
        out["plan"] = pl
    else:
        raise ValueError(f"unknown policy {name!r}; one of {POLICIES}")
    res = run(jobs, replicas, scheduler, topo, seed=seed, failures=failures, **twin)
    out.update(makespan=res.makespan, median_jct=float(np.median(res.completion)),
               mean_jct=float(res.completion.mean()), cross_rack_bytes=res.cross_rack_bytes,
               network_bytes=res.total_network_bytes, maps_local=res.maps_local, maps_rack=res.maps_rack,
               maps_remote=res.maps_remote, rate_solves=res.rate_solves, result=res)
    return out
