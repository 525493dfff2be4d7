"""The adaptation baselines, as reprovisioners on top of the `sextant` policy set (same profiling,
classification, admission and initial planner; only the adaptation differs):

- `no-adaptation` (core profile): never adjusts.
- `autoscaling` (Quasar §5/§6.3–6.4, CloudStack/AWS style): a latency-critical service runs on
  1–8 servers; when the mean utilisation of its servers passes `threshold` (70 % by default) it
  gets one more server — the least-loaded one (most free cores, ties by id), same instance size,
  heterogeneity- and interference-oblivious — and the load balancer splits traffic evenly (the
  twin's service model does). It starts on one server (the first node the planner picks).
  [IMPL CHOICE] scale-in (the paper names none): one server fewer when the remaining servers
  would stay below 0.8 × threshold. Utilisation is what a cloud autoscaler reads (CPU
  utilisation); in the twin it is the queueing utilisation λ/μ of each node, read from the world
  through `UtilisationView` (an observable, not a ground-truth shortcut the policy could not have).
- `hadoop-speculative` (Hadoop's rule): a task that has run ≥ 60 s and whose progress is more
  than 0.2 behind the average progress of the job's tasks is relaunched elsewhere.
- `late` (Zaharia et al., OSDI'08): among tasks that have run ≥ 60 s, those whose progress rate
  (progress score / time the task has run — LATE's definition, not the instantaneous rate) is
  below the 25th percentile (SlowTaskThreshold) of the job's task rates are candidates, ranked by
  estimated time left (1 − progress) / rate; at most 10 % of the job's tasks (SpeculativeCap, at
  least one) are relaunched per observation, longest time left first. [IMPL CHOICE] the twin's
  "task" is a slot's share of the bulk stage, running since the job started.

With per-task telemetry (`TaskAttemptsObserved`, scenario `quasar-hadoop-stragglers-v2`) both
rules run on tasks as their papers define them (`late`, `hadoop_tasks`): each task's own progress
and age, at most one speculative copy per task (a copy is never speculated again), LATE's
SlowNodeThreshold and SpeculativeCap (`late`'s docstring).

Both straggler baselines relaunch on the server the `Adaptive` ladder would pick
(`ladder.extra_node`), without the in-place probe Quasar adds (Quasar §4.3): the difference
measured is detection, not placement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import Allocation, Assignment, DecisionTrace, ThroughputLatencyTarget
from sextant_core.planning.policysets import ADAPTATION_VERSION, sextant_policy_set
from sextant_core.policies import ObservationAssessor, PlacementOutcome, Planner, PolicySet, TaskAssessor
from sextant_core.reprovisioning import ladder
from sextant_core.reprovisioning.estimate import performance_model
from sextant_core.state.model import ClusterState, WorkloadState

if TYPE_CHECKING:
    from sextant_core.context import DecisionContext

VERSION = "8.1"
MIN_RUN_S = 60.0

Utilisation = Callable[[str], float | None]  # workload id -> mean utilisation of its servers


# --- autoscaling -----------------------------------------------------------------------------------


class OneServerFirst:
    """Wraps a planner: a latency-critical service starts on one server (autoscaling's minimum)."""

    def __init__(self, inner: Planner) -> None:
        self.inner = inner

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        out = self.inner.place(state, w, ctx)
        if out.allocation is None or not isinstance(w.target, ThroughputLatencyTarget) or w.allocation is not None:
            return out
        first = Allocation(assignments=out.allocation.assignments[:1], config=dict(out.allocation.config))
        return replace(out, allocation=first)


def least_loaded(state: ClusterState, cores: int, memory_gb: float, exclude: tuple[str, ...]) -> Assignment | None:
    best: tuple[int, str] | None = None
    for sid, s in sorted(state.servers.items()):
        if sid in exclude or not s.schedulable or s.free_cores < cores or s.free_memory_gb < memory_gb:
            continue
        key = (-s.free_cores, sid)
        if best is None or key < best:
            best = key
    return None if best is None else Assignment(server_id=best[1], cores=cores, memory_gb=memory_gb)


class _MonitoringOnly:
    """A baseline reprovisioner reacts to monitoring inputs only: reviews (QoS verdicts, probe
    rounds) decide nothing."""

    def review(self, state: ClusterState, w: WorkloadState, reason: str, ctx: DecisionContext) -> Sequence[ev.Event]:
        return ()


class Autoscaling(_MonitoringOnly, ObservationAssessor):
    def __init__(self, utilisation: Utilisation, threshold: float = 0.7, min_servers: int = 1,
                 max_servers: int = 8) -> None:
        self.utilisation = utilisation
        self.threshold = threshold
        self.min_servers = min_servers
        self.max_servers = max_servers

    def observe(self, state: ClusterState, w: WorkloadState, c: cmd.AssessObservation,
                ctx: DecisionContext) -> Sequence[ev.Event]:
        if not isinstance(w.target, ThroughputLatencyTarget) or w.allocation is None or w.best_effort:
            return ()
        u = self.utilisation(w.workload_id)
        if u is None:
            return ()
        alloc = w.allocation
        n = len(alloc.assignments)
        if u > self.threshold and n < self.max_servers:
            per = alloc.assignments[0]
            node = least_loaded(state, per.cores, per.memory_gb, alloc.servers)
            if node is None:
                return ()
            new = Allocation(assignments=(*alloc.assignments, node), config=dict(alloc.config))
            return (self._adjust(w, ctx, "scale_out", new, f"autoscale: utilisation {u:.2f} > {self.threshold:.2f}"),)
        if n > self.min_servers and u * n / (n - 1) < 0.8 * self.threshold:
            new = Allocation(assignments=alloc.assignments[:-1], config=dict(alloc.config))
            return (self._adjust(w, ctx, "scale_in", new, f"autoscale: utilisation {u:.2f}"),)
        return ()

    @staticmethod
    def _adjust(w: WorkloadState, ctx: DecisionContext, action: str, alloc: Allocation, reason: str) -> ev.Event:
        return ev.AllocationAdjusted(at=ctx.at, workload_id=w.workload_id,
                                     decision=ctx.record("reprovisioning", w.workload_id), action=action,
                                     allocation=alloc, reason=reason,
                                     trace=DecisionTrace(examined=len(alloc.assignments)))


# --- straggler baselines -----------------------------------------------------------------------------


def hadoop_slow(rates: Sequence[float], progress: Sequence[float], elapsed: float = 0.0) -> list[int]:
    """Hadoop: more than 0.2 behind the average progress score (rates unused)."""
    if len(progress) < 2:
        return []
    avg = float(np.mean(progress))
    return [i for i, p in enumerate(progress) if p < 1.0 and p < avg - 0.2]


def late_slow(rates: Sequence[float], progress: Sequence[float], elapsed: float, cap: float = 0.1) -> list[int]:
    """LATE: its progress rate is progress score / time the task has run (Zaharia et al. §4: not
    the instantaneous rate — `rates` is unused), SlowTaskThreshold the 25th percentile, time left
    (1 − progress) / rate, SpeculativeCap 10 %."""
    idx = [i for i in range(len(progress)) if progress[i] < 1.0]
    if len(idx) < 2 or elapsed <= 0:
        return []
    rate = {i: progress[i] / elapsed for i in idx}
    slow_rate = float(np.percentile([rate[i] for i in idx], 25))
    cand = [i for i in idx if rate[i] < slow_rate]
    cand.sort(key=lambda i: (-(1.0 - progress[i]) / max(rate[i], 1e-12), i))
    return cand[: max(1, math.floor(cap * len(progress)))]


SLOW_TASK_PERCENTILE = 25.0  # LATE's SlowTaskThreshold
SLOW_NODE_PERCENTILE = 25.0  # LATE's SlowNodeThreshold
SPECULATIVE_CAP = 0.10  # LATE's SpeculativeCap, a share of the slots


@dataclass(frozen=True, slots=True)
class Speculation:
    """Tasks to speculate (indices, in order) and the nodes no copy may go to."""

    tasks: tuple[int, ...]
    slow_nodes: tuple[str, ...] = ()


def late(servers: Sequence[str], progress: Sequence[float], elapsed: Sequence[float], attempts: Sequence[int],
         min_run_s: float = MIN_RUN_S, cap: float = SPECULATIVE_CAP) -> Speculation:
    """LATE (Zaharia et al., OSDI'08 §4) on one job's per-task view.

    - progress rate of a running task = its progress score / the time its attempt has run;
    - candidates: running original attempts (a speculative copy is never copied again, and the
      twin kills the original it replaces: at most one copy per task) that have run ≥ `min_run_s`
      with a rate below SlowTaskThreshold, the 25th percentile (linear) of the running tasks' rates;
    - ranked by estimated time left (1 − progress) / rate, longest first (a rate of 0: infinite);
      ties by server id, then task index — deterministic;
    - SpeculativeCap: running copies + new ones ≤ max(1, ⌊10 % × slots⌋). [IMPL CHOICE] the
      slots are the job's (its busy slots, one per observed task): the twin shows LATE one job's
      TaskTracker view at a time, and 10 % of the 40-server cluster's slots would never bind;
      at least one, so a job of < 10 slots can still be speculated;
    - SlowNodeThreshold: a node whose total progress score (Σ over its tasks, finished ones
      included) is below the 25th percentile of the job's nodes gets no copy (`slow_nodes`).
      [IMPL CHOICE] per job, like the cap; a copy goes where the ladder's `extra_node` puts it,
      excluding these nodes.
    """
    n = len(progress)
    att = tuple(attempts) if len(attempts) == n else (0,) * n
    age = tuple(elapsed) if len(elapsed) == n else (0.0,) * n
    score: dict[str, float] = {}
    for i in range(min(n, len(servers))):
        score[servers[i]] = score.get(servers[i], 0.0) + progress[i]
    node_thr = float(np.percentile(list(score.values()), SLOW_NODE_PERCENTILE)) if score else 0.0
    slow_nodes = tuple(sorted(s for s, v in score.items() if v < node_thr))
    running = [i for i in range(min(n, len(servers))) if progress[i] < 1.0 and age[i] > 0.0]
    if len(running) < 2:
        return Speculation((), slow_nodes)
    rate = {i: progress[i] / age[i] for i in running}
    thr = float(np.percentile([rate[i] for i in running], SLOW_TASK_PERCENTILE))
    budget = max(1, math.floor(cap * n)) - sum(1 for i in running if att[i] >= 1)
    if budget <= 0:
        return Speculation((), slow_nodes)

    def left(i: int) -> float:
        return (1.0 - progress[i]) / rate[i] if rate[i] > 0 else math.inf

    cand = [i for i in running if att[i] == 0 and age[i] >= min_run_s and rate[i] < thr]
    cand.sort(key=lambda i: (-left(i), servers[i], i))
    return Speculation(tuple(cand[:budget]), slow_nodes)


def hadoop_tasks(servers: Sequence[str], progress: Sequence[float], elapsed: Sequence[float],
                 attempts: Sequence[int], min_run_s: float = MIN_RUN_S) -> Speculation:
    """Hadoop's rule on the per-task view: a running original attempt that has run ≥ `min_run_s`
    and is more than 0.2 behind the average progress score of the job's tasks (one copy per task)."""
    n = min(len(progress), len(servers))
    att = tuple(attempts) if len(attempts) == len(progress) else (0,) * len(progress)
    age = tuple(elapsed) if len(elapsed) == len(progress) else (0.0,) * len(progress)
    behind = set(hadoop_slow((), progress[:n]))
    return Speculation(tuple(i for i in range(n) if i in behind and att[i] == 0 and age[i] >= min_run_s))


TaskRule = Callable[[Sequence[str], Sequence[float], Sequence[float], Sequence[int]], Speculation]


class Speculative(_MonitoringOnly, TaskAssessor):
    """Relaunches the servers of slow tasks found by `rule` (Hadoop's or LATE's): on the per-node
    view (`TasksObserved`) the job-age `rule`, on the per-task view (`TaskAttemptsObserved`: the
    command carries attempts) `task_rule`."""

    def __init__(self, rule: Callable[[Sequence[float], Sequence[float], float], list[int]], name: str,
                 task_rule: TaskRule | None = None) -> None:
        self.rule = rule
        self.name = name
        self.task_rule = task_rule

    def assess_tasks(self, state: ClusterState, w: WorkloadState, c: cmd.AssessTasks,
                     ctx: DecisionContext) -> Sequence[ev.Event]:
        if w.allocation is None or w.started_at is None or ctx.at - w.started_at < MIN_RUN_S:
            return ()
        servers: dict[str, None] = {}
        avoid: tuple[str, ...] = ()
        if self.task_rule is not None and c.attempts:
            pick = self.task_rule(c.servers, c.progress, c.elapsed, c.attempts)
            chosen, avoid = list(pick.tasks), pick.slow_nodes
        else:
            chosen = self.rule(c.rates, c.progress, ctx.at - w.started_at)
        for i in chosen:
            if c.servers[i] in w.allocation.servers:
                servers.setdefault(c.servers[i], None)
        if not servers:
            return ()
        m = performance_model(state, w)
        keep = [a for a in w.allocation.assignments if a.server_id not in servers]
        moved: list[Assignment] = []
        for sid in servers:
            old = next(a for a in w.allocation.assignments if a.server_id == sid)
            dest = ladder.extra_node(state, w, m, old.cores, old.memory_gb,
                                     exclude=tuple(sorted({*w.allocation.servers, *avoid,
                                                           *(x.server_id for x in moved)})))
            if dest is not None:
                moved.append(dest)
        if not keep and not moved:
            return ()
        alloc = Allocation(assignments=(*keep, *moved), config=dict(w.allocation.config))
        notes = tuple(f"straggler:{s}" for s in servers)
        return (ev.AllocationAdjusted(at=ctx.at, workload_id=w.workload_id,
                                      decision=ctx.record("reprovisioning", w.workload_id), action="relaunch",
                                      allocation=alloc, reason=f"{self.name}: slow tasks on {', '.join(servers)}",
                                      trace=DecisionTrace(examined=len(c.rates), notes=notes)),)


# --- policy sets ---------------------------------------------------------------------------------------


def policy_set(profile: str, utilisation: Utilisation | None = None) -> PolicySet:
    """`autoscaling[-<threshold>]`, `hadoop-speculative`, `late` on top of `sextant`."""
    base = sextant_policy_set(name=profile, version=ADAPTATION_VERSION)
    if profile.startswith("autoscaling"):
        assert utilisation is not None
        thr = float(profile.split("-", 1)[1]) if "-" in profile else 0.7
        return replace(base, version=f"{base.version}+as{VERSION}", planner=OneServerFirst(base.planner),
                       reprovisioner=Autoscaling(utilisation, thr))
    if profile == "hadoop-speculative":
        return replace(base, version=f"{base.version}+hs{VERSION}",
                       reprovisioner=Speculative(hadoop_slow, profile, hadoop_tasks))
    if profile == "late":
        return replace(base, version=f"{base.version}+late{VERSION}", reprovisioner=Speculative(late_slow, profile, late))
    raise KeyError(profile)


PROFILES = ("autoscaling", "hadoop-speculative", "late")


def is_baseline(profile: str) -> bool:
    return profile.startswith("autoscaling") or profile in PROFILES
