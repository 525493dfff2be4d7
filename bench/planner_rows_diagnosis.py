"""What the `sextant` planner was told at each placement, beside the truth: the rows it placed with
(engine or estimate port) against the twin's, per lost workload (docs/quality/profiling.md,
"Planner fed engine rows").

    .venv/bin/python bench/planner_rows_diagnosis.py [--scenario paragon-ec2-2500] [--seed 1]
                                                     [--profiles SPEC,...] [--json PATH]

A SPEC is `NAME[:key=value...]`: `cls=cf|estimates` (the classifier), `plan=default|adaptive|dense`,
`version=V` (a key of `policysets.PLANNER_VERSIONS`), `off=B` (the version's classification engine
with `EngineParams.caused_offset` B), `cm=M` (`SatisficeParams.confidence_margin` M). Each run records, through a wrapper around
`SextantPlanner.place` (bench-side only: decisions are unchanged), the last placement of every
workload: the chosen platform and cores, the requirement (value, relative or not), the predicted
performance, the trace's notes, and the model's level H(p) and scale-up shape S(c) at the chosen
cores and at the workload's true threads. After the run, per workload that misses QoS on a platform
whose true level is below 0.95 of its best (`profiling_diagnosis.py`'s "platform" class), it counts:
how the planner got there (satisficed / satisficed_thin / as close as possible / waived), whether it
gave more cores than the workload's threads, and what the model predicted at the chosen cores
against the truth (the twin's rate alone on that platform with those cores). Diagnosis only, tuning
seeds 1–5.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import math
import sys
from collections import Counter
from statistics import mean, median
from typing import Any

from profiling_diagnosis import write_result
from quality import code_version
from sextant_core.planning import policysets
from sextant_core.planning.sextant import SextantPlanner
from sextant_sim.metrics import QOS, normalized, qos_met
from sextant_sim.runner import estimate_source
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare


def policy(setup: Any, spec: str, holder: list[Any]) -> Any:
    from sextant_sim.estimates import EstimateClassifier

    name, *opts = spec.split(":")
    kv = dict(o.split("=", 1) for o in opts)
    version = kv.get("version", policysets.VERSION)
    plan = {"default": policysets.DefaultProfilingPlan(), "adaptive": policysets.ADAPTIVE_PROFILING,
            "dense": policysets.DENSE_PROFILING}.get(kv.get("plan", ""))
    cls = None
    if kv.get("cls") == "estimates":
        cls = EstimateClassifier(estimate_source(setup, holder))
    elif kv.get("cls") == "truth":
        cls = EstimateClassifier(estimate_source(setup, holder).variant(0.0))
    elif "off" in kv:  # the version's engine with another caused-score offset (engine 3.1's `caused_offset`)
        from dataclasses import replace

        from sextant_core.classification.classifier import CollaborativeClassifier
        from sextant_core.classification.engine import ENGINE_VERSIONS

        engine = ENGINE_VERSIONS[policysets.ENGINE_OF.get(version, "1")]
        cls = CollaborativeClassifier(replace(engine, caused_offset=float(kv["off"])))
    params = None
    if "cm" in kv:  # the satisficing margin per unit of missing confidence (`SatisficeParams.confidence_margin`)
        from dataclasses import replace

        base = policysets.PLANNER_VERSIONS[version]
        params = replace(base, satisfice=replace(base.satisfice, confidence_margin=float(kv["cm"])))
    return policysets.sextant_policy_set(name=name, classifier=cls, profiling=plan, version=version, params=params)


def run(setup: Any, spec: str) -> dict[str, Any]:
    from sextant_sim.engine import Engine

    holder: list[Any] = []
    ps = policy(setup, spec, holder)
    seen: dict[str, dict[str, Any]] = {}
    planner = ps.planner
    assert isinstance(planner, SextantPlanner)
    inner = planner.place

    def place(state: Any, w: Any, ctx: Any) -> Any:
        out = inner(state, w, ctx)
        if out.allocation is not None and len(out.allocation.assignments) == 1:
            a = out.allocation.assignments[0]
            m = planner.assessor.model(state, w, max(s.capacity.cores for s in state.servers.values()))
            plat = state.servers[a.server_id].platform
            top = max([*m.platform_factor.values(), m.default_factor])
            seen[w.workload_id] = {"platform": plat, "cores": a.cores, "notes": list(out.trace.notes),
                                   "required": (out.detail or {}).get("required"),
                                   "predicted": out.predicted_performance, "h_rel": m.factor(plat) / top,
                                   "curve": [float(x) for x in m.curve], "c_ref": m.reference_cores,
                                   "relative": "relative_units" in out.trace.notes,
                                   "filtered": {f: dict(v) for f, v in (out.trace.filtered or {}).items()}}
        return out

    planner.place = place  # type: ignore[method-assign]
    engine = Engine(setup, ps)
    holder.append(engine)
    engine.run()
    cat = setup.cat
    pidx = {p.platform_id: i for i, p in enumerate(cat.platforms)}
    end = engine.now
    how: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    over_threads = 0
    pred_rel, true_rel, h_rel, s_gain = [], [], [], []
    lost_platform = 0
    qos = 0
    for sub in setup.subs:
        wid = sub.workload_id
        r = engine.ledger.records[wid]
        t = sub.truth
        svc = t.service
        norm = normalized(r, end, svc.trace[0][1] if svc is not None else 0.0, svc.peak_qps if svc is not None else 0.0)
        if qos_met(r, norm):
            qos += 1
            continue
        d = seen.get(wid)
        lost["unplaced_or_unfinished" if d is None or r.status != "completed" else "platform" if r.het_factor < QOS
             else "interference" if r.intf_factor < 0.97 else "other"] += 1
        if d is None or r.status != "completed" or r.het_factor >= QOS:
            continue
        lost_platform += 1
        notes = d["notes"]
        kind = ("waived" if "waived" in notes else "closest" if "as_close_as_possible" in notes
                else "thin" if "satisficed_thin" in notes else "satisficed" if "satisficed" in notes else "other")
        how[kind] += 1
        over_threads += d["cores"] > t.threads
        i = pidx[d["platform"]]
        fits = [j for j, p in enumerate(cat.platforms) if p.cores >= t.threads]
        ideal = max(float(t.speed[j]) for j in fits) if fits else float(t.speed.max())
        truth_alone = float(t.speed[i]) / ideal * t.scale_up(d["cores"]) / t.scale_up(t.threads)
        if d["required"] and d["predicted"]:
            pred_rel.append(d["predicted"] / d["required"])
        true_rel.append(truth_alone / QOS)
        h_rel.append(d["h_rel"])
        curve = d["curve"]
        c, th = min(d["cores"], len(curve)), min(t.threads, len(curve))
        s_gain.append(curve[c - 1] / curve[th - 1] if curve[th - 1] > 0 else 0.0)
    # the rows as classified against the truth (noise-free port): bias of the interference
    # scores, of the relative levels and of the absolute level at the workload's threads
    truth = estimate_source(setup, [engine]).variant(0.0)
    bias: dict[str, list[float]] = {"caused": [], "tolerated": [], "het_rel_log": []}
    for sub in setup.subs:
        w = engine.state.workloads.get(sub.workload_id)
        if w is None or w.classification is None:
            continue
        c, tr = w.classification, truth.estimate(sub.workload_id, 0)
        bias["caused"] += [float(c.caused[s]) - float(v) for s, v in tr.caused.items() if s in c.caused]
        bias["tolerated"] += [float(c.tolerated[s]) - float(v) for s, v in tr.tolerated.items() if s in c.tolerated]
        top_p, top_t = max(c.heterogeneity.values()), max(tr.heterogeneity.values())
        bias["het_rel_log"] += [math.log(c.heterogeneity[p] / top_p) - math.log(v / top_t)
                                for p, v in tr.heterogeneity.items() if c.heterogeneity.get(p, 0) > 0 and v > 0]
    filt: Counter[str] = Counter()
    for d in seen.values():
        if "as_close_as_possible" in d["notes"]:
            for f, reasons in d["filtered"].items():
                for reason, k in reasons.items():
                    filt[f"{f}/{reason}"] += k
    n_close = sum("as_close_as_possible" in d["notes"] for d in seen.values())
    n = len(setup.subs)

    def stats(xs: list[float]) -> dict[str, float] | None:
        return {"mean": round(mean(xs), 4), "median": round(median(xs), 4)} if xs else None

    return {"qos": round(qos / n, 4), "lost": dict(sorted(lost.items())), "lost_on_slow_platform": lost_platform, "how": dict(how),
            "cores_over_threads": over_threads, "predicted_over_required": stats(pred_rel),
            "truth_alone_over_qos_bar": stats(true_rel), "predicted_level_rel": stats(h_rel),
            "predicted_gain_chosen_cores_over_threads": stats(s_gain),
            "row_bias": {k: round(mean(v), 4) for k, v in bias.items() if v},
            "closest_placements": n_close,
            "closest_filtered_per_placement": {k: round(v / max(n_close, 1), 1) for k, v in filt.most_common(8)},
            "relative_requirement": sum(1 for d in seen.values() if d["relative"]), "placed": len(seen)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="paragon-ec2-2500")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profiles", default="sextant-dense:plan=dense;sextant-port:cls=estimates")
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    out: dict[str, Any] = {"benchmark": "planner-rows-diagnosis", "scenario": args.scenario, "seed": args.seed,
                           "code_version": code_version(), "runs": {}}
    setup = prepare(load_scenario(args.scenario), args.seed)
    for spec in args.profiles.split(";"):
        d = run(setup, spec)
        out["runs"][spec] = d
        print(f"seed {args.seed} {spec}: {json.dumps(d)}", flush=True)
    write_result(out, args.json_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
