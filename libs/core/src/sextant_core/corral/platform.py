"""Corral on the platform: a planning round over the profiled recurring templates (pure;
docs/corral/platform.md).

`plan_round(state, t, trigger, ctx)` plans the next instance of every template with an
`AnalyticsProfileDeclared` (in id order) as one batch (jalaparti.md §4.3):

- the racks are the distinct `rack`s of the schedulable servers (`ServerRackAssigned`), sorted;
  Model B's rack is the smallest one's machine count, the slowest NIC and the highest uplink
  oversubscription among them [choice: one conservative rack shape, as Model B has one];
- L'_j(r) = MRCute Model B on r racks (`mrcute.latency_b`, the declared profile, its input bytes)
  plus the data-balance penalty α·D_j/r, α = 1 / rack-to-core bandwidth (m · NIC / O)
  (the formula of `planner.with_data_penalty`, kept apart to show it);
- `planner.plan` (the provisioning loop × prioritisation, batch: makespan) gives each job its
  racks, start and priority; `planner.lp_batch_bound` the LP-Batch lower bound on the makespan;
- the racks are claimed in the capacity ledger (`recurring.racks`: each job holds its racks'
  cores and memory over its run, from `start_step`), in priority order, on the plan the
  reservations and placements leave (`decisions.build_plan` without the held rack plan). The first
  job that does not fit is deferred with the ledger's reason, the others are planned again
  without it, until every planned job fits. `start_step` is the first plan step after the first
  round; later rounds keep it (the batch keeps its time of day in the daily window).

It records one `CorralPlanDecided` on the stream of `t` (the template that caused the round),
under the recurring rules of `p` (its `model_version`; the planner's version is the event's
`model`). Without a racked server every profiled template is `deferred` with the reason. A
`daily` round that would record the plan already held (same racks, shape, jobs and deferrals)
records nothing, so a steady cluster adds nothing to the log.

`why(state, event)`: what `sextant explain` prints about a plan — per job, its racks, predicted
time and the provisioning loop's view of one rack more and one rack fewer (the job's time and the
plan's makespan with only that job's width changed), and the penalty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sextant_contracts import recurring as rc

from ..context import DecisionContext
from ..recurring import racks
from ..recurring.decisions import PARAMS, PlatformParams, build_plan
from ..recurring.ledger import ClaimInfeasible
from ..recurring.placements import RESERVED_REASON as RESERVED
from ..recurring.state import TemplateState
from ..state.model import ClusterState
from .mrcute import JobProfile, latency_b
from .planner import lp_batch_bound, plan, prioritize

MODEL = "corral/1"  # Model B + data-balance penalty, batch provisioning loop, LP-Batch bound


@dataclass(frozen=True)
class RackShape:
    racks: tuple[str, ...]
    machines: int
    nic: float
    oversubscription: float

    @property
    def core_link(self) -> float:
        """A rack's uplink to the core, bytes/s (m · NIC / O)."""
        return self.machines * self.nic / self.oversubscription


def rack_shape(state: ClusterState) -> RackShape | None:
    """The racks of the schedulable servers and Model B's rack (module doc); None: no racked server."""
    servers = [s for s in state.sorted_servers() if s.schedulable and s.rack]
    if not servers:
        return None
    counts: dict[str, int] = {}
    for s in servers:
        counts[s.rack] = counts.get(s.rack, 0) + 1
    return RackShape(tuple(sorted(counts)), min(counts.values()), min(s.nic_bytes_s for s in servers),
                     max(s.oversubscription for s in servers))


def job_profile(d: rc.AnalyticsProfileDeclared) -> JobProfile:
    return JobProfile(s_map=d.input_bytes / d.shuffle_bytes, s_reduce=d.shuffle_bytes / d.output_bytes,
                      b_map_p=d.map_rate_bytes_s, b_reduce_p=d.reduce_rate_bytes_s, b_disk=d.disk_bytes_s,
                      map_tasks=d.map_tasks, reduce_tasks=d.reduce_tasks, map_slots=d.map_slots,
                      reduce_slots=d.reduce_slots)


