"""DRA in the twin's execution loop (recurring/reprovisioning.py): a job slower than its
reservation is extended minute by minute through the core's plan, within its bound, and its
extensions are released when it ends."""

from __future__ import annotations

import numpy as np
from sextant_core.recurring.dra import DraParams
from sextant_core.recurring.plan import Plan, ReservationRequest
from sextant_sim.recurring.execution import UserStatic, reservation_table, simulate
from sextant_sim.recurring.reprovisioning import DraReservations
from sextant_sim.recurring.workload import MAX_PHASES, Instances


def one_job(work: float) -> tuple[Instances, Plan]:
    """One hourly instance submitted at minute 10 with `work` container-minutes at up to 10
    containers; a plan of one hour holding its reservation of 10 containers at minutes 10-14."""
    w = np.zeros((1, MAX_PHASES))
    q = np.zeros((1, MAX_PHASES))
    w[0, 0], q[0, 0] = work, 10.0
    inst = Instances(np.array([0]), np.array([600.0]), np.array([600.0]), np.array([np.nan]), w, q, np.array([1]),
                     np.array([True]), np.array([False]))
    plan = Plan.create(100.0, 800.0, 60).add(ReservationRequest("t0", (10,) * 5, 10, 15, period=60)).plan
    return inst, plan


def run(inst: Instances, plan: Plan, dra: bool, params: DraParams = DraParams()) -> tuple[float, DraReservations | None]:
    alloc = plan.get("t0").allocation
    table = reservation_table(inst, {0: 3600.0}, {0: (alloc.offset, alloc.containers)}, 1,
                              UserStatic(np.zeros(1)))
    policy = DraReservations(table, plan, params) if dra else None
    out = simulate(inst, 100.0, policy or table, opportunistic=False, horizon_min=60, grace_minutes=60)
    return float(out.end_s[0]), policy


def test_dra_extends_a_slow_job_past_its_reservation_and_releases_the_extension() -> None:
    inst, plan = one_job(work=70.0)
    assert plan.get("t0").allocation.offset == 10
    end, _ = run(inst, plan, dra=False)
    assert np.isnan(end)  # 50 of 70 container-minutes reserved, nothing else in the worst case
    end, policy = run(inst, plan, dra=True)
    assert policy is not None
    # minutes 15 and 16: alloc 0, R_recent 10, cap ρ·10 = 20, demand 10 -> 10 granted each;
    # the job has 50 + 20 = 70 container-minutes at the end of minute 16
    assert end == 17 * 60.0
    assert policy.decisions["granted"] == 2 and policy.granted_area == 20.0
    assert policy.plan.extension_area("t0", "t0/i0/") == 20
    policy.guaranteed(18, np.zeros(0, dtype=np.int64), np.zeros(0))  # the next minute it is asked
    assert policy.plan.extension_area("t0", "t0/i0/") == 0  # released: the instance ended


def test_dra_stops_at_the_per_instance_bound() -> None:
    inst, plan = one_job(work=90.0)  # needs 40 extra; the bound is 0.5 × 50 = 25 container-minutes
    end, policy = run(inst, plan, dra=True, params=DraParams(bound_fraction=0.5))
    assert policy is not None
    assert np.isnan(end)
    assert policy.granted_area == 25.0  # 10 + 10 + 5 (a partial last grant), then bound_exhausted
    assert policy.decisions["bound_exhausted"] >= 1
