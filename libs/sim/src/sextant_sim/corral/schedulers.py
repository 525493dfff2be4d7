"""Task schedulers of the Corral twin: Yarn's capacity scheduler and Corral's runtime (§4.4, §4.6).

A scheduler is offered one free container on a machine at a heartbeat and returns the task to run
there: `("reduce", job)` or `("map", job, block)`, or None (the machine's other free containers are
then not offered again at this heartbeat, as Yarn's node update stops when nothing is assigned).

- `YarnCS`: one queue, jobs in arrival order (ties by id); reducers (requested at a higher
  priority by the MapReduce AM, any locality) before maps; delay scheduling for maps: a job takes a
  node-local map, else, once it has missed `node_delay` opportunities (Yarn's
  node-locality-delay, the number of machines in a rack as its documentation advises), a
  rack-local one or any (rack-locality delay off); a node-local assignment resets its count.
- `CorralRuntime`: the offline plan's racks and priorities: a free container in rack k goes to the
  highest-priority arrived job whose racks R_j contain k; its tasks never leave R_j; the same delay
  scheduling inside. Racks are not exclusive (a later job takes slots an earlier one leaves).
  Options (defaults: off, and the runtime above unchanged):
  - `fallback` (§4.4 "Failures": "if a majority of machines (above a threshold) in R_j are
    unavailable, ignore the hints"; thesis §4.1: "when a significant fraction of machines in these
    racks fail (beyond a configured threshold), Corral ignores these constraints"): while more than
    `fallback` of the machines of R_j (all its racks together) are down, job j's tasks may run on
    any rack (same priority, same delay scheduling). [IMPL CHOICE] the share is over R_j as a whole
    (0.5 = a majority), not per rack (the thesis's §4.7 also says "a majority of the machines ... in
    a rack"): per rack, a job planned on 3 racks that loses one would spread over the cluster
    although two of its racks live (W2 seed 1: makespan +26 % against no fall-back, its 5.5 TB
    jobs); the fall-back lasts while the machines are down (restricted to R_j again after the
    repair); the input stays where it was uploaded (its other two replicas are off R_j).
  - `adhoc`: jobs not in the plan (their `racks` entry is empty), in arrival order: served on any
    rack, after the planned jobs of that rack, with Yarn-CS's delay scheduling (§4.4 "Ad hoc":
    "tasks scheduled with Yarn-CS/delay scheduling into any free slots"; the thesis: "the remaining
    slots within these racks are used by ad hoc jobs"). [IMPL CHOICE] planned jobs first.
  - `replan(racks, priorities)`: a new plan's guidelines for the jobs it covers (periodic
    re-planning, `replan.Replanner`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from .failures import down_fraction
from .jobs import JobState
from .network import Topology

Task = tuple[str, int, int]  # (kind, job id, block or −1)


class Scheduler(Protocol):
    def begin(self, now: float, jobs: Sequence[JobState]) -> None:
        """A heartbeat starts: jobs only lose work until it ends (tasks are taken, none freed)."""

    def offer(self, machine: int, now: float, jobs: Sequence[JobState]) -> Task | None: ...


def _live(order: Sequence[int], now: float, jobs: Sequence[JobState]) -> list[int]:
    """`order` restricted to arrived, unfinished jobs with a task to start (order kept)."""
    return [j for j in order if jobs[j].finish is None and jobs[j].job.arrival <= now and jobs[j].has_work]


def _delay_pick(js: JobState, machine: int, rack: int, node_delay: int) -> int | None:
    """A map for `machine` under delay scheduling, or None (and one more missed opportunity)."""
    i = js.take_local(machine)
    if i is not None:
        js.skips = 0
        return i
    if js.skips < node_delay:
        js.skips += 1
        return None
    i = js.take_rack(rack)
    return js.take_any() if i is None else i


def _first_task(order: Sequence[int], machine: int, rack: int, node_delay: int,
                jobs: Sequence[JobState]) -> Task | None:
    """The first task the jobs of `order` (highest priority first) offer a free slot on `machine`:
    a waiting reducer, else a map task under delay scheduling; None when none has one."""
    for j in order:
        js = jobs[j]
        if not js.has_work:
            continue
        if js.reducers_waiting:
            js.reducers_waiting -= 1
            return ("reduce", j, -1)
        if js.n_waiting:
            i = _delay_pick(js, machine, rack, node_delay)
            if i is not None:
                return ("map", j, i)
    return None


class YarnCS:
    """Capacity scheduler, one queue (FIFO by arrival), delay scheduling; see the module docstring."""

    def __init__(self, topo: Topology, order: Sequence[int], node_delay: int | None = None) -> None:
        self.topo = topo
        self.order = list(order)  # job ids by arrival, ties by id
        self.node_delay = topo.machines if node_delay is None else node_delay
        self.live: list[int] = []

    def begin(self, now: float, jobs: Sequence[JobState]) -> None:
        self.order = [j for j in self.order if jobs[j].finish is None]
        self.live = _live(self.order, now, jobs)

    def offer(self, machine: int, now: float, jobs: Sequence[JobState]) -> Task | None:
        return _first_task(self.live, machine, self.topo.rack_of(machine), self.node_delay, jobs)


class CorralRuntime:
    """Rack-restricted, priority-ordered scheduling of a plan's jobs; see the module docstring."""

    def __init__(self, topo: Topology, racks: Sequence[Sequence[int]], priorities: Sequence[int],
                 node_delay: int | None = None, *, fallback: float | None = None, adhoc: Sequence[int] = ()) -> None:
        self.topo = topo
        self.node_delay = topo.machines if node_delay is None else node_delay
        self.fallback = fallback
        self.adhoc = list(adhoc)
        self.racks = [tuple(r) for r in racks]
        self.fallen: list[int] = []  # planned jobs whose racks failed, by priority
        self._set_plan(priorities)
        self.live: list[list[int]] = [[] for _ in range(topo.racks)]

    def _set_plan(self, priorities: Sequence[int]) -> None:
        self.rank = {j: (int(priorities[j]), j) for j in range(len(priorities)) if self.racks[j]}
        by_priority = sorted(self.rank, key=self.rank.__getitem__)
        self.per_rack: list[list[int]] = [[j for j in by_priority if k in set(self.racks[j])]
                                          for k in range(self.topo.racks)]

    def replan(self, racks: dict[int, tuple[int, ...]], priorities: Sequence[int]) -> None:
        """New racks for the jobs in `racks` and new priorities for every planned job."""
        for j, r in racks.items():
            self.racks[j] = tuple(r)
        self._set_plan(priorities)
        self.fallen = sorted(self.fallen, key=self.rank.__getitem__)

    def machines_changed(self, down: Sequence[bool] | np.ndarray) -> None:
        """The twin's machines went down or came back: recompute which jobs fall back."""
        if self.fallback is None:
            return
        frac = down_fraction(self.topo, down)
        limit = self.fallback
        self.fallen = sorted((j for j in self.rank if sum(frac[k] for k in self.racks[j]) > limit * len(self.racks[j])),
                             key=self.rank.__getitem__)

    def begin(self, now: float, jobs: Sequence[JobState]) -> None:
        self.per_rack = [[j for j in order if jobs[j].finish is None] for order in self.per_rack]
        if self.fallen:
            self.fallen = [j for j in self.fallen if jobs[j].finish is None]
            fallen = set(self.fallen)
            self.live = [_live(sorted(set(order) | fallen, key=self.rank.__getitem__), now, jobs)
                         for order in self.per_rack]
        else:
            self.live = [_live(order, now, jobs) for order in self.per_rack]
        if self.adhoc:
            self.adhoc = [j for j in self.adhoc if jobs[j].finish is None]
            extra = _live(self.adhoc, now, jobs)
            self.live = [order + extra for order in self.live]

    def offer(self, machine: int, now: float, jobs: Sequence[JobState]) -> Task | None:
        rack = self.topo.rack_of(machine)
        return _first_task(self.live[rack], machine, rack, self.node_delay, jobs)
