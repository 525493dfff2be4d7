"""The adjustment ladder's moves (Quasar §4.1), each a pure function of the state that returns a
candidate allocation (or None): conservative first.

1. `scale_in_place` — more (or fewer) cores on the servers the workload already occupies: no
   state moves.
2. `best_effort_on` — best-effort co-runners on those servers, to evict (moved to a server with
   room if there is one, else killed: Quasar §6 "may be migrated or killed at any point").
3. `extra_node` — scale out: one more server of the best predicted platform that has room and
   passes the interference check both ways (the new server's residents stay below the workload's
   tolerated scores, and its caused scores stay below theirs — Paragon §3.2's D1/D2 on the
   server aggregates), ties by server id.
4. `migration_cost` / `repays` — migrate: the cost model and the rule that the gain must repay it.

Reclaim (`drop_node`, scale down in place) is the same ladder run the other way when resources
idle (Quasar §4.1 "readjusted when resources are idling").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sextant_contracts.model import Allocation, Assignment

from ..planning.model import PerformanceModel
from ..state.model import ClusterState, ServerState, WorkloadState, interference_vectors, server_aggregates
from .params import AdaptationParams


def _with(alloc: Allocation, assignments: list[Assignment]) -> Allocation:
    return Allocation(assignments=tuple(assignments), config=dict(alloc.config))


def useful_cores(model: PerformanceModel) -> int:
    """The fewest cores reaching the top of the scale-up curve (more buys nothing)."""
    top = float(model.curve[-1]) if len(model.curve) else 1.0
    for c in range(1, model.max_cores + 1):
        if model.up(c) >= top * (1.0 - 1e-9):
            return c
    return max(model.max_cores, 1)


def scale_in_place(state: ClusterState, w: WorkloadState, model: PerformanceModel,
                   extra_free: dict[str, int] | None = None, min_gain: float = 0.01) -> Allocation | None:
    """Grow every node to the useful cores its server has free, where that gains more than
    `min_gain` (relative, predicted); None if nothing changes. `extra_free` adds cores about to be
    freed (evicted best-effort co-runners) per server."""
    assert w.allocation is not None
    cap = useful_cores(model)
    out, changed = [], False
    for a in w.allocation.assignments:
        s = state.servers.get(a.server_id)
        free = (s.free_cores if s is not None and s.schedulable else 0) + (extra_free or {}).get(a.server_id, 0)
        cores = min(cap, a.cores + max(free, 0))
        if cores > a.cores and model.up(cores) > model.up(a.cores) * (1.0 + min_gain):
            changed = True
            out.append(Assignment(server_id=a.server_id, cores=cores, memory_gb=a.memory_gb))
        else:
            out.append(a)
    return _with(w.allocation, out) if changed else None


def resize_nodes(alloc: Allocation, cores: int) -> Allocation:
    return _with(alloc, [Assignment(server_id=a.server_id, cores=max(1, cores), memory_gb=a.memory_gb)
                         for a in alloc.assignments])


def co_residents(state: ClusterState, w: WorkloadState,
                 keep: Callable[[WorkloadState], bool]) -> list[WorkloadState]:
    """The other residents of `w`'s servers that `keep` accepts, each once (in server, then
    resident order)."""
    assert w.allocation is not None
    seen: dict[str, WorkloadState] = {}
    for sid in w.allocation.servers:
        s = state.servers.get(sid)
        for rid in s.residents if s is not None else ():
            r = state.workloads.get(rid)
            if rid != w.workload_id and r is not None and rid not in seen and keep(r):
                seen[rid] = r
    return list(seen.values())


def best_effort_on(state: ClusterState, w: WorkloadState) -> list[WorkloadState]:
    """Best-effort co-runners on `w`'s servers, largest first (ties by id)."""
    seen = co_residents(state, w, lambda r: r.best_effort and r.allocation is not None)
    return sorted(seen, key=lambda r: (-r.allocation.total_cores if r.allocation else 0, r.workload_id))


def compatible(s: ServerState, w: WorkloadState, state: ClusterState | None = None) -> bool:
    """Paragon §3.2 both ways on the server aggregates: residents' summed caused pressure within
    `w`'s tolerated scores, and `w`'s caused pressure within the residents' minimum tolerated.
    With `state`, best-effort residents are left out (they are evicted for a guarded `w`)."""
    tol, caused = interference_vectors(w.classification)
    c_sum, t_min = s.caused_sum, s.tolerated_min
    if state is not None and s.best_effort_cores > 0:
        keep = tuple(r for r in s.residents if (x := state.workloads.get(r)) is not None and not x.best_effort)
        agg = server_aggregates(s.server_id, keep, state.workloads)
        c_sum, t_min = agg["caused_sum"], agg["tolerated_min"]
    return all(c_sum[k] <= tol[k] and caused[k] <= t_min[k] for k in range(len(tol)))


