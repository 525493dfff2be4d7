"""Dynamic reprovisioning (DRA, Morpheus §7; spec §3.7) and the fair-share fallback.

Every T = 60 s (one step of the plan: `DraParams.every_steps`), for each running instance of a
reservation: alloc = the containers its skyline (with earlier extensions) holds now, demand =
used + pending containers of the job. When demand > alloc, DRA asks for

    target = min(demand, ρ · max(R_recent)),   ρ = 2,
    R_recent = the instance's allocation over the steps [now − 2, now] (two minutes back),

i.e. the cap bounds the job's *total* allocation, never more than it asks [choice: spec §8.11 asks
whether the cap bounds the total or the increment]. Extensions count as skyline, so a job running
past its planned end keeps being extended minute by minute (Fig. 8). The extra (target − alloc)
is committed for T through a plan update (`Plan.extend`: a ledger claim, admitted only if the
plan has room). Choices for the gaps: when the plan has less room than asked, DRA grants the
largest whole number of containers that fits (a partial grant; the rest runs on fair share); the
per-instance bound accepted at sign-off is `bound_fraction` (default 1.0) of the instance's
skyline area in extra container-steps, counted from the instance's extension claims in the plan
(1.0 chosen in the twin on seeds 1–5, worst-case misses summed: 0.5 → 375, 1.0 → 288, 2.0 → 283;
the smallest within 5 % of the best, bench/morpheus_misses.py);
DRA never shrinks a reservation (a fast job leaves its unused share to fair sharing, which is what
unused reserved capacity does anyway).

Cold start (`fair_share`): a job without a reservation — a rejected contract, no actionable
deadline, a never-seen job — runs on the capacity reservations leave, and so does any demand
beyond a reservation: reservations get min(demand, reserved) first; what remains of the cluster
(unreserved plus reserved-but-unused) is divided max-min fairly among the remaining demands,
whole containers, remainders to jobs in id order (spec §3.6 "redistributed fairly").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .ledger import Tier
from .plan import Plan

# decision reasons (constant strings, as in every decision trace)
NO_SHORTFALL = "no_shortfall"
CAPPED = "capped"
BOUND_EXHAUSTED = "bound_exhausted"
PLAN_FULL = "plan_full"
GRANTED = "granted"
PARTIAL = "partial"


@dataclass(frozen=True)
class DraParams:
    rho: float = 2.0
    recent_steps: int = 2
    every_steps: int = 1
    bound_fraction: float = 1.0


@dataclass(frozen=True)
class DraDecision:
    """What DRA decided for one instance at one step (containers; `granted` extra for `every_steps`)."""

    reservation_id: str
    instance: str
    step: int
    allocated: int
    demand: int
    cap: int
    asked: int
    granted: int
    reason: str


def reprovision(plan: Plan, reservation_id: str, instance: str, now: int, used: int, pending: int,
                params: DraParams = DraParams()) -> tuple[Plan, DraDecision]:
    """One DRA evaluation (module doc). `now` is a window step; `instance` names the running
    instance: its extensions are the claims `{rid}/{instance}/dra@{step}`, counted against its
    bound and released with `Plan.end_instance(rid, f"{rid}/{instance}/")`."""
    r = plan.get(reservation_id)
    alloc = plan.reserved(reservation_id, now)
    demand = used + pending
    recent = max(plan.reserved(reservation_id, now - j) for j in range(params.recent_steps + 1))
    cap = int(np.floor(params.rho * recent + 1e-9))
    target = min(demand, cap)
    asked = target - alloc

    def decision(granted: int, reason: str) -> DraDecision:
        return DraDecision(reservation_id, instance, now, alloc, demand, cap, max(asked, 0), granted, reason)

    if demand <= alloc:
        return plan, decision(0, NO_SHORTFALL)
    if asked <= 0:
        return plan, decision(0, CAPPED)
    bound = int(params.bound_fraction * sum(r.request.skyline))
    spent = plan.extension_area(reservation_id, f"{reservation_id}/{instance}/")
    room = (bound - spent) // params.every_steps
    if room <= 0:
        return plan, decision(0, BOUND_EXHAUSTED)
    want = min(asked, room)
    steps = np.arange(now, now + params.every_steps)
    claim_id = f"{reservation_id}/{instance}/dra@{now}"
    size = np.array([r.request.cores, r.request.memory_gb])
    room_now = plan.ledger.headroom(Tier.GUARANTEE)[:, steps % plan.window]
    with np.errstate(divide="ignore", invalid="ignore"):
        fits = np.where(size[:, None] > 0, np.floor(room_now / np.where(size > 0, size, 1.0)[:, None] + 1e-9), np.inf)
    lo = int(min(want, max(0.0, float(fits.min()))))
    if lo == 0:
        return plan, decision(0, PLAN_FULL)
    best = plan.extend(reservation_id, claim_id, steps, lo)
    return best, decision(lo, GRANTED if lo == asked else PARTIAL)


def fair_share(capacity: int, reserved: Mapping[str, int], demand: Mapping[str, int]) -> dict[str, int]:
    """Containers per job for one step (module doc): reserved jobs first up to their reservation,
    then max-min fair shares of the rest. Every job of `demand` is in the result."""
    if capacity < 0 or any(v < 0 for v in demand.values()) or any(v < 0 for v in reserved.values()):
        raise ValueError("capacity, reservations and demands must be non-negative")
    ids = sorted(demand)
    got = {j: min(demand[j], reserved.get(j, 0)) for j in ids}
    left = capacity - sum(got.values())
    if left < 0:
        raise ValueError("the reservations in use exceed the capacity")
    want = {j: demand[j] - got[j] for j in ids if demand[j] > got[j]}
    while left > 0 and want:
        share = left // len(want)
        if share == 0:
            for j in sorted(want)[:left]:
                got[j] += 1
            break
        for j in sorted(want):
            take = min(share, want[j])
            got[j] += take
            left -= take
            want[j] -= take
        want = {j: w for j, w in want.items() if w > 0}
    return got
