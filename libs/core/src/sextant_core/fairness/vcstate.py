"""The planning side's view of the virtual clusters (VCs): a pure fold of the VC events.

`VcState` holds what the log says: each tenant's capacity (`VcCapacitySet`), the latest
allocation decided (`VcAllocationDecided`) and every tenant's sharing history at that decision.
Each allocation holds until the next one, so folding a decision first advances the history over
the interval since the previous decision with that decision's capacities, demands and allocations
(`history.advance`, default `HistoryParams`), then keeps the new one. The same log gives the same
history bit for bit: replay rebuilds credits and usage exactly. `history_at(vcs, at)` is the
history advanced to a later time (what the next decision sees, and what `/usage` reports).

Rows are tenants sorted by name; a tenant keeps its history row once it appeared in a decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from immutables import Map
from sextant_contracts import vc

from .history import History, HistoryParams, advance

PARAMS = HistoryParams()
FIELDS = ("lent", "received", "credit", "usage", "balance")
Row = tuple[float, float, float, float, float]  # one tenant's History, in FIELDS order
ZERO: Row = (0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class VcState:
    """`capacities`: servers per tenant that has a VC; `last`: the allocation in force (None: none
    yet); `history`: per tenant, its History row at `last.at`; `decisions`: allocations decided
    (the counter the decision's seed derives from)."""

    capacities: Map[str, int] = field(default_factory=Map)
    last: vc.VcAllocationDecided | None = None
    history: Map[str, Row] = field(default_factory=Map)
    decisions: int = 0

    @property
    def active(self) -> bool:
        """Whether any tenant has a VC capacity (otherwise nothing is allocated)."""
        return len(self.capacities) > 0


def evolve_vc(state: VcState, event: vc.VcCapacitySet | vc.VcAllocationDecided) -> VcState:
    if isinstance(event, vc.VcCapacitySet):
        return VcState(state.capacities.set(event.tenant, event.servers), state.last, state.history,
                       state.decisions)
    history = _advanced(state, event.at)
    return VcState(state.capacities, event, history, state.decisions + 1)


def _advanced(state: VcState, at: float) -> Map[str, Row]:
    """The per-tenant history rows at `at`, after `state.last` held from its time to `at`."""
    last = state.last
    if last is None or at <= last.at or not last.shares:
        return state.history
    tenants = [s.tenant for s in last.shares]
    h = arrays(state.history, tenants)
    cap = np.array([s.capacity for s in last.shares], dtype=np.int64)
    dem = np.array([s.demand for s in last.shares], dtype=np.int64)
    alloc = np.array([s.allocation for s in last.shares], dtype=np.int64)
    h = advance(h, at - last.at, cap, dem, alloc, last.total, PARAMS)
    out = state.history
    with out.mutate() as m:
        for i, t in enumerate(tenants):
            m[t] = tuple(float(getattr(h, f)[i]) for f in FIELDS)  # type: ignore[assignment]
        out = m.finish()
    return out


def arrays(rows: Map[str, Row], tenants: list[str]) -> History:
    """The `History` of `tenants` (in that order) from their rows (zeros for a new tenant)."""
    table = np.array([rows.get(t, ZERO) for t in tenants], dtype=np.float64).reshape(len(tenants), len(FIELDS))
    return History(*(table[:, k].copy() for k in range(len(FIELDS))))


def history_at(state: VcState, at: float) -> Map[str, Row]:
    """Every tenant's history row at time `at` (≥ the latest decision's time)."""
    return _advanced(state, at)
