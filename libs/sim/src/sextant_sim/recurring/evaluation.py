"""The twin's month of recurring jobs, measured (spec/morpheus.md §5.3, §7; docs/recurring.md).

The split is by submit time: the first `train_share` (70 %) of the month trains, the rest tests.

- `provenance(wl, outcome, mask)` — what the platform would record of each instance (submit,
  start, end, success, last input write, first read of its output by its consumer or egress):
  `sextant_core.recurring.slo.InstanceProvenance`, from the truths and a run's outcome.
- `infer_contracts` — the core's detector (`periodicity.detect`, on the training submissions)
  and SLO extractor (`slo.infer_slo`, on the training runs of the baseline); the period handed to
  the extractor is the core's `periodicity.contract_period` (the natural period when the job keeps
  its place in it, else the fitted one), as the platform's `decisions.infer` does.
- `slo_misses` — per scored instance, whether it finished after its deadline (period start +
  the contract's d; an unfinished run misses). Scored: test instances whose template has an
  actionable contract, terminal failures excluded (their output never exists; counted apart).
- `measure_baseline(seed)` — the baseline "user static provisioning + fair share" end to end:
  `slo_derivable_share` (test instances of periodic templates whose template has an actionable
  contract, over all test instances), the baseline's misses with fair share and in the worst case
  (no opportunistic capacity), at the workload's nominal capacity, and P(B fails | A missed) vs
  P(B fails | A met) for producer → consumer pairs (`consumer_failed`, a world rule).

The nominal capacity is the mean periodic demand over `periodic_share` (0.55) of the cluster
(spec §2: production work ~75 % of provisioned capacity counting its over-provisioning, ad-hoc
10–20 %); the ad-hoc load is `adhoc.adhoc_load` at that capacity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sextant_core.recurring.periodicity import contract_period, detect
from sextant_core.recurring.slo import InstanceProvenance, OutputRead, SloContract, SloParams, infer_slo

from ..arrivals import rng_for
from .adhoc import adhoc_load
from .execution import GuaranteePolicy, Outcome, UserStatic, simulate
from .provisioning import user_provisioning
from .workload import DAY_S, Workload, WorkloadParams, generate


def nominal_capacity(wl: Workload, periodic_share: float = 0.55) -> int:
    """Containers: the month's mean periodic demand is `periodic_share` of it (module doc)."""
    mean = float(wl.instances.work.sum()) / (wl.horizon_s / 60.0)
    return int(math.ceil(mean / periodic_share))


def provenance(wl: Workload, outcome: Outcome, mask: np.ndarray) -> dict[int, list[InstanceProvenance]]:
    """The recorded provenance of the instances in `mask`, per template key (module doc)."""
    ins, tp = wl.instances, wl.templates
    out: dict[int, list[InstanceProvenance]] = {}
    for i in np.flatnonzero(mask):
        key = int(ins.template[i])
        rd = int(tp.reader[key])
        read = float(ins.read_s[i])
        reads = () if math.isnan(read) else (
            OutputRead(read, None if rd < 0 else rd, None if rd < 0 else float(tp.period_s[rd])),)
        end = float(outcome.end_s[i])
        ok = bool(ins.succeeded[i]) and not math.isnan(end)
        out.setdefault(key, []).append(InstanceProvenance(
            key, float(ins.submit_s[i]), float(outcome.start_min[i]) * 60.0, end if ok else math.inf, ok,
            float(ins.input_s[i]), reads))
    return out


def infer_contracts(wl: Workload, outcome: Outcome, train_end_s: float,
                    slo: SloParams | None = None) -> dict[int, SloContract]:
    """Contracts of the templates the detector finds periodic on the training window (module doc)."""
    ins = wl.instances
    train = ins.submit_s < train_end_s
    found = {p.key: p for p in detect(ins.template[train], ins.submit_s[train]) if p.periodic}
    prov = provenance(wl, outcome, train)
    sp = slo or SloParams()
    return {k: infer_slo(k, contract_period(p), prov.get(k, []), sp) for k, p in sorted(found.items())}


def deadlines(wl: Workload, contracts: Mapping[int, SloContract]) -> np.ndarray:
    """Absolute deadline of every instance (nan: its template has no actionable contract)."""
    ins = wl.instances
    d = np.full(ins.count, np.nan)
    for k, c in contracts.items():
        if c.actionable:
            rows = ins.template == k
            d[rows] = np.floor(ins.submit_s[rows] / c.period_s) * c.period_s + c.deadline_s
    return d


def slo_misses(wl: Workload, outcome: Outcome, deadline_s: np.ndarray, mask: np.ndarray) -> tuple[int, int]:
    """(misses, scored instances) among `mask` (module doc)."""
    scored = mask & ~np.isnan(deadline_s) & wl.instances.succeeded
    late = np.isnan(outcome.end_s) | (outcome.end_s > deadline_s + 1e-6)
    return int((late & scored).sum()), int(scored.sum())


def training_skylines(wl: Workload, outcome: Outcome, train_end_s: float) -> dict[int, list[np.ndarray]]:
    """Per template, the used containers per minute of its successful training runs (the skyline
    LP's input; `outcome` must be recorded), in submit order."""
    ins = wl.instances
    idx = np.flatnonzero((ins.submit_s < train_end_s) & ins.succeeded & ~np.isnan(outcome.end_s))
    sky = outcome.skylines(idx)
    out: dict[int, list[np.ndarray]] = {}
    for i in idx:
        if int(i) in sky:
            out.setdefault(int(ins.template[i]), []).append(sky[int(i)])
    return out


