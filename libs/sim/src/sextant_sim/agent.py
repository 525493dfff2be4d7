"""The twin's cluster agent: executes agent commands on the world and reports facts as events.

- `ExecuteProfileRuns` → after the longest run's duration, one `ProfileSampleRecorded` per run
  (noisy measurements from `profiler.py`) then `ProfilingCompleted`;
- `StartWorkload` → `WorkloadStarted` (then `WorkloadFailed("memory_exhausted")` for any OOM victim);
- `ResizeWorkload` → the world moves/resizes the workload (the decision event already says so);
- `StopWorkload` → the world drops it;
- world happenings → `WorkloadCompleted`, `WorkloadFailed`, `ServerFailed`/`ServerRecovered`;
- telemetry: every `telemetry.period_s` of a running workload, `PerformanceObserved` (window mean,
  in the target's units, × log-normal noise `noise.telemetry_sd`) and a `QosVerdict` (the core's
  rule, `sextant_core.qos`: met ⟺ ratio ≥ 1). With `telemetry.split_at_resident_changes` (docs/adaptation.md), a single-node
  workload's window is also closed — one more pair of events — just before the residents of its
  server change (a co-runner starts, moves, is resized, pauses or ends): what a node agent that
  starts and stops the co-runners itself can do. The periodic schedule is unchanged.

What the agent measures per window, judged by `sextant_core.qos` against whichever target the
workload carries: batch and analytics jobs — the instruction rate (× noise) and the projected
duration (time since start + remaining work at the current rate, ÷ noise); services — the share of
the window's requests within the workload's latency bound ([IMPL CHOICE] the twin's own bound: a
service's latency model is drawn with it, so a submitted bound is judged as that one). A
service's `PerformanceObserved.value` is the QPS served within the bound.
"""

from __future__ import annotations

import math

import numpy as np
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import DeadlineTarget
from sextant_core import qos

from .adaptation.hooks import AdaptationHooks
from .arrivals import IDEAL_IPS, rng_for
from .host import AgentHost
from .profiler import Measurement

MIN_NOISE_WINDOW_S = 1.0


def window_noise_factor(elapsed: float, period_s: float) -> float:
    """[IMPL CHOICE] Telemetry is a window mean of a noisy rate, so its noise shrinks as 1/√length:
    `noise.telemetry_sd` is calibrated for the scenario's nominal window (`telemetry.period_s`), and
    a shorter window — a split at a resident change, or a shorter single-node period — is
    √(period / length) times noisier (a 60 s window of a 300 s scenario: ×2.24). Windows at least
    as long as the period keep the calibrated noise (every scenario without split or short
    windows is unchanged). Lengths below `MIN_NOISE_WINDOW_S` count as that (no overflow on a
    split a hair after the previous report; such a window is already ±√period noisy)."""
    return math.sqrt(period_s / max(elapsed, MIN_NOISE_WINDOW_S)) if 0 < elapsed < period_s else 1.0


