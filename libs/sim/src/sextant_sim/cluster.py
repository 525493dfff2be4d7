"""The ground-truth cluster (the world): servers, who runs where, how fast, and what it costs.

Private to the engine. Policies never see it; the engine turns what happens here into events.

Progress is analytic: each running workload has a rate that only changes when something on one of
its servers changes (a co-runner arrives or leaves, a phase starts, a server fails, its load
segment changes). Before any change the affected workloads are *settled* (progress += rate × dt,
integrals accumulated) and after it their rates are recomputed and their next milestone
(completion, phase boundary, straggler tail) is rescheduled through `schedule`.

Injected stragglers (ground truth v2, `stragglers`): when an analytics job with an
`InjectedStraggler` has done `start` of its bulk work, one of its nodes turns slow (its tasks run
`slowdown` times slower) — a milestone like a phase boundary; the (job, server, time, slowdown)
is appended to `World.stragglers`. The slowness belongs to the (job, server) pair: an allocation
that no longer uses that server is cured.

Rates, per shape (see `workloads/base.py`):
- single: speed[p] / ideal_speed × S(cores)/S(threads) × interference × phase speed (1.0 = alone on
  its best platform, Paragon's normalisation);
- analytics: bulk stage e(n) · Σ_nodes speed[p_i] · S(c_i) · interference_i · slow_i (capped at one
  slot per task), then the straggler tail on one slot of the slowest node;
- service: progress is time; per-node capacity gives the fraction of requests within the bound.

Kwiken reissues (`set_reissue`, only the platform's twin executor with its Kwiken setting calls it):
a service whose plan reissues a cost-weighted share `r` of its requests busies `r` × its cores more
on each node (what the capacity ledger claims for it, docs/kwiken/platform.md), and presses its
co-runners in proportion: its caused pressure on a node × (busy with reissues / busy without).
[IMPL CHOICE] like memory, the extra CPU is not limited by the allocation; the service's own
queueing model (met fraction, p99) is not loaded by it. `r` = 0 (the default) changes nothing.

[IMPL CHOICE] memory allocations are requests, not limits (Kubernetes semantics): a workload uses
its true footprint whatever it asked for. When the residents' footprints exceed a server's memory
the OOM killer ends the resident with the largest footprint beyond its allocation (ties: the most
recently started) — `memory_exhausted`. [IMPL CHOICE] a single-node workload whose server changes
(migration) loses `footprint_gb` seconds of work (live migration at ~1 GB/s); on a server failure
it restarts from zero (no checkpoints); an analytics job loses the current wave's work of the lost
node; a service loses only capacity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sextant_contracts.model import Allocation

from .interference import InterferenceModel
from .platforms import Catalogue
from .workloads.base import WorkloadTruth
from .workloads.service import met_fraction, p99_ms

Schedule = Callable[[float, str, str, int], None]  # (time, kind, workload id, version)
EPS = 1e-9


@dataclass(slots=True)
class Node:
    server: int
    cores: int
    memory_gb: float
    factor: float = 1.0


@dataclass(slots=True)
class Active:
    wid: str
    truth: WorkloadTruth
    nodes: list[Node]
    seq: int
    started_at: float
    last: float
    ideal_speed: float
    progress: float = 0.0
    rate: float = 0.0
    phase: int = 0
    version: int = 0
    busy: float = 0.0  # cores busy right now (CPU utilisation numerator)
    het: float = 1.0  # platform factor now (1 = its best platform)
    intf: float = 1.0  # interference factor now
    # integrals over running time
    run_time: float = 0.0
    het_time: float = 0.0
    intf_time: float = 0.0
    # services
    load: float = 1.0
    segment: int = 0
    met_now: float = 1.0
    p99_now: float = 0.0
    met_req: float = 0.0
    off_req: float = 0.0
    # telemetry window
    win_start: float = 0.0
    win_progress: float = 0.0
    win_met: float = 0.0
    win_off: float = 0.0
    lost_work: float = 0.0
    migrations: int = 0
    # an injected straggler (analytics): the server whose tasks of this job run `slow_factor` slower
    injected: bool = False
    slow_server: int | None = None
    slow_factor: float = 1.0
    # Kwiken reissues in force (services): the cost-weighted share of requests sent again
    reissue: float = 0.0

    @property
    def paused(self) -> bool:
        return not self.nodes


class World:
    """Mutable ground truth of one run. Server order = catalogue order = sorted server ids."""

    def __init__(self, cat: Catalogue, server_ids: list[str], platform_of: list[int],
                 model: InterferenceModel, pressure_scale: np.ndarray, schedule: Schedule,
                 oom_headroom: float = 1.0) -> None:
        self.cat = cat
        self.sids = server_ids
        self.sidx = {s: i for i, s in enumerate(server_ids)}
        self.platform = np.asarray(platform_of, dtype=np.int64)
        self.cores = np.array([cat.platforms[p].cores for p in platform_of], dtype=float)
        self.memory = np.array([cat.platforms[p].memory_gb for p in platform_of], dtype=float)
        self.up = np.ones(len(server_ids), dtype=bool)
        self.residents: list[list[str]] = [[] for _ in server_ids]
        self.busy = np.zeros(len(server_ids))
        self.allocated = np.zeros(len(server_ids))
        self.mem_used = np.zeros(len(server_ids))
        self.version = np.zeros(len(server_ids), dtype=np.int64)  # bumped whenever a server's rates change
        self.model = model
        self.scale = pressure_scale
        self.schedule = schedule
        self.oom_headroom = oom_headroom
        self.active: dict[str, Active] = {}
        self.finished: dict[str, Active] = {}
        self._seq = 0
        self.usage: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)]  # (t, busy, allocated)
        # injected stragglers as they happen: (workload id, server id, time, slowdown)
        self.stragglers: list[tuple[str, str, float, float]] = []

    # --- bookkeeping ---------------------------------------------------------------------------

    def ideal_speed(self, t: WorkloadTruth) -> float:
        """Best per-core speed among platforms that can host its threads on one server."""
        fits = [i for i, p in enumerate(self.cat.platforms) if p.cores >= t.threads]
        idx = fits if fits else range(len(self.cat.platforms))
        return float(max(t.speed[i] for i in idx))

    def _record_usage(self, now: float) -> None:
        busy, alloc = float(self.busy.sum()), float(self.allocated.sum())
        last = self.usage[-1]
        if last[1] == busy and last[2] == alloc:
            return
        if last[0] == now:
            self.usage[-1] = (now, busy, alloc)
        else:
            self.usage.append((now, busy, alloc))

    def settle(self, a: Active, now: float) -> None:
        dt = now - a.last
        if dt > 0:
            a.progress += a.rate * dt
            if not a.paused:
                a.run_time += dt
                a.het_time += a.het * dt
                a.intf_time += a.intf * dt
                if a.truth.service is not None:
                    lam = a.truth.service.peak_qps * a.load
                    a.off_req += lam * dt
                    a.met_req += lam * a.met_now * dt
                    a.win_off += lam * dt
                    a.win_met += lam * a.met_now * dt
        a.last = now

    # --- placement -----------------------------------------------------------------------------

    def start(self, wid: str, truth: WorkloadTruth, alloc: Allocation, now: float) -> list[str]:
        """Run `wid` on `alloc` (first start, resume or move). Returns OOM victims, in order."""
        a = self.active.get(wid)
        nodes = [Node(self.sidx[x.server_id], x.cores, x.memory_gb) for x in alloc.assignments
                 if x.server_id in self.sidx and self.up[self.sidx[x.server_id]]]
        if a is None:
            self._seq += 1
            a = Active(wid=wid, truth=truth, nodes=[], seq=self._seq, started_at=now, last=now,
                       ideal_speed=self.ideal_speed(truth), win_start=now)
            self.active[wid] = a
            if truth.service is not None:
                self._schedule_service(a, now)
        else:
            self.settle(a, now)
            old = {n.server for n in a.nodes}
            if old and old != {n.server for n in nodes} and truth.shape == "single":
                loss = min(a.progress, truth.footprint_gb * max(a.rate, 0.0))
                a.progress -= loss
                a.lost_work += loss
                a.migrations += 1
            self._detach(a, now)
            self._seq += 1
            a.seq = self._seq
        a.nodes = nodes
        touched = [n.server for n in nodes]
        for s in touched:
            self.residents[s].append(wid)
        self._refresh_servers(touched, now)
        return self._oom(touched, now)

    def stop(self, wid: str, now: float) -> Active | None:
        """Remove `wid` from the world (completed, failed, revoked). Returns its record."""
        a = self.active.pop(wid, None)
        if a is None:
            return None
        self.settle(a, now)
        self._detach(a, now)
        a.version += 1
        self.finished[wid] = a
        return a

    def pause(self, wid: str, now: float) -> None:
        a = self.active.get(wid)
        if a is None or a.paused:
            return
        self.settle(a, now)
        self._detach(a, now)
        a.nodes = []
        a.rate = 0.0
        a.busy = 0.0
        a.version += 1

    def _detach(self, a: Active, now: float) -> None:
        servers = [n.server for n in a.nodes]
        for n in a.nodes:
            self.residents[n.server].remove(a.wid)
        a.nodes = []
        self._refresh_servers(servers, now)

    # --- rates ---------------------------------------------------------------------------------

    def _refresh_servers(self, servers: list[int], now: float) -> None:
        """Recompute interference on `servers` and the rates of everything running there."""
        seen: dict[str, Active] = {}
        for s in dict.fromkeys(servers):
            for wid in self.residents[s]:
                if wid not in seen:
                    a = self.active[wid]
                    self.settle(a, now)
                    seen[wid] = a
        for s in dict.fromkeys(servers):
            self._server_factors(s)
        for s in dict.fromkeys(servers):
            self.busy[s] = 0.0
            self.allocated[s] = 0.0
            self.mem_used[s] = 0.0
            self.version[s] += 1
        for a in seen.values():
            self._rate(a, now)
        for s in dict.fromkeys(servers):
            for wid in self.residents[s]:
                a = self.active[wid]
                for n in a.nodes:
                    if n.server == s:
                        self.busy[s] += self._node_busy(a, n)
                        self.allocated[s] += n.cores
                        self.mem_used[s] += self.footprint(a)
        self._record_usage(now)

    def footprint(self, a: Active) -> float:
        t = a.truth
        return t.footprint_gb * (t.phases[a.phase].footprint if t.phases else 1.0)

    def _node_busy(self, a: Active, n: Node) -> float:
        busy = self._base_busy(a, n)
        if a.reissue:
            busy += a.reissue * n.cores
        return busy

    def _base_busy(self, a: Active, n: Node) -> float:
        t = a.truth
        busy = min(n.cores, t.threads) * t.activity
        if t.service is not None:
            busy *= 0.3 + 0.7 * a.load
        return busy

    def caused_now(self, a: Active, server: int | None = None) -> np.ndarray:
        """`a`'s caused pressure now; on `server` (one of its nodes) with its reissue load (module doc)."""
        t = a.truth
        c = t.caused * t.phases[a.phase].caused if t.phases else t.caused
        if t.service is not None:
            c = c * (0.3 + 0.7 * a.load)
        if a.reissue and server is not None:
            for n in a.nodes:
                if n.server == server:
                    base = self._base_busy(a, n)
                    c = c * (self._node_busy(a, n) / base if base > 0 else 1.0 + a.reissue)
                    break
        return c

    def set_reissue(self, wid: str, share: float, now: float) -> None:
        """The Kwiken reissue share `share` ≥ 0 of service `wid` from `now` on (module doc); a
        workload that is not a running service, or an unchanged share, is left alone."""
        a = self.active.get(wid)
        if a is None or a.truth.service is None or share < 0 or a.reissue == share:
            return
        self.settle(a, now)
        a.reissue = share
        self._refresh_servers([n.server for n in a.nodes], now)

    def tolerated_now(self, a: Active) -> np.ndarray:
        t = a.truth
        return t.tolerated * t.phases[a.phase].tolerated if t.phases else t.tolerated

    def _server_factors(self, s: int) -> None:
        res = self.residents[s]
        if not res:
            return
        if len(res) == 1:
            for n in self.active[res[0]].nodes:
                if n.server == s:
                    n.factor = 1.0
            return
        acts = [self.active[w] for w in res]
        c = np.stack([self.caused_now(a, s) for a in acts]) / self.scale[self.platform[s]]
        t = np.stack([self.tolerated_now(a) for a in acts])
        occ = min(1.0, self.allocated_cores(s) / self.cores[s])
        f = self.model.factors(c, t, occ)
        for a, fi in zip(acts, f, strict=True):
            for n in a.nodes:
                if n.server == s:
                    n.factor = float(fi)

    def allocated_cores(self, s: int) -> float:
        total = 0.0
        for wid in self.residents[s]:
            for n in self.active[wid].nodes:
                if n.server == s:
                    total += n.cores
        return total

    def _rate(self, a: Active, now: float) -> None:
        t = a.truth
        a.version += 1
        if a.paused:
            a.rate, a.busy = 0.0, 0.0
            return
        sp = t.phases[a.phase].speed if t.phases else 1.0
        speeds = [float(t.speed[self.platform[n.server]]) for n in a.nodes]
        a.het = min(speeds) / a.ideal_speed
        a.intf = min(n.factor for n in a.nodes)
        a.busy = sum(self._node_busy(a, n) for n in a.nodes)
        if t.shape == "single":
            n = a.nodes[0]
            a.rate = speeds[0] / a.ideal_speed * t.scale_up(n.cores) / t.scale_up(t.threads) * n.factor * sp
        elif t.shape == "analytics":
            an = t.analytics
            assert an is not None
            slow = [1.0 / a.slow_factor if n.server == a.slow_server else 1.0 for n in a.nodes]
            if a.progress < an.bulk - EPS:
                agg = sum(s * t.scale_up(n.cores) * n.factor * k
                          for s, n, k in zip(speeds, a.nodes, slow, strict=True))
                a.rate = min(agg * an.efficiency(len(a.nodes)), float(len(an.task_work)))
            else:
                a.rate = min(s * n.factor * k for s, n, k in zip(speeds, a.nodes, slow, strict=True))
            a.rate *= sp
        else:
            self._service_quality(a, speeds)
            a.rate = 1.0
        self._schedule_milestone(a, now)

    def _service_quality(self, a: Active, speeds: list[float]) -> None:
        sv = a.truth.service
        assert sv is not None
        lam = sv.peak_qps * a.load / len(a.nodes)
        eff = sv.node_efficiency(len(a.nodes))
        mets, p99s = [], []
        for s, n in zip(speeds, a.nodes, strict=True):
            mu = sv.qps_per_core * s * a.truth.scale_up(n.cores) * eff * n.factor
            mets.append(met_fraction(mu, lam, sv.base_latency_ms, sv.latency_bound_ms))
            p99s.append(p99_ms(mu, lam, sv.base_latency_ms, sv.latency_bound_ms))
        a.met_now = sum(mets) / len(mets)
        a.p99_now = max(p99s)

    def _schedule_milestone(self, a: Active, now: float) -> None:
        t = a.truth
        if t.shape == "service" or a.rate <= 0:
            return
        target = t.work
        if t.phases and a.phase + 1 < len(t.phases):
            target = min(target, t.phases[a.phase + 1].start * t.work)
        if t.analytics is not None and a.progress < t.analytics.bulk - EPS:
            target = min(target, t.analytics.bulk)
            inj = t.analytics.injected
            if inj is not None and not a.injected:
                target = min(target, max(inj.start * t.analytics.bulk, a.progress))
        self.schedule(now + max(target - a.progress, 0.0) / a.rate, "milestone", a.wid, a.version)

    def _schedule_service(self, a: Active, now: float) -> None:
        sv = a.truth.service
        assert sv is not None
        a.load = sv.trace[0][1]
        self.schedule(now + a.truth.work, "service_end", a.wid, -1)
        if len(sv.trace) > 1:
            self.schedule(now + sv.trace[1][0], "load", a.wid, 1)

    # --- milestones ----------------------------------------------------------------------------

    def milestone(self, wid: str, version: int, now: float) -> tuple[str, list[str]]:
        """A scheduled milestone fired: ('completed' | 'phase' | 'straggler' | 'stage' | 'stale', OOM victims)."""
        a = self.active.get(wid)
        if a is None or a.version != version:
            return "stale", []
        self.settle(a, now)
        t = a.truth
        if a.progress >= t.work - 1e-6 * max(t.work, 1.0):
            return "completed", []
        if t.phases:
            ph = t.phase_at(a.progress / t.work + 1e-12)
            if ph != a.phase:
                a.phase = ph
                servers = [n.server for n in a.nodes]
                self._refresh_servers(servers, now)
                return "phase", self._oom(servers, now)
        an = t.analytics
        if an is not None and an.injected is not None and not a.injected and a.nodes \
                and a.progress >= an.injected.start * an.bulk - 1e-6 * max(an.bulk, 1.0):
            self._inject(a, an.injected.node, an.injected.slowdown, now)
            return "straggler", []
        self._refresh_servers([n.server for n in a.nodes], now)
        return "stage", []

    def _inject(self, a: Active, node: float, slowdown: float, now: float) -> None:
        """The injected straggler happens: node ⌊node × len(nodes)⌋ (allocation order) turns slow."""
        n = a.nodes[min(int(node * len(a.nodes)), len(a.nodes) - 1)]
        a.injected, a.slow_server, a.slow_factor = True, n.server, slowdown
        self.stragglers.append((a.wid, self.sids[n.server], now, slowdown))
        self._refresh_servers([x.server for x in a.nodes], now)

    def load_change(self, wid: str, segment: int, now: float) -> None:
        a = self.active.get(wid)
        if a is None or a.truth.service is None:
            return
        tr = a.truth.service.trace
        self.settle(a, now)
        a.segment = segment
        a.load = tr[segment][1]
        if segment + 1 < len(tr):
            self.schedule(a.started_at + tr[segment + 1][0], "load", wid, segment + 1)
        self._refresh_servers([n.server for n in a.nodes], now)

    # --- failures ------------------------------------------------------------------------------

    def _oom(self, servers: list[int], now: float) -> list[str]:
        victims: list[str] = []
        for s in dict.fromkeys(servers):
            while self.mem_used[s] > self.memory[s] * self.oom_headroom + EPS and self.residents[s]:
                def excess(wid: str, s: int = s) -> tuple[float, int]:
                    a = self.active[wid]
                    mem = sum(n.memory_gb for n in a.nodes if n.server == s)
                    return (self.footprint(a) - mem, a.seq)
                victim = max(self.residents[s], key=excess)
                victims.append(victim)
                self.stop(victim, now)
        return victims

    def fail_server(self, server_id: str, now: float) -> list[str]:
        """The server goes down; returns the workloads that were on it."""
        s = self.sidx[server_id]
        self.up[s] = False
        hit = list(self.residents[s])
        touched: list[int] = [s]
        for wid in hit:
            a = self.active[wid]
            self.settle(a, now)
            lost = [n for n in a.nodes if n.server == s]
            keep = [n for n in a.nodes if n.server != s]
            if a.truth.shape == "single":
                a.lost_work += a.progress
                a.progress = 0.0
            elif a.truth.analytics is not None and a.nodes:
                an = a.truth.analytics
                wave = float(np.mean(an.task_work)) * sum(n.cores for n in lost)
                loss = min(a.progress, wave)
                a.progress -= loss
                a.lost_work += loss
            self.residents[s].remove(wid)
            a.nodes = keep
            touched.extend(n.server for n in keep)
        self._refresh_servers(touched, now)
        for wid in hit:
            a = self.active[wid]
            if a.paused:
                a.rate, a.busy = 0.0, 0.0
                a.version += 1
        return hit

    def recover_server(self, server_id: str, now: float) -> None:
        self.up[self.sidx[server_id]] = True

    # --- observation ---------------------------------------------------------------------------

    def window(self, wid: str, now: float) -> tuple[float, float, float] | None:
        """(mean rate, met fraction, elapsed) over the telemetry window, then reset it."""
        a = self.active.get(wid)
        if a is None:
            return None
        self.settle(a, now)
        elapsed = now - a.win_start
        if elapsed <= 0:
            return None
        rate = (a.progress - a.win_progress) / elapsed
        met = a.win_met / a.win_off if a.win_off > 0 else a.met_now
        a.win_start, a.win_progress, a.win_met, a.win_off = now, a.progress, 0.0, 0.0
        return rate, met, elapsed
