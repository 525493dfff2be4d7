"""The `oracle` profile's planner: places with the ground truth (an upper bound, not a policy).

One of the two sanctioned readers of the ground truth (with `estimates.py`); marked by
`SANCTIONED_TRUTH_READ` for `tests/architecture/test_no_peeking.py`. It is not replay-pure (it reads
the live twin), which is acceptable for a yardstick.

How it decides (per workload, in arrival order like every planner):
1. Requirement: the rate the workload needs from now on to still meet QoS end to end
   (`required_rate`: ideal / (ideal/0.95 − time already spent), +0.5 % margin) — so profiling and
   waiting are accounted exactly.
2. Candidates: up servers with room for the true need (cores = threads per node, memory = true
   footprint), ordered by platform factor (best platform first, in 1 % buckets), then tightest fit
   (most cores in use), then server id.
3. The first candidate where the true interference model says the newcomer meets its requirement
   and every resident that can still meet its own keeps doing so wins (work budget:
   `max_examined` candidates with residents). Multi-node workloads (analytics, services) add nodes
   this way until the true completion time / latency at peak meets the target (Quasar's
   "increase until QoS", with the truth).
4. If nothing is feasible it takes the least-harmful candidate (max of the minimum ratio of
   achieved to required rate), and defers only when no server has room at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from sextant_contracts.model import Allocation, Assignment, DecisionTrace
from sextant_core.policies import PlacementOutcome
from sextant_core.state.model import ClusterState, ServerState, WorkloadState

from .arrivals import QOS_FRACTION
from .cluster import World
from .setup import Setup
from .workloads.base import WorkloadTruth
from .workloads.generate import scale_out_efficiency

if TYPE_CHECKING:
    from sextant_core.decide import DecisionContext

MARGIN = 1.005
MAX_NODES = 64


class OracleView:
    """The live world and the truths, bound after the engine builds the world."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.world: World | None = None
        self._pidx = {sid: setup.cat.index(p.platform_id) for sid, p in setup.servers}

    def bind(self, world: World) -> None:
        self.world = world

    def truth(self, wid: str) -> WorkloadTruth:
        return self.setup.truths[wid]

    def platform(self, server_id: str) -> int:
        return self._pidx[server_id]

    def pressure(self, wid: str) -> tuple[np.ndarray, np.ndarray, float]:
        """(caused, tolerated, footprint) of a workload now (its current phase)."""
        assert self.world is not None
        a = self.world.active.get(wid)
        t = self.truth(wid)
        if a is not None:
            return self.world.caused_now(a), self.world.tolerated_now(a), self.world.footprint(a)
        return t.caused, t.tolerated, t.footprint_gb

    def required_rate(self, wid: str, now: float, submitted_at: float) -> float:
        """Normalised rate needed from now on to meet QoS end to end (∞ if already impossible)."""
        assert self.world is not None
        t = self.truth(wid)
        a = self.world.active.get(wid)
        done = 0.0
        if a is not None:
            done = a.progress + a.rate * max(now - a.last, 0.0)
        left = submitted_at + t.ideal_s / QOS_FRACTION - now
        remaining = max(t.work - done, 0.0) / t.work * t.ideal_s
        return math.inf if left <= 0 else MARGIN * remaining / left


@dataclass(slots=True)
class _Node:
    server: ServerState
    cores: int
    het: float
    factor: float
    ok: bool
    worst: float  # min over newcomer and protected residents of achieved / required


