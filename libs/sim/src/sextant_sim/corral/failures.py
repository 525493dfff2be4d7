"""Machine and rack failures in the Corral twin (jalaparti.md §4.4 "Failures", §8).

A `Failure` takes `machines` down at time `at` and brings them back at `at + duration`
(`duration = inf`: down until the run ends). While a machine is down (`twin.Twin`):

- its containers run nothing: the tasks running there are lost and re-queued (a map is taken
  again by any job's scheduler; a reducer waits again), and it is offered no container;
- its replicas are unavailable: a map reads another replica (in its rack if one is live, else
  across the core); a map whose read source goes down is restarted the same way;
- the map outputs it holds are lost: their maps run again, and the job's reducers still fetching
  restart after them (reducers already reducing, and finished ones, are kept).

[IMPL CHOICE] The spec says nothing of what a failure destroys. The twin's choices: a disk
survives its machine's outage (replicas readable again after the repair), map outputs do not
(Hadoop keeps them on the local disk of a machine that is now unreachable, and re-runs the maps);
a reducer that lost a source restarts whole (Hadoop re-fetches only the lost part); a block
whose three replicas are all down is read from its first replica as if restored (the twin does
not model data loss; no scenario here takes three racks down).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .network import Topology


@dataclass(frozen=True)
class Failure:
    at: float
    machines: tuple[int, ...]
    duration: float = math.inf

    def __post_init__(self) -> None:
        if self.at < 0 or self.duration <= 0 or not self.machines:
            raise ValueError("a failure needs at ≥ 0, duration > 0 and at least one machine")


def rack_failure(topo: Topology, rack: int, at: float, duration: float = math.inf) -> Failure:
    """Every machine of `rack` down from `at` for `duration` seconds."""
    return Failure(at, tuple(range(rack * topo.machines, (rack + 1) * topo.machines)), duration)


def down_fraction(topo: Topology, down: Sequence[bool] | np.ndarray) -> list[float]:
    """Per rack, the share of its machines that are down (`down`: one flag per machine)."""
    flags = np.asarray(down, dtype=bool).reshape(topo.racks, topo.machines)
    return [int(n) / topo.machines for n in flags.sum(axis=1)]
