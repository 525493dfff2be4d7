"""The Corral twin: task-level MapReduce on racks with a flow-level max-min network, event-driven.

`run(jobs, replicas, scheduler, topo, seed=…)` plays a batch (or arrivals) to the end and returns a
`Result` (makespan, completion times, cross-rack bytes, locality counts). Same inputs and seed ⇒
the same result, bit for bit (no clock, one seeded generator for the background traffic).

The world (jalaparti.md §8, planner sim):
- Containers: `topo.slots` per machine; schedulers are offered free containers at heartbeats every
  `heartbeat` seconds (all machines, in an order rotated each beat), as Yarn's node updates.
- A map on machine x reads its block: from x itself if x holds a replica (no network), else from a
  replica in x's rack, else from the first replica (cross-rack). The read is a flow through the
  NICs (and the two racks' core links when cross-rack) and the task's container link, whose
  capacity is min(B_task, B_map^P): the task reads and processes at one rate. A local map takes
  block / min(B_task, B_map^P). Its output (block / S_map) stays on x's rack.
- A job's reducers become schedulable when its last map ends (slow-start 1.0, MRCute's sequential
  stages). A reducer fetches 1/R of the map output from every rack that holds some: one flow per
  source rack (rack core links when remote, its NIC down, its container link at B_task = the disk
  write); then it reduces at min(B_task, B_reduce^P). Its output is written locally (the output's
  remote replicas are not simulated; a gap choice).
- Background traffic (§4.5.2): each rack's core uplink and downlink lose a fraction U(0, bg_max)
  of their capacity, redrawn every `bg_period` seconds.
- Rates are max-min fair (`network.max_min`), recomputed once per event time when the flow set or
  the capacities changed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .failures import Failure
from .jobs import JobState
from .network import LINKS_PER_FLOW, Topology, max_min
from .schedulers import Scheduler
from .workloads import Job

B_TASK = 100e6  # a container's disk share, bytes/s


@dataclass(frozen=True)
class Result:
    makespan: float
    completion: np.ndarray  # per job: finish − arrival
    cross_rack_bytes: float
    total_network_bytes: float
    maps_local: int  # node-local
    maps_rack: int
    maps_remote: int
    rate_solves: int  # max-min recomputations
    # diagnostics (read only; they change nothing in the run)
    first_start: np.ndarray | None = None  # per job: first task start − arrival (queueing delay)
    map_phase: np.ndarray | None = None  # per job: last map end − arrival
    job_cross_bytes: np.ndarray | None = None  # per job: bytes through the core
    job_racks: np.ndarray | None = None  # (jobs × racks) bool: a task of the job ran on the rack
    busy_fraction: float = 0.0  # container-seconds busy / (containers × makespan)
    peak_busy_fraction: float = 0.0  # highest share of containers busy at any heartbeat
    core_utilisation: float = 0.0  # rack up+down links: bytes carried / nominal capacity × makespan
    core_saturated_fraction: float = 0.0  # share of time some core link is ≥ 99 % of its current capacity
    tasks_lost: int = 0  # tasks killed by a failure (their machine, or their map read's source, went down)
    maps_rerun: int = 0  # finished maps run again because a failure took their output


class _Flows:
    """Active flows as fixed-size arrays with a free list (rows are reused)."""

    def __init__(self, capacity: int, pad: int) -> None:
        self.links = np.full((capacity, LINKS_PER_FLOW), pad, dtype=np.int64)
        self.rem = np.zeros(capacity)
        self.rate = np.zeros(capacity)
        self.owner = np.full(capacity, -1, dtype=np.int64)  # container
        self.active = np.zeros(capacity, dtype=bool)
        self.free = list(range(capacity - 1, -1, -1))
        self.pad = pad

    def add(self, links: list[int], nbytes: float, owner: int) -> None:
        f = self.free.pop()
        self.links[f] = self.pad
        self.links[f, : len(links)] = links
        self.rem[f] = nbytes
        self.owner[f] = owner
        self.active[f] = True

    def drop(self, f: int) -> None:
        self.active[f] = False
        self.rate[f] = 0.0
        self.free.append(f)


class Twin:
    def __init__(self, jobs: Sequence[Job], replicas: Sequence[np.ndarray], scheduler: Scheduler, topo: Topology, *,
                 seed: int, bg_max: float = 0.5, bg_period: float = 60.0, heartbeat: float = 1.0,
                 failures: Sequence[Failure] = ()) -> None:
        self.topo = topo
        self.jobs = [JobState(j, r, topo) for j, r in zip(jobs, replicas, strict=True)]
        self.scheduler = scheduler
        self.bg_rng = np.random.default_rng([seed, 17])
        self.bg_max, self.bg_period, self.heartbeat = bg_max, bg_period, heartbeat
        self.cap = topo.base_capacity()
        self.flows = _Flows(topo.n_containers * (topo.racks + 1), topo.pad)
        self.idle = [list(range(x * topo.slots, (x + 1) * topo.slots)) for x in range(topo.n_machines)]
        self.task: dict[int, tuple[str, int, float]] = {}  # container → (kind, job, bytes to reduce)
        self.open_flows = np.zeros(topo.n_containers, dtype=np.int64)
        self.heap: list[tuple[float, int, str, int]] = []
        self.seq = 0
        self.now = 0.0
        self.dirty = True
        self.cross = self.net_bytes = 0.0
        self.locality = [0, 0, 0]
        self.solves = 0
        self.unfinished = len(self.jobs)
        self.beats = 0
        n_jobs = len(self.jobs)
        self.first_start = np.full(n_jobs, np.nan)
        self.maps_end = np.full(n_jobs, np.nan)
        self.job_cross = np.zeros(n_jobs)
        self.job_racks = np.zeros((n_jobs, topo.racks), dtype=bool)
        self.busy_seconds = 0.0
        self.peak_busy = 0
        self.core_lo = 2 * topo.n_machines
        self.core_load = 0.0  # bytes/s on all core links now
        self.core_full = False
        self.core_seconds = 0.0  # ∫ core load dt
        self.full_seconds = 0.0
        # failures (module failures): none by default, and then none of this changes a run
        self.failures = list(failures)
        self.down = np.zeros(topo.n_machines, dtype=np.int64)  # > 0: down (overlapping failures count)
        self.task_block: dict[int, int] = {}  # container → the block its map reads
        self.done_seq: dict[int, int] = {}  # container → the seq of its live "done" event
        self.running_reducers = np.zeros(n_jobs, dtype=np.int64)
        self.tasks_lost = 0
        self.maps_rerun = 0

    def _push(self, t: float, kind: str, arg: int) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, arg))
        if kind == "done":
            self.done_seq[arg] = self.seq

    def _background(self) -> None:
        n = 2 * self.topo.racks
        frac = self.bg_rng.uniform(0.0, self.bg_max, size=n)
        lo = 2 * self.topo.n_machines
        self.cap[lo: lo + n] = self.topo.core_link * (1.0 - frac)
        self.dirty = True
        self._push(self.now + self.bg_period, "bg", 0)

    def _flow(self, links: list[int], nbytes: float, container: int) -> None:
        if nbytes <= 0:
            return
        self.flows.add(links + [self.topo.container(container)], nbytes, container)
        self.open_flows[container] += 1
        self.net_bytes += nbytes
        if len(links) > 2:  # through the core (a map read's 4 links, a fetch's 3)
            self.cross += nbytes
            self.job_cross[self.task[container][1]] += nbytes
        self.dirty = True

    def _start(self, container: int, task: tuple[str, int, int]) -> None:
        kind, j, i = task
        js = self.jobs[j]
        x = container // self.topo.slots
        rack = self.topo.rack_of(x)
        link = self.topo.container(container)
        if np.isnan(self.first_start[j]):
            self.first_start[j] = self.now - js.job.arrival
        self.job_racks[j, rack] = True
        if kind == "map":
            rate = min(B_TASK, js.job.b_map)
            self.cap[link] = rate
            reps = [r for r in js.replicas[i].tolist() if not self.down[r]] or js.replicas[i].tolist()
            self.task[container] = ("map", j, 0.0)
            self.task_block[container] = i
            if x in reps:
                self.locality[0] += 1
                self._push(self.now + js.block / rate, "done", container)
                return
            same = [r for r in reps if self.topo.rack_of(r) == rack]
            self.locality[1 if same else 2] += 1
            src = same[0] if same else reps[0]
            self._flow(self.topo.path(src, x), js.block, container)
            return
        self.cap[link] = B_TASK
        self.running_reducers[j] += 1
        share = js.map_output / js.job.reducers
        self.task[container] = ("reduce", j, float(share.sum()))
        for k in np.flatnonzero(share > 0).tolist():
            self._flow(self.topo.path(None, x, src_rack=k), float(share[k]), container)
        if self.open_flows[container] == 0:
            self._compute(container)

    def _compute(self, container: int) -> None:
        """A reducer's fetches are done: reduce its input."""
        _, j, nbytes = self.task[container]
        rate = min(B_TASK, self.jobs[j].job.b_reduce)
        self._push(self.now + nbytes / rate, "done", container)

    def _done(self, container: int) -> None:
        kind, j, _ = self.task.pop(container)
        js = self.jobs[j]
        x = container // self.topo.slots
        self.idle[x].append(container)
        if kind == "map":
            js.map_output[self.topo.rack_of(x)] += js.block * js.job.shuffle_bytes / js.job.input_bytes
            js.ran_on[self.task_block.pop(container)] = x
            js.maps_done += 1
            if js.maps_done == js.job.maps:
                self.maps_end[j] = self.now - js.job.arrival
                js.reducers_waiting = js.job.reducers - js.reducers_done - int(self.running_reducers[j])
            return
        self.running_reducers[j] -= 1
        js.reducers_done += 1
        if js.reducers_done == js.job.reducers:
            js.finish = self.now
            self.unfinished -= 1

    def _kill(self, container: int) -> None:
        """A failure ends the task on `container`: its flows are dropped (their unsent bytes
        uncounted), a map waits again, a reducer waits again once its job's maps are all done."""
        kind, j, _ = self.task.pop(container)
        self.done_seq.pop(container, None)
        f = self.flows
        for fl in np.flatnonzero(f.active & (f.owner == container)).tolist():
            rem = float(f.rem[fl])
            self.net_bytes -= rem
            if int((f.links[fl] != f.pad).sum()) - 1 > 2:  # it was counted as cross-rack
                self.cross -= rem
                self.job_cross[j] -= rem
            f.drop(fl)
        self.open_flows[container] = 0
        self.dirty = True
        self.tasks_lost += 1
        js = self.jobs[j]
        if kind == "map":
            js.requeue(self.task_block.pop(container))
        else:
            self.running_reducers[j] -= 1
            if js.maps_done == js.job.maps:
                js.reducers_waiting += 1
        x = container // self.topo.slots
        if not self.down[x]:
            self.idle[x].append(container)

    def _fail(self, index: int) -> None:
        """Failure `index` starts: see the module `failures` for what it destroys."""
        fl = self.failures[index]
        slots = self.topo.slots
        newly = [x for x in fl.machines if self.down[x] == 0]
        for x in fl.machines:
            self.down[x] += 1
        if math.isfinite(fl.duration):
            self._push(self.now + fl.duration, "repair", index)
        for x in newly:
            for c in range(x * slots, (x + 1) * slots):
                if c in self.task:
                    self._kill(c)
            self.idle[x] = []
        f = self.flows
        gone = np.asarray(newly, dtype=np.int64)
        readers = np.flatnonzero(f.active & np.isin(f.links[:, 0], gone))  # up(x) = x: map reads from x
        for c in sorted({int(f.owner[r]) for r in readers.tolist()}):
            if c in self.task:
                self._kill(c)
        for j, js in enumerate(self.jobs):
            if js.finish is not None:
                continue
            lost = np.flatnonzero(np.isin(js.ran_on, gone))
            fetching = [c for c, (k, jj, _) in self.task.items() if k == "reduce" and jj == j and self.open_flows[c] > 0]
            needed = js.maps_done < js.job.maps or js.reducers_waiting > 0 or fetching
            if not lost.size or not needed:
                continue
            per_map = js.block * js.job.shuffle_bytes / js.job.input_bytes
            for i in lost.tolist():
                k = self.topo.rack_of(int(js.ran_on[i]))
                js.map_output[k] = max(0.0, js.map_output[k] - per_map)
                js.requeue(i)
                js.maps_done -= 1
                self.maps_rerun += 1
            js.reducers_waiting = 0
            for c in sorted(fetching):
                self._kill(c)
        self._machines_changed()

    def _repair(self, index: int) -> None:
        slots = self.topo.slots
        for x in self.failures[index].machines:
            self.down[x] -= 1
            if self.down[x] == 0:
                self.idle[x] = list(range(x * slots, (x + 1) * slots))
        self._machines_changed()

    def _machines_changed(self) -> None:
        hook = getattr(self.scheduler, "machines_changed", None)
        if hook is not None:
            hook(self.down > 0)

    def _beat(self) -> None:
        n = self.topo.n_machines
        start = self.beats % n
        self.beats += 1
        self.scheduler.begin(self.now, self.jobs)
        for x in [*range(start, n), *range(start)]:
            free = self.idle[x]
            while free:
                task = self.scheduler.offer(x, self.now, self.jobs)
                if task is None:
                    break
                self._start(free.pop(), task)
        self.peak_busy = max(self.peak_busy, len(self.task))
        if self.unfinished:
            self._push(self.now + self.heartbeat, "beat", 0)

    def _solve(self) -> None:
        f = self.flows
        idx = np.flatnonzero(f.active)
        f.rate[idx] = max_min(f.links[idx], self.cap)
        self.solves += 1
        self.dirty = False
        lo, hi = self.core_lo, self.core_lo + 2 * self.topo.racks
        load = np.bincount(f.links[idx].ravel(), weights=np.repeat(f.rate[idx], LINKS_PER_FLOW),
                           minlength=self.topo.n_links)[lo:hi]
        self.core_load = float(load.sum())
        self.core_full = bool((load >= 0.99 * self.cap[lo:hi]).any())

    def run(self) -> Result:
        self._background()
        self._push(0.0, "beat", 0)
        for index, fl in enumerate(self.failures):
            self._push(fl.at, "fail", index)
        f = self.flows
        while self.unfinished:
            if self.dirty:
                self._solve()
            idx = np.flatnonzero(f.active)
            t_heap = self.heap[0][0] if self.heap else np.inf
            t_flow, ends = np.inf, idx[:0]
            if idx.size:
                left = f.rem[idx] / f.rate[idx]
                t_min = float(left.min())
                t_flow = self.now + t_min
                ends = idx[left <= t_min * (1 + 1e-9) + 1e-12]
            t_next = min(t_heap, t_flow)
            if idx.size:
                f.rem[idx] -= f.rate[idx] * (t_next - self.now)
            dt = t_next - self.now
            self.busy_seconds += len(self.task) * dt
            self.core_seconds += self.core_load * dt
            self.full_seconds += dt if self.core_full else 0.0
            self.now = t_next
            if t_flow <= t_heap:
                for fl in ends.tolist():
                    c = int(f.owner[fl])
                    f.drop(fl)
                    self.open_flows[c] -= 1
                    self.dirty = True
                    if self.open_flows[c] == 0:
                        if self.task[c][0] == "map":
                            self._done(c)
                        else:
                            self._compute(c)
            while self.heap and self.heap[0][0] <= self.now:
                _, seq, kind, arg = heapq.heappop(self.heap)
                if kind == "done":
                    if self.done_seq.pop(arg, None) == seq:  # else its task was lost to a failure
                        self._done(arg)
                elif kind == "fail":
                    self._fail(arg)
                elif kind == "repair":
                    self._repair(arg)
                elif kind == "bg":
                    self._background()
                else:
                    self._beat()
        finish = np.array([js.finish for js in self.jobs], dtype=float)
        arrival = np.array([js.job.arrival for js in self.jobs])
        span = float(finish.max())
        topo = self.topo
        return Result(span, finish - arrival, self.cross, self.net_bytes,
                      self.locality[0], self.locality[1], self.locality[2], self.solves,
                      first_start=self.first_start, map_phase=self.maps_end, job_cross_bytes=self.job_cross,
                      job_racks=self.job_racks,
                      busy_fraction=self.busy_seconds / (topo.n_containers * span),
                      peak_busy_fraction=self.peak_busy / topo.n_containers,
                      core_utilisation=self.core_seconds / (2 * topo.racks * topo.core_link * span),
                      core_saturated_fraction=self.full_seconds / span,
                      tasks_lost=self.tasks_lost, maps_rerun=self.maps_rerun)


