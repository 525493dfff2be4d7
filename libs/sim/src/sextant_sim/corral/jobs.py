"""A job's run-time state in the Corral twin: input replicas, pending tasks, map output per rack.

Replica placement (jalaparti.md §4.4, §9.7): every input block has 3 replicas on 3 distinct racks,
one machine drawn uniformly in each. `random_replicas` is HDFS's random placement (the Yarn-CS
baseline); `rack_replicas` draws the first rack among the job's planned racks R_j and the other two
among the rest (Corral's upload: "one replica in the job's racks", the others random).

Pending maps are kept three ways for the schedulers (node-local by machine, rack-local by rack, any
in block order), with lazy deletion: a taken map is marked and skipped when met again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .network import Topology
from .workloads import Job

REPLICAS = 3


def random_replicas(topo: Topology, blocks: int, rng: np.random.Generator) -> np.ndarray:
    """(blocks × 3) machines: 3 distinct random racks, a random machine in each."""
    racks = np.argsort(rng.random((blocks, topo.racks)), axis=1)[:, :REPLICAS]
    return racks * topo.machines + rng.integers(0, topo.machines, size=(blocks, REPLICAS))


def rack_replicas(topo: Topology, blocks: int, racks: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """(blocks × 3) machines: the first replica in a random rack of `racks`, two more on two other
    distinct racks drawn from the whole cluster."""
    allowed = np.asarray(sorted(racks))
    first = allowed[rng.integers(0, len(allowed), size=blocks)]
    keys = rng.random((blocks, topo.racks))
    keys[np.arange(blocks), first] = np.inf  # never drawn again
    others = np.argsort(keys, axis=1)[:, : REPLICAS - 1]
    chosen = np.column_stack([first, others])
    return chosen * topo.machines + rng.integers(0, topo.machines, size=(blocks, REPLICAS))


class JobState:
    """One job in flight. Maps are indexed 0..maps−1 (block i is map i's input)."""

    def __init__(self, job: Job, replicas: np.ndarray, topo: Topology) -> None:
        self.job = job
        self.replicas = replicas
        self.block = job.input_bytes / job.maps
        self.waiting = np.ones(job.maps, dtype=bool)
        self.n_waiting = job.maps
        self.by_machine: dict[int, list[int]] = {}
        self.by_rack: list[list[int]] = [[] for _ in range(topo.racks)]
        for i in range(job.maps - 1, -1, -1):  # stacks: block order when popped
            for x in replicas[i].tolist():
                self.by_machine.setdefault(x, []).append(i)
                self.by_rack[topo.rack_of(x)].append(i)
        self._cursor = 0
        self.maps_done = 0
        self.map_output = np.zeros(topo.racks)  # intermediate bytes held per rack
        self.reducers_waiting = 0
        self.reducers_done = 0
        self.skips = 0  # delay scheduling: missed node-local opportunities
        self.finish: float | None = None
        self.ran_on = np.full(job.maps, -1, dtype=np.int64)  # machine holding each finished map's output
        self._again: list[int] = []  # maps re-queued after a failure (`take_any` looks here first)
        self._topo = topo

    @property
    def has_work(self) -> bool:
        return bool(self.n_waiting or self.reducers_waiting)

    def _take(self, stack: list[int]) -> int | None:
        while stack:
            i = stack.pop()
            if self.waiting[i]:
                self.waiting[i] = False
                self.n_waiting -= 1
                return i
        return None

    def take_local(self, machine: int) -> int | None:
        stack = self.by_machine.get(machine)
        return None if stack is None else self._take(stack)

    def take_rack(self, rack: int) -> int | None:
        return self._take(self.by_rack[rack])

    def upload(self, replicas: np.ndarray) -> None:
        """Place the input again (a re-plan moved a job whose input is not uploaded yet): only
        before any of its maps was taken."""
        if self.n_waiting != self.job.maps or self.maps_done:
            raise ValueError("a job's input moves only before it starts")
        self.replicas = replicas
        self.by_machine = {}
        self.by_rack = [[] for _ in range(self._topo.racks)]
        for i in range(self.job.maps - 1, -1, -1):
            for x in replicas[i].tolist():
                self.by_machine.setdefault(x, []).append(i)
                self.by_rack[self._topo.rack_of(x)].append(i)

    def requeue(self, i: int) -> None:
        """Map `i` waits again (its task or its output was lost to a failure)."""
        if self.waiting[i]:
            return
        self.waiting[i] = True
        self.n_waiting += 1
        self.ran_on[i] = -1
        for x in self.replicas[i].tolist():
            self.by_machine.setdefault(x, []).append(i)
            self.by_rack[self._topo.rack_of(x)].append(i)
        self._again.append(i)

    def take_any(self) -> int | None:
        while self._again:
            i = self._again.pop()
            if self.waiting[i]:
                self.waiting[i] = False
                self.n_waiting -= 1
                return i
        while self._cursor < self.job.maps:
            i = self._cursor
            self._cursor += 1
            if self.waiting[i]:
                self.waiting[i] = False
                self.n_waiting -= 1
                return i
        return None