def latencies(profiles: list[rc.AnalyticsProfileDeclared], shape: RackShape) -> tuple[np.ndarray, np.ndarray]:
    """(Model B, data-balance penalty), each jobs × racks: column r − 1 is r racks."""
    r = np.arange(1, len(shape.racks) + 1)
    model_b = np.array([latency_b(job_profile(d), d.input_bytes, r, machines_per_rack=shape.machines, nic=shape.nic,
                                  oversubscription=shape.oversubscription) for d in profiles], dtype=float)
    inputs = np.array([d.input_bytes for d in profiles], dtype=float)
    penalty = inputs[:, None] / (r[None, :] * shape.core_link)
    return model_b.reshape(len(profiles), len(r)), penalty


def _round(x: float) -> float:
    return round(float(x), 6)


def _same_plan(a: rc.CorralPlanDecided, b: rc.CorralPlanDecided) -> bool:
    keys = ("racks", "machines_per_rack", "nic_bytes_s", "oversubscription", "jobs", "deferred", "start_step")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def _racks_capacity(state: ClusterState, racks: tuple[str, ...]) -> tuple[float, float]:
    servers = [s for s in state.sorted_servers() if s.schedulable and s.rack in racks]
    return float(sum(s.capacity.cores for s in servers)), float(sum(s.capacity.memory_gb for s in servers))


def _jobs(state: ClusterState, templates: list[TemplateState], shape: RackShape
          ) -> tuple[list[rc.CorralJob], float, float]:
    """The planner's jobs for `templates` on `shape`, with the makespan and the LP-Batch bound."""
    model_b, penalty = latencies([x.profile for x in templates if x.profile is not None], shape)
    lat = model_b + penalty
    p = plan(lat)
    jobs = []
    for j, x in enumerate(templates):
        w = int(p.widths[j])
        racks = tuple(shape.racks[i] for i in p.racks[j])
        cores, memory = _racks_capacity(state, racks)
        jobs.append(rc.CorralJob(template_id=x.template_id, racks=racks, priority=int(p.priorities[j]),
                                 start_s=_round(p.starts[j]), predicted_s=_round(lat[j, w - 1]),
                                 model_b_s=_round(model_b[j, w - 1]), penalty_s=_round(penalty[j, w - 1]),
                                 cores=cores, memory_gb=memory))
    return jobs, _round(p.objective), _round(min(lp_batch_bound(lat), p.objective))


def plan_round(state: ClusterState, t: TemplateState, trigger: str, ctx: DecisionContext,
               p: PlatformParams = PARAMS) -> tuple[tuple[rc.CorralPlanDecided, ...], dict[str, Any]]:
    """One Corral round (module doc): the event to record (none, or one) and the decision's detail."""
    templates = state.recurring.profiled()
    if not templates:
        return (), {"skipped": "no template has an analytics profile"}
    rec = ctx.record("corral-plan", t.template_id, p.model_version)
    held_plan = state.recurring.corral  # the batch keeps its time of day once it has one
    start_step = held_plan.start_step if held_plan is not None else math.ceil(ctx.at / p.step_s - 1e-9) % p.window_steps
    base: dict[str, Any] = dict(at=ctx.at, template_id=t.template_id, decision=rec, trigger=trigger, model=MODEL,
                                start_step=start_step)
    shape = rack_shape(state)
    deferred: list[rc.CorralDeferred] = []
    left_out: tuple[str, ...] = ()
    if shape is None:
        reason = "no schedulable server has a rack (ServerRackAssigned)"
        deferred = [rc.CorralDeferred(template_id=x.template_id, reason=reason) for x in templates]
        e = rc.CorralPlanDecided(**base, deferred=tuple(deferred))
    else:
        ledger, left_out = build_plan(state, p, rack_plan=False)
        active = list(templates)
        jobs: list[rc.CorralJob] = []
        makespan = bound = 0.0
        while active:  # admit in priority order; a job the ledger cannot hold is deferred, the rest re-planned
            jobs, makespan, bound = _jobs(state, active, shape)
            held, refused = ledger, None
            for job in sorted(jobs, key=lambda j: (j.priority, j.template_id)):
                try:
                    held = racks.hold_job(held, start_step, job, p.step_s)
                except ClaimInfeasible as refusal:
                    refused = (job, refusal)
                    break
            if refused is None:
                break
            job, why_not = refused
            deferred.append(rc.CorralDeferred(template_id=job.template_id, reason=(
                f"{RESERVED}: at step {why_not.step} the reservations and placements leave {why_not.short_by:.6g} "
                f"{why_not.resource} too few for its racks ({', '.join(job.racks)})")[:300]))
            active = [x for x in active if x.template_id != job.template_id]
            jobs, makespan, bound = [], 0.0, 0.0
        e = rc.CorralPlanDecided(**base, racks=shape.racks, machines_per_rack=shape.machines, nic_bytes_s=shape.nic,
                                 oversubscription=shape.oversubscription, jobs=tuple(jobs),
                                 deferred=tuple(sorted(deferred, key=lambda d: d.template_id)),
                                 makespan_s=makespan, lp_bound_s=bound)
    if trigger == "daily" and held_plan is not None and _same_plan(held_plan, e):
        return (), {"skipped": "the plan held is unchanged"}
    return (e,), {"jobs": len(e.jobs), "deferred": len(e.deferred), "makespan_s": e.makespan_s,
                  "lp_bound_s": e.lp_bound_s, "ledger_left_out": list(left_out)}