def isolated_floor(job: Job, topo: Topology, *, heartbeat: float = 1.0) -> float:
    """A lower bound of `job`'s completion time (finish − arrival) under every scheduler and
    placement: the job alone, every read and fetch at its container's cap, no core, no queueing.

    Its first task starts at the first heartbeat at or after its arrival; each wave of maps takes
    block / min(B_TASK, B_map^P) (waves = ⌈maps / containers⌉); reducers start at the first
    heartbeat after the last map ends; each wave of reducers fetches its 1/R of the shuffle at
    most at B_TASK (its container link) and reduces it at min(B_TASK, B_reduce^P).
    """
    c = topo.n_containers
    start = math.ceil(job.arrival / heartbeat - 1e-9) * heartbeat
    maps_end = start + math.ceil(job.maps / c) * (job.input_bytes / job.maps) / min(B_TASK, job.b_map)
    share = job.shuffle_bytes / job.reducers
    reduces = math.ceil(job.reducers / c) * (share / B_TASK + share / min(B_TASK, job.b_reduce))
    return math.ceil(maps_end / heartbeat - 1e-9) * heartbeat + reduces - job.arrival


def run(jobs: Sequence[Job], replicas: Sequence[np.ndarray], scheduler: Scheduler, topo: Topology, *,
        seed: int, failures: Sequence[Failure] = (), **kw: float) -> Result:
    """Play `jobs` (inputs placed as `replicas`, one (maps × 3) array per job) under `scheduler`,
    with `failures` (none by default)."""
    return Twin(jobs, replicas, scheduler, topo, seed=seed, failures=failures, **kw).run()