def extra_node(state: ClusterState, w: WorkloadState, model: PerformanceModel, cores: int, memory_gb: float,
               exclude: tuple[str, ...] = (), over_best_effort: bool = False,
               at_least: float | None = None) -> Assignment | None:
    """The best server for one more node of `cores` cores (see the module docstring). With
    `over_best_effort`, cores and memory held by best-effort residents count as free (they are
    evicted to make room), and servers that need no eviction rank first among equals; a guarded
    `w` evicts every best-effort resident of its new servers, so their pressure does not count
    against them. With `at_least`, among compatible (then incompatible) servers those whose
    predicted node is weaker rank last (the load is split evenly: the weakest node binds)."""
    best: tuple[int, int, float, int, str] | None = None
    clear = state if w.guarded and over_best_effort else None
    for sid, s in sorted(state.servers.items()):
        extra_c = s.best_effort_cores if over_best_effort else 0
        extra_m = s.best_effort_memory_gb if over_best_effort else 0.0
        if sid in exclude or not s.schedulable or s.free_cores + extra_c < cores \
                or s.free_memory_gb + extra_m < memory_gb:
            continue
        evicts = 0 if s.free_cores >= cores and s.free_memory_gb >= memory_gb else 1
        perf = model.node(s.platform, cores)
        weak = 1 if at_least is not None and perf < at_least * (1.0 - 1e-9) else 0
        key = (0 if compatible(s, w, clear) else 1, weak, -perf, evicts, sid)
        if best is None or key < best:
            best = key
    if best is None:
        return None
    return Assignment(server_id=best[4], cores=cores, memory_gb=memory_gb)


def drop_node(state: ClusterState, alloc: Allocation, model: PerformanceModel) -> Allocation | None:
    """The allocation without its weakest node (ties: the last by server id); None at one node."""
    if len(alloc.assignments) <= 1:
        return None

    def strength(a: Assignment) -> float:
        s = state.servers.get(a.server_id)
        return model.node(s.platform, a.cores) if s is not None and s.up else 0.0

    last_first = sorted(alloc.assignments, key=lambda a: a.server_id, reverse=True)
    weakest = min(last_first, key=strength)  # min keeps the first of equals: the last id
    return _with(alloc, [a for a in alloc.assignments if a is not weakest])


@dataclass(frozen=True, slots=True)
class MigrationCost:
    seconds: float  # time the workload's moved part is paused/degraded
    moved_fraction: float  # share of its state moved (1 = all; microshards move only a fraction)

    def describe(self) -> str:
        return f"{self.seconds:.3f}s for {self.moved_fraction:.0%} of its state"


def migration_cost(old: Allocation, new: Allocation, service: bool, p: AdaptationParams) -> MigrationCost:
    """Copy the memory of the nodes that change server at `migration_bandwidth_gbs`, plus a fixed
    pause; a stateful service moves microshards instead: only the share of its nodes that change,
    at `microshard_s` per 64 MB shard, shards moving in parallel across the moved nodes."""
    keep = set(old.servers) & set(new.servers)
    moved = [a for a in old.assignments if a.server_id not in keep]
    frac = len(moved) / max(len(old.assignments), 1)
    gb = sum(a.memory_gb for a in moved)
    if service:
        shards = gb / p.microshard_gb
        return MigrationCost(seconds=shards * p.microshard_s / max(len(moved), 1), moved_fraction=frac)
    return MigrationCost(seconds=p.migration_fixed_s + gb / p.migration_bandwidth_gbs, moved_fraction=frac)


def repays(current: float, new: float, cost: MigrationCost, remaining_s: float, p: AdaptationParams) -> tuple[bool, float]:
    """(migrate?, gain): the performance-seconds gained over `remaining_s` must be at least
    `repay_factor` × the performance-seconds lost while the moved part pauses."""
    gain = (new - current) * max(remaining_s - cost.seconds, 0.0)
    loss = current * cost.seconds * cost.moved_fraction
    return gain > 0 and gain >= p.repay_factor * loss, gain
