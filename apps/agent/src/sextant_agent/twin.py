"""`TwinExecutor`: the cluster twin as the platform's executor, in scaled wall-clock time.

It reuses the twin's own agent (`sextant_sim.agent.Agent`) and world unchanged, as their host
(`sextant_sim.host.AgentHost`: `world`, `setup`, `state`, `now`, `ledger`, `schedule`, `emit`): the
same ground truth, profiler and telemetry the simulator uses, and the same order of happenings at
equal time (`sextant_sim.host.PRIORITY`), but the decisions come from the platform's log instead of
an in-process `decide`. Virtual time is `(wall - wall0) × speed`; facts are reported with
wall-clock times (`at = wall0 + virtual / speed`), the platform's time base.

Workloads are matched to ground truths by `resolve`: a `TwinWorkloadRef.ref` names a workload of
the scenario (its id, `w00012`, or the twin's own ref, `hadoop:w00012`) or a family of the ground
truth (`memcached`, `hadoop`, `paragon-st`, …: an instance of it drawn for the workload, seeded by
the workload id); a `ContainerSpec` whose image (or, without one, command) names a family runs as
that family (`memcached:1.6` → `memcached`). The twin workload's kind must be the submitted kind
(`_misfit`). Performance observations become raw samples for the telemetry service; the twin's own
QoS verdicts are dropped (telemetry decides them). After a restart the world is empty: `resume`
re-launches what the log says is running (from scratch — a restarted container) or profiling.

With `reissue_load` (the agent's Kwiken setting, off by default) a service's Kwiken plan in force
is real extra load: from the executor's time when its `KwikenPlanDecided` is observed (and at each
start, resume or move, from the state's latest plan) its servers run `reissue_spent` × its cores
more (`World.set_reissue`: busy cores and the pressure its co-runners feel).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_contracts.ids import derive_id
from sextant_contracts.model import Allocation, ContainerSpec, RawSample, TwinWorkloadRef
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.state.model import EMPTY, ClusterState, WorkloadState
from sextant_sim.agent import Agent
from sextant_sim.arrivals import rng_for
from sextant_sim.cluster import World
from sextant_sim.host import PRIORITY, AgentHost
from sextant_sim.ledger import Ledger, Record
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare
from sextant_sim.workloads.base import WorkloadTruth
from sextant_sim.workloads.generate import DrawOptions, generate
from sextant_sim.workloads.performance import concept_matrix


class TwinExecutor(AgentHost):
    def __init__(self, scenario: str, seed: int, *, speed: float, wall0: float,
                 inject_failures: bool = False, reissue_load: bool = False) -> None:
        self.reissue_load = reissue_load
        self.setup: Setup = prepare(load_scenario(scenario), seed)
        self.speed = speed
        self.wall0 = wall0
        self.state: ClusterState = EMPTY
        self.now = 0.0
        self._heap: list[tuple[float, int, int, str, str, int]] = []
        self._seq = 0
        self._by_ref = dict(self.setup.truths)
        self._facts: list[ev.Event] = []
        self._samples: list[RawSample] = []
        self._started: dict[str, Allocation] = {}  # what each running workload was started with
        self._set_aside: set[str] = set()  # workloads quarantined: their happenings are skipped
        self._profiled: set[tuple[str, tuple[str, ...]]] = set()  # (workload, run ids) launched by this process
        self.ledger = Ledger()
        sids = [sid for sid, _ in self.setup.servers]
        pidx = [self.setup.cat.index(p.platform_id) for _, p in self.setup.servers]
        self.world = World(self.setup.cat, sids, pidx, self.setup.model, self.setup.scale, self.schedule,
                           self.setup.gt.memory.oom_headroom)
        self.agent = Agent(self)
        if inject_failures:
            for i, f in enumerate(self.setup.failures):
                self.schedule(f.at, "fail", str(i), 0)
                self.schedule(f.repaired_at, "recover", str(i), 0)

    # --- AgentHost ---------------------------------------------------------------------------------

    def schedule(self, at: float, kind: str, key: str, version: int, priority: int | None = None) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (at, priority if priority is not None else PRIORITY[kind], self._seq,
                                    kind, key, version))

    def emit(self, e: ev.Event, cause: str | None = None) -> None:
        wall = self.wall0 + e.at / self.speed
        if isinstance(e, ev.PerformanceObserved):
            self._samples.append(RawSample(sample_id=derive_id("sample", e.workload_id, e.at),
                                           workload_id=e.workload_id, at=wall, value=e.value,
                                           ratio_to_target=e.ratio_to_target, p99_latency_ms=e.p99_latency_ms,
                                           offered=e.offered))
        elif not isinstance(e, ev.QosVerdict):
            self._facts.append(e.model_copy(update={"at": wall}))

    def host_time(self, log_time: float) -> float:
        return (log_time - self.wall0) * self.speed

    # --- Executor --------------------------------------------------------------------------------

    def virtual(self, wall: float) -> float:
        return max((wall - self.wall0) * self.speed, self.now)

    def knowledge(self, profile: str) -> list[ev.KnowledgeSeeded]:
        """The twin's offline seeding campaign (`sextant_sim.seeding`: its own workloads, measured
        through the profiler) for a profile whose classifier learns from the knowledge base — the
        same events a `sextant sim run` of that profile starts from."""
        from sextant_core.profiles import policy_set
        from sextant_sim import seeding

        return list(seeding.events_for(self.setup, policy_set(profile)))

    def servers(self) -> list[ev.ServerRegistered]:
        return [ev.ServerRegistered(at=self.wall0, server_id=sid, platform=p.platform_id, capacity=p.capacity)
                for sid, p in self.setup.servers]

    def observe(self, event: ev.Event, state: ClusterState) -> None:
        self.state = state
        if isinstance(event, ev.WorkloadSubmitted) and event.workload_id not in self.setup.truths:
            truth = self._truth_of(event.workload_id, event.spec)
            if truth is not None:
                self.setup.truths[event.workload_id] = truth
                self.ledger.add(Record(workload_id=event.workload_id, family=truth.family, group="",
                                       kind=truth.kind.value, best_effort=event.best_effort,
                                       submitted_at=event.at, ideal_s=truth.ideal_s,
                                       needed_cores=truth.needed_cores, requested_cores=truth.requested_cores))
        self.agent.on_event(event)
        if self.reissue_load and isinstance(event, kw.KwikenPlanDecided):
            self.world.set_reissue(event.workload_id, event.reissue_spent, self.now)

    def _reissues(self, wid: str) -> None:
        """With `reissue_load`: `wid`'s reissue share from the state's latest Kwiken plan (module doc)."""
        if not self.reissue_load:
            return
        svc = self.state.kwiken.get(wid)
        self.world.set_reissue(wid, 0.0 if svc is None or svc.plan is None else svc.plan.reissue_spent, self.now)

    def known(self, workload_id: str) -> bool:
        return workload_id in self.setup.truths

    def resolve(self, ref: str, workload_id: str = "") -> WorkloadTruth | None:
        """The ground truth `ref` names (module doc), None when none; a family is drawn afresh
        for `workload_id` (the same id draws the same instance)."""
        if ref in self._by_ref:
            return self._by_ref[ref]
        family, _, wid = ref.partition(":")
        if wid:
            truth = self._by_ref.get(wid)
            return truth if truth is not None and truth.family == family else None
        if ref not in self.setup.gt.families:
            return None
        scale = min((g.duration_scale for g in self.setup.scenario.groups), default=1.0)
        return generate(f"{ref}:{workload_id or ref}", ref, rng_for(self.setup.seed, "family", workload_id or ref),
                        self.setup.cat, concept_matrix(self.setup.cat, self.setup.gt), self.setup.gt,
                        DrawOptions(duration_scale=scale))

    def _truth_of(self, workload_id: str, spec: object) -> WorkloadTruth | None:
        if isinstance(spec, TwinWorkloadRef):
            return self.resolve(spec.ref, workload_id)
        if isinstance(spec, ContainerSpec):
            named = spec.image or (spec.command[0] if spec.command else "")
            family = named.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]
            return self.resolve(family, workload_id) if family in self.setup.gt.families else None
        return None

    def resume(self, state: ClusterState, wall: float) -> list[ev.Event]:
        self.state = state
        self.now = self.virtual(wall)
        for wid, w in sorted(state.workloads.items()):
            if not self.known(wid):
                continue
            if w.phase == WorkloadPhase.PLACED and w.allocation is not None:
                # decided but never started (the previous agent died in between): start it now
                self.agent.execute(cmd.StartWorkload(workload_id=wid, allocation=w.allocation), "resume")
                self._started[wid] = w.allocation
                self._reissues(wid)
                continue
            if w.phase == WorkloadPhase.RUNNING and w.allocation is not None:
                self.world.start(wid, self.setup.truths[wid], w.allocation, self.now)
                self.agent._observing.discard(wid)
                self.agent.execute(cmd.StartWorkload(workload_id=wid, allocation=w.allocation), "resume")
                self._started[wid] = w.allocation
                self._reissues(wid)
            elif w.phase == WorkloadPhase.PROFILING and w.profile_runs:
                self.agent.execute(cmd.ExecuteProfileRuns(workload_id=wid, runs=w.profile_runs), "resume")
                self._profiled.add(_plan_key(wid, w.profile_runs))
        # WorkloadStarted of a RUNNING workload is a duplicate fact (folded as a no-op); keep it for PLACED
        return [f for f in self._take() if not (isinstance(f, ev.WorkloadStarted)
                                                 and state.workloads[f.workload_id].phase == WorkloadPhase.RUNNING)]

    def execute(self, command: cmd.Command, state: ClusterState, wall: float) -> list[ev.Event]:
        self.state = state
        self.now = self.virtual(wall)
        if command.workload_id not in state.workloads:
            return []
        if not self.known(command.workload_id):
            return [ev.WorkloadFailed(at=wall, workload_id=command.workload_id,
                                      reason="agent: not a workload of this twin")]
        misfit = self._misfit(state.workloads[command.workload_id])
        if misfit:
            return [ev.WorkloadFailed(at=wall, workload_id=command.workload_id, reason=f"agent: {misfit}")]
        if self._already_done(command):
            return []  # a redelivered command after a restart: executing it twice would repeat facts
        self.agent.execute(command, "command")
        if isinstance(command, cmd.StartWorkload | cmd.ResizeWorkload):
            self._started[command.workload_id] = command.allocation
            self._reissues(command.workload_id)
        elif isinstance(command, cmd.ExecuteProfileRuns):
            self._profiled.add(_plan_key(command.workload_id, command.runs))
        return self._take()

    def _misfit(self, w: WorkloadState) -> str:
        """Why the twin cannot run `w` as submitted ("" when it can): the twin workload's kind
        decides what it measures, so the submitted kind must be the twin workload's."""
        truth = self.setup.truths[w.workload_id]
        if truth.kind != w.kind:
            return f"the twin workload is a {truth.kind.value} ({truth.family}), submitted as {w.kind.value}"
        return ""

    def _already_done(self, command: cmd.Command) -> bool:
        wid = command.workload_id
        if isinstance(command, cmd.ExecuteProfileRuns):
            # a run of this workload is in flight, or these runs were launched by this process
            # already — by `resume` before the consumer caught up with their `ProfilingPlanned`:
            # running them again would report the profiling twice, and a second
            # `ProfilingCompleted` reclassifies the workload in place and re-plans it
            return wid in self.agent._profiles or _plan_key(wid, command.runs) in self._profiled
        if isinstance(command, cmd.StartWorkload):
            return wid in self.world.active and self._started.get(wid) == command.allocation
        return False

    def advance(self, state: ClusterState, wall: float) -> tuple[list[tuple[str, list[ev.Event]]], list[RawSample]]:
        self.state = state
        target = self.virtual(wall)
        out: list[tuple[str, list[ev.Event]]] = []
        while self._heap and self._heap[0][0] <= target:
            at, _p, seq, kind, key, version = heapq.heappop(self._heap)
            self.now = max(self.now, at)
            if key in self._set_aside:
                continue
            try:
                if kind == "fail":
                    self.agent.fail_server(self.setup.failures[int(key)].server_id)
                elif kind == "recover":
                    self.agent.recover_server(self.setup.failures[int(key)].server_id)
                else:
                    self.agent.happening(kind, key, version)
            except Exception as exc:  # no poison pill: the workload is set aside, the clock goes on
                self._facts = [self._quarantined(kind, key, version, exc, self.wall0 + at / self.speed)]
            facts = self._take()
            if facts:
                out.append((f"{kind}:{key}:{version}:{seq}", facts))
        self.now = target
        samples, self._samples = self._samples, []
        return out, samples

    def _quarantined(self, kind: str, key: str, version: int, exc: Exception, at: float) -> ev.RecordQuarantined:
        """A happening whose handling raised: `RecordQuarantined` naming it (its workload then fails
        with reason `quarantined` in the fold), and the workload leaves the world so it cannot raise
        again (`sextant_kit.quarantine`)."""
        wid = key if key in self.state.workloads else None
        if wid is not None:
            self._set_aside.add(wid)
            self.world.stop(wid, self.now)
        return ev.RecordQuarantined(at=at, consumer="agent-clock", record_id=f"{kind}:{key}:{version}",
                                    record_type=kind, workload_id=wid, error=f"{type(exc).__name__}: {exc}"[:2000])

    def _take(self) -> list[ev.Event]:
        facts, self._facts = self._facts, []
        return facts


def _plan_key(workload_id: str, runs: Sequence[ev.ProfileRun]) -> tuple[str, tuple[str, ...]]:
    """One profiling plan of a workload: its run ids are derived from the plan's decision, so a
    re-profiling (reclassification) has others."""
    return workload_id, tuple(r.run_id for r in runs)
