"""MRCute: MapReduce completion-time estimates (jalaparti.md §3.1), pure and vectorised.

Units: bytes and bytes per second throughout. A `JobProfile` holds what the estimator needs of a
program: selectivities (input / output, used as divisors, §9.4), the CPU-bound map and reduce
rates, the disk bandwidth and the task and slot counts. Map, shuffle and reduce run one after the
other and overlapping waves are ignored (§3.1.1).

- `latency_a(profile, size, n, b)`: Model A, a virtual cluster of `n` machines with `b` per VM;
  `n` and `b` may be arrays (broadcast), which is how the resource selector scores a grid.
- `latency_b(profile, size, racks, ...)`: Model B, `racks` whole racks under an oversubscribed core
  (`B − B/O` of the text read as `B_M − B_M/O`, §9.4).
- `dag_latency`: per-stage latencies summed along the critical path (the Kwiken DAG's longest
  source-to-sink path, one implementation for both).
- `estimate_profile`: the profile from a job's previous runs (B_map = bytes per map task / map
  task time, selectivities as ratios of the logged bytes; medians, so one outlier run does not move
  it).
- `predict_input_size`: the average input of the same job at the same hour of day on previous
  days, weekdays and weekends apart (§2.2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..kwiken.dag import StageDag, end_to_end


@dataclass(frozen=True)
class JobProfile:
    """A MapReduce program as MRCute sees it (one stage; a DAG is one profile per stage)."""

    s_map: float  # map selectivity: map input / map output
    s_reduce: float  # reduce selectivity: reduce input / reduce output
    b_map_p: float  # CPU-bound map processing rate, bytes/s
    b_reduce_p: float  # CPU-bound reduce processing rate, bytes/s
    b_disk: float  # disk bandwidth B_D under MapReduce-like access, bytes/s
    map_tasks: int
    reduce_tasks: int
    map_slots: int = 8  # M_c, per machine (the MRCute testbed's 8 mappers and 2 reducers)
    reduce_slots: int = 2  # R_c

    def __post_init__(self) -> None:
        positive = (self.s_map, self.s_reduce, self.b_map_p, self.b_reduce_p, self.b_disk)
        if not all(math.isfinite(v) and v > 0 for v in positive):
            raise ValueError("selectivities and bandwidths must be positive and finite")
        if min(self.map_tasks, self.reduce_tasks, self.map_slots, self.reduce_slots) < 1:
            raise ValueError("task and slot counts must be at least 1")

    @property
    def b_map(self) -> float:
        return min(self.b_disk, self.b_map_p)

    @property
    def b_reduce(self) -> float:
        return min(self.b_disk, self.b_reduce_p)


def _stage_terms(p: JobProfile, size: float, machines: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(map time, reduce waves, shuffle bytes per reduce task, reduce output bytes per reduce task)."""
    w_map = np.ceil(p.map_tasks / (machines * p.map_slots))
    w_red = np.ceil(p.reduce_tasks / (machines * p.reduce_slots))
    t_map = w_map * (size / p.map_tasks) / p.b_map
    per_reduce_in = size / (p.s_map * p.reduce_tasks)
    return t_map, w_red, per_reduce_in, per_reduce_in / p.s_reduce


def shuffle_bandwidth(p: JobProfile, b: np.ndarray | float) -> np.ndarray:
    """B_shuffle = (1/min(B_D, B) + 1/B_D)^-1: network read and disk write, then the merge's disk read."""
    net = np.minimum(p.b_disk, np.asarray(b, dtype=float))
    with np.errstate(divide="ignore"):
        return 1.0 / (1.0 / net + 1.0 / p.b_disk)


def latency_a(p: JobProfile, size: float, n: np.ndarray | int, b: np.ndarray | float) -> np.ndarray:
    """Model A: completion time on a virtual cluster ⟨n machines, b bytes/s per VM⟩ (broadcasts)."""
    machines = np.asarray(n, dtype=float)
    t_map, w_red, red_in, red_out = _stage_terms(p, size, machines)
    return t_map + w_red * red_in / shuffle_bandwidth(p, b) + w_red * red_out / p.b_reduce


