"""The core's LP + LowCost plan as the twin's guarantee policy."""

from __future__ import annotations

import numpy as np
from sextant_sim.recurring.evaluation import deadlines, infer_contracts, month, run, training_skylines
from sextant_sim.recurring.planned import plan_reservations
from sextant_sim.recurring.workload import WorkloadParams


def test_planned_reservations_guarantee_their_allocation_and_leave_the_rest_to_the_user() -> None:
    s = month(11, WorkloadParams(templates=20, days=4))
    out = run(s, s.user, record=True)
    contracts = infer_contracts(s.workload, out, s.train_end_s)
    pm = plan_reservations(s, contracts, training_skylines(s.workload, out, s.train_end_s))
    actionable = {k for k, c in contracts.items() if c.actionable}
    assert pm.placed and set(pm.placed) | set(pm.refused) == actionable
    assert not set(pm.placed) & set(pm.refused)
    ins = s.workload.instances
    k = pm.placed[0]
    alloc = pm.plan.get(f"t{k}").allocation
    i = int(np.flatnonzero(ins.template == k)[-1])
    period_start = int(np.floor(ins.submit_s[i] / contracts[k].period_s) * contracts[k].period_s // 60)
    minutes = np.arange(len(alloc.containers)) + period_start + alloc.offset
    got = [float(pm.table.guaranteed(int(m), np.array([i]), np.array([1e9]))[0]) for m in minutes]
    assert got == [float(x) for x in alloc.containers]  # the reservation, minute by minute
    assert float(pm.table.guaranteed(int(minutes[-1]) + 1, np.array([i]), np.array([1e9]))[0]) == 0.0
    other = int(np.flatnonzero(~np.isin(ins.template, pm.placed))[0])
    assert pm.table.guaranteed(0, np.array([other]), np.array([1.0]))[0] == s.user.guaranteed(
        0, np.array([other]), np.array([1.0]))[0]  # no reservation: the user's allocation
    dl = deadlines(s.workload, contracts)
    assert np.isfinite(dl[np.isin(ins.template, pm.placed)]).all()
