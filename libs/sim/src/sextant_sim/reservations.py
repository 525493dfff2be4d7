"""Reservation sizing: what a reservation-based cluster manager allocates (Quasar §1.1, §6.5).

Quasar's baselines do not size from a performance target: they allocate a *reservation* — what the
user, the framework or an autoscaler asks for — and then place it (least-loaded, or Paragon's
selector). `reservation_size` is that reservation as a `Sizer` (`sextant_core.placement.request`)
for the `reservation-least-loaded` profile (and, through `policy_set`, for the planning
`reservation-paragon`). It is a policy: it sees only the `WorkloadState` (kind, request, id) —
never the ground truth — and is a pure function of it (replay-identical).

The reservation is the workload's stated requirement (`requested_cores`/`requested_memory_gb`,
exactly its need in every bundled scenario) times a factor drawn from the workload's own stream
`seed_from("reservation", workload_id)` — common to every profile and every run [IMPL CHOICE: the
workload id alone, so a replay needs no run seed], by kind:

| kind | who sizes | model (share: factor, log-uniform) |
|---|---|---|
| batch (single-node) | the user | Quasar §1.1 (Twitter): 70 %: × [1.2, 10] over, 20 %: ÷ [1.2, 5] under, 10 %: × 1 |
| analytics | the framework's self-sizing (slots from its defaults, blind to platform and interference) | 60 %: × [1.2, 3], 30 %: ÷ [1.2, 2], 10 %: × 1 |
| service | an autoscaler provisioning for the peak at its 70 % load threshold (Quasar §5: +1 server above 70 %) | 80 %: × [1/0.7, 2/0.7], 20 %: ÷ [1, 1.5] (it lags a rise) |

[IMPL CHOICE] numbers of the last two rows are ours (the papers give none); memory scales with
the same factor (a container sized up or down is sized in both); cores are rounded to the nearest
integer (≥ 1) and a single-node reservation is capped at the largest server's cores (it must fit
one server); memory is capped in proportion. Under-reserved memory is what a user states, not what
the workload uses: the world's OOM killer then decides (cluster.py).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from sextant_contracts.ids import seed_from
from sextant_contracts.model import WorkloadKind
from sextant_core.placement.request import DEFAULT_CORES, DEFAULT_MEMORY_GB
from sextant_core.state.model import ClusterState, WorkloadState

# kind -> ((over share, over factor range), (under share, under divisor range))
MODELS: dict[WorkloadKind, tuple[tuple[float, tuple[float, float]], tuple[float, tuple[float, float]]]] = {
    WorkloadKind.BATCH: ((0.7, (1.2, 10.0)), (0.2, (1.2, 5.0))),
    WorkloadKind.ANALYTICS: ((0.6, (1.2, 3.0)), (0.3, (1.2, 2.0))),
    WorkloadKind.SERVICE: ((0.8, (1.0 / 0.7, 2.0 / 0.7)), (0.2, (1.0, 1.5))),
}


def _log_uniform(lo: float, hi: float, u: float) -> float:
    return math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))


@lru_cache(maxsize=65536)
def reservation_factor(workload_id: str, kind: WorkloadKind) -> float:
    """The reservation / requirement ratio of a workload (deterministic in its id and kind)."""
    (over_share, over), (under_share, under) = MODELS[kind]
    u = np.random.Generator(np.random.PCG64(seed_from("reservation", workload_id))).random(2)
    if u[0] < over_share:
        return _log_uniform(*over, float(u[1]))
    if u[0] < over_share + under_share:
        return 1.0 / _log_uniform(*under, float(u[1]))
    return 1.0


_LARGEST: list[tuple[object, int]] = []  # (the servers map it was computed from, largest cores)


def largest_server_cores(state: ClusterState) -> int:
    """The most cores any server has; remembered for the last servers map seen (the map is
    immutable, so the same object gives the same answer) — a pass over 1 000 servers per
    deferred retry had been half of `reservation-least-loaded`'s run time."""
    if _LARGEST and _LARGEST[0][0] is state.servers:
        return _LARGEST[0][1]
    largest = max((s.capacity.cores for s in state.servers.values()), default=0)
    _LARGEST[:] = [(state.servers, largest)]
    return largest


def reservation_size(state: ClusterState, w: WorkloadState) -> tuple[int, float]:
    """(cores, memory GiB) reserved for `w` (a `Sizer`)."""
    cores = w.requested_cores or DEFAULT_CORES
    memory = w.requested_memory_gb or DEFAULT_MEMORY_GB
    f = reservation_factor(w.workload_id, w.kind)
    res_cores = max(1, round(cores * f))
    if w.kind == WorkloadKind.BATCH and state.servers:
        res_cores = min(res_cores, max(largest_server_cores(state), 1))
    res_memory = memory * res_cores / cores if f >= 1.0 else memory * f
    return res_cores, round(max(res_memory, 0.05), 3)
