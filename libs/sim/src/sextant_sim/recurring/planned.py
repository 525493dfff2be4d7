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
- a window longer than the period is cut to one period (a deadline later than the next period's
  earliest start cannot be kept by one reservation per period);
- the fitted skyline loses its trailing empty steps, and one longer than the window is cut to
  it [choice: the LP covers rare long runs — a straggler's one-container tail — with a long thin
  tail that LowCost, one step per stage, cannot fit before the deadline; the cut tail is left to
  DRA, whose cap follows the reservation's last minutes];
- templates whose period does not divide the plan's day, whose window is empty, or which the
  plan refuses (`Unplaceable` / `PlanError`) keep the user's static allocation (`fallback`), as
  the paper's jobs without an actionable deadline do.

The cluster of `capacity` containers is a plan of `capacity` cores and 8 GB per container.

`PlannedMonth.table` is the plan without DRA: a reservation ends where LowCost put it, while
the user's static allocation lasts as long as the job runs, so a slow run (the slower hardware,
a bigger input, a code delta, a straggler tail, a retry) that outlasts its reservation, or a job
in a narrow phase while its reservation is wide, never finishes in the worst case — why the plan
alone missed more than the baseline (seed 1, 60 templates: 300 worst-case misses vs 65).
`PlannedMonth.with_dra()` puts DRA in the loop (`reprovisioning.py`: 76 on the same month).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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


def window_skyline(skyline: Sequence[int], window: int) -> tuple[int, ...]:
    """The skyline a reservation asks for: trailing empty steps dropped, then cut to the window's
    `window` steps when longer (module doc)."""
    sky = [int(x) for x in skyline]
    while sky and sky[-1] == 0:
        sky.pop()
    return tuple(sky[:window])


def fit_skylines(contracts: Mapping[int, SloContract], skylines: Mapping[int, list[np.ndarray]], *,
                 alpha: float = DEFAULT_ALPHA, max_runs: int = 60) -> dict[int, tuple[int, ...]]:
    """The skyline LP's reservation skyline of every actionable template with training runs (a
    template the LP refuses has none); independent of the cluster size, so computed once."""
    out: dict[int, tuple[int, ...]] = {}
    for k, c in sorted(contracts.items()):
        runs = skylines.get(k, [])[-max_runs:]
        if not c.actionable or not runs:
            continue
        try:
            out[k] = tuple(int(x) for x in fit_skyline([r.tolist() for r in runs], alpha=alpha).skyline)
        except SkylineError:
            continue
    return out


def user_skylines(setup: MonthSetup, contracts: Mapping[int, SloContract], skylines: Mapping[int, list[np.ndarray]],
                  quantile: float = 95.0) -> dict[int, tuple[int, ...]]:
    """The ablation's "no modelling" skylines: the user's static allocation (the last training
    instance's) held for the P95 of the training runs' lengths, as the user would reserve it."""
    ins = setup.workload.instances
    train = np.flatnonzero(ins.submit_s < setup.train_end_s)
    alloc = setup.user.guaranteed(0, train, np.zeros(train.size))
    out: dict[int, tuple[int, ...]] = {}
    for k, c in sorted(contracts.items()):
        runs = skylines.get(k, [])
        rows = ins.template[train] == k
        if not c.actionable or not runs or not rows.any():
            continue
        length = int(math.ceil(float(np.percentile([len(r) for r in runs], quantile))))
        out[k] = (int(alloc[rows][-1]),) * max(length, 1)
    return out


def plan_reservations(setup: MonthSetup, contracts: Mapping[int, SloContract],
                      skylines: Mapping[int, list[np.ndarray]], *, alpha: float = DEFAULT_ALPHA,
                      max_runs: int = 60, capacity: float | None = None,
                      fitted: Mapping[int, tuple[int, ...]] | None = None, pack: bool = True) -> PlannedMonth:
    """The plan's reservations as a guarantee policy (module doc). `fitted`: the skylines to
    reserve (default: `fit_skylines` of `skylines`); `pack` False pins each reservation at the job's
    earliest start for exactly its skyline's length (the ablation's "no SLO extraction + packing":
    no use of the slack before the deadline)."""
    cap = float(setup.capacity if capacity is None else capacity)
    plan = Plan.create(cap, cap * 8.0)
    ins = setup.workload.instances
    train = ins.submit_s < setup.train_end_s
    sky = fit_skylines(contracts, skylines, alpha=alpha, max_runs=max_runs) if fitted is None else fitted
    allocations: dict[int, tuple[int, tuple[int, ...]]] = {}
    placed, refused = [], []
    for k, c in sorted(contracts.items()):
        if not c.actionable:
            continue
        period = int(round(c.period_s / 60.0))
        rows = train & (ins.template == k)
        rel_start = ins.start_s[rows] - np.floor(ins.submit_s[rows] / c.period_s) * c.period_s
        earliest = max(0, int(math.ceil(float(np.percentile(rel_start, 95)) / 60.0))) if rows.any() else 0
        deadline = min(int(math.floor(c.deadline_s / 60.0)), earliest + period)
        if not pack and k in sky:
            deadline = earliest + min(len(window_skyline(sky[k], period)), period)
        if period <= 0 or DAY_MIN % period or k not in sky or deadline <= earliest:
            refused.append(k)
            continue
        try:
            upd = plan.add(ReservationRequest(f"t{k}", window_skyline(sky[k], deadline - earliest), earliest,
                                              deadline, period=period))
        except PlanError:
            refused.append(k)
            continue
        plan = upd.plan
        alloc = upd.reservation.allocation if upd.reservation is not None else None
        if alloc is None:
            refused.append(k)
            continue
        allocations[k] = (alloc.offset, alloc.containers)
        placed.append(k)
    periods = {k: contracts[k].period_s for k in allocations}
    table = reservation_table(ins, periods, allocations, setup.workload.templates.count, setup.user)
    return PlannedMonth(table, plan, tuple(placed), tuple(refused))
