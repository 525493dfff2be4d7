"""Ground-truth workload records: what a workload *is* in the twin (never what a policy sees).

A `WorkloadTruth` is generated once per (scenario seed, workload index) and then fixed; the world
(`cluster.py`) computes its progress from it. Shapes:

- `single`: one node; `work` is its ideal run time in seconds (alone, on its best platform, with
  `threads` cores); progress is measured in ideal seconds, so its rate is its normalised
  performance (1.0 = alone on the best platform; Paragon §6.5's metric).
- `analytics`: `tasks` over the allocated slots (cores) of several nodes, in waves (a slot takes
  the next task when it finishes one; the bulk rate is capped at one slot per task); bulk work
  plus a straggler tail (`AnalyticsTruth`: per-task work and intrinsic straggler flags, ≥ 1.5× the
  median); optionally an injected slow node (`InjectedStraggler`); progress in task-seconds at the
  best platform's per-core speed.
- `service`: a latency-critical service alive for `work` seconds; per-node capacity gives a p99 from
  an M/M/1 response-time model (`ServiceTruth`); progress is time, quality is requests meeting the
  latency bound.

Arrays are indexed by the platform order of the scenario's catalogue (`speed`) or by
`INTERFERENCE_SOURCES` (`caused`, `tolerated`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sextant_contracts.model import WorkloadKind

from .performance import scale_out_curve


@dataclass(frozen=True, slots=True)
class Phase:
    """Behaviour from `start` (fraction of work or lifetime) on: multipliers on the base truth."""

    start: float
    speed: float = 1.0
    caused: np.ndarray = field(default_factory=lambda: np.ones(10))
    tolerated: np.ndarray = field(default_factory=lambda: np.ones(10))
    footprint: float = 1.0


@dataclass(frozen=True, slots=True)
class AnalyticsTruth:
    task_work: np.ndarray  # per task, seconds at the best platform's per-core speed
    straggler: np.ndarray  # bool per task: a true straggler (≥ 1.5× the median task)
    bulk: float  # Σ task work without the straggler excess
    tail: float  # excess work of the worst straggler (or last-wave imbalance)
    beta: float  # scale-out: aggregate ∝ n^beta / (1 + kappa (n − 1))
    kappa: float
    reference_nodes: int
    injected: InjectedStraggler | None = None  # a slow node (scenario `stragglers` share)
    # v4 shape (defaults: v3's curve n^beta / (1 + kappa (n − 1)) exactly; see `efficiency`)
    overhead: float = 0.0  # share of each node's time lost once the job spans ≥ 2 nodes
    coherency: float = 0.0  # delta of the crosstalk term delta · n (n − 1)
    wiggle: tuple[float, ...] = ()  # log deviation of the aggregate at 2, 4, 8, … nodes

    def efficiency(self, n: int | float) -> float:
        """Per-node efficiency e(n) > 0 on n nodes (e(1) = 1): the bulk throughput on n nodes is
        n · e(n) × one node's (`workloads.performance.scale_out_curve`)."""
        return scale_out_curve(n, self.beta, self.kappa, self.overhead, self.coherency, self.wiggle)

    def waves(self, slots: int) -> int:
        """Waves of tasks on `slots` slots (cores of the allocation): ⌈tasks / slots⌉."""
        return -(-len(self.task_work) // max(slots, 1))


@dataclass(frozen=True, slots=True)
class InjectedStraggler:
    """One node of an analytics job turns slow once `start` of its bulk work is done: the tasks on
    it run `slowdown` times slower. `node` in [0, 1) picks the node: index ⌊node × nodes⌋ of the
    allocation at that moment (ground truth recorded by the world when it happens)."""

    start: float
    node: float
    slowdown: float


@dataclass(frozen=True, slots=True)
class ServiceTruth:
    qps_per_core: float  # at per-core speed 1.0 (best platform), no interference
    base_latency_ms: float
    latency_bound_ms: float
    peak_qps: float
    trace: tuple[tuple[float, float], ...]  # (offset s from start, load fraction of peak), sorted
    reference_nodes: int
    exponent: float = 1.0  # v4: aggregate capacity ∝ n^exponent (≤ 1); 1.0 = exactly n× (v3)

    def node_efficiency(self, n: int | float) -> float:
        """Capacity of each of n nodes relative to a lone node's, n^(exponent − 1) ≤ 1: the share of
        a request's work that needs other nodes (replication, multi-get fan-out, cross-shard
        coordination, balancer imbalance) grows with the deployment. 1.0 when exponent = 1."""
        return max(float(n), 1.0) ** (self.exponent - 1.0)


@dataclass(frozen=True, slots=True)
class WorkloadTruth:
    ref: str
    family: str
    kind: WorkloadKind
    shape: str
    threads: int  # cores per node at which it is fully parallel
    parallel_fraction: float  # Amdahl fraction for scale-up within a node
    footprint_gb: float  # true memory footprint per node (phase 1)
    activity: float  # busy fraction of its cores (CPU utilisation)
    speed: np.ndarray  # per platform: per-core speed relative to the fastest platform (max 1)
    caused: np.ndarray  # per source, reference-intensity units 0..100 (at full activity)
    tolerated: np.ndarray  # per source: pressure at which it slows by 5 % on the reference platform
    work: float
    ideal_s: float  # ideal completion (batch) or lifetime (service), seconds
    requested_cores: int
    requested_memory_gb: float
    phases: tuple[Phase, ...] = ()
    analytics: AnalyticsTruth | None = None
    service: ServiceTruth | None = None
    needed_cores: int = 1  # cores of the ideal allocation (all nodes)

    def scale_up(self, cores: int | float) -> float:
        """Amdahl speed-up within a node on `cores` (≤ threads count)."""
        c = max(min(float(cores), float(self.threads)), 1e-9)
        f = self.parallel_fraction
        return 1.0 / ((1.0 - f) + f / c)

    def phase_at(self, fraction: float) -> int:
        """Index of the phase active at `fraction` of the work (0 without phases)."""
        idx = 0
        for i, ph in enumerate(self.phases):
            if fraction >= ph.start:
                idx = i
        return idx
