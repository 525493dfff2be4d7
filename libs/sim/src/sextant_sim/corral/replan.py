"""Periodic re-planning for Corral's runtime (jalaparti.md §4.4: "The offline planner will
periodically receive updated estimates of future workload, rerun the planning problem, and update
the guidelines").

`Replanner` wraps a `CorralRuntime` as the twin's scheduler. At the first heartbeat at or after
each multiple of `period`, it re-runs `sextant_core.corral.planner.plan` over the planned jobs
that have not started (no map taken yet), with what the runtime knows then:

- the racks: only the live ones (a rack with more than `threshold` of its machines down is left
  out, so a re-plan also moves jobs off a failed rack: the "re-planned onto live racks" reading
  of the fall-back);
- each live rack's free time: the latest estimated end, start + L'_j(r_j), of the started planned
  jobs holding it (the first heartbeat that saw the job started), at least now;
- each job's arrival: max(its arrival, now); the same latencies L'_j(r) as the first plan, the
  same objective (batch: makespan; online: mean completion, with keep-if-better).

The started jobs keep their racks and come first in priority (in their previous order); the
re-planned ones follow in the new plan's order. A re-planned job whose racks changed and whose
input is not uploaded yet (it has not arrived) has its input placed again, one replica in its
new racks (`jobs.rack_replicas`, a generator seeded by the run's seed and the re-plan's index);
one that has arrived keeps its input where it is.

Under wrong estimates (`perturbation`), `told_arrivals` are the arrivals the first plan was made
with and `observed_latency` the latencies of the jobs as they really are (rows as `latency`): a
re-plan then sees a job's true arrival and size only once it has arrived (its input exists), and
the told ones before; a started job's estimated end uses its observed latency. Without them (the
default) the told figures are the true ones. [IMPL CHOICE] the spec gives neither the
period nor what the re-plan sees; ad hoc jobs are not planned (they are unknown in advance), and
their load is not in the free times. Deterministic: no clock, no unseeded randomness.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sextant_core.corral.planner import plan

from .failures import down_fraction
from .jobs import JobState, rack_replicas
from .network import Topology
from .schedulers import CorralRuntime, Task


class Replanner:
    def __init__(self, runtime: CorralRuntime, topo: Topology, latency: np.ndarray, planned: Sequence[int],
                 widths: Sequence[int], *, period: float, online: bool, seed: int, threshold: float = 0.5,
                 told_arrivals: Sequence[float] | None = None, observed_latency: np.ndarray | None = None) -> None:
        if period <= 0:
            raise ValueError("a re-planning period must be > 0")
        self.runtime = runtime
        self.topo = topo
        self.latency = np.asarray(latency, dtype=float)  # rows: job ids of `planned`, in that order
        self.observed = self.latency if observed_latency is None else np.asarray(observed_latency, dtype=float)
        self.told = None if told_arrivals is None else {j: float(a) for j, a in zip(planned, told_arrivals, strict=True)}
        self.row = {j: i for i, j in enumerate(planned)}
        self.planned = list(planned)
        self.widths = {j: int(w) for j, w in zip(planned, widths, strict=True)}
        self.period, self.online, self.seed, self.threshold = period, online, seed, threshold
        self.next = period
        self.started_at: dict[int, float] = {}
        self.down = np.zeros(topo.n_machines, dtype=bool)
        self.replans = 0  # re-plans run (with at least one job to plan)
        self.moved = 0  # jobs whose racks a re-plan changed
        self.uploads = 0  # of them, inputs placed again

    def machines_changed(self, down: Sequence[bool] | np.ndarray) -> None:
        self.down = np.asarray(down, dtype=bool)
        self.runtime.machines_changed(down)

    def begin(self, now: float, jobs: Sequence[JobState]) -> None:
        for j in self.planned:
            js = jobs[j]
            if j not in self.started_at and (js.n_waiting < js.job.maps or js.maps_done or js.finish is not None):
                self.started_at[j] = now
        if now >= self.next:
            while self.next <= now:
                self.next += self.period
            self._replan(now, jobs)
        self.runtime.begin(now, jobs)

    def offer(self, machine: int, now: float, jobs: Sequence[JobState]) -> Task | None:
        return self.runtime.offer(machine, now, jobs)

    def _replan(self, now: float, jobs: Sequence[JobState]) -> None:
        frac = down_fraction(self.topo, self.down)
        live = [k for k in range(self.topo.racks) if frac[k] <= self.threshold]
        pending = [j for j in self.planned if j not in self.started_at]
        if not live or not pending:
            return
        running = [j for j in self.planned if j in self.started_at and jobs[j].finish is None]
        free = np.full(self.topo.racks, now)
        for j in running:
            end = self.started_at[j] + self.observed[self.row[j], self.widths[j] - 1]
            for k in self.runtime.racks[j]:
                free[k] = max(free[k], end)
        arrived = [self.told is None or jobs[j].job.arrival <= now for j in pending]
        lat = np.array([(self.observed if seen else self.latency)[self.row[j], : len(live)]
                        for j, seen in zip(pending, arrived, strict=True)]).reshape(len(pending), len(live))
        arrivals = np.array([max(jobs[j].job.arrival if seen or self.told is None else self.told[j], now)
                             for j, seen in zip(pending, arrived, strict=True)])
        pl = plan(lat, arrivals, online=self.online, keep_if_better=self.online, free=free[live])
        rank = self.runtime.rank
        order = sorted(running, key=rank.__getitem__) + [pending[i] for i in np.argsort(pl.priorities, kind="stable")]
        priorities = [len(jobs)] * len(jobs)
        for p, j in enumerate(order):
            priorities[j] = p
        changed: dict[int, tuple[int, ...]] = {}
        rng = np.random.default_rng([self.seed, 23, self.replans])
        for i, j in enumerate(pending):
            racks = tuple(sorted(live[k] for k in pl.racks[i]))
            self.widths[j] = len(racks)
            if racks != self.runtime.racks[j]:
                changed[j] = racks
                if jobs[j].job.arrival > now:
                    jobs[j].upload(rack_replicas(self.topo, jobs[j].job.maps, racks, rng))
                    self.uploads += 1
        self.runtime.replan(changed, priorities)
        self.replans += 1
        self.moved += len(changed)
