"""Virtual clusters (VCs) on the platform: a tenant's capacity and the allocation between tenants.

A tenant's VC capacity is its guarantee in servers; idle capacity is lent to busy tenants
(docs/fairness/platform.md). Topic `sextant.events.tenants`:

- `VcCapacitySet` — a fact from the API (an operator's `PUT /v1/tenants/{id}/capacity`), on the
  tenant's stream `tenant-<tenant>`;
- `VcAllocationDecided` — planning's decision (a `DecisionRecord`, re-derived by replay), on the
  stream `vc-allocation`: per tenant its capacity, demand, servers held and allocation, recomputed
  at every arrival, completion and capacity change (a VC's, or the cell's schedulable servers)
  while at least one tenant has a capacity.

`AllocateVcs` is the command that asks planning for it; like a recurring template's command it
names no workload (`workload_id` stays empty).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .commands import Command
from .events import Event
from .model import DecisionRecord, Frozen

VC_STREAM = "vc-allocation"
_TENANT = Field(min_length=1, max_length=64)
# what changed: a workload arrived, one ended, a VC capacity was set, the cell's schedulable servers
Reason = Literal["arrival", "completion", "capacity", "servers"]


class VcCapacitySet(Event):
    """An operator set `tenant`'s VC capacity to `servers` (0: the tenant owns nothing and only
    borrows). `by`: the operator who set it (empty in open mode)."""

    TYPE: ClassVar[str] = "VcCapacitySet"
    tenant: str = _TENANT
    servers: int = Field(ge=0, le=1_000_000)
    by: str = Field(default="", max_length=64)

    @property
    def stream(self) -> str:
        return f"tenant-{self.tenant}"


class VcShare(Frozen):
    """One tenant's row of an allocation, in servers: `capacity` (its guarantee; 0 for a tenant
    without one), `demand` (servers its active workloads hold or wait for), `held` (servers its
    workloads hold now), `allocation` (what the policy gives it)."""

    tenant: str = _TENANT
    capacity: int = Field(ge=0)
    demand: int = Field(ge=0)
    held: int = Field(ge=0)
    allocation: int = Field(ge=0)


class VcAllocationDecided(Event):
    """The allocation between tenants under `policy` (a `sextant_core.fairness` policy name) over
    `total` schedulable servers; `shares` one row per tenant, sorted by tenant. It holds until the
    next one: the sharing history (credit, usage, balance, lent, received) is the fold of these
    intervals."""

    TYPE: ClassVar[str] = "VcAllocationDecided"
    DECISION: ClassVar[bool] = True
    decision: DecisionRecord
    reason: Reason
    policy: str = Field(min_length=1, max_length=64)
    total: int = Field(ge=0)
    shares: tuple[VcShare, ...]

    @property
    def stream(self) -> str:
        return VC_STREAM


class AllocateVcs(Command):
    """To planning: recompute the allocation between tenants (`reason`: what changed)."""

    TYPE: ClassVar[str] = "AllocateVcs"
    HANDLER: ClassVar[str] = "planning"
    workload_id: str = Field(default="", max_length=0)
    reason: Reason

    @property
    def stream(self) -> str:
        return VC_STREAM
