"""Per-tenant demand and held servers, kept up to date by the fold (`ClusterState.load`).

A workload weighs `(demand, held)` servers (docs/fairness/platform.md, "Units and rows"):

- `(0, 0)` once it ended (completed, failed, revoked);
- `held` = the distinct servers of its allocation while it holds resources (placed, running),
  else 0;
- `demand` = `held`, or 1 while it is live and holds nothing (none of those phases knows yet how
  many servers it will take).

`ClusterState.load` maps every tenant with a live workload to the sums of its workloads' weights
(a tenant leaves the map when its demand reaches 0, i.e. its last live workload ended). An event
changes at most the workload it names, so `evolve` applies `moved(load, before, after)` to that
one workload: reading a tenant's load is O(1) and an allocation between tenants O(tenants).
`recount` is the full pass over the workloads it must always equal (a property test compares
them after random event sequences). `ClusterState.schedulable_servers` (up, not drained) is kept
by the server events the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from immutables import Map
from sextant_contracts.model import Allocation

from ..domain.lifecycle import HOLDING, TERMINAL, WorkloadPhase


class WorkloadState(Protocol):
    """What a workload's weight reads of `state.model.WorkloadState` (which holds `Load`)."""

    @property
    def tenant(self) -> str: ...
    @property
    def phase(self) -> WorkloadPhase: ...
    @property
    def allocation(self) -> Allocation | None: ...


Load = Map[str, tuple[int, int]]  # tenant -> (demand, held), servers
NONE = (0, 0)

_E1, _E2, _E3 = tuple(TERMINAL)
_H1, _H2 = tuple(HOLDING)


def weight(w: WorkloadState | None) -> tuple[int, int]:
    """(demand, held) of one workload (None: absent), in servers (module doc). Phases are compared
    by identity: an enum's hash is a Python call, and this runs at every workload event."""
    if w is None:
        return NONE
    phase = w.phase
    if phase is _E1 or phase is _E2 or phase is _E3:
        return NONE
    a = w.allocation
    if a is None or not (phase is _H1 or phase is _H2):
        return (1, 0)
    n = len(a.assignments) if len(a.assignments) == 1 else len({x.server_id for x in a.assignments})
    return (n, n) if n else (1, 0)


def moved(load: Load, before: WorkloadState | None, after: WorkloadState | None) -> Load:
    """`load` after one workload changed from `before` to `after` (None: absent; a workload never
    changes tenant). The same `load` object when its weight did not change."""
    b, a = weight(before), weight(after)
    if a == b:
        return load
    tenant = (after if after is not None else before).tenant  # type: ignore[union-attr]
    d, h = load.get(tenant, NONE)
    d, h = d + a[0] - b[0], h + a[1] - b[1]
    return load.set(tenant, (d, h)) if d > 0 else load.delete(tenant) if tenant in load else load


def recount(workloads: Iterable[WorkloadState]) -> Load:
    """The load from scratch: one pass over `workloads` (what `moved` keeps incrementally)."""
    out: dict[str, tuple[int, int]] = {}
    for w in workloads:
        d, h = weight(w)
        if d:
            od, oh = out.get(w.tenant, NONE)
            out[w.tenant] = (od + d, oh + h)
    return Map(out)