class OraclePlanner:
    SANCTIONED_TRUTH_READ: ClassVar[str] = "oracle"

    def __init__(self, view: OracleView, max_examined: int = 96) -> None:
        self.view = view
        self.max_examined = max_examined

    def place(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> PlacementOutcome:
        v = self.view
        t = v.truth(w.workload_id)
        _, _, foot = v.pressure(w.workload_id)
        need = t.threads
        cands = [s for s in state.sorted_servers() if s.schedulable and s.free_cores >= min(need, s.capacity.cores)
                 and s.free_memory_gb >= foot * 1.02 and w.workload_id not in s.residents]
        if not cands:
            return PlacementOutcome(allocation=None, reasons=("no_capacity",),
                                    trace=DecisionTrace(examined=len(state.servers)))
        ideal = max(float(t.speed[i]) for i, p in enumerate(v.setup.cat.platforms) if p.cores >= t.threads) \
            if any(p.cores >= t.threads for p in v.setup.cat.platforms) else float(t.speed.max())
        het = {s.server_id: float(t.speed[v.platform(s.server_id)]) / ideal for s in cands}
        cands.sort(key=lambda s: (-math.floor(het[s.server_id] * 100 + 1e-9), -s.used_cores, s.server_id))
        required = v.required_rate(w.workload_id, ctx.at, w.submitted_at)
        nodes = self._choose(state, w, t, cands, het, required, foot, ctx.at)
        if not nodes:
            return PlacementOutcome(allocation=None, reasons=("no_capacity",),
                                    trace=DecisionTrace(examined=len(cands)))
        mem = round(foot * 1.02, 3)
        alloc = Allocation(assignments=tuple(Assignment(server_id=n.server.server_id, cores=n.cores, memory_gb=mem)
                                             for n in nodes))
        top = tuple((n.server.server_id, round(100 * min(1.0, n.worst), 3)) for n in nodes[:5])
        return PlacementOutcome(allocation=alloc, predicted_performance=round(min(n.het * n.factor for n in nodes), 6),
                                trace=DecisionTrace(examined=len(cands), top=top,
                                                    notes=("oracle",) if all(n.ok for n in nodes) else ("oracle:least-harm",)))

    # --- single node ---------------------------------------------------------------------------

    def _evaluate(self, state: ClusterState, w: WorkloadState, t: WorkloadTruth, s: ServerState, cores: int,
                  het: float, required: float, now: float) -> _Node:
        v = self.view
        p = v.platform(s.server_id)
        newcomer = het * t.scale_up(cores) / t.scale_up(t.threads)
        if not s.residents:
            worst = newcomer / required if required > 0 else math.inf
            return _Node(s, cores, het, 1.0, worst >= 1.0, worst)
        ids = list(s.residents) + [w.workload_id]
        vecs = [v.pressure(x) for x in ids]
        scale = v.setup.scale[p]
        c = np.stack([x[0] for x in vecs]) / scale
        tol = np.stack([x[1] for x in vecs])
        occ = min(1.0, (s.used_cores + cores) / s.capacity.cores)
        f = v.setup.model.factors(c, tol, occ)
        worst = newcomer * f[-1] / required if required > 0 else math.inf
        for i, rid in enumerate(s.residents):
            r = state.workloads.get(rid)
            if r is None:
                continue
            req = v.required_rate(rid, now, r.submitted_at)
            rt = v.truth(rid)
            if math.isinf(req) or rt.shape != "single":
                continue
            alone = f[i] / max(self._current_factor(rid, s.server_id), 1e-9)
            ach = self._resident_rate(rid, s.server_id) * alone
            if ach / req < 1.0 <= self._resident_rate(rid, s.server_id) / req:
                worst = min(worst, ach / req)
        return _Node(s, cores, het, float(f[-1]), worst >= 1.0, worst)

    def _resident_rate(self, rid: str, server_id: str) -> float:
        world = self.view.world
        assert world is not None
        a = world.active.get(rid)
        if a is None:
            return 1.0
        return a.rate

    def _current_factor(self, rid: str, server_id: str) -> float:
        world = self.view.world
        assert world is not None
        a = world.active.get(rid)
        if a is None:
            return 1.0
        for n in a.nodes:
            if world.sids[n.server] == server_id:
                return n.factor
        return 1.0

    def _choose(self, state: ClusterState, w: WorkloadState, t: WorkloadTruth, cands: list[ServerState],
                het: dict[str, float], required: float, foot: float, now: float) -> list[_Node]:
        if t.shape == "single":
            best: _Node | None = None
            examined = 0
            for s in cands:
                cores = min(t.threads, s.capacity.cores)
                n = self._evaluate(state, w, t, s, cores, het[s.server_id], required, now)
                if n.ok:
                    return [n]
                if best is None or n.worst > best.worst:
                    best = n
                if s.residents:
                    examined += 1
                    if examined >= self.max_examined:
                        break
            return [best] if best is not None else []
        return self._multi(state, w, t, cands, het, now)

    # --- multi node ----------------------------------------------------------------------------

    def _multi(self, state: ClusterState, w: WorkloadState, t: WorkloadTruth, cands: list[ServerState],
               het: dict[str, float], now: float) -> list[_Node]:
        chosen: list[_Node] = []
        for s in cands:
            cores = min(t.threads, s.free_cores)
            if cores <= 0:
                continue
            n = self._evaluate(state, w, t, s, cores, het[s.server_id], 1e-9, now)
            if s.residents and n.factor < 0.97:
                continue
            chosen.append(n)
            if self._meets(t, chosen, w, now) or len(chosen) >= MAX_NODES:
                break
        return chosen

    def _meets(self, t: WorkloadTruth, nodes: list[_Node], w: WorkloadState, now: float) -> bool:
        if t.service is not None:
            sv = t.service
            lam = sv.peak_qps / len(nodes)
            need = lam + 1000.0 * math.log(1 / (1 - 0.995)) / max(sv.latency_bound_ms - sv.base_latency_ms, 1e-9)
            return all(sv.qps_per_core * n.het * t.scale_up(n.cores) * n.factor >= need for n in nodes)
        an = t.analytics
        assert an is not None
        agg = sum(n.het * t.scale_up(n.cores) * n.factor for n in nodes)
        rate = min(agg * scale_out_efficiency(len(nodes), an.beta, an.kappa), float(len(an.task_work)))
        tail_rate = min(n.het * n.factor for n in nodes)
        finish = now + an.bulk / rate + an.tail / tail_rate
        return finish <= w.submitted_at + MARGIN ** -1 * t.ideal_s / QOS_FRACTION
