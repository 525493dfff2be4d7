"""`Adaptive`: the reprovisioner of `sextant-adaptive` — monitoring, detection and the adjustment ladder as
pure decisions (Quasar §4.1, §4.3; Paragon §3.4, §3.6).

Inputs (routed by the process manager, `sextant_core.process`):

| command | from | what it decides |
|---|---|---|
| `AssessObservation` | every `PerformanceObserved` | reactive detection; services: load-driven scaling and reclaim |
| `ReviewWorkload("probe_round")` | a `Tick` that starts a probe round | proactive sample → `ProbeRequested` |
| `AssessProbe` | `InterferenceProbed` | significant change → `ReclassificationRequested`; straggler → relaunch |
| `AssessTasks` | `TasksObserved` | a node that makes a task straggle → in-place `ProbeRequested(purpose="straggler")` |

Outputs are decision events (`ReclassificationRequested`, `ProbeRequested`, `AllocationAdjusted`,
`MigrationDecided`) — plus `WorkloadRevoked("evicted")` for a best-effort co-runner killed to make
room, always after the decision event that causes it, so replay re-derives and checks it.

**Batch and analytics** (reactive): a deviation (`detection.deviation`) below the estimate by the
margin means the classification no longer describes the workload — a phase change or a
mis-classification — so it is reclassified in place (Quasar §4.1: "reclassifies the workload at
its current state"; the re-plan that follows is the planner's, `PlaceWorkload("reclassified")`).
A deviation below the target that the estimate explains means the allocation is short: the
ladder runs — scale up in place → evict best-effort co-runners when their cores let it grow →
scale out (`scale_out_kinds`: services only by default) → migrate if the profile's planner finds a
better allocation whose gain repays the cost.

Ladder 8.16 (not the default): the step detector re-baselines at resident changes only, tests a
window the agent closed at one (a split report ran before it), and does not claim a step a
co-resident's own telemetry explains (it moved more, the same way, across the window's start),
judged once the co-residents have reported past the window (`step_attribution`).

**Services** (latency-critical; Quasar: "a significant load increase of a user-facing
workload"): utilisation u = served load / the estimated capacity of the allocation. If the
latency is off while u is below `target_utilisation`, best-effort co-runners are evicted first
(interference). u above `scale_up_utilisation`, the QoS missed, or p99 above `hot_latency` of the
bound adds capacity (more cores in place → evict best-effort for their cores → one more node at a
time, on best-effort cores if need be, sized so u lands near `target_utilisation`); u below
`scale_down_utilisation` with the QoS met and p99 below `cool_latency` of the bound reclaims
(whole nodes, then cores — only while the rest keeps u ≤ target). Moving part of a stateful
service's load is microshard migration (`ladder.migration_cost`), never a whole copy. Ladder 8.7
(`latency_calibration`): once the service's own (load, p99) points fit its weakest node's queueing
tail (`calibration.fit`), the capacity is the load at which 99 % of its requests meet the bound
on that allocation (`calibrated_*` thresholds; no p99 band), and growth and reclaim are sized on it.
Ladder 8.9 (`calibration_demonstrated_latency`): a fit above `calibration_max_factor` × the
estimate is used where the same servers have carried more than the estimate per node with the
p99 well within the bound, capped at that factor × what they carried — a conservative estimate is
corrected upward only as far as the service's own points show, a step at a time. Ladder 8.11 (not the
default): a reclaim gives back at most half the nodes at once (`reclaim_max_share`), the first hour's
reactive cool band is the forecast's, and a service grows in place only for a predicted gain of
`service_scale_up_min_gain` (else it scales out). Ladder 8.15 (not the default): where a reclaim can
drop no node whole, the weakest nodes consolidate onto fewer, stronger free servers
(`consolidate_max_moves`), with 8.11's stepped reclaim and first-hour cool band and half the
forecast's margin (`forecast_z` 0.5).

**Stragglers** (Quasar §4.3; ladder 8.8, `task_views.find`): a node effect — the node's work rate
fallen ≥ 1.5× between the job's two latest task views (and ≥ 1.5× the other nodes' fall), or, at a
node's first view, ≥ 1.5× below the job's other nodes (rates relative to what the classification
expects of each node) — that puts one of its tasks' progress rate (from its own progress and age)
below half the job's median, and would not without it → an in-place probe of that node next to the
job's fastest other node (alone: against its own profiling's measurements, and a second probe
must agree) → tolerated scores > 20 % lower (with a reference, on no source with room that holds)
→ `AllocationAdjusted("relaunch")` moves that node's tasks to the server `ladder.extra_node`
picks. Ladder 8.12 (in the default 8.16) tests any task of the node, not only its slowest
(`straggler_any_task`), and also takes a reference probe whose scores are more likely under the
slowdown the view measured than under none (`straggler_likelihood_nats`). Ladders 8.4–8.5 read one
view and the job's ratio (`straggler_rule` "progress"), ≤ 8.3 tasks ≥ 1.5× slower than the median
("rate").

[IMPL CHOICE] latency-critical services are not in the proactive sample: their changes are load
changes, which the load rules above follow at every observation, and a reclassification re-plans
them at their peak target (measured on quasar-memcached-diurnal: probe false positives re-planned
memcached every ~50 minutes, undoing the reclaim). [IMPL CHOICE] best-effort workloads are never
adjusted (no guarantees, Quasar §6), and a
workload is reclassified at most once per `reclassify_gap_s` (counted from its last
classification), so one that simply cannot meet its target does not re-profile forever.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import (
    Allocation,
    Assignment,
    CompletionTimeTarget,
    DeadlineTarget,
    DecisionTrace,
    InstructionRateTarget,
    ThroughputLatencyTarget,
)

from ..planning.model import PerformanceModel
from ..policies import (
    ObservationAssessor,
    PlacementOutcome,
    Planner,
    ProbeAssessor,
    ReplanAssessor,
    TaskAssessor,
)
from ..state.evolve import OBSERVED_KEPT
from ..state.model import ClusterState, TaskView, WorkloadState
from . import ladder
from .calibration import LatencyFit, fit
from .detection import (
    SOURCES,
    ProbeChange,
    Step,
    combined_change,
    deviation,
    headroom_sources,
    in_sample,
    measured_scores,
    probe_change,
    probe_round,
    probe_sources,
    sensitive_sources,
    shift_across,
    step_change,
    straggler_change,
    straggler_contradicted,
    straggler_likelihood,
)
from .estimate import estimate, performance_model, predicted
from .forecast import ForecastParams, LoadForecast, forecast
from .params import AdaptationParams

if TYPE_CHECKING:
    from ..context import DecisionContext

VERSION = "8.16"  # 8.16 = 8.14 (8.10 with 8.12's stragglers and 8.13's batch moves) with a reactive detector that re-baselines at resident changes only
# the proactive probing of ladders up to 8.5: the 20 % rotation, two sources, the largest change
# against the profiling measurements
_ROTATION = {"probe_policy": "rotation", "probe_test": "largest", "neighbour_tolerated_margin": None}
# ladder version -> its parameters (the current one and every earlier one still replayed);
# 8.16 (the default): 8.14 with reactive steps re-baselined at resident changes only
#       (`neighbour_gate` None), a window closed by a split report tested (`split_reports`), and a
#       step a co-resident's own telemetry explains not claimed (`step_attribution`, `attribution_wait`);
# 8.15 (not the default): 8.14 with services' consolidation onto fewer stronger servers
#       (`consolidate_max_moves`), 8.11's stepped reclaim and first-hour cool band, and half the
#       forecast's margin (`forecast_z` 0.5);
# 8.14: 8.12 and 8.13 together;
# 8.12: stragglers: any task of a slowed node tested (`straggler_any_task`), a reference probe read
#       against the viewed slowdown (`straggler_likelihood_nats`);
# 8.13: batch workloads moved only off a measured shortfall (`batch_move_below`);
# 8.11 (not in the default: no held-out gain): services' reclaim stepped (`reclaim_max_share`), the
#       first hour's cool band the forecast's (`cool_latency` 0.85), no in-place scale-up below
#       `service_scale_up_min_gain`;
# 8.10: a re-plan after a reclassification moves only for a predicted gain (`replan_min_gain`);
# 8.9: a latency fit above the estimate used as far as demonstrated (`calibration_demonstrated_latency`);
# 8.8: stragglers from two consecutive task views (`straggler_rule` "views");
# 8.7: services sized on a capacity calibrated on their latency (`latency_calibration`);
# 8.6: in-place probe baselines and a combined multi-source probe test (`probe_policy`);
# 8.5: model-free growth counted in nodes (`blind_growth_in_nodes`);
# 8.4: stragglers by a node effect on tasks' progress rates (`straggler_rule`);
# 8.3: a QoS miss at a load the allocation served evicts first (`demonstrated_capacity`)
_PRE_8_8 = AdaptationParams(straggler_confirm_alone=False, straggler_every_source=False)  # 8.8's probe rules off
_PRE_8_6 = replace(_PRE_8_8, **_ROTATION)  # type: ignore[arg-type]
_LADDER_8_8 = AdaptationParams(latency_calibration=True)
_LADDER_8_9 = replace(_LADDER_8_8, calibration_demonstrated_latency=0.85)
_LADDER_8_10 = replace(_LADDER_8_9, replan_min_gain=0.05, migrate_min_gain=0.25, scale_up_min_gain=0.10)
_LADDER_8_12 = replace(_LADDER_8_10, straggler_any_task=True, straggler_likelihood_nats=0.0)
_LADDER_8_14 = replace(_LADDER_8_12, batch_move_below=0.8)
LADDERS: dict[str, AdaptationParams] = {"8.16": replace(_LADDER_8_14, neighbour_gate=None, split_reports=True,
                                                        step_attribution=1.0, attribution_wait=True),
                                        "8.15": replace(_LADDER_8_14, consolidate_max_moves=2,
                                                        reclaim_max_share=0.5, cool_latency=0.85, forecast_z=0.5),
                                        "8.14": _LADDER_8_14,
                                        "8.13": replace(_LADDER_8_10, batch_move_below=0.8),
                                        "8.12": _LADDER_8_12,
                                        "8.11": replace(_LADDER_8_10, reclaim_max_share=0.5, cool_latency=0.85,
                                                        service_scale_up_min_gain=0.10),
                                        "8.10": _LADDER_8_10,
                                        "8.9": _LADDER_8_9,
                                        "8.8": _LADDER_8_8,
                                        "8.7": replace(_PRE_8_8, straggler_rule="progress", latency_calibration=True),
                                        "8.6": replace(_PRE_8_8, straggler_rule="progress"),
                                        "8.5": replace(_PRE_8_6, straggler_rule="progress"),
                                        "8.4": replace(_PRE_8_6, straggler_rule="progress", blind_growth_in_nodes=False),
                                        "8.3": replace(_PRE_8_6, straggler_rule="rate", blind_growth_in_nodes=False),
                                        "8.2": replace(_PRE_8_6, demonstrated_capacity=False, straggler_rule="rate",
                                                       blind_growth_in_nodes=False)}
AGAIN = "-again"  # the probe id suffix of a straggler probe's confirmation (ladder 8.8, alone)
Capacity = Callable[[Allocation], float]  # an allocation's capacity (requests/s within the bound)
HORIZON_S = 1800.0  # remaining time assumed for open-ended targets (rates, services) in the repay rule


class Adaptive(ObservationAssessor, ProbeAssessor, TaskAssessor, ReplanAssessor):
    """The full ladder; `planner` (the profile's own) proposes migrations."""

    def __init__(self, planner: Planner | None = None, params: AdaptationParams | None = None) -> None:
        self.planner = planner
        self.params = params or AdaptationParams()

    # --- entry points (decide.py; the assessor capabilities of policies.py) ---------------------

    def review(self, state: ClusterState, w: WorkloadState, reason: str,
               ctx: DecisionContext) -> Sequence[ev.Event]:
        if reason == "probe_round" and not w.best_effort:
            return self._proactive(w, ctx)
        return ()

    def observe(self, state: ClusterState, w: WorkloadState, c: cmd.AssessObservation,
                ctx: DecisionContext) -> Sequence[ev.Event]:
        if w.best_effort or w.allocation is None or w.classification is None:
            return ()
        out = self._observe(state, w, c, ctx)
        if self.params.probe_policy != "baseline" or any(isinstance(e, ev.ReclassificationRequested) for e in out):
            return out
        base = self._baseline_probe(w, ctx)  # 8.6: the in-place baseline after a reset
        return (*out, base) if base is not None else out

    def _observe(self, state: ClusterState, w: WorkloadState, c: cmd.AssessObservation,
                 ctx: DecisionContext) -> Sequence[ev.Event]:
        if isinstance(w.target, ThroughputLatencyTarget):
            return self._service(state, w, c, ctx)
        step = self._step(state, w) if w.kind.value in self.params.step_kinds else None
        if step is not None:
            return (self._reclassify(w, ctx, f"reactive {step.describe()}"),)
        est = estimate(state, w, ctx.at)
        dev = deviation(c.ratio_to_target, None if est is None else est.ratio, self.params)
        if dev is None:
            return ()
        if dev.kind == "below_estimate" or (est is not None and c.ratio_to_target < est.ratio * (1 - self.params.estimate_margin)):
            if self.params.estimate_reclassify and self._reclassify_due(w, ctx):
                return (self._reclassify(w, ctx, f"reactive {dev.describe()}"),)
            return ()
        if w.allocated_at is not None and ctx.at - w.allocated_at < self.params.adjust_gap_s - 1e-9:
            return ()  # the latest allocation change is not measured yet
        if len(w.observed) >= 2 and w.observed[-1][0] - w.observed[-2][0] < self.params.ladder_min_window_s - 1e-9:
            return ()  # too short a window (split at a neighbour's change) to size an adjustment on
        return self._more(state, w, ctx, f"reactive {dev.describe()}", need=1.0 / max(c.ratio_to_target, 1e-3))

    def replan(self, state: ClusterState, w: WorkloadState, proposed: PlacementOutcome,
               ctx: DecisionContext) -> PlacementOutcome:
        """Ladder 8.10 (`replan_min_gain`): after a reclassification, keep `w` on its current
        allocation unless the planner's proposal is predicted better — on other servers by
        `replan_min_gain` (relative, the new classification's estimate of platform and cores) with
        a gain that repays the move (`ladder.repays`, as the migrate rung) — staying valued at what it
        measures (`_measured_factor`: interference the estimate leaves out); on the same servers,
        only when it grows. No proposal keeps it running where it is (never deferred, which
        pauses it). Kept: its current allocation, re-decided in place (the twin moves nothing).
        Off (None, ≤ 8.8) or with a server of its allocation down: the proposal as it is. Ladder
        8.13 (`batch_move_below`, `_stays`): a batch workload measuring at least that share of its
        estimate where it runs is not moved to other servers at all."""
        p = self.params
        cur_alloc = w.allocation
        if p.replan_min_gain is None or cur_alloc is None or w.classification is None or not cur_alloc.assignments \
                or any((s := state.servers.get(a.server_id)) is None or not s.up for a in cur_alloc.assignments):
            return proposed
        m = performance_model(state, w)
        cur = predicted(state, w, cur_alloc, m)
        new_alloc = proposed.allocation
        if new_alloc is None:
            why = "no proposal: kept where it runs"
        else:
            new = predicted(state, w, new_alloc, m)
            if set(new_alloc.servers) == set(cur_alloc.servers):
                if new_alloc.total_cores >= cur_alloc.total_cores and new > cur * (1.0 + 1e-9):
                    return proposed
                why = f"in place, predicted {new:.4g} vs {cur:.4g} now: kept"
            else:
                # staying is worth what it measures: the latest observation on this allocation
                # against the new classification's estimate (interference the estimate leaves out)
                factor = self._measured_factor(state, w, ctx.at)
                if self._stays(w, factor):
                    return PlacementOutcome(allocation=cur_alloc, predicted_performance=round(cur, 6),
                                            trace=proposed.trace,
                                            detail={**proposed.detail, "replan": f"measured {factor:.3g} of the "
                                                    f"estimate where it runs: kept (batch_move_below)"})
                cur *= factor
                service = isinstance(w.target, ThroughputLatencyTarget)
                cost = ladder.migration_cost(cur_alloc, new_alloc, service, p)
                ok, _gain = ladder.repays(cur, new, cost, self._remaining(w, ctx), p)
                if ok and new >= cur * (1.0 + p.replan_min_gain):
                    return proposed
                why = f"move predicted {new:.4g} vs {cur:.4g} staying ({cost.describe()}): kept"
        return PlacementOutcome(allocation=cur_alloc, predicted_performance=round(cur, 6), trace=proposed.trace,
                                detail={**proposed.detail, "replan": why})

    def _stays(self, w: WorkloadState, factor: float) -> bool:
        """Ladder 8.13 (`batch_move_below`): a batch workload measuring at least that share of its
        estimate where it runs is not moved to other servers (re-plan or migrate rung)."""
        below = self.params.batch_move_below
        return below is not None and w.kind.value in self.params.step_kinds and factor >= below

    @staticmethod
    def _measured_factor(state: ClusterState, w: WorkloadState, at: float) -> float:
        """min(1, the latest observed ratio to target on the current allocation / the
        classification's estimate for it): what the workload loses where it runs to what the
        estimate leaves out (interference); 1 without such an observation or estimate."""
        since = w.allocated_at if w.allocated_at is not None else -math.inf
        obs = [r for t, r, _ in w.observed if t > since and r > 0]
        est = estimate(state, w, at)
        if not obs or est is None or est.ratio <= 0:
            return 1.0
        return min(1.0, obs[-1] / est.ratio)

    def assess_probe(self, state: ClusterState, w: WorkloadState, c: cmd.AssessProbe,
                     ctx: DecisionContext) -> Sequence[ev.Event]:
        p = self.params
        if c.purpose == "straggler":
            own = {src: t for src, (t, _c) in measured_scores(w.samples).items()}
            if c.reference_tolerated:
                change = straggler_change(c.tolerated, c.reference_tolerated, p.straggler_change, p.probe_floor)
                if change is None and p.straggler_likelihood_nats is not None and c.server_id is not None:
                    change = self._likely(state, w, c, ctx)
                if change is not None and p.straggler_every_source and straggler_contradicted(
                        c.tolerated, c.reference_tolerated, p.straggler_change, p.probe_floor) is not None:
                    return ()
            elif p.straggler_rule in ("progress", "views") and own:
                # 8.4: alone, against its own profiling's measurements, one-sided like the control
                change = straggler_change(c.tolerated, own, p.straggler_change, p.probe_floor)
            else:
                change = probe_change(w.classification, c.tolerated, c.caused, p.straggler_change, p.probe_floor)
            if change is None or c.server_id is None:
                return ()
            again = c.probe_id.endswith(AGAIN)
            if not c.reference_tolerated and p.straggler_confirm_alone and not again and own:
                # 8.8: alone, its control is a profiling run of another time, as noisy as the
                # probe: a second probe (a fresh measurement) must agree before the relaunch
                srcs = tuple(src for src in SOURCES if src in c.tolerated)
                return (ev.ProbeRequested(at=ctx.at, workload_id=w.workload_id,
                                          decision=ctx.record(f"straggler-probe-{c.server_id}", w.workload_id),
                                          probe_id=f"{c.probe_id}{AGAIN}", sources=srcs or ("memory_bw",),
                                          purpose="straggler", server_id=c.server_id,
                                          reason=f"confirm: in-place {change.describe()}"),)
            return self._relaunch(state, w, c.server_id, ctx, f"straggler: in-place {change.describe()}")
        if p.probe_test == "combined":
            return self._combined(w, c, ctx)
        change = probe_change(w.classification, c.tolerated, c.caused, p.probe_change, p.probe_floor,
                              measured_scores(w.samples), p.probe_scores)
        if change is None or not self._reclassify_due(w, ctx):
            return ()
        return (self._reclassify(w, ctx, f"proactive probe {c.probe_id}: {change.describe()}"),)

    def _likely(self, state: ClusterState, w: WorkloadState, c: cmd.AssessProbe,
                ctx: DecisionContext) -> ProbeChange | None:
        """Ladder 8.12: the probe confirms the slowdown its task view measured
        (`detection.straggler_likelihood` ≥ `straggler_likelihood_nats`): the source that fell
        most (relative) as the change shown, None otherwise."""
        assert c.server_id is not None and self.params.straggler_likelihood_nats is not None
        f = self._viewed_slowdown(state, w, c.server_id, ctx.at)
        nats = None if f is None else straggler_likelihood(c.tolerated, c.reference_tolerated, f, self.params.probe_sd)
        if nats is None or nats < self.params.straggler_likelihood_nats:
            return None
        falls = [ProbeChange(src, "tolerated", float(c.reference_tolerated[src]), float(c.tolerated[src]))
                 for src in SOURCES if src in c.tolerated and src in c.reference_tolerated]
        return max((x for x in falls if x.measured < x.recorded), key=lambda x: x.relative, default=None)

    # --- ladder 8.6: in-place baselines, the combined probe test ---------------------------------

    def _reset_at(self, w: WorkloadState) -> float:
        """The latest change of what the workload runs as or where: when its classification
        starts to describe it (`classified_from`) or its latest allocation change."""
        cls_from = w.classified_from if w.classified_from is not None else (
            w.classification.at if w.classification is not None else -math.inf)
        return max(cls_from, w.allocated_at if w.allocated_at is not None else -math.inf)

    def _in_place(self, w: WorkloadState, server: str | None, sources: tuple[str, ...],
                  exclude: str | None = None) -> list[tuple[float, dict[str, float]]]:
        """`w`'s proactive probes on `server` since its latest reset that ramped exactly `sources`
        (time, tolerated scores), oldest first; `exclude`: a probe id left out (the one assessed)."""
        since = self._reset_at(w) - 1e-9
        return [(at, dict(tol)) for at, pid, sv, tol in w.probed
                if at >= since and sv == server and pid != exclude and {src for src, _ in tol} == set(sources)]

    def _probing(self, w: WorkloadState) -> tuple[str, ...] | None:
        """The sources 8.6 probes `w` on, or None when it is not probed now: only running batch
        workloads (`step_kinds`) with a classification that is not being replaced."""
        if w.classification is None or w.allocation is None or isinstance(w.target, ThroughputLatencyTarget) \
                or w.kind.value not in self.params.step_kinds or not w.allocation.assignments:
            return None
        pending = w.reclassify_requested_at is not None and w.reclassify_requested_at > w.classification.at
        if pending:
            return None
        prior = self.params.probe_prior
        return tuple(s for s in SOURCES if s in prior) if prior else sensitive_sources(w.classification,
                                                                                       self.params.baseline_sources)

    def _probe(self, w: WorkloadState, ctx: DecisionContext, probe_id: str, sources: tuple[str, ...],
               reason: str) -> ev.Event:
        assert w.allocation is not None
        return ev.ProbeRequested(at=ctx.at, workload_id=w.workload_id, decision=ctx.record("probe", w.workload_id),
                                 probe_id=probe_id, sources=sources, purpose="proactive",
                                 server_id=w.allocation.assignments[0].server_id, reason=reason)

    def _baseline_probe(self, w: WorkloadState, ctx: DecisionContext) -> ev.Event | None:
        """8.6: the first observation after a reset without an in-place probe on the current
        sources asks for one (the baseline the next probes are compared with)."""
        srcs = self._probing(w)
        if srcs is None:
            return None
        assert w.allocation is not None
        if self._in_place(w, w.allocation.assignments[0].server_id, srcs):
            return None
        return self._probe(w, ctx, f"base-{int(ctx.at)}", srcs, "in-place baseline after a reset")

    def _combined(self, w: WorkloadState, c: cmd.AssessProbe, ctx: DecisionContext) -> Sequence[ev.Event]:
        """8.6's verdict (`detection.combined_change`) against the in-place baseline; a change
        reclassifies at once (the reset that follows starts a new baseline)."""
        p = self.params
        srcs = tuple(s for s in SOURCES if s in c.tolerated)
        base = [tol for at, tol in self._in_place(w, c.server_id, srcs, exclude=c.probe_id) if at < ctx.at - 1e-9]
        change = combined_change(base, c.tolerated, p.probe_sd, p.probe_z)
        if change is None:
            return ()
        return (self._reclassify(w, ctx, f"proactive probe {c.probe_id}: {change.describe()}"),)

    def assess_tasks(self, state: ClusterState, w: WorkloadState, c: cmd.AssessTasks,
                     ctx: DecisionContext) -> Sequence[ev.Event]:
        from .stragglers import reference_server, slow_servers

        if w.allocation is None:
            return ()
        if self.params.straggler_rule in ("progress", "views"):
            return self._straggling(state, w, c, ctx)
        out: list[ev.Event] = []
        rates = self._normalised(state, w, c) if self.params.straggler_normalise else c.rates
        ref = reference_server(c.servers, rates)
        for i, sid in enumerate(slow_servers(c.servers, rates, c.progress, self.params.straggler_slowdown)):
            if sid not in w.allocation.servers:
                continue
            rec = ctx.record(f"straggler-probe-{sid}", w.workload_id)
            srcs = headroom_sources(w.classification, self.params.probe_sources)
            out.append(ev.ProbeRequested(at=ctx.at, workload_id=w.workload_id, decision=rec,
                                         probe_id=f"straggler-{int(ctx.at)}-{sid}-{i}", sources=srcs,
                                         purpose="straggler", server_id=sid,
                                         reference_server_id=ref if ref != sid else None,
                                         reason="task >= 1.5x slower than the median"))
        return out

    def _straggling(self, state: ClusterState, w: WorkloadState, c: cmd.AssessTasks,
                    ctx: DecisionContext) -> Sequence[ev.Event]:
        """Ladders 8.4 ("progress", `stragglers.straggling_nodes`) and 8.8 ("views",
        `task_views.find`): a node whose effect makes one of its tasks straggle is probed in
        place next to the job's fastest other node (normalised rates), as before."""
        assert w.allocation is not None
        p = self.params
        rates = self._normalised(state, w, c) if p.straggler_normalise else c.rates
        if p.straggler_rule == "views":
            from .task_views import view_of

            found = self._view_verdicts(w, view_of(ctx.at, c.servers, c.rates, c.progress, c.elapsed), rates)
        else:
            found = self._progress_rule(w, c, rates, ctx)
        speed: dict[str, list[float]] = {}
        for sv, r in zip(c.servers, rates, strict=False):
            speed.setdefault(sv, []).append(r)
        out: list[ev.Event] = []
        for i, (sid, factor, worst) in enumerate(found):
            if sid not in w.allocation.servers:
                continue
            peers = sorted((-float(np.median(v)), sv) for sv, v in speed.items() if sv != sid)
            ref = peers[0][1] if peers else None
            rec = ctx.record(f"straggler-probe-{sid}", w.workload_id)
            # alone, the control is its own profiling's measurements: probe those it tolerated best
            measured = measured_scores(w.samples)
            srcs = headroom_sources(w.classification, p.probe_sources)
            if ref is None and measured:
                best = sorted(measured, key=lambda src: (-measured[src][0], SOURCES.index(src)))[:p.probe_sources]
                srcs = tuple(src for src in SOURCES if src in best)
            out.append(ev.ProbeRequested(at=ctx.at, workload_id=w.workload_id, decision=rec,
                                         probe_id=f"straggler-{int(ctx.at)}-{sid}-{i}", sources=srcs,
                                         purpose="straggler", server_id=sid, reference_server_id=ref,
                                         reason=f"node {factor:.2f}x slower, a task at {worst:.2f} of the "
                                                f"job's median progress rate"))
        return out

    def _view_verdicts(self, w: WorkloadState, now: TaskView, rates: Sequence[float]) -> list[tuple[str, float, float]]:
        """Ladder 8.8's verdicts (`straggler_rule` "views", `task_views.find`) on the task view
        `now` (its normalised `rates`): (server, slowdown, worst share)."""
        from .task_views import find

        p = self.params
        since = w.allocated_at if w.allocated_at is not None else (w.started_at or 0.0)
        # alone with no earlier view, only its very first window is left to the probe (not
        # the first view of a relaunched node's copies, which restart from zero)
        first = w.started_at is not None and since <= w.started_at + 1e-9
        if since >= now.at - 1e-9:
            # changed just now (the ladder answering this very window): the view predates
            # the change, so the one before it describes the same slots (`comparable` checks)
            since = -math.inf
        return [(v.server, v.factor, v.worst) for v in find(
            w.task_views, now, rates, since, slowdown=p.straggler_slowdown, half=p.straggler_half,
            fall=p.straggler_window_fall, alone_first=p.straggler_first_window and first,
            any_task=p.straggler_any_task)]

    def _viewed_slowdown(self, state: ClusterState, w: WorkloadState, server: str, at: float) -> float | None:
        """The slowdown the job's task view at `at` (its latest, the one that asked for the probe)
        measured for `server`; None when that view is not the latest or did not flag it."""
        now = w.task_views[-1] if w.task_views else None
        if now is None or abs(now.at - at) > 1e-9 or w.allocation is None:
            return None
        rates = self._normalised(state, w, now) if self.params.straggler_normalise else now.rates
        return next((f for sv, f, _ in self._view_verdicts(w, now, rates) if sv == server), None)

    def _progress_rule(self, w: WorkloadState, c: cmd.AssessTasks, rates: Sequence[float],
                       ctx: DecisionContext) -> list[tuple[str, float, float]]:
        """Ladder 8.4's verdicts (`straggler_rule` "progress"): (server, slowdown, worst share)."""
        from .stragglers import job_slowdown, new_slowdown, straggling_nodes

        p = self.params
        since = w.allocated_at if w.allocated_at is not None else (w.started_at or 0.0)
        first = w.started_at is not None and since <= w.started_at + 1e-9
        if since >= ctx.at - 1e-9 and len(w.observed) >= 2:
            # changed just now (the ladder answering this very window): the windows predate it
            since = w.observed[-2][0] - (w.observed[-1][0] - w.observed[-2][0])
        if not new_slowdown(w.observed, since, p.straggler_drop, first):
            return []
        alone = None
        rate_target = isinstance(w.target, InstructionRateTarget)
        if len(set(c.servers)) == 1 and w.started_at is not None and (
                rate_target or isinstance(w.target, CompletionTimeTarget)):
            required = None if rate_target else w.target.seconds
            alone = job_slowdown(w.observed, required, w.started_at, since, p.straggler_drop)
            if alone is None and first and p.straggler_first_window and len(w.observed) == 1:
                alone = math.inf  # its first window: no history to compare with, the probe decides
        return straggling_nodes(c.servers, c.rates, rates, c.progress, alone, slowdown=p.straggler_slowdown,
                                half=p.straggler_half)

    @staticmethod
    def _normalised(state: ClusterState, w: WorkloadState, c: cmd.AssessTasks | TaskView) -> tuple[float, ...]:
        """Task rates relative to what the classification expects of a slot on that node's
        platform and cores (node(p, c) / c): a node of a slower platform is not a straggler."""
        assert w.allocation is not None
        m = performance_model(state, w)
        per_slot: dict[str, float] = {}
        for a in w.allocation.assignments:
            s = state.servers.get(a.server_id)
            if s is not None:
                per_slot[a.server_id] = m.node(s.platform, a.cores) / max(a.cores, 1)
        return tuple(r / per_slot[sv] if per_slot.get(sv, 0.0) > 0 else r
                     for sv, r in zip(c.servers, c.rates, strict=False))

    # --- detection outcomes --------------------------------------------------------------------

    def _step(self, state: ClusterState, w: WorkloadState) -> Step | None:
        """The step test against the measured baseline (`detection.step_change`, `_step_test`).
        Ladder 8.16 (`step_attribution`): no second claim while one is pending (requested, not yet
        classified), and a step a co-resident's own telemetry explains is not claimed
        (`_explained`); with `attribution_wait`, a step is judged only once every such co-resident
        has reported past its window, else at the next observation (the window before the
        latest, tested as it was)."""
        p = self.params
        step = self._step_test(state, w, w.observed)
        if p.step_attribution is None or len(w.observed) < 2:
            return step
        asked = w.reclassify_requested_at if w.reclassify_requested_at is not None else -math.inf
        if w.classification is not None and asked > max(w.classification.at, w.classified_from or -math.inf):
            return None  # a claim is pending: its classification re-baselines
        if p.attribution_wait:
            if len(w.observed) >= 3 and asked < w.observed[-2][0] - 1e-6:  # not claimed at it already
                held = self._step_test(state, w, w.observed[:-1])
                if held is not None and not self._explained(state, w, held, w.observed[-3][0]):
                    return held
            if step is not None and not self._reported(state, w, w.observed[-1][0]):
                return None
        if step is None:
            return None
        return None if self._explained(state, w, step, w.observed[-2][0]) else step

    def _step_test(self, state: ClusterState, w: WorkloadState,
                   observed: Sequence[tuple[float, float, tuple[float, ...]]]) -> Step | None:
        """The step test of the latest of `observed` (`w.observed` or, ladder 8.16, the part of it
        up to an earlier observation). The reset is
        the latest of: when its classification starts to describe it (the reclassification's
        request — the step's own observation or the probe — else the classification's time) and
        its latest allocation change; neighbours re-baseline through the gate (or, with the gate
        None, any change of the residents of its servers: interference is not a phase). An own
        reset after the latest of `observed` leaves nothing to test."""
        assert w.allocation is not None
        if not observed:
            return None
        latest = observed[-1][0]
        cls_from = w.classified_from if w.classified_from is not None else (
            w.classification.at if w.classification is not None else -math.inf)
        # `started_at` is not a reset: a re-plan onto the same allocation re-starts it in place
        # and changes nothing it runs with; its first placement is `allocated_at`
        resets = [cls_from,
                  w.allocated_at if w.allocated_at is not None else -math.inf]
        if len(observed) < len(w.observed) and max(resets) > latest + 1e-6:
            return None
        gate = self.params.neighbour_gate
        if self.params.neighbour_reclass_reset:
            resets += [self._neighbour_reclassified(state, w)]
        if gate is None:
            changed = [s.residents_changed_at for sid in w.allocation.servers
                       if (s := state.servers.get(sid)) is not None]
            # 8.16: a change at (or after) the latest observation's time closed its window (the
            # agent's split report): that window ran before it, so the reset is the change
            # before, where the recorded pressure moved
            if self.params.split_reports and any(t >= latest - 1e-6 for t in changed):
                changed = [t for t in changed if t < latest - 1e-6] + [_pressure_moved(observed)]
            resets += changed
        # the first window starts at the start — unless the history is truncated, or `started_at`
        # is a later re-start (a re-plan onto the same allocation restarts it in place)
        first = w.started_at if len(w.observed) < OBSERVED_KEPT and w.observed \
            and w.started_at is not None and w.started_at < w.observed[0][0] else None
        p = self.params
        noise = (p.telemetry_sd, p.telemetry_sd_window_s, p.step_z) if p.telemetry_sd is not None else None
        tol = None
        if p.neighbour_tolerated_margin is not None and w.classification is not None:
            tol = (tuple(float(w.classification.tolerated.get(s, 100.0)) for s in SOURCES),
                   p.neighbour_tolerated_margin)
        return step_change(observed, max(resets), first, p.step_threshold, gate, w.allocated_pressure, noise,
                           p.neighbour_effect_z, tol)

    def _reported(self, state: ClusterState, w: WorkloadState, at: float) -> bool:
        """Ladder 8.16 (`attribution_wait`): has every co-resident of the step kinds with
        telemetry reported at or after `at` (so a change of its own before `at` shows)?"""
        return all(o.observed[-1][0] >= at - 1e-6 for o in self._co_residents(state, w))

    def _co_residents(self, state: ClusterState, w: WorkloadState) -> list[WorkloadState]:
        """The other residents of `w`'s servers of the step kinds that have telemetry, each once."""
        return ladder.co_residents(state, w, lambda o: o.kind.value in self.params.step_kinds and bool(o.observed))

    def _explained(self, state: ClusterState, w: WorkloadState, step: Step, start: float) -> bool:
        """Ladder 8.16 (`step_attribution`): does a co-resident of the step kinds explain `w`'s
        step, whose tested window starts at `start` — its own telemetry (since its own latest
        allocation change) moved the same way across `start` by at least `step_attribution` × the
        step? (Across every boundary of `w`'s windows since the step's baseline instead, tried on
        seed 1: reactive detection 0.86 → 0.80, false-claim share 0.07 → 0.05; not taken.)"""
        assert self.params.step_attribution is not None
        for o in self._co_residents(state, w):
            first = o.started_at if len(o.observed) < OBSERVED_KEPT and o.started_at is not None \
                and o.started_at < o.observed[0][0] else None
            shift = shift_across(o.observed, start, o.allocated_at, first)
            if shift is not None and shift * step.relative > 0 \
                    and abs(shift) >= self.params.step_attribution * abs(step.relative):
                return True
        return False

    @staticmethod
    def _neighbour_reclassified(state: ClusterState, w: WorkloadState) -> float:
        """Ladder 8.13 (`neighbour_reclass_reset`): the latest reclassification request of another
        resident of `w`'s servers (-inf: none)."""
        asked = [o.reclassify_requested_at for o in ladder.co_residents(state, w, lambda o: True)
                 if o.reclassify_requested_at is not None]
        return max(asked, default=-math.inf)

    def _proactive(self, w: WorkloadState, ctx: DecisionContext) -> Sequence[ev.Event]:
        k = probe_round(ctx.at, self.params)
        if self.params.probe_policy == "baseline":
            # 8.6: every probed workload, once every `probe_interval_s` after its baseline
            srcs = self._probing(w)
            if srcs is None:
                return ()
            assert w.allocation is not None
            done = self._in_place(w, w.allocation.assignments[0].server_id, srcs)
            if done and ctx.at - done[-1][0] < self.params.probe_interval_s - 1e-6:
                return ()
            why = f"proactive round {k}" if done else f"proactive round {k}: in-place baseline"
            return (self._probe(w, ctx, f"probe-{k}", srcs, why),)
        if w.classification is None or isinstance(w.target, ThroughputLatencyTarget) \
                or not in_sample(w.workload_id, k, self.params):
            return ()
        srcs = probe_sources(w.classification, ctx.rng(), self.params.probe_sources, measured_scores(w.samples))
        return (ev.ProbeRequested(at=ctx.at, workload_id=w.workload_id,
                                  decision=ctx.record("probe", w.workload_id), probe_id=f"probe-{k}",
                                  sources=srcs, purpose="proactive", reason=f"proactive sample, round {k}"),)

    def _reclassify_due(self, w: WorkloadState, ctx: DecisionContext) -> bool:
        last = w.classification.at if w.classification is not None else -math.inf
        return ctx.at - last >= self.params.reclassify_gap_s

    def _reclassify(self, w: WorkloadState, ctx: DecisionContext, reason: str) -> ev.Event:
        return ev.ReclassificationRequested(at=ctx.at, workload_id=w.workload_id,
                                            decision=ctx.record("reprovisioning", w.workload_id), reason=reason)

    # --- the ladder, upwards -------------------------------------------------------------------

    def _adjust(self, w: WorkloadState, ctx: DecisionContext, action: str, alloc: Allocation, reason: str,
                notes: tuple[str, ...] = ()) -> ev.Event:
        return ev.AllocationAdjusted(at=ctx.at, workload_id=w.workload_id,
                                     decision=ctx.record("reprovisioning", w.workload_id), action=action,
                                     allocation=alloc, reason=reason,
                                     trace=DecisionTrace(examined=len(alloc.assignments), notes=notes))

    def _more(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext, reason: str,
              need: float, capacity: Capacity | None = None) -> Sequence[ev.Event]:
        """Add capacity: `need` = wanted performance / current estimate (≥ 1); `capacity` (an
        allocation's capacity; default the classification's estimate) sizes a scale-out."""
        assert w.allocation is not None
        m = performance_model(state, w)
        up = ladder.scale_in_place(state, w, m, min_gain=self._up_gain(w))
        if up is not None:
            return (self._adjust(w, ctx, "scale_up", up, reason, ("in_place",)),)
        evicted = self._evict(state, w, m, ctx, reason, need_cores=True)
        if evicted:
            return evicted
        if w.kind.value in self.params.scale_out_kinds:
            out = self._scale_out(state, w, m, ctx, reason, need, capacity)
            if out:
                return out
        return self._migrate(state, w, m, ctx, reason)

    def _evict(self, state: ClusterState, w: WorkloadState, m: PerformanceModel, ctx: DecisionContext,
               reason: str, need_cores: bool = False) -> Sequence[ev.Event]:
        """Evict the best-effort co-runners on `w`'s servers and give `w` their cores. With
        `need_cores` (capacity is short, not interference), only if their cores let it grow."""
        assert w.allocation is not None
        victims = ladder.best_effort_on(state, w)
        if not victims:
            return ()
        if need_cores:
            mine = set(w.allocation.servers)
            gain: dict[str, int] = {}
            for v in victims:
                for a in v.allocation.assignments if v.allocation is not None else ():
                    if a.server_id in mine:
                        gain[a.server_id] = gain.get(a.server_id, 0) + a.cores
            if ladder.scale_in_place(state, w, m, extra_free=gain, min_gain=self._up_gain(w)) is None:
                return ()
        freed: dict[str, int] = {}
        taken: set[str] = set()
        moves: list[ev.Event] = []
        kills: list[ev.Event] = []
        for v in victims:
            assert v.allocation is not None
            mine = set(w.allocation.servers)
            new: list[Assignment] = []
            for a in v.allocation.assignments:
                if a.server_id in mine:
                    freed[a.server_id] = freed.get(a.server_id, 0) + a.cores
                    # one evicted workload per destination in a decision: the state does not yet
                    # count the cores the others of this decision take there
                    dest = ladder.extra_node(state, v, performance_model(state, v), a.cores, a.memory_gb,
                                             exclude=tuple(sorted(mine | set(v.allocation.servers) | taken)))
                    if dest is None:
                        break
                    taken.add(dest.server_id)
                    new.append(dest)
                else:
                    new.append(a)
            else:
                cost = ladder.migration_cost(v.allocation, Allocation(assignments=tuple(new)), False, self.params)
                moves.append(ev.MigrationDecided(
                    at=ctx.at, workload_id=v.workload_id, decision=ctx.record("eviction", v.workload_id),
                    allocation=Allocation(assignments=tuple(new), config=dict(v.allocation.config)),
                    cost_s=round(cost.seconds, 6), gain=0.0,
                    reason=f"evicted (best effort) to make room for {w.workload_id}"))
                continue
            kills.append(ev.WorkloadRevoked(at=ctx.at, workload_id=v.workload_id,
                                            reason=f"evicted (best effort) for {w.workload_id}"))
        up = ladder.scale_in_place(state, w, m, extra_free=freed)
        head = self._adjust(w, ctx, "evict", up if up is not None else w.allocation,
                            f"{reason}; evicted {len(victims)} best-effort co-runner(s)",
                            tuple(f"evict:{v.workload_id}" for v in victims))
        # moved co-runners first (their cores leave before w takes them), then w, then the killed
        return (*moves, head, *kills) if moves else (head, *kills)

    def _scale_out(self, state: ClusterState, w: WorkloadState, m: PerformanceModel, ctx: DecisionContext,
                   reason: str, need: float, capacity: Capacity | None = None) -> Sequence[ev.Event]:
        assert w.allocation is not None

        def cap_of(a: Allocation) -> float:
            return capacity(a) if capacity is not None else predicted(state, w, a, m)

        cur = cap_of(w.allocation)
        want = cur * max(need, 1.0)
        alloc = w.allocation
        per = alloc.assignments[0]
        cores = max(a.cores for a in alloc.assignments)
        added = 0
        now = cur
        over = not w.best_effort  # a guaranteed workload may take best-effort cores (Quasar §6)
        while now < want and len(alloc.assignments) < self.params.max_nodes:
            node = ladder.extra_node(state, w, m, cores, per.memory_gb, exclude=alloc.servers, over_best_effort=over)
            if node is None:
                break
            bigger = Allocation(assignments=(*alloc.assignments, node), config=dict(alloc.config))
            after = cap_of(bigger)
            if after <= now * 1.01:  # a node that adds nothing (a weak one binds the even split)
                break
            alloc, now, added = bigger, after, added + 1
        if added == 0 or cap_of(alloc) <= cur * 1.01:
            return ()
        kills = self._evicted_for(state, w, alloc.assignments[len(w.allocation.assignments):], ctx)
        notes = tuple(f"evict:{k.workload_id}" for k in kills)
        return (self._adjust(w, ctx, "scale_out", alloc, f"{reason}; +{added} node(s)", notes), *kills)

    def _migrate(self, state: ClusterState, w: WorkloadState, m: PerformanceModel, ctx: DecisionContext,
                 reason: str) -> Sequence[ev.Event]:
        assert w.allocation is not None
        if self.planner is None or self._stays(w, self._measured_factor(state, w, ctx.at)):
            return ()
        out = self.planner.place(state, w, ctx)
        if out.allocation is None or set(out.allocation.servers) == set(w.allocation.servers):
            return ()
        cur = predicted(state, w, w.allocation, m)
        new = predicted(state, w, out.allocation, m)
        service = isinstance(w.target, ThroughputLatencyTarget)
        cost = ladder.migration_cost(w.allocation, out.allocation, service, self.params)
        ok, gain = ladder.repays(cur, new, cost, self._remaining(w, ctx), self.params)
        batch = w.kind.value in self.params.step_kinds
        if not ok or (batch and new < cur * (1.0 + self.params.migrate_min_gain)):
            return ()
        return (ev.MigrationDecided(at=ctx.at, workload_id=w.workload_id,
                                    decision=ctx.record("reprovisioning", w.workload_id),
                                    allocation=out.allocation, cost_s=round(cost.seconds, 6),
                                    gain=round(gain, 6), reason=f"{reason}; migrate ({cost.describe()})",
                                    trace=out.trace),)

    def _up_gain(self, w: WorkloadState) -> float:
        """The predicted gain an in-place scale-up must bring: `scale_up_min_gain` for batch
        workloads (`step_kinds`, ladder 8.10), `service_scale_up_min_gain` for services (ladder
        8.11; 1 % before), 1 % otherwise (as ≤ 8.8)."""
        if w.kind.value in self.params.step_kinds:
            return self.params.scale_up_min_gain
        return self.params.service_scale_up_min_gain if isinstance(w.target, ThroughputLatencyTarget) else 0.01

    def _remaining(self, w: WorkloadState, ctx: DecisionContext) -> float:
        t = w.target
        if isinstance(t, CompletionTimeTarget):
            return max(t.seconds - (ctx.at - w.submitted_at), 0.0)
        if isinstance(t, DeadlineTarget):
            return max(t.at - ctx.at, 0.0)
        return HORIZON_S

    def _relaunch(self, state: ClusterState, w: WorkloadState, server_id: str, ctx: DecisionContext,
                  reason: str) -> Sequence[ev.Event]:
        assert w.allocation is not None
        old = next((a for a in w.allocation.assignments if a.server_id == server_id), None)
        if old is None:
            return ()
        m = performance_model(state, w)
        dest = ladder.extra_node(state, w, m, old.cores, old.memory_gb, exclude=w.allocation.servers)
        keep = [a for a in w.allocation.assignments if a.server_id != server_id]
        if dest is None and not keep:
            return ()
        alloc = Allocation(assignments=tuple([*keep, *([dest] if dest is not None else [])]),
                           config=dict(w.allocation.config))
        where = dest.server_id if dest is not None else "the remaining nodes"
        return (self._adjust(w, ctx, "relaunch", alloc, f"{reason}; tasks of {server_id} relaunched on {where}",
                             (f"straggler:{server_id}",)),)

    # --- services: load-driven scaling and reclaim ---------------------------------------------

    def _service(self, state: ClusterState, w: WorkloadState, c: cmd.AssessObservation,
                 ctx: DecisionContext) -> Sequence[ev.Event]:
        assert w.allocation is not None
        p = self.params
        m = performance_model(state, w)
        cap = predicted(state, w, w.allocation, m)
        # the offered load when telemetry knows it: the load served within the bound collapses
        # when the service saturates, and would read as idle capacity
        load = c.offered if c.offered is not None else c.value
        u = load / cap if cap > 0 else math.inf
        # the load capacity must hold until the next decision and a little after: the forecast's
        # upper bound over the horizon, never below the load now
        ahead = self._ahead(w, c, ctx.at)
        need_load = max(load, ahead.upper) if ahead is not None else load
        ua = need_load / cap if cap > 0 else math.inf
        bound = w.target.p99_latency_ms
        if ahead is None:
            up, down, target, hot_at, cool_at = (p.scale_up_utilisation, p.scale_down_utilisation,
                                                 p.target_utilisation, p.hot_latency, p.cool_latency)
        else:
            up, down, target, hot_at, cool_at = (p.forecast_scale_up_utilisation, p.forecast_scale_down_utilisation,
                                                 p.forecast_target_utilisation, p.forecast_hot_latency,
                                                 p.forecast_cool_latency)
        hot = c.p99_latency_ms is not None and c.p99_latency_ms > hot_at * bound
        cool = c.p99_latency_ms is None or c.p99_latency_ms < cool_at * bound
        calibrated = self._latency_fit(state, w, m, c, ctx.at)
        capacity: Capacity | None = None
        capped = False
        if calibrated is not None:
            # ladder 8.7: utilisation against the load at which the share of requests within the
            # bound falls to the target's, by the service's own latency; the fit's prediction
            # replaces the cool band
            def capacity(a: Allocation, f: LatencyFit = calibrated) -> float:
                return f.capacity(_node_estimates(state, a, m), bound, p.calibrated_share)

            now_cap = capacity(w.allocation)
            if now_cap > cap * p.calibration_max_factor and p.calibration_demonstrated_latency is not None:
                # ladder 8.9: above the estimate as far as the service has shown it on these
                # servers, a step beyond
                demos = self._shown_per_node(w, c, ctx.at)

                def limit(a: Allocation, est: float, demos: list[tuple[dict[str, int], float]] = demos) -> float:
                    # a node carries what it carried on the same server with no more cores
                    per = max((x for servers, x in demos if all(0 < servers.get(b.server_id, b.cores + 1) <= b.cores
                                                                 for b in a.assignments)), default=0.0)
                    return p.calibration_max_factor * max(est, _nodes_up(state, a) * per)

                if limit(w.allocation, cap) > cap * p.calibration_max_factor:
                    def capacity(a: Allocation, f: LatencyFit = calibrated) -> float:
                        fitted = f.capacity(_node_estimates(state, a, m), bound, p.calibrated_share)
                        return min(fitted, limit(a, predicted(state, w, a, m)))

                    now_cap = capacity(w.allocation)
                    capped = True
            if not cap / p.calibration_max_factor <= now_cap <= (cap * p.calibration_max_factor if not capped
                                                                 else math.inf):
                calibrated, capacity = None, None
        if calibrated is not None and capacity is not None:
            cap_factor = now_cap / cap if cap > 0 else 0.0
            cap = now_cap
            u = load / cap if cap > 0 else math.inf
            ua = need_load / cap if cap > 0 else math.inf
            up, down, target = (p.calibrated_scale_up_utilisation, p.calibrated_scale_down_utilisation,
                                p.calibrated_target_utilisation)
            # the weakest node's p99 past the bound is no miss while the others carry the share
            # (the fit counts it): the QoS measured and the fit's prediction decide
            hot, cool = False, True
        why = f"load: utilisation {u:.2f}, ratio {c.ratio_to_target:.3f}, p99 {c.p99_latency_ms or 0:.3f}/{bound:.3f} ms"
        if calibrated is not None:
            why += f"; calibrated ({calibrated.describe()}"
            why += f", as far as shown on these servers: {cap_factor:.2f} of the estimate)" if capped else ")"
        if ahead is not None:
            why += f"; {ahead.describe()}: utilisation ahead {ua:.2f}"
        served = self._served(w, ctx.at) if p.demonstrated_capacity else None
        shown = served is not None and load <= served
        if (c.ratio_to_target < 1.0 or hot) and (u < target or shown) and c.ratio_to_target >= 0.5:
            # the latency is off although the model sees spare capacity, or at a load this
            # allocation has served: interference first (below half the target the served load
            # says nothing about the offered one: capacity)
            seen = f"; served {served:.1f} with its QoS met on this allocation" if shown else ""
            evicted = self._evict(state, w, m, ctx, f"{why}{seen}; interference suspected")
            if evicted:
                return evicted
        if c.ratio_to_target < 1.0 or ua > up or hot:
            need = max(ua / target if cap > 0 else 2.0,
                       min(1.0 / max(c.ratio_to_target, 1e-3), 2.0), 1.05)
            more = self._more(state, w, ctx, why, need, capacity) if cap > 0 else ()
            if more or c.ratio_to_target >= 1.0:
                return more
            # the QoS is missed and the model finds nothing to add (it is wrong: no capacity
            # estimate, or nodes it thinks need no help): grow by measurement alone
            return self._grow_blind(state, w, m, ctx, f"{why}; model-free", c.ratio_to_target)
        if cap > 0 and ua < down and c.ratio_to_target >= 1.0 and cool:
            return self._reclaim(state, w, m, need_load, target, ctx,
                                 f"idle: utilisation {u:.2f}" + (f", ahead {ua:.2f}" if ahead is not None else "")
                                 + (" (calibrated" + (f", as far as shown: {cap_factor:.2f})" if capped
                                                      else ")") if calibrated is not None else ""), capacity)
        return ()

    def _latency_fit(self, state: ClusterState, w: WorkloadState, m: PerformanceModel, c: cmd.AssessObservation,
                     at: float) -> LatencyFit | None:
        """Ladder 8.7: the latency calibration (`reprovisioning.calibration.fit`) on `w`'s latest
        `calibration_points` (offered, p99, allocation) points, with this observation; None when
        off, without latency telemetry, or without a fit."""
        p = self.params
        if not p.latency_calibration or c.offered is None or c.p99_latency_ms is None or w.allocation is None:
            return None
        hist = w.latency_history
        if not hist or hist[-1][0] < at:
            hist = (*hist, (at, c.offered, c.p99_latency_ms, w.allocation))
        points = []
        for _t, offered, p99, alloc in hist[-p.calibration_points:]:
            k = _nodes_up(state, alloc)
            est = predicted(state, w, alloc, m)
            if k > 0 and est > 0:
                points.append((offered / k, est / k, p99))
        assert isinstance(w.target, ThroughputLatencyTarget)
        return fit(points, w.target.p99_latency_ms, p.calibration_min_points)

    def _shown_per_node(self, w: WorkloadState, c: cmd.AssessObservation,
                        at: float) -> list[tuple[dict[str, int], float]]:
        """Ladder 8.9: (the allocation's servers → cores, the load per node) of `w`'s latest
        `calibration_points` latency points (with this observation) whose p99 was at most
        `calibration_demonstrated_latency` of the bound. The slowest node's p99 well within the
        bound means every node carried that load with its QoS: so can any of those nodes again."""
        p = self.params
        assert isinstance(w.target, ThroughputLatencyTarget) and w.allocation is not None
        assert p.calibration_demonstrated_latency is not None
        ceiling = p.calibration_demonstrated_latency * w.target.p99_latency_ms
        hist = w.latency_history
        if c.offered is not None and c.p99_latency_ms is not None and (not hist or hist[-1][0] < at):
            hist = (*hist, (at, c.offered, c.p99_latency_ms, w.allocation))
        return [({b.server_id: b.cores for b in alloc.assignments}, offered / len(alloc.assignments))
                for _t, offered, p99, alloc in hist[-p.calibration_points:] if p99 <= ceiling and alloc.assignments]

    @staticmethod
    def _served(w: WorkloadState, at: float) -> float | None:
        """The largest offered load `w`'s current allocation served with its QoS met: over its
        kept observations (`WorkloadState.observed`) after its latest allocation change and before
        `at`, those with ratio ≥ 1 joined with the offered load recorded at the same time
        (`load_history`); None when there is none."""
        since = w.allocated_at if w.allocated_at is not None else -math.inf
        met = {t for t, ratio, _ in w.observed if since < t < at and ratio >= 1.0}
        loads = [offered for t, offered in w.load_history if t in met]
        return max(loads) if loads else None

    def _ahead(self, w: WorkloadState, c: cmd.AssessObservation, at: float) -> LoadForecast | None:
        """The forecast of `w`'s offered load `forecast_horizon_s` ahead from its own history
        (`WorkloadState.load_history`, with this observation), once the history spans
        `forecast_min_history_s`; None when off, too short or without offered loads."""
        p = self.params
        if p.forecast_horizon_s is None or c.offered is None:
            return None
        hist = w.load_history
        if not hist or hist[-1][0] < at:
            hist = (*hist, (at, c.offered))
        if hist[-1][0] - hist[0][0] < p.forecast_min_history_s - 1e-9:
            return None
        return forecast(hist, ForecastParams(horizon_s=p.forecast_horizon_s, window_s=p.forecast_window_s,
                                             z=p.forecast_z, min_margin=p.forecast_min_margin))

    def _grow_blind(self, state: ClusterState, w: WorkloadState, m: PerformanceModel, ctx: DecisionContext,
                    reason: str, ratio: float) -> Sequence[ev.Event]:
        """[IMPL CHOICE] Model-free scale-out of a service that misses its QoS where the model
        sees nothing to add. The load is split evenly, so every node has the same size (a smaller
        one would bind): the service grows to about twice its capacity while it serves under half its
        target, by one node's worth otherwise, in nodes of the largest size (its current one or a
        power of two below) for which enough servers have room — counted in nodes, a smaller node
        worth S(current size) / S(its size) of the classification's scale-up curve (one within
        `blind_growth_size_tolerance`; ladder 8.3 counted cores, `blind_growth_in_nodes`); its
        own servers keep their place, resized to that size (a reshape; a size one of them has no room to grow to is skipped), and best-effort residents of the new servers are evicted.
        Measured need: on quasar-memcached-diurnal seed 1 an in-place scale-up had grown
        memcached's nodes to 23 cores; at the evening peak no server had room for a fifth such
        node, every model-based rung predicted no gain, and it served nothing for 8 hours."""
        assert w.allocation is not None
        alloc = w.allocation
        per = alloc.assignments[0]
        n = len(alloc.assignments)
        top = max(a.cores for a in alloc.assignments)
        total = sum(a.cores for a in alloc.assignments)
        grow = 2.0 if ratio < 0.5 else 1.0 + 1.0 / n
        sizes = [top, *(c for c in (16, 8, 4, 2, 1) if c < top)]
        for size in sizes:
            # ladder 8.5 counts the growth in nodes of the model's relative capacity (a smaller
            # node within `blind_growth_size_tolerance` of the larger counts as one); 8.4 counted
            # cores, so a reshape below a flat scale-up curve's knee multiplied the servers
            if self.params.blind_growth_in_nodes:
                rel = m.up(top) / max(m.up(size), 1e-12)
                want = n * grow * (1.0 if rel <= 1.0 + self.params.blind_growth_size_tolerance else rel)
            else:
                want = total * grow / size
            nodes = min(math.ceil(want - 1e-9), self.params.max_nodes)
            if nodes <= n or any(state.servers[a.server_id].free_cores < size - a.cores for a in alloc.assignments):
                continue
            added: list[Assignment] = []
            weakest = min(m.node(state.servers[a.server_id].platform, size) for a in alloc.assignments
                          if a.server_id in state.servers) if alloc.assignments else None
            for _ in range(nodes - n):
                node = ladder.extra_node(state, w, m, size, per.memory_gb,
                                         exclude=(*alloc.servers, *(a.server_id for a in added)), over_best_effort=True,
                                         at_least=weakest)
                if node is None:
                    break
                added.append(node)
            if len(added) < nodes - n:
                continue
            kept = [Assignment(server_id=a.server_id, cores=size, memory_gb=a.memory_gb) for a in alloc.assignments]
            bigger = Allocation(assignments=(*kept, *added), config=dict(alloc.config))
            kills = self._evicted_for(state, w, added, ctx)
            notes = tuple(f"evict:{k.workload_id}" for k in kills)
            return (self._adjust(w, ctx, "scale_out", bigger, f"{reason}; {n}x{top} -> {nodes}x{size} cores",
                                 notes), *kills)
        return self._migrate(state, w, m, ctx, reason)

    def _evicted_for(self, state: ClusterState, w: WorkloadState, nodes: Sequence[Assignment],
                     ctx: DecisionContext) -> list[ev.WorkloadRevoked]:
        """Best-effort residents killed on new `nodes` that lack room for them (no search for
        another home inside one decision), after the decision that needs their cores — every
        best-effort resident of those servers when `w` is guarded (it tolerates none next to it)."""
        victims: dict[str, None] = {}
        for a in nodes:
            s = state.servers[a.server_id]
            # a guarded workload tolerates no best effort next to it (`state.model.resident_vectors`)
            if s.free_cores >= a.cores and s.free_memory_gb >= a.memory_gb and not w.guarded:
                continue
            for rid in s.residents:
                r = state.workloads.get(rid)
                if r is not None and r.best_effort and rid != w.workload_id:
                    victims.setdefault(rid, None)
        return [ev.WorkloadRevoked(at=ctx.at, workload_id=rid, reason=f"evicted (best effort) for {w.workload_id}")
                for rid in victims]

    def _reclaim(self, state: ClusterState, w: WorkloadState, m: PerformanceModel, load: float, target: float,
                 ctx: DecisionContext, reason: str, capacity: Capacity | None = None) -> Sequence[ev.Event]:
        """Give back what keeps utilisation ≤ `target`: whole nodes first (server-hours), then cores;
        utilisation against `capacity` (default: the classification's estimate)."""
        assert w.allocation is not None
        p = self.params

        def cap_of(a: Allocation) -> float:
            return capacity(a) if capacity is not None else predicted(state, w, a, m)

        keep_cap = load / target
        alloc = w.allocation
        # ladder 8.11: at most `reclaim_max_share` of the nodes in one decision (at least one)
        steps = (len(alloc.assignments) if p.reclaim_max_share is None
                 else max(1, math.floor(p.reclaim_max_share * len(alloc.assignments))))
        dropped = 0
        while len(alloc.assignments) > p.min_nodes and dropped < steps:
            nxt = ladder.drop_node(state, alloc, m)
            if nxt is None or cap_of(nxt) < keep_cap:
                break
            alloc, dropped = nxt, dropped + 1
        if dropped:
            return (self._adjust(w, ctx, "scale_in", alloc, f"{reason}; -{dropped} node(s)"),)
        if p.consolidate_max_moves is not None:
            merged = self._consolidate(state, w, m, keep_cap, cap_of)
            if merged is not None:
                moved, alloc = merged
                return (self._adjust(w, ctx, "scale_in", alloc,
                                     f"{reason}; consolidated {moved} node(s) onto {moved - 1} stronger server(s)",
                                     ("consolidate",)),)
        cores = max(a.cores for a in alloc.assignments)
        best = cores
        for c in range(cores - 1, 0, -1):
            if cap_of(ladder.resize_nodes(alloc, c)) < keep_cap:
                break
            best = c
        if best < cores:
            return (self._adjust(w, ctx, "scale_down", ladder.resize_nodes(alloc, best), f"{reason}; {cores}->{best} cores"),)
        return ()

    def _consolidate(self, state: ClusterState, w: WorkloadState, m: PerformanceModel, keep_cap: float,
                     cap_of: Capacity) -> tuple[int, Allocation] | None:
        """Ladder 8.15 (`consolidate_max_moves`): the fewest j ≥ 2 of `w`'s weakest nodes (by the
        classification's node estimate; ties: the last server id first, as `ladder.drop_node`)
        whose load j − 1 of the strongest free servers (`ladder.extra_node`, no eviction, passing the
        interference check, each stronger than the strongest node given up) carry with the
        allocation's capacity still ≥ `keep_cap`: (j, the new allocation), or None."""
        assert w.allocation is not None and self.params.consolidate_max_moves is not None
        alloc = w.allocation
        if len(alloc.assignments) <= max(self.params.min_nodes, 1):
            return None

        def strength(a: Assignment) -> float:
            s = state.servers.get(a.server_id)
            return m.node(s.platform, a.cores) if s is not None and s.up else 0.0

        weakest = sorted(sorted(alloc.assignments, key=lambda a: a.server_id, reverse=True), key=strength)
        cores = max(a.cores for a in alloc.assignments)
        memory = alloc.assignments[0].memory_gb
        added: list[Assignment] = []
        for j in range(2, min(self.params.consolidate_max_moves + 1, len(weakest)) + 1):
            if len(alloc.assignments) - 1 < self.params.min_nodes:
                return None
            floor = strength(weakest[j - 1])
            while len(added) < j - 1:
                node = ladder.extra_node(state, w, m, cores, memory,
                                         exclude=(*alloc.servers, *(a.server_id for a in added)))
                if node is None or not ladder.compatible(state.servers[node.server_id], w):
                    return None
                added.append(node)
            if any(m.node(state.servers[a.server_id].platform, a.cores) <= floor for a in added):
                return None
            gone = {a.server_id for a in weakest[:j]}
            new = Allocation(assignments=(*(a for a in alloc.assignments if a.server_id not in gone), *added),
                             config=dict(alloc.config))
            if cap_of(new) >= keep_cap:
                return j, new
        return None


def _pressure_moved(observed: Sequence[tuple[float, float, tuple[float, ...]]]) -> float:
    """Ladder 8.16 (`split_reports`): the time of the latest observation before the last one
    whose recorded pressure differs from the one before it — with reports split at resident
    changes, the change before the latest one happened then (-inf: none among those kept)."""
    for i in range(len(observed) - 2, 0, -1):
        if observed[i][2] != observed[i - 1][2]:
            return observed[i][0]
    return -math.inf


def _nodes_up(state: ClusterState, alloc: Allocation) -> int:
    """The allocation's nodes on servers that are up (those `predicted` counts)."""
    return sum(1 for a in alloc.assignments if (s := state.servers.get(a.server_id)) is not None and s.up)


def _node_estimates(state: ClusterState, alloc: Allocation, m: PerformanceModel) -> list[float]:
    """The classification's estimate of each node of `alloc` on a server that is up, its
    scale-out efficiency included (`PerformanceModel.aggregate` of a service: k × the weakest)."""
    nodes = [m.node(s.platform, a.cores) for a in alloc.assignments
             if (s := state.servers.get(a.server_id)) is not None and s.up]
    e = m.scale_out(len(nodes))
    return [e * x for x in nodes]
