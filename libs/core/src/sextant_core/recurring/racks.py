"""Corral's rack plans in the capacity ledger (docs/corral/platform.md, "One ledger").

A planned analytics job (`CorralJob` of the latest `CorralPlanDecided`) holds the cores and memory
of its racks' schedulable servers, as recorded, over its run: from `start_step` × step + `start_s`
for `predicted_s` in the plan's cyclic window (one day of one-minute steps). Each step is claimed
in proportion to the part of it the job covers, so jobs that follow each other on the same racks
share the step they meet in [choice: the ledger's resolution is a step; a run longer than the
window holds every step]; a claim ends `EPSILON_S` early, so times rounded when recorded never
make two consecutive jobs overlap. It is a guarantee (`ClaimKind.RACK_PLAN`) that must fit in
what every other claim leaves (it displaces no reservation). [choice: the ledger is a cluster
aggregate, so the claim is the racks' capacity, not those servers; which servers it is stays the
plan's `racks`.]
"""

from __future__ import annotations

import math

import numpy as np
from sextant_contracts import recurring as rc

from .ledger import ClaimKind, LedgerError
from .plan import Plan


def claim_id(template_id: str) -> str:
    return f"corral/{template_id}"


EPSILON_S = 1e-3  # a claim ends this early: the recorded times are rounded to 1 µs (module doc)


def claim_shares(start_step: int, job: rc.CorralJob, step_s: int, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(window steps, share of each step) `job` holds its racks for (module doc): sorted, unique."""
    t0 = start_step * step_s + job.start_s
    t1 = max(t0, t0 + job.predicted_s - EPSILON_S)
    first = math.floor(t0 / step_s)
    last = max(first, math.ceil(t1 / step_s) - 1)
    k = np.arange(first, min(last, first + window - 1) + 1)
    share = (np.minimum(t1, (k + 1) * step_s) - np.maximum(t0, k * step_s)) / step_s
    keep = share > 0
    steps, share = k[keep] % window, share[keep]
    order = np.argsort(steps, kind="stable")
    return steps[order], share[order]


def hold_job(plan: Plan, start_step: int, job: rc.CorralJob, step_s: int) -> Plan:
    """`plan` with `job`'s racks held; raises `ClaimInfeasible` (nothing changed) when they do not fit."""
    steps, share = claim_shares(start_step, job, step_s, plan.window)
    return plan.hold(claim_id(job.template_id), job.cores * share, job.memory_gb * share, ClaimKind.RACK_PLAN, steps)


def hold_rack_plan(plan: Plan, e: rc.CorralPlanDecided | None, step_s: int) -> tuple[Plan, tuple[str, ...]]:
    """`plan` with every job of the held Corral plan `e` claimed, in priority order; returns it and
    the claims that no longer fit (servers lost since), left out."""
    if e is None:
        return plan, ()
    left_out: list[str] = []
    for job in sorted(e.jobs, key=lambda j: (j.priority, j.template_id)):
        try:
            plan = hold_job(plan, e.start_step, job, step_s)
        except LedgerError:
            left_out.append(claim_id(job.template_id))
    return plan, tuple(left_out)
