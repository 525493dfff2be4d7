"""Sextant against the user baseline on one twin month (Morpheus §9; spec/morpheus.md §5.3, §7).

`Trained` is what the platform learns from the training weeks of the baseline (contracts,
deadlines, telemetry skylines, the LP's fits); every Sextant variant below plans from it and is
measured on the test weeks only (`simulate(include=...)`: the test instances plus the day before
them, so the cluster is warm — on seed 1 (60 templates) the same misses as the whole month).

- `worst_case` — misses with no opportunistic capacity (the paper's "worst case") and with fair
  share, of the baseline, of the plan without DRA and with DRA, and the **floor**: misses when every
  job gets all it can use from its start on an unbounded cluster (late inputs, stragglers, retries
  and deadlines shorter than the run — what no provisioning can prevent). The reduction is
  baseline / max(Sextant, 1), both worst case.
- `smallest_cluster` — the smallest capacity (a fraction of the nominal one, by bisection on
  [lo, 1]) at which a variant, re-planned for that capacity, with DRA and fair share, misses no
  more test deadlines than the baseline does at the nominal size with fair share (Fig. 10a's "SLO
  attainment above the baseline"). The ad-hoc load keeps its absolute size. The reduction is
  1 − that fraction (0 when even the nominal size does not match).
- variants (Fig. 10a's ablation): `both` (the LP's skylines packed by LowCost in [a, d)),
  `modelling` (the LP's skylines pinned at the job's start, no use of the slack), `slo_packing`
  (the user's static allocation for the P95 run length, packed in [a, d)).
- `alpha_sweep` (Fig. 9c): per α, worst-case misses with DRA and the reserved area over the
  mean used area of the training runs.
- `slack_ratios` (Fig. 9a): (T_outRead − T_end)/(T_end − T_start) of the training instances.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sextant_core.recurring.skyline import DEFAULT_ALPHA
from sextant_core.recurring.slo import SloContract, SloParams

from .evaluation import (
    MonthSetup,
    deadlines,
    infer_contracts,
    miss_failure_ratio,
    provenance,
    run,
    slo_misses,
    training_skylines,
)
from .execution import GuaranteePolicy, Outcome, UserStatic, simulate
from .planned import PlannedMonth, fit_skylines, plan_reservations, user_skylines

VARIANTS = ("both", "modelling", "slo_packing")


@dataclass(frozen=True)
class Trained:
    setup: MonthSetup
    baseline: Outcome  # the whole month, recorded, with fair share
    contracts: Mapping[int, SloContract]
    deadline_s: np.ndarray
    skylines: Mapping[int, list[np.ndarray]]
    fits: Mapping[int, tuple[int, ...]]

    @property
    def include(self) -> np.ndarray:
        ins = self.setup.workload.instances
        return np.asarray(ins.submit_s >= self.setup.train_end_s - 86400.0)


def train(setup: MonthSetup, slo: SloParams | None = None) -> Trained:
    out = run(setup, setup.user, record=True)
    contracts = infer_contracts(setup.workload, out, setup.train_end_s, slo)
    sky = training_skylines(setup.workload, out, setup.train_end_s)
    return Trained(setup, out, contracts, deadlines(setup.workload, contracts), sky, fit_skylines(contracts, sky))


def simulate_test(t: Trained, policy: GuaranteePolicy, *, opportunistic: bool, capacity: float | None = None) -> Outcome:
    s = t.setup
    return simulate(s.workload.instances, s.capacity if capacity is None else capacity, policy, adhoc=s.adhoc,
                    opportunistic=opportunistic, horizon_min=int(s.workload.horizon_s // 60), include=t.include)


def misses(t: Trained, o: Outcome) -> int:
    return slo_misses(t.setup.workload, o, t.deadline_s, t.setup.test)[0]


def plan(t: Trained, variant: str = "both", capacity: float | None = None, alpha: float | None = None) -> PlannedMonth:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    if variant == "slo_packing":
        fits = user_skylines(t.setup, t.contracts, t.skylines)
    elif alpha is not None and alpha != DEFAULT_ALPHA:  # the default's skylines are `t.fits`
        fits = fit_skylines(t.contracts, t.skylines, alpha=alpha)
    else:
        fits = dict(t.fits)
    return plan_reservations(t.setup, t.contracts, t.skylines, capacity=capacity, fitted=fits,
                             pack=variant != "modelling")


def worst_case(t: Trained) -> dict[str, Any]:
    s = t.setup
    ins = s.workload.instances
    floor = simulate(ins, 1e12, UserStatic(np.full(ins.count, 1e12)), opportunistic=False,
                     horizon_min=int(s.workload.horizon_s // 60), include=t.include)
    pm = plan(t)
    out: dict[str, Any] = {"floor_misses": misses(t, floor), "placed": len(pm.placed), "refused": len(pm.refused)}
    runs: dict[str, Callable[[], GuaranteePolicy]] = {"baseline": lambda: s.user, "sextant_no_dra": lambda: pm.table,
                                                      "sextant": pm.with_dra}
    fair: Outcome | None = None
    for name, make in runs.items():
        for opp in (False, True):
            policy = make()
            o = simulate_test(t, policy, opportunistic=opp)
            out[f"{name}_misses_{'fair_share' if opp else 'worst_case'}"] = misses(t, o)
            if name == "sextant" and opp:
                fair = o
                out["dra_decisions"] = dict(sorted(getattr(policy, "decisions", {}).items()))
    sx = out["sextant_misses_worst_case"]
    out["worst_case_miss_reduction_x"] = round(out["baseline_misses_worst_case"] / max(sx, 1), 3)
    out["floor_bound_x"] = round(out["baseline_misses_worst_case"] / max(out["floor_misses"], 1), 3)
    if fair is not None:
        out["consumer_failures_sextant"] = miss_failure_ratio(s.workload, fair, t.deadline_s, s.test)
    return out


def smallest_cluster(t: Trained, variant: str, steps: int, lo: float = 0.5, target: int | None = None) -> dict[str, Any]:
    """Bisection on the capacity fraction (module doc); `target`: the baseline's fair-share misses."""
    s = t.setup
    goal = misses(t, simulate_test(t, s.user, opportunistic=True)) if target is None else target

    def ok(frac: float) -> tuple[bool, int]:
        cap = max(1.0, math.floor(frac * s.capacity))
        pm = plan(t, variant, capacity=cap)
        m = misses(t, simulate_test(t, pm.with_dra(), opportunistic=True, capacity=cap))
        return m <= goal, m

    tried: dict[str, int] = {}
    good, m = ok(1.0)
    tried["1.0"] = m
    if not good:
        return {"fraction": 1.0, "reduction": 0.0, "baseline_misses": goal, "tried": tried}
    a, b = lo, 1.0
    for _ in range(steps):
        mid = round((a + b) / 2, 6)
        good, m = ok(mid)
        tried[str(mid)] = m
        a, b = (a, mid) if good else (mid, b)
    return {"fraction": b, "reduction": round(1.0 - b, 4), "baseline_misses": goal, "tried": tried}


