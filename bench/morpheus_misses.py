"""Where Sextant's worst-case SLO misses come from, on the Morpheus twin (docs/recurring/twin.md).

    .venv/bin/python bench/morpheus_misses.py [--seeds 1-5] [--templates 100] [--json PATH]

Per seed: one twin month (`sextant_sim.recurring.comparison.train`), the plan (skyline LP +
LowCost), then three test-period runs with no opportunistic capacity (the paper's worst case):
the floor (every job gets all it can use from its start on an unbounded cluster), Sextant
without DRA and Sextant with DRA. Every scored instance that Sextant with DRA misses is put in
the first class it matches:

- `floor` — the floor misses it too: a late input, a deadline shorter than the run itself; no
  provisioning prevents it;
- `no_reservation` — its template has no reservation (the plan refused it or its period does not
  divide the day): it ran on the user's static allocation;
- `started_after_reservation_end` / `started_late` — the job became runnable after its period's
  reservation had ended / had begun (late input or submission; part of the reservation idled);
- `area_short` — the instance's work (container-minutes) exceeds its reservation's area: the
  skyline under-estimates the run (input-size variance, a code delta, slow hardware, a straggler
  tail, a retry; `extra_phases` and `sku2` count those among each class);
- `shape` — the area would do but the run did not fit the reservation's time profile (narrow
  phases under a wide reservation, a reservation that ends at the deadline with no room for
  DRA's catch-up).

The baseline's worst-case misses are printed beside, and the templates with most misses (Sextant's,
the baseline's, the contract's period). Columns beside the classes: `also_without_dra` (the plan without DRA misses it too), `dra_*`
(DRA's decisions over the whole run, by reason), the median slack between the reservation's end
and the deadline (minutes) of the missed instances. Diagnosis only: no claims, no timing.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import os
import sys
from collections import Counter
from typing import Any

import numpy as np
from quality import code_version, seeds_of
from sextant_core.recurring.dra import DraParams
from sextant_sim.recurring.comparison import Trained, plan, simulate_test, train
from sextant_sim.recurring.evaluation import month
from sextant_sim.recurring.execution import Outcome, UserStatic, simulate
from sextant_sim.recurring.workload import WorkloadParams, recurring_version

CLASSES = ("floor", "no_reservation", "started_after_reservation_end", "started_late", "area_short", "shape")


def _missed(t: Trained, o: Outcome) -> np.ndarray:
    ins = t.setup.workload.instances
    scored = t.setup.test & ~np.isnan(t.deadline_s) & ins.succeeded
    late = np.isnan(o.end_s) | (o.end_s > t.deadline_s + 1e-6)
    return np.asarray(scored & late)


def diagnose(t: Trained, alpha: float | None = None, dra_params: DraParams | None = None) -> dict[str, Any]:
    """The breakdown of one trained month (module doc)."""
    s = t.setup
    ins = s.workload.instances
    floor = simulate(ins, 1e12, UserStatic(np.full(ins.count, 1e12)), opportunistic=False,
                     horizon_min=int(s.workload.horizon_s // 60), include=t.include)
    pm = plan(t, alpha=alpha)
    dra = pm.with_dra(dra_params or DraParams())
    with_dra = simulate_test(t, dra, opportunistic=False)
    no_dra = simulate_test(t, pm.table, opportunistic=False)
    base = simulate_test(t, s.user, opportunistic=False)
    miss, miss_floor, miss_nodra = _missed(t, with_dra), _missed(t, floor), _missed(t, no_dra)
    miss_base = _missed(t, base)
    tab = pm.table
    tm = ins.template
    length = (tab.containers > 0).shape[1] - np.argmax((tab.containers[:, ::-1] > 0), axis=1)
    area = tab.containers.sum(axis=1)
    res_start = tab.period_start_min + tab.offset_min[tm]
    res_end = res_start + length[tm]
    start = with_dra.start_min
    work = ins.work.sum(axis=1)
    extra = ins.phases > (s.workload.templates.stage_par[tm] > 0).sum(axis=1)  # a straggler tail or a retry
    train_rows = ins.submit_s < s.train_end_s
    train_max = {int(k): float(work[train_rows & (tm == k)].max()) for k in np.unique(tm[train_rows])}
    above_train = np.array([work[i] > train_max.get(int(tm[i]), np.inf) for i in range(ins.count)])
    klass = np.full(ins.count, "", dtype=object)
    for i in np.flatnonzero(miss):
        k = int(tm[i])
        if miss_floor[i]:
            klass[i] = "floor"
        elif not tab.has[k]:
            klass[i] = "no_reservation"
        elif start[i] >= res_end[i]:
            klass[i] = "started_after_reservation_end"
        elif start[i] > res_start[i]:
            klass[i] = "started_late"
        elif work[i] > area[k] + 1e-6:
            klass[i] = "area_short"
        else:
            klass[i] = "shape"
    rows: dict[str, Any] = {}
    dl_min = t.deadline_s / 60.0
    for c in CLASSES:
        sel = miss & (klass == c)
        n = int(sel.sum())
        rows[c] = {"misses": n, "also_without_dra": int((sel & miss_nodra).sum()),
                   "extra_phases": int((sel & extra).sum()),
                   "sku2": int((sel & ins.sku2).sum()), "work_above_training_max": int((sel & above_train).sum()),
                   "templates": len(set(tm[sel].tolist())),
                   "median_deadline_minus_reservation_end_min":
                       round(float(np.median(dl_min[sel] - res_end[sel])), 1) if n else None}
    decisions = dict(sorted(dra.decisions.items()))
    per_template = Counter(int(tm[i]) for i in np.flatnonzero(miss))
    base_template = Counter(int(tm[i]) for i in np.flatnonzero(miss_base))
    return {"baseline_misses_worst_case": int(miss_base.sum()), "sextant_misses_worst_case": int(miss.sum()), "sextant_no_dra_misses_worst_case": int(miss_nodra.sum()),
            "floor_misses": int(miss_floor.sum()), "placed": len(pm.placed), "refused": len(pm.refused),
            "classes": rows, "dra_decisions": decisions, "dra_granted_area": round(dra.granted_area, 1),
            "top_templates": [(k, n, base_template.get(k, 0), round(float(t.contracts[k].period_s)))
                              for k, n in per_template.most_common(8)]}


def table(seed: int, d: dict[str, Any]) -> str:
    head = (f"seed {seed}: baseline worst-case misses {d['baseline_misses_worst_case']}, Sextant "
            f"{d['sextant_misses_worst_case']} (no DRA "
            f"{d['sextant_no_dra_misses_worst_case']}, floor {d['floor_misses']}; placed {d['placed']}, "
            f"refused {d['refused']})")
    cols = ("misses", "also_without_dra", "extra_phases", "sku2", "work_above_training_max", "templates",
            "median_deadline_minus_reservation_end_min")
    out = [head, f"  {'class':<30}" + "".join(f"{c[:14]:>15}" for c in cols)]
    for c in CLASSES:
        out.append(f"  {c:<30}" + "".join(f"{d['classes'][c][k]!s:>15}" for k in cols))
    out.append(f"  DRA decisions: {d['dra_decisions']}; granted {d['dra_granted_area']} container-min")
    out.append(f"  templates with most misses (key, Sextant, baseline, contract period s): {d['top_templates']}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1-5", help="diagnosis and tuning seeds (claims are on 6-10)")
    ap.add_argument("--templates", type=int, default=100, help="twin templates (bench/morpheus.py --quick: 100)")
    ap.add_argument("--alpha", type=float, help="the skyline LP's α (default: the core's)")
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    params = WorkloadParams(templates=args.templates)
    load_start = os.getloadavg()
    per_seed: dict[str, Any] = {}
    for seed in seeds_of(args.seeds):
        d = diagnose(train(month(seed, params)), alpha=args.alpha)
        per_seed[str(seed)] = d
        print(table(seed, d), flush=True)
    totals = {c: sum(v["classes"][c]["misses"] for v in per_seed.values()) for c in CLASSES}
    print(f"all seeds: {totals}", flush=True)
    if args.json_path:
        doc = {"benchmark": "morpheus_misses", "seeds": seeds_of(args.seeds), "templates": args.templates,
               "alpha": args.alpha, "per_seed": per_seed, "worst": {"totals": totals},
               "code_version": code_version(), "twin_version": recurring_version(params),
               "load_avg": {"start": [round(x, 2) for x in load_start],
                            "end": [round(x, 2) for x in os.getloadavg()]}}
        with open(args.json_path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
    print(f"load {os.getloadavg()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