def why(state: ClusterState, e: rc.CorralPlanDecided) -> list[str]:
    """What `sextant explain` prints about a plan (module doc), from the state it was decided on."""
    out = [f"  racks: {len(e.racks)} ({', '.join(e.racks[:12])}{', ...' if len(e.racks) > 12 else ''}), "
           f"{e.machines_per_rack} machines each, NIC {e.nic_bytes_s:g} B/s, core {e.oversubscription:g}:1; "
           f"model {e.model}"]
    out.extend(f"  job {d.template_id}: deferred: {d.reason}" for d in e.deferred)
    shape = rack_shape(state)
    planned = {j.template_id for j in e.jobs}
    templates = [x for x in state.recurring.profiled() if x.template_id in planned]  # e.jobs' order
    if not e.jobs or shape is None or len(templates) != len(e.jobs):
        return out
    model_b, penalty = latencies([x.profile for x in templates if x.profile is not None], shape)
    lat = model_b + penalty
    widths = np.array([len(j.racks) for j in e.jobs], dtype=np.int64)
    out.append(f"  makespan {e.makespan_s:.1f} s, LP-Batch bound {e.lp_bound_s:.1f} s "
               f"(gap {e.makespan_s / e.lp_bound_s - 1 if e.lp_bound_s > 0 else 0.0:.1%}); "
               f"data balance α = 1/{shape.core_link:g} s/B")
    for j, job in enumerate(e.jobs):
        r = len(job.racks)
        out.append(f"  job {job.template_id}: racks {', '.join(job.racks)} ({r} of {len(e.racks)}), priority "
                   f"{job.priority}, starts at +{job.start_s:.1f} s, predicted {job.predicted_s:.1f} s "
                   f"(Model B {job.model_b_s:.1f} s + data balance {job.penalty_s:.1f} s)")
        for label, r2 in (("one more rack", r + 1), ("one rack fewer", r - 1)):
            if not 1 <= r2 <= len(e.racks):
                continue
            w2 = widths.copy()
            w2[j] = r2
            other = prioritize(lat, w2).objective
            out.append(f"    {label}: {lat[j, r2 - 1]:.1f} s (Model B {model_b[j, r2 - 1]:.1f} s + data balance "
                       f"{penalty[j, r2 - 1]:.1f} s), job {lat[j, r2 - 1] - lat[j, r - 1]:+.1f} s, makespan "
                       f"{other:.1f} s ({other - e.makespan_s:+.1f} s)")
    return out