def alpha_sweep(t: Trained, alphas: tuple[float, ...]) -> dict[str, Any]:
    used = {k: float(np.mean([r.sum() for r in runs])) for k, runs in t.skylines.items() if runs}
    out: dict[str, Any] = {}
    for a in alphas:
        pm = plan(t, alpha=a)
        fits = t.fits if a == DEFAULT_ALPHA else fit_skylines(t.contracts, t.skylines, alpha=a)
        ratio = [sum(f) / used[k] for k, f in fits.items() if used.get(k, 0) > 0]
        out[str(a)] = {"sextant_misses_worst_case": misses(t, simulate_test(t, pm.with_dra(), opportunistic=False)),
                       "provisioned_over_used_area_median": round(float(np.median(ratio)), 3) if ratio else None,
                       "placed": len(pm.placed)}
    return out


def slack_ratios(t: Trained) -> np.ndarray:
    """Slack over duration of the training instances of actionable templates (Fig. 9a)."""
    s = t.setup
    prov = provenance(s.workload, t.baseline, s.workload.instances.submit_s < s.train_end_s)
    vals = []
    for k, c in t.contracts.items():
        if not c.actionable:
            continue
        for p in prov.get(k, []):
            if p.succeeded and p.reads and math.isfinite(p.end_s) and p.end_s > p.start_s:
                vals.append((min(r.time_s for r in p.reads) - p.end_s) / (p.end_s - p.start_s))
    return np.sort(np.asarray(vals, dtype=float))