def consumer_failed(wl: Workload, outcome: Outcome, base: float = 0.02, stale: float = 0.3) -> np.ndarray:
    """Whether the consumer run that first reads each instance's output fails (a world rule, spec
    §7 "dependency pairs A → B with failure outcomes"): with probability `stale` when the output
    was not there at the read (the producer ended after it, or never), else `base`; False for
    egress and unread outputs. Drawn from the workload's own seeded stream."""
    ins = wl.instances
    u = rng_for(wl.seed, "recurring", "consumers").random(ins.count)
    has_reader = (wl.templates.reader[ins.template] >= 0) & ~np.isnan(ins.read_s)
    late = np.isnan(outcome.end_s) | ~ins.succeeded | (outcome.end_s > np.nan_to_num(ins.read_s, nan=np.inf))
    return np.asarray(has_reader & (u < np.where(late, stale, base)))


def miss_failure_ratio(wl: Workload, outcome: Outcome, deadline_s: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
    """P(B fails | A missed its SLO) and P(B fails | A met it) over the scored instances of `mask`
    whose output a consumer job reads (Morpheus §9: > 4×)."""
    fail = consumer_failed(wl, outcome)
    scored = mask & ~np.isnan(deadline_s) & wl.instances.succeeded & (wl.templates.reader[wl.instances.template] >= 0)
    missed = np.isnan(outcome.end_s) | (outcome.end_s > deadline_s + 1e-6)
    p_miss = float(fail[scored & missed].mean()) if (scored & missed).any() else math.nan
    p_met = float(fail[scored & ~missed].mean()) if (scored & ~missed).any() else math.nan
    ratio = p_miss / p_met if p_met > 0 else math.nan
    return {"p_fail_given_miss": round(p_miss, 4), "p_fail_given_met": round(p_met, 4),
            "ratio": round(ratio, 2), "pairs_missed": int((scored & missed).sum())}


@dataclass(frozen=True)
class MonthSetup:
    """One seed's month: the workload, its cluster, its ad-hoc load, the user baseline, the split."""

    workload: Workload
    capacity: int
    adhoc: np.ndarray
    user: GuaranteePolicy
    train_end_s: float

    @property
    def test(self) -> np.ndarray:
        return np.asarray(self.workload.instances.submit_s >= self.train_end_s)


def month(seed: int, params: WorkloadParams | None = None, train_share: float = 0.7) -> MonthSetup:
    wl = generate(seed, params)
    cap = nominal_capacity(wl)
    minutes = int(math.ceil(wl.horizon_s / 60.0))
    up = user_provisioning(wl)
    user = UserStatic(up.allocation(wl.instances.template, wl.instances.submit_s))
    return MonthSetup(wl, cap, adhoc_load(seed, minutes, cap), user, train_share * wl.horizon_s)


def run(setup: MonthSetup, policy: GuaranteePolicy, *, opportunistic: bool = True, capacity: float | None = None,
        record: bool = False) -> Outcome:
    return simulate(setup.workload.instances, setup.capacity if capacity is None else capacity, policy,
                    adhoc=setup.adhoc, opportunistic=opportunistic, horizon_min=int(setup.workload.horizon_s // 60),
                    record=record)


def misses(setup: MonthSetup, policy: GuaranteePolicy, deadline_s: np.ndarray,
           capacity: float | None = None) -> dict[str, int]:
    """Test-period misses of any guarantee policy (the user's, a plan's reservations), with fair
    share and in the worst case, on `capacity` (default: the setup's)."""
    out = {}
    for name, opp in (("fair_share", True), ("worst_case", False)):
        o = run(setup, policy, opportunistic=opp, capacity=capacity)
        out[name] = slo_misses(setup.workload, o, deadline_s, setup.test)[0]
    return out


def measure_baseline(seed: int, params: WorkloadParams | None = None) -> dict[str, Any]:
    """The baseline's month of one seed (module doc); figures rounded for the results JSON."""
    return measure_month(month(seed, params))


def measure_month(s: MonthSetup) -> dict[str, Any]:
    """`measure_baseline` on a prepared month."""
    return measure_month_on(s, run(s, s.user))


def measure_month_on(s: MonthSetup, shared: Outcome) -> dict[str, Any]:
    """`measure_month` with the baseline's fair-share month `shared` already run."""
    worst = run(s, s.user, opportunistic=False)
    contracts = infer_contracts(s.workload, shared, s.train_end_s)
    dl = deadlines(s.workload, contracts)
    test = s.test
    miss_fs, scored = slo_misses(s.workload, shared, dl, test)
    miss_wc, _ = slo_misses(s.workload, worst, dl, test)
    return {
        "templates": s.workload.templates.count, "instances": s.workload.instances.count,
        "test_instances": int(test.sum()), "capacity": s.capacity, "train_days": round(s.train_end_s / DAY_S, 2),
        "periodic_templates": len(contracts), "actionable_templates": sum(c.actionable for c in contracts.values()),
        "slo_derivable_share": round(float((~np.isnan(dl[test])).mean()), 4),
        "scored_instances": scored, "terminal_failures": int((test & ~s.workload.instances.succeeded).sum()),
        "baseline_misses_fair_share": miss_fs, "baseline_misses_worst_case": miss_wc,
        "consumer_failures": miss_failure_ratio(s.workload, shared, dl, test),
    }
