"""Corral on the platform: a planning round over the profiled recurring templates (pure;
docs/corral/platform.md).

`plan_round(state, t, trigger, ctx)` plans the next instance of every template with an
`AnalyticsProfileDeclared` (in id order) as one batch (jalaparti.md §4.3):

- the racks are the distinct `rack`s of the schedulable servers (`ServerRackAssigned`), sorted;
  Model B's rack is the smallest one's machine count, the slowest NIC and the highest uplink
  oversubscription among them [choice: one conservative rack shape, as Model B has one];
- L'_j(r) = MRCute Model B on r racks (`mrcute.latency_b`, the declared profile, its input bytes)
  plus the data-balance penalty α·D_j/r, α = 1 / rack-to-core bandwidth (m · NIC / O)
  (`planner.with_data_penalty`);
- `planner.plan` (the provisioning loop × prioritisation, batch: makespan) gives each job its
  racks, start and priority; `planner.lp_batch_bound` the LP-Batch lower bound on the makespan.

It records one `CorralPlanDecided` on the stream of `t` (the template that caused the round).
Without a racked server every profiled template is `deferred` with the reason. A `daily` round
that would record the plan already held (same racks, shape and jobs) records nothing, so a steady
cluster adds nothing to the log. Reservations of the racks in the capacity ledger are not made
(docs/corral/platform.md, "Not built yet").

`why(state, event)`: what `sextant explain` prints about a plan — per job, its racks, predicted
time and the provisioning loop's view of one rack more and one rack fewer (the job's time and the
plan's makespan with only that job's width changed), and the penalty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sextant_contracts import recurring as rc

from ..context import DecisionContext
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
    keys = ("racks", "machines_per_rack", "nic_bytes_s", "oversubscription", "jobs", "deferred")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def plan_round(state: ClusterState, t: TemplateState, trigger: str, ctx: DecisionContext
               ) -> tuple[tuple[rc.CorralPlanDecided, ...], dict[str, Any]]:
    """One Corral round (module doc): the event to record (none, or one) and the decision's detail."""
    templates = state.recurring.profiled()
    if not templates:
        return (), {"skipped": "no template has an analytics profile"}
    rec = ctx.record("corral-plan", t.template_id, MODEL)
    base: dict[str, Any] = dict(at=ctx.at, template_id=t.template_id, decision=rec, trigger=trigger, model=MODEL)
    shape = rack_shape(state)
    if shape is None:
        reason = "no schedulable server has a rack (ServerRackAssigned)"
        e = rc.CorralPlanDecided(**base, deferred=tuple(rc.CorralDeferred(template_id=x.template_id, reason=reason)
                                                        for x in templates))
    else:
        profiles = [x.profile for x in templates if x.profile is not None]
        model_b, penalty = latencies(profiles, shape)
        lat = model_b + penalty
        p = plan(lat)
        jobs = []
        for j, x in enumerate(templates):
            w = int(p.widths[j])
            jobs.append(rc.CorralJob(template_id=x.template_id, racks=tuple(shape.racks[i] for i in p.racks[j]),
                                     priority=int(p.priorities[j]), start_s=_round(p.starts[j]),
                                     predicted_s=_round(lat[j, w - 1]), model_b_s=_round(model_b[j, w - 1]),
                                     penalty_s=_round(penalty[j, w - 1])))
        e = rc.CorralPlanDecided(**base, racks=shape.racks, machines_per_rack=shape.machines, nic_bytes_s=shape.nic,
                                 oversubscription=shape.oversubscription, jobs=tuple(jobs),
                                 makespan_s=_round(p.objective), lp_bound_s=_round(min(lp_batch_bound(lat), p.objective)))
    held = state.recurring.corral
    if trigger == "daily" and held is not None and _same_plan(held, e):
        return (), {"skipped": "the plan held is unchanged"}
    return (e,), {"jobs": len(e.jobs), "deferred": len(e.deferred), "makespan_s": e.makespan_s,
                  "lp_bound_s": e.lp_bound_s}


def why(state: ClusterState, e: rc.CorralPlanDecided) -> list[str]:
    """What `sextant explain` prints about a plan (module doc), from the state it was decided on."""
    out = [f"  racks: {len(e.racks)} ({', '.join(e.racks[:12])}{', ...' if len(e.racks) > 12 else ''}), "
           f"{e.machines_per_rack} machines each, NIC {e.nic_bytes_s:g} B/s, core {e.oversubscription:g}:1; "
           f"model {e.model}"]
    out.extend(f"  job {d.template_id}: deferred: {d.reason}" for d in e.deferred)
    shape = rack_shape(state)
    templates = state.recurring.profiled()
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