class Agent:
    """The cluster agent of the twin, run by an `AgentHost` (the simulator's engine or the
    platform's twin executor)."""

    def __init__(self, host: AgentHost) -> None:
        self.e = host
        self.world = host.world
        self._profiles: dict[str, list[tuple[ev.ProfileRun, Measurement]]] = {}
        self._profile_seq: dict[str, int] = {}
        self.profile_runs = 0  # profiling runs executed (every plan, every round)
        self.profile_core_seconds = 0.0  # Σ cores × nodes × duration of those runs (sandbox server time)
        self._observing: set[str] = set()
        self._telemetry: dict[str, np.random.Generator] = {}
        self.adaptation = AdaptationHooks(host)  # probes, task view, phase truth

    # --- hooks on emitted events ---------------------------------------------------------------

    def on_event(self, e: ev.Event) -> None:
        if isinstance(e, ev.PlacementDeferred):
            a = self.world.active.get(e.workload_id)
            if a is not None:
                self._split([n.server for n in a.nodes], e.at)
            self.world.pause(e.workload_id, e.at)
        elif isinstance(e, ev.WorkloadFailed | ev.WorkloadRevoked):
            self._close(e.workload_id, e.at)

    def _close(self, wid: str, now: float) -> None:
        live = self.world.active.get(wid)
        if live is not None:
            self._split([n.server for n in live.nodes], now, skip=wid)
        a = self.world.stop(wid, now) or self.world.finished.get(wid)
        if a is None:
            return
        w = self.e.state.workloads.get(wid)
        plats: tuple[str, ...] = ()
        if w is not None and w.allocation is not None:
            plats = tuple(sorted({self.e.state.servers[x.server_id].platform for x in w.allocation.assignments
                                  if x.server_id in self.e.state.servers}))
        self.e.ledger.close(wid, a, plats)

    # --- agent commands ------------------------------------------------------------------------

    def execute(self, c: cmd.Command, cause: str) -> None:
        now = self.e.now
        if isinstance(c, cmd.ExecuteProfileRuns):
            self._profile(c, now, cause)
        elif isinstance(c, cmd.StartWorkload):
            truth = self.e.setup.truths[c.workload_id]
            self._split_for(c.workload_id, c.allocation, now)
            victims = self.world.start(c.workload_id, truth, c.allocation, now)
            self.e.emit(ev.WorkloadStarted(at=now, workload_id=c.workload_id, allocation=c.allocation), cause)
            self._kill(victims, now, cause)
            if c.workload_id not in self._observing and c.workload_id in self.world.active:
                self._observing.add(c.workload_id)
                self.e.schedule(now + self._period(truth), "observe", c.workload_id, 0)
        elif isinstance(c, cmd.ResizeWorkload):
            truth = self.e.setup.truths[c.workload_id]
            if c.workload_id in self.world.active:
                self._split_for(c.workload_id, c.allocation, now)
                self._kill(self.world.start(c.workload_id, truth, c.allocation, now), now, cause)
                self.adaptation.resized(c.workload_id, now)
        elif isinstance(c, cmd.StopWorkload):
            self._close(c.workload_id, now)
        elif isinstance(c, cmd.ProbeInterference):
            self.adaptation.probe(c, now, cause)

    # --- telemetry split at resident changes (adaptation) ----------------------------------------------

    def _period(self, truth: object) -> float:
        tel = self.e.setup.scenario.telemetry
        single = getattr(truth, "shape", "") == "single"
        return tel.single_period_s if single and tel.single_period_s is not None else tel.period_s

    def _split_for(self, wid: str, alloc: object, now: float) -> None:
        """Before `wid` starts on / moves to `alloc`: split the windows on every server whose
        residents change (old and new servers; none when the placement is unchanged)."""
        a = self.world.active.get(wid)
        old = {(n.server, n.cores) for n in a.nodes} if a is not None else set()
        sidx = self.world.sidx
        new = {(sidx[x.server_id], x.cores) for x in alloc.assignments  # type: ignore[attr-defined]
               if x.server_id in sidx}
        if old == new:
            return
        self._split(sorted({s for s, _ in old | new}), now)

    def _split(self, servers: list[int], now: float, skip: str | None = None) -> None:
        if not self.e.setup.scenario.telemetry.split_at_resident_changes:
            return
        done: set[str] = set()
        for s in sorted(set(servers)):
            for wid in sorted(self.world.residents[s]):
                if wid in done or wid == skip:
                    continue
                done.add(wid)
                a = self.world.active.get(wid)
                if a is not None and a.truth.shape == "single":
                    self._report(wid, now)

    def _kill(self, victims: list[str], now: float, cause: str | None) -> None:
        for wid in victims:
            self.e.emit(ev.WorkloadFailed(at=now, workload_id=wid, reason="memory_exhausted"), cause)

    def _profile(self, c: cmd.ExecuteProfileRuns, now: float, cause: str) -> None:
        wid = c.workload_id
        if not c.runs:
            self.e.emit(ev.ProfilingCompleted(at=now, workload_id=wid, samples=0), cause)
            return
        truth = self.e.setup.truths[wid]
        a = self.world.active.get(wid)
        phase = a.phase if a is not None else 0
        prof = self.e.setup.profiler
        self._profiles[wid] = [(r, prof.measure(wid, truth, r, phase)) for r in c.runs]
        self.profile_runs += len(c.runs)
        self.profile_core_seconds += sum(r.cores * r.nodes * r.duration_s for r in c.runs)
        seq = self._profile_seq.get(wid, 0) + 1
        self._profile_seq[wid] = seq
        self.e.schedule(now + max(r.duration_s for r in c.runs), "profiled", wid, seq)

    # --- happenings ----------------------------------------------------------------------------

    def happening(self, kind: str, wid: str, version: int) -> None:
        now = self.e.now
        if kind == "profiled":
            self._profiled(wid, version, now)
        elif kind == "milestone":
            outcome, victims = self.world.milestone(wid, version, now)
            if outcome == "completed":
                self._complete(wid, now)
            elif outcome == "phase":
                self.adaptation.phase_changed(wid, now)
            self._kill(victims, now, None)
        elif kind == "service_end":
            if wid in self.world.active:
                self._complete(wid, now)
        elif kind == "load":
            self.world.load_change(wid, version, now)
        elif kind == "observe":
            self._observe(wid, now)

    def _profiled(self, wid: str, seq: int, now: float) -> None:
        if self._profile_seq.get(wid) != seq:
            return
        w = self.e.state.workloads.get(wid)
        runs = self._profiles.pop(wid, [])
        if w is None or w.phase.value in ("completed", "failed", "revoked"):
            return
        for r, m in runs:
            self.e.emit(ev.ProfileSampleRecorded(at=now, workload_id=wid, run_id=r.run_id,
                                                 classification=r.classification, column=r.column,
                                                 value=round(m.value, 6),
                                                 caused=None if m.caused is None else round(m.caused, 4)))
        self.e.emit(ev.ProfilingCompleted(at=now, workload_id=wid, samples=len(runs)))

    def _complete(self, wid: str, now: float) -> None:
        self.e.emit(ev.WorkloadCompleted(at=now, workload_id=wid))
        self._close(wid, now)

    def _observe(self, wid: str, now: float) -> None:
        a = self.world.active.get(wid)
        if a is None:
            self._observing.discard(wid)
            return
        self.e.schedule(now + self._period(a.truth), "observe", wid, 0)
        self._report(wid, now)

    def _report(self, wid: str, now: float) -> None:
        """Close `wid`'s telemetry window at `now`: PerformanceObserved + QosVerdict."""
        a = self.world.active.get(wid)
        if a is None:
            return
        w = self.e.state.workloads.get(wid)
        win = self.world.window(wid, now)
        if a.paused or win is None or w is None or w.phase.value != "running":
            return
        rate, met, elapsed = win
        rng = self._telemetry.get(wid)
        if rng is None:
            rng = self._telemetry[wid] = rng_for(self.e.setup.seed, wid, "telemetry")
        noise = math.exp(float(rng.normal()) * self.e.setup.gt.noise.telemetry_sd * self.e.setup.scenario.noise_scale
                         * window_noise_factor(elapsed, self.e.setup.scenario.telemetry.period_s))
        t = a.truth
        p99: float | None = None
        offered: float | None = None
        if t.service is not None:
            measured = qos.Measured(started_at=a.started_at, within_bound=met)
            offered = round(t.service.peak_qps * a.load, 6)
            p99 = round(a.p99_now, 6)
        else:
            remaining = max(t.work - a.progress, 0.0)
            projected = (now - a.started_at) + (remaining / a.rate if a.rate > 0 else 1e9)
            measured = qos.Measured(started_at=a.started_at, ips=rate * IDEAL_IPS * noise,
                                    projected_s=projected / noise)
        judged = qos.value_and_ratio(self._target(w.target), measured)
        if judged is None:
            return  # a target this workload cannot be judged against (refused at submission)
        value, ratio = judged
        if t.service is not None:
            value = t.service.peak_qps * a.load * met  # requests/s served within the bound
        value = round(max(value, 0.0), 6)
        ratio = round(max(ratio, 0.0), 6)
        self.e.emit(ev.PerformanceObserved(at=now, workload_id=wid, value=value, ratio_to_target=ratio,
                                           p99_latency_ms=p99, offered=offered))
        self.e.emit(ev.QosVerdict(at=now, workload_id=wid, met=qos.met(ratio), ratio_to_target=ratio,
                                  window_s=round(elapsed, 6)))
        self.adaptation.observed(a, now)

    def _target(self, target: object) -> object:
        """`target` with an absolute time (a deadline) moved to the host's time base."""
        if isinstance(target, DeadlineTarget):
            return target.model_copy(update={"at": self.e.host_time(target.at)})
        return target

    # --- servers -------------------------------------------------------------------------------

    def fail_server(self, server_id: str) -> None:
        now = self.e.now
        s = self.e.state.servers.get(server_id)
        if s is None or not s.up:
            return
        self.world.fail_server(server_id, now)
        self.e.emit(ev.ServerFailed(at=now, server_id=server_id, reason="twin: hardware failure"))

    def recover_server(self, server_id: str) -> None:
        now = self.e.now
        s = self.e.state.servers.get(server_id)
        if s is None or s.up:
            return
        self.world.recover_server(server_id, now)
        self.e.emit(ev.ServerRecovered(at=now, server_id=server_id))

    def finish(self, now: float) -> None:
        """The run ended (everything done or the horizon): close the records still in the world."""
        for wid in sorted(self.world.active):
            a = self.world.active[wid]
            self.world.settle(a, now)
            self.e.ledger.close(wid, a, ())