def latency_b(
    p: JobProfile,
    size: float,
    racks: np.ndarray | int,
    *,
    machines_per_rack: int,
    nic: float,
    oversubscription: float,
) -> np.ndarray:
    """Model B: completion time on `racks` whole racks (broadcasts over `racks`).

    Shuffle = w_reduce · max(T_core, T_local); D_core = D_S/(r·m)·(r−1)/r over B_M/O,
    D_local = D_S/(r·m)·1/r of which (m−1)/m leaves the machine, over B_M − B_M/O.
    """
    if oversubscription <= 1.0:
        raise ValueError("Model B needs an oversubscribed core (O > 1)")
    r = np.asarray(racks, dtype=float)
    m = float(machines_per_rack)
    t_map, w_red, red_in, red_out = _stage_terms(p, size, r * m)
    d_s = size / p.s_map
    per_machine = d_s / (r * m)
    t_core = per_machine * (r - 1.0) / r / (nic / oversubscription)
    t_local = per_machine / r * (m - 1.0) / m / (nic - nic / oversubscription)
    return t_map + w_red * np.maximum(t_core, t_local) + w_red * red_out / p.b_reduce


def dag_latency(dag: StageDag, stage_latencies: Sequence[float] | np.ndarray) -> float:
    """L_DAG = Σ over the critical path of the stage latencies (§3.1.3)."""
    row = np.asarray(stage_latencies, dtype=float).reshape(1, -1)
    return float(end_to_end(dag, row)[0])


def estimate_profile(
    *,
    input_bytes: Sequence[float],
    map_output_bytes: Sequence[float],
    reduce_output_bytes: Sequence[float],
    map_task_seconds: Sequence[float],
    reduce_task_seconds: Sequence[float],
    map_tasks: int,
    reduce_tasks: int,
    b_disk: float,
    map_slots: int = 8,
    reduce_slots: int = 2,
) -> JobProfile:
    """A profile from previous runs (one entry per run; task seconds = the run's mean task time).

    Rates are bytes per task over task time; the CPU-bound rates are the observed ones (a run
    bounded by the disk shows B_D, which `min(B_D, ·)` then reproduces). Medians over runs.
    """
    d_in = np.asarray(input_bytes, dtype=float)
    d_mo = np.asarray(map_output_bytes, dtype=float)
    d_ro = np.asarray(reduce_output_bytes, dtype=float)
    t_m = np.asarray(map_task_seconds, dtype=float)
    t_r = np.asarray(reduce_task_seconds, dtype=float)
    if not (len(d_in) == len(d_mo) == len(d_ro) == len(t_m) == len(t_r)) or len(d_in) == 0:
        raise ValueError("one entry per previous run in every history field, at least one run")
    return JobProfile(
        s_map=float(np.median(d_in / d_mo)),
        s_reduce=float(np.median(d_mo / d_ro)),
        b_map_p=float(np.median(d_in / map_tasks / t_m)),
        b_reduce_p=float(np.median(d_mo / reduce_tasks / t_r)),
        b_disk=b_disk,
        map_tasks=map_tasks,
        reduce_tasks=reduce_tasks,
        map_slots=map_slots,
        reduce_slots=reduce_slots,
    )


DAY = 86_400
HOUR = 3_600


def _hour_and_weekend(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    days = np.floor_divide(t, DAY)
    weekday = (days + 3) % 7  # 1970-01-01 was a Thursday; Monday = 0
    return np.floor_divide(t % DAY, HOUR), weekday >= 5


def predict_input_size(times: Sequence[float], sizes: Sequence[float], at: float) -> float:
    """The input size of the run at `at` (UTC seconds) from the job's earlier runs.

    Mean of the runs before `at`'s day at the same hour of day and the same day type (weekday or
    weekend). Gap choice: with no such run, the same hour on any day; then all earlier runs; a job
    with no earlier run raises `ValueError`.
    """
    t = np.asarray(times, dtype=float)
    s = np.asarray(sizes, dtype=float)
    earlier = t < (at // DAY) * DAY
    if not earlier.any():
        raise ValueError("no earlier run of this job to predict from")
    hours, weekend = _hour_and_weekend(t)
    h_at, w_at = _hour_and_weekend(np.asarray([at], dtype=float))
    same_hour = earlier & (hours == h_at[0])
    for mask in (same_hour & (weekend == w_at[0]), same_hour, earlier):
        if mask.any():
            return float(s[mask].mean())
    raise AssertionError("unreachable")  # pragma: no cover
