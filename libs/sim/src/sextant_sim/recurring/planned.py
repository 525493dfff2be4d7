"""The Sextant side in the twin: periodic reservations from the core's skyline LP and LowCost plan
(spec/morpheus.md §3.3–3.5), as a guarantee policy for `execution.simulate`.

`plan_reservations(setup, contracts, skylines)` sees only what the platform records — the
contracts the core inferred and the training runs' telemetry skylines — and, per actionable
template in key order (the online arrival order):

- fits the skyline (`skyline.fit_skyline`, α = 0.01 by default) on the template's newest
  `max_runs` (60) successful training runs [choice: an hourly job has ~500 training runs; 60 keep
  every LP small];
- asks the plan for a periodic reservation in [earliest, deadline) of its period, in minutes:
  earliest = the P95 of the job's start relative to its period start (max of submission and
  input) [choice: the twin's users submit at a fixed time, so a reservation before the
  submission would idle; the contract's a = P95 input-available is earlier], deadline = d;
- templates whose period does not divide the plan's day, whose window is empty or longer than
  the period, or which the plan refuses (`Unplaceable` / `PlanError`) keep the user's static
  allocation (`fallback`), as the paper's jobs without an actionable deadline do.

The cluster of `capacity` containers is a plan of `capacity` cores and 8 GB per container.

Not yet in the loop: DRA. A reservation ends where LowCost put it, while the user's static
allocation lasts as long as the job runs, so without DRA a straggler tail, a code delta or a
late input that outlasts the reservation misses in the worst case (measured on one small month:
more worst-case misses than the baseline). A DRA policy wraps this table and calls
`sextant_core.recurring.dra.reprovision` with each running instance's demand
(`GuaranteePolicy.guaranteed` receives it every minute).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from sextant_core.recurring.dra import DraParams
from sextant_core.recurring.plan import Plan, PlanError, ReservationRequest
from sextant_core.recurring.skyline import DEFAULT_ALPHA, SkylineError, fit_skyline
from sextant_core.recurring.slo import SloContract

from .evaluation import MonthSetup
from .execution import ReservationTable, reservation_table
from .reprovisioning import DraReservations

DAY_MIN = 1440


@dataclass(frozen=True)
class PlannedMonth:
    table: ReservationTable
    plan: Plan
    placed: tuple[int, ...]  # template keys with a reservation
    refused: tuple[int, ...]  # actionable templates left on the user's allocation

    def with_dra(self, params: DraParams = DraParams()) -> DraReservations:
        """The same reservations with DRA in the loop (a fresh, stateful policy per simulation)."""
        return DraReservations(self.table, self.plan, params)


def plan_reservations(setup: MonthSetup, contracts: Mapping[int, SloContract],
                      skylines: Mapping[int, list[np.ndarray]], *, alpha: float = DEFAULT_ALPHA,
                      max_runs: int = 60, capacity: float | None = None) -> PlannedMonth:
    """The plan's reservations as a guarantee policy (module doc)."""
    cap = float(setup.capacity if capacity is None else capacity)
    plan = Plan.create(cap, cap * 8.0)
    ins = setup.workload.instances
    train = ins.submit_s < setup.train_end_s
    allocations: dict[int, tuple[int, tuple[int, ...]]] = {}
    placed, refused = [], []
    for k, c in sorted(contracts.items()):
        if not c.actionable:
            continue
        period = int(round(c.period_s / 60.0))
        runs = skylines.get(k, [])[-max_runs:]
        rows = train & (ins.template == k)
        rel_start = ins.start_s[rows] - np.floor(ins.submit_s[rows] / c.period_s) * c.period_s
        earliest = max(0, int(math.ceil(float(np.percentile(rel_start, 95)) / 60.0))) if rows.any() else 0
        deadline = int(math.floor(c.deadline_s / 60.0))
        if (period <= 0 or DAY_MIN % period or not runs or deadline <= earliest
                or deadline - earliest > period):
            refused.append(k)
            continue
        try:
            fit = fit_skyline([r.tolist() for r in runs], alpha=alpha)
            upd = plan.add(ReservationRequest(f"t{k}", tuple(int(x) for x in fit.skyline), earliest, deadline,
                                              period=period))
        except (PlanError, SkylineError):
            refused.append(k)
            continue
        plan = upd.plan
        if upd.reservation is None:
            refused.append(k)
            continue
        alloc = upd.reservation.allocation
        allocations[k] = (alloc.offset, alloc.containers)
        placed.append(k)
    periods = {k: contracts[k].period_s for k in allocations}
    table = reservation_table(ins, periods, allocations, setup.workload.templates.count, setup.user)
    return PlannedMonth(table, plan, tuple(placed), tuple(refused))
