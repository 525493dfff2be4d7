"""The cluster agent's side of adaptation (called from `agent.py`; part of the world, not policy).

- `probe`: executes `ProbeInterference` — two microbenchmarks next to the running workload —
  and reports `InterferenceProbed` at once. The scores are what the profiler measures for the
  workload's *current* phase on the platform of the probed server (Table III noise, a fresh draw
  per probe id). [IMPL CHOICE] a node that runs slower for a reason outside the interference
  model (an injected straggler: a failing disk, an unmodelled neighbour) is degraded before any
  microbenchmark starts, so the ramp finds the QoS (95 % of its expected speed) violated sooner:
  its measured tolerated scores are divided by that node's slowdown. [IMPL CHOICE] the probe's own
  few seconds are not simulated (telemetry windows are minutes); scoring adds `PROBE_S` to the
  detection time of anything confirmed by a probe.
- `observed`: after each telemetry window of an analytics job, `TasksObserved` — the
  TaskTracker view (Quasar §4.3), one entry per busy slot: its server, its progress rate
  (task-seconds of work per second, × the telemetry noise) and its progress. [IMPL CHOICE] the
  twin models a job's bulk stage per node, not per task, so a slot's "task" is its share of the
  bulk work (bulk / slots); progress integrates the node's rate between windows.
- `observed` with the scenario's `telemetry.task_attempts` (the stragglers scenario's second
  version): `TaskAttemptsObserved`, each task its own progress. Slot j of the allocation runs the
  job's task j (mod the task count), whose work is its share of the bulk × that task's size
  relative to the mean task (intrinsic stragglers run longer wherever they are); a node that joins
  later (a relaunch) runs speculative copies (attempt 1) of the tasks of the node it replaced,
  from progress 0 at the time it joined. [IMPL CHOICE] the view is the agent's: the world still
  runs the bulk stage per node, so a copy does not shorten the job beyond what moving the node
  does. The truth of true stragglers (`true_stragglers`): at the first view after an injection,
  the slow node's pair is recorded (with the injection's time) when one of its tasks runs below
  half the median task rate of the job and would not without the injection (docs/adaptation.md).
- `phase_changed`: records the truth of injected phase changes (workload, time, new phase) for
  detection scoring (`scoring.py`); policies never see it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.events import ProfileRun
from sextant_contracts.model import Classification

from ..arrivals import rng_for

if TYPE_CHECKING:
    from ..cluster import Active
    from ..host import AgentHost

PROBE_S = 10.0  # two microbenchmarks, a few seconds each (Paragon §3.4)
SANCTIONED_TRUTH_READ = "phase-truth"


class AdaptationHooks:
    def __init__(self, host: AgentHost) -> None:
        self.host = host
        self.phase_changes: list[tuple[str, float, int]] = []  # (workload, time, new phase)
        self._work: dict[tuple[str, int], float] = {}
        self._last: dict[str, float] = {}
        # per-task views (`telemetry.task_attempts`): per (job, server) its first task index, its
        # attempt number and when it started; per job, the servers it has run on (in order)
        self._task: dict[tuple[str, int], tuple[int, int, float]] = {}
        self._joined: dict[tuple[str, int], float] = {}
        self._judged: set[str] = set()
        self.true_stragglers: list[tuple[str, str, float, float]] = []  # (job, server, injected at, slowdown)

    # --- truth -----------------------------------------------------------------------------------

    def phase_changed(self, wid: str, now: float) -> None:
        a = self.host.world.active.get(wid)
        self.phase_changes.append((wid, now, a.phase if a is not None else -1))

    # --- probes ----------------------------------------------------------------------------------

    def probe(self, c: cmd.ProbeInterference, now: float, cause: str) -> None:
        e = self.host
        world = self.host.world
        a = world.active.get(c.workload_id)
        if a is None or a.paused:
            return
        node = next((n for n in a.nodes if world.sids[n.server] == c.server_id), a.nodes[0])
        tol, caused = self._measure(a, node.server, c.sources, c.probe_id)
        ref = next((n for n in a.nodes if world.sids[n.server] == c.reference_server_id), None)
        rt, rc = self._measure(a, ref.server, c.sources, f"{c.probe_id}-ref") if ref is not None else ({}, {})
        e.emit(ev.InterferenceProbed(at=now, workload_id=c.workload_id, probe_id=c.probe_id, purpose=c.purpose,
                                     tolerated=tol, caused=caused, server_id=world.sids[node.server],
                                     reference_server_id=None if ref is None else world.sids[ref.server],
                                     reference_tolerated=rt, reference_caused=rc), cause)

    def _measure(self, a: Active, server: int, sources: tuple[str, ...], probe_id: str) -> tuple[dict[str, float], dict[str, float]]:
        world = self.host.world
        platform = world.cat.platforms[int(world.platform[server])].platform_id
        slow = a.slow_factor if a.slow_server == server else 1.0
        tol: dict[str, float] = {}
        caused: dict[str, float] = {}
        for src in sources:
            run = ProfileRun(run_id=f"{probe_id}-{src}", classification=Classification.INTERFERENCE,
                             column=src, platform=platform)
            m = self.host.setup.profiler.measure(a.wid, a.truth, run, a.phase)
            tol[src] = round(m.value / slow, 4)
            caused[src] = round(m.caused if m.caused is not None else 0.0, 4)
        return tol, caused

    # --- the per-task view of analytics jobs -------------------------------------------------------

    def resized(self, wid: str, now: float) -> None:
        """A workload's allocation changed: when its new nodes joined (per-task views only)."""
        a = self.host.world.active.get(wid)
        if a is None or not self.host.setup.scenario.telemetry.task_attempts:
            return
        for n in a.nodes:
            self._joined.setdefault((wid, n.server), now)

    def _window(self, a: Active, now: float) -> tuple[Any, ...] | None:
        """What both task views read for one observation of a running analytics job (None: nothing
        to observe); advances the job's last-observed time."""
        t = a.truth
        an = t.analytics
        if an is None or a.paused or a.progress >= an.bulk:
            return None
        world = self.host.world
        e = self.host
        last = self._last.get(a.wid, a.started_at)
        self._last[a.wid] = now
        rng = rng_for(e.setup.seed, a.wid, "tasks", round(now, 6))
        sd = e.setup.gt.noise.telemetry_sd * e.setup.scenario.noise_scale
        eff = an.efficiency(len(a.nodes))
        sp = t.phases[a.phase].speed if t.phases else 1.0
        slots = sum(min(n.cores, t.threads) for n in a.nodes)
        share = an.bulk / max(slots, 1)
        return t, an, world, e, last, rng, sd, eff, sp, share

    def observed(self, a: Active, now: float) -> None:
        if self.host.setup.scenario.telemetry.task_attempts:
            self._observed_tasks(a, now)
            return
        w = self._window(a, now)
        if w is None:
            return
        t, an, world, e, last, rng, sd, eff, sp, share = w
        servers: list[str] = []
        rates: list[float] = []
        progress: list[float] = []
        for n in a.nodes:
            slow = 1.0 / a.slow_factor if n.server == a.slow_server else 1.0
            k = min(n.cores, t.threads)
            per_slot = float(t.speed[world.platform[n.server]]) * t.scale_up(n.cores) / k * n.factor * slow * eff * sp
            key = (a.wid, n.server)
            if key not in self._work:  # a node that joined later (relaunch, scale-out) takes over
                mine = [v for (w, _s), v in self._work.items() if w == a.wid]  # its share where the
                self._work[key] = sum(mine) / len(mine) if mine else 0.0  # others are
            self._work[key] += per_slot * max(now - last, 0.0)
            noise = np.exp(rng.normal(size=k) * sd)
            for j in range(k):
                servers.append(world.sids[n.server])
                rates.append(round(max(per_slot * float(noise[j]), 0.0), 6))
                progress.append(round(min(self._work[key] / share, 1.0), 6) if math.isfinite(share) else 0.0)
        if servers:
            e.emit(ev.TasksObserved(at=now, workload_id=a.wid, servers=tuple(servers), rates=tuple(rates),
                                    progress=tuple(progress)))

    def _observed_tasks(self, a: Active, now: float) -> None:
        """`TaskAttemptsObserved`: the per-task TaskTracker view (module docstring)."""
        w = self._window(a, now)
        if w is None:
            return
        t, an, world, e, last, rng, sd, eff, sp, share = w
        sizes = an.task_work / float(np.mean(an.task_work))
        mine = [s for (w, s) in self._task if w == a.wid]
        gone = [s for s in mine if all(n.server != s for n in a.nodes)]
        used = {self._task[(a.wid, s)][0] for s in mine if any(n.server == s for n in a.nodes)}
        base = sum(min(n.cores, t.threads) for n in a.nodes if (a.wid, n.server) in self._task)
        for n in a.nodes:  # register nodes: the first ones are originals, later ones copies
            key = (a.wid, n.server)
            if key in self._task:
                continue
            if not mine:
                self._task[key] = (base, 0, a.started_at)
                base += min(n.cores, t.threads)
                continue
            took = next((self._task[(a.wid, s)][0] for s in gone if self._task[(a.wid, s)][0] not in used), base)
            used.add(took)
            self._task[key] = (took, 1, self._joined.get(key, last))
            self._work[key] = 0.0
        servers: list[str] = []
        rates: list[float] = []
        progress: list[float] = []
        elapsed: list[float] = []
        attempts: list[int] = []
        true_rate: list[tuple[int, float, float]] = []  # (server, rate, rate without the injection)
        for n in a.nodes:
            slow = 1.0 / a.slow_factor if n.server == a.slow_server else 1.0
            k = min(n.cores, t.threads)
            per_slot = float(t.speed[world.platform[n.server]]) * t.scale_up(n.cores) / k * n.factor * eff * sp
            key = (a.wid, n.server)
            first, attempt, began = self._task[key]
            self._work[key] = self._work.get(key, 0.0) + per_slot * slow * max(now - max(last, began), 0.0)
            noise = np.exp(rng.normal(size=k) * sd)
            for j in range(k):
                size = float(sizes[(first + j) % len(sizes)])
                servers.append(world.sids[n.server])
                rates.append(round(max(per_slot * slow * float(noise[j]), 0.0), 6))
                progress.append(round(min(self._work[key] / (share * size), 1.0), 6) if share > 0 else 0.0)
                elapsed.append(round(max(now - began, 0.0), 6))
                attempts.append(attempt)
                true_rate.append((n.server, per_slot * slow / size, per_slot / size))
        if a.injected and a.wid not in self._judged and a.slow_server is not None:
            self._judged.add(a.wid)
            self._judge(a, true_rate)
        if servers:
            e.emit(ev.TaskAttemptsObserved(at=now, workload_id=a.wid, servers=tuple(servers), rates=tuple(rates),
                                           progress=tuple(progress), elapsed=tuple(elapsed),
                                           attempts=tuple(attempts)))

    def _judge(self, a: Active, rates: list[tuple[int, float, float]]) -> None:
        """Truth: is the injected node's straggling real (docs/adaptation.md)? A task of it runs
        below half the job's median task progress rate, and would not without the injection."""
        world = self.host.world
        slow = a.slow_server
        median = float(np.median([r for _s, r, _u in rates]))
        if slow is not None and any(s == slow and r < 0.5 * median <= u for s, r, u in rates):
            at = next((x[2] for x in reversed(world.stragglers) if x[0] == a.wid), None)
            if at is not None:
                self.true_stragglers.append((a.wid, world.sids[slow], at, a.slow_factor))
