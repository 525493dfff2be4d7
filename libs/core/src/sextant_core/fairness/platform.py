"""Virtual clusters on the platform: the allocation decision, the placement gate, a tenant's usage.

Units are servers (docs/fairness/platform.md):

- a tenant's `held` = Σ over its workloads that hold resources of the distinct servers each holds;
- its `demand` = `held` + 1 per live workload waiting for servers (submitted, profiling,
  classified, queued, admitted, deferred: none of them knows yet how many servers it will take);
- `total` = the schedulable servers (up, not drained) — the VCs' capacities plus the free system
  machines.

The fold keeps these counts (`fairness.load`: `ClusterState.load` and `schedulable_servers`), so
an allocation costs O(tenants), not a pass over the workloads and servers.

Rows are every tenant with a capacity, every tenant with a live workload (capacity 0: it only
borrows) and every tenant already in the history, sorted by name. `allocate` asks the policy for
targets with the history advanced to the decision's time (`vcstate.history_at`). `over_allocation`
is the placement gate: a workload that holds nothing yet waits while its tenant holds at least its
allocation. Pure and deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sextant_contracts import vc
from sextant_contracts.model import DecisionRecord

from ..state.model import ClusterState, WorkloadState
from .load import NONE
from .policies import POLICIES, make_policy
from .vcstate import FIELDS, arrays, history_at

DEFAULT_POLICY = "sextant"
GATE_REASON = "vc_over_allocation"


def tenant_load(state: ClusterState) -> dict[str, tuple[int, int]]:
    """(demand, held) in servers per tenant with a live workload (module doc), as the fold keeps
    them (`fairness.load`): no pass over the workloads."""
    return dict(state.load)


def check_policy(name: str) -> str:
    """`name` if it is a registered VC policy; ValueError naming the known ones otherwise."""
    if name not in POLICIES:
        raise ValueError(f"unknown VC policy {name!r}; known: {', '.join(sorted(POLICIES))}")
    return name


def allocate(state: ClusterState, reason: vc.Reason, policy: str, at: float,
             record: DecisionRecord) -> vc.VcAllocationDecided:
    """The allocation between tenants now, under `policy` (module doc)."""
    load = state.load
    vcs = state.vcs
    tenants = sorted(set(vcs.capacities) | set(load) | set(vcs.history))
    cap = np.array([vcs.capacities.get(t, 0) for t in tenants], dtype=np.int64)
    dem = np.array([load.get(t, NONE)[0] for t in tenants], dtype=np.int64)
    total = state.schedulable_servers
    targets = make_policy(policy).targets(cap, dem, total, arrays(history_at(vcs, at), tenants))
    shares = tuple(vc.VcShare(tenant=t, capacity=int(cap[i]), demand=int(dem[i]), held=load.get(t, NONE)[1],
                              allocation=int(targets[i])) for i, t in enumerate(tenants))
    return vc.VcAllocationDecided(at=at, decision=record, reason=reason, policy=policy, total=total, shares=shares)


def over_allocation(state: ClusterState, w: WorkloadState) -> bool:
    """Whether `w` (holding nothing) must wait: its tenant holds at least its allocation in force.
    Never while no allocation is in force or the tenant is not in it."""
    last = state.vcs.last
    if last is None or not state.vcs.active or w.allocation is not None:
        return False
    share = next((s for s in last.shares if s.tenant == w.tenant), None)
    if share is None:
        return False
    return state.load.get(w.tenant, NONE)[1] >= share.allocation


@dataclass(frozen=True, slots=True)
class Usage:
    """A tenant's virtual cluster as `GET /v1/tenants/{id}/usage` shows it (docs/fairness/platform.md).
    Servers now: `capacity` (None: none set), `demand` (held + 1 per waiting workload), `held`,
    `allocation` (the latest decision's; None: not allocated). `load` = demand / capacity (None
    without a capacity); `stretch` = mean over its completed workloads of (end − submission) /
    max(end − start, 60 s) (None before the first). Server-hours of the history at `at`: `lent`
    (its idle capacity others used), `received` (held above capacity), `credit` (Sextant's policy:
    earned lending, spent borrowing contended servers, 3-day half-life), `usage` (held, 1-day
    half-life), `balance` (strict history: its share of the cell minus what it held)."""

    tenant: str
    capacity: int | None
    demand: int
    held: int
    allocation: int | None
    load: float | None
    stretch: float | None
    completed: int
    lent_server_hours: float
    received_server_hours: float
    credit_server_hours: float
    usage_server_hours: float
    balance_server_hours: float
    policy: str | None


def known(state: ClusterState, tenant: str) -> bool:
    """Whether the log knows `tenant` (a capacity, a workload or a history row)."""
    vcs = state.vcs
    return tenant in vcs.capacities or tenant in vcs.history or any(
        w.tenant == tenant for w in state.workloads.values())


def usage(state: ClusterState, tenant: str, at: float) -> Usage:
    vcs = state.vcs
    demand, held = state.load.get(tenant, NONE)
    capacity = vcs.capacities.get(tenant)
    share = next((s for s in vcs.last.shares if s.tenant == tenant), None) if vcs.last is not None else None
    row = dict(zip(FIELDS, history_at(vcs, max(at, vcs.last.at if vcs.last else at)).get(tenant, (0.0,) * 5),
                   strict=True))
    stretches = [(w.ended_at - w.submitted_at) / max(w.ended_at - w.started_at, 60.0)
                 for w in state.workloads.values()
                 if w.tenant == tenant and w.end_reason == "completed" and w.ended_at is not None
                 and w.started_at is not None]
    hours = {k: round(v / 3600.0, 6) for k, v in row.items()}
    return Usage(tenant=tenant, capacity=capacity, demand=demand, held=held,
                 allocation=None if share is None else share.allocation,
                 load=round(demand / capacity, 6) if capacity else None,
                 stretch=round(math.fsum(stretches) / len(stretches), 6) if stretches else None,
                 completed=len(stretches), lent_server_hours=hours["lent"], received_server_hours=hours["received"],
                 credit_server_hours=hours["credit"], usage_server_hours=hours["usage"],
                 balance_server_hours=hours["balance"], policy=None if vcs.last is None else vcs.last.policy)
