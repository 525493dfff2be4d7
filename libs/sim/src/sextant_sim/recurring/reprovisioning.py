"""DRA in the twin's execution loop (Morpheus §7; spec/morpheus.md §3.7): the plan's reservations
as a guarantee policy that asks the core's `dra.reprovision` every minute for the running
instances that want more than their reservation holds.

`DraReservations(planned)` wraps a `planned.PlannedMonth` (its reservation table and its plan)
and is a `GuaranteePolicy` with state: the plan it holds grows by DRA's extension claims and
shrinks when an instance ends (`Plan.end_instance`). A fresh one is needed for every simulation
(`PlannedMonth.with_dra`).

Each minute t, for the active instances of templates with a reservation:

1. base = the reservation table's containers for the instance now (its period's reservation);
2. an instance whose demand (the phase's parallelism, capped by the work left: used + pending
   containers) exceeds base + what DRA granted it at t is handed to `reprovision` with the plan,
   the reservation `t{template}`, the instance `i{index}` and the window step t mod W; the
   decision's `granted` containers are added to the instance's guarantee for this minute;
3. an instance that was running and is no longer active releases its extensions (at the next
   minute the policy is asked).

Choices [spec §8.11 gaps, the core's choices stand: ρ = 2 on the total, extensions count as
skyline, partial grants, the per-instance bound]:

- the twin skips the call (and counts it as `skipped_no_recent`) for an instance that held
  nothing — neither reservation nor extension — in the last `recent_steps` + 1 minutes: the core's
  cap ρ · max(R_recent) is then 0 for it (an instance that starts after its reservation ended runs
  on fair share alone, as in the paper);
- the core sees the reservation at window step t, which for an instance running past its own
  period is the next instance's reservation: DRA then asks for less (conservative), never more;
- demand is in whole containers (ceil of the twin's fractional demand), since the plan counts
  containers.

`decisions` counts the core's reasons (and the twin's skips), for the benchmark.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from sextant_core.recurring.dra import DraParams, reprovision
from sextant_core.recurring.plan import Plan

from .execution import ReservationTable

SKIPPED_NO_RECENT = "skipped_no_recent"


@dataclass
class DraReservations:
    """The reservation table plus DRA (module doc); mutable, one per simulation."""

    table: ReservationTable
    plan: Plan
    params: DraParams = DraParams()
    decisions: Counter[str] = field(default_factory=Counter)
    granted_area: float = 0.0  # container-minutes granted by DRA
    _recent: dict[int, list[tuple[int, float]]] = field(default_factory=dict)  # instance -> (minute, held)

    def guaranteed(self, minute: int, active: np.ndarray, demand: np.ndarray) -> np.ndarray:
        base = self.table.guaranteed(minute, active, demand)
        tm = self.table.template[active]
        reserved = self.table.has[tm]
        self._release(set(active[reserved].tolist()))
        out = np.asarray(base, dtype=np.float64).copy()
        step = minute % self.plan.window
        for j in np.flatnonzero(reserved & (demand > base + 1e-9)):
            i = int(active[j])
            hist = self._recent.setdefault(i, [])
            if not any(h > 0 for m, h in hist if m >= minute - self.params.recent_steps) and base[j] <= 0:
                self.decisions[SKIPPED_NO_RECENT] += 1
                continue
            self.plan, d = reprovision(self.plan, f"t{int(tm[j])}", f"i{i}", step, int(math.ceil(demand[j] - 1e-9)),
                                       0, self.params)
            self.decisions[d.reason] += 1
            out[j] += d.granted
            self.granted_area += d.granted
        for j in np.flatnonzero(reserved):
            i = int(active[j])
            hist = self._recent.setdefault(i, [])
            hist.append((minute, float(out[j])))
            if len(hist) > self.params.recent_steps + 1:
                del hist[0]
        return out

    def _release(self, running: set[int]) -> None:
        for i in [i for i in self._recent if i not in running]:
            del self._recent[i]
            k = int(self.table.template[i])
            self.plan = self.plan.end_instance(f"t{k}", f"t{k}/i{i}/")
