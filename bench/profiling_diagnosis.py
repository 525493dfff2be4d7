"""Where `sextant` at its profiling budget loses QoS: its classification rows against the twin's truth,
per workload, beside where it was placed (docs/quality/profiling.md, "Sextant 9").

    .venv/bin/python bench/profiling_diagnosis.py [--scenario paragon-ec2-2500] [--seeds 1]
                                                  [--profiles sextant,...] [--json PATH]

Per profile and seed, one twin run (`sextant_sim.runner.run_profile`), then per workload:
A profile may carry tuning overrides, `NAME:key=value:...` (`sextant` at the current version
with `discount` = `SizingParams.unmeasured_discount`, `gate` = `SizingParams.slow_gate`, `plan` = `default|adaptive|dense`, `runs` =
the adaptive plan's `max_runs`, `pw` = its `platform_weight`, `fs` = `floor_sources`,
`fp` = `floor_platforms`, `choice` = `platform_choice`, `cov` = `coverage`; `rel=1`, a hypothesis test for the whole
process, reads every requirement relative: 95 % of the best predicted level): tuning runs, on seeds 1–5 only.

- the rows it was classified with (the final state's `WorkloadClassified`) beside the port's
  noise-free rows (`EstimateSource.variant(0)`: the truth, bench-side only);
- which heterogeneity entries the profiling runs measured (the platforms of its runs) and which
  interference sources;
- where it ran (the ledger's first platform) and its time-averaged platform and interference
  factors.

Each workload that misses QoS is put in the first class it matches: `unplaced` (never started or
not finished), `platform` (its time-averaged platform factor — speed over the best platform with
room for its threads — is below the QoS bar, 0.95), split by whether that platform's entry was
measured and whether the classification over-estimated it (its predicted level over the best
predicted one among the platforms with room for its threads ≥ 0.95: else it was placed there
knowingly — as close as possible, or sized up), `interference` (interference factor below 0.97),
else `other` (waits, fewer cores than threads, phases). Error statistics: mean |ln(predicted / true)| of relative platform levels, measured and
unmeasured entries apart; mean absolute error (points) of tolerated and caused scores, measured
sources and unmeasured ones apart. Diagnosis only: no claims, no timing.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import math
import os
import sys
from collections import Counter
from typing import Any

from quality import code_version, seeds_of
from sextant_contracts.model import Classification
from sextant_sim.metrics import QOS, normalized, qos_met
from sextant_sim.runner import estimate_source, run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare

PLATFORM_BAR = QOS  # a platform whose true relative level is below it cannot meet QoS alone
INTERFERENCE_BAR = 0.97


def _relative(row: dict[str, float]) -> dict[str, float]:
    top = max((v for v in row.values() if v > 0 and math.isfinite(v)), default=0.0)
    return {p: v / top for p, v in row.items() if top > 0 and v > 0 and math.isfinite(v)}


def diagnose(setup: Any, engine: Any) -> dict[str, Any]:
    """The per-class counts and error statistics of one finished run (module docstring)."""
    truth = estimate_source(setup, [engine]).variant(0.0)
    records = engine.ledger.records
    end = engine.now
    classes: Counter[str] = Counter()
    err: dict[str, list[float]] = {k: [] for k in ("het_measured", "het_unmeasured", "itf_measured",
                                                    "itf_unmeasured")}
    placed_measured = placed_total = 0
    runs = 0
    for sub in setup.subs:
        wid = sub.workload_id
        w = engine.state.workloads.get(wid)
        r = records[wid]
        if w is None or w.classification is None:
            classes["unclassified"] += 1
            continue
        runs += len(w.profile_runs)
        c = w.classification
        true = truth.estimate(wid, 0)
        measured_p = {run.platform for run in w.profile_runs
                      if run.classification in (Classification.HETEROGENEITY, Classification.SCALE_UP)}
        measured_s = {run.column for run in w.profile_runs if run.classification == Classification.INTERFERENCE}
        pred_rel, true_rel = _relative(dict(c.heterogeneity)), _relative(dict(true.heterogeneity))
        for p, v in pred_rel.items():
            if p in true_rel:
                err["het_measured" if p in measured_p else "het_unmeasured"].append(abs(math.log(v / true_rel[p])))
        for s, v in true.tolerated.items():
            key = "itf_measured" if s in measured_s else "itf_unmeasured"
            if s in c.tolerated:
                err[key].append(abs(float(c.tolerated[s]) - v))
            if s in c.caused:
                err[key].append(abs(float(c.caused[s]) - float(true.caused[s])))
        platform = r.platforms[0] if r.platforms else None
        if platform is not None:
            placed_total += 1
            placed_measured += platform in measured_p
        svc = sub.truth.service
        norm = normalized(r, end, svc.trace[0][1] if svc is not None else 0.0, svc.peak_qps if svc is not None else 0.0)
        if qos_met(r, norm):
            continue
        if platform is None or r.status != "completed":
            classes["unplaced_or_unfinished"] += 1
        elif r.het_factor < PLATFORM_BAR:
            # the truth's bar: the best platform with room for its threads (`Cluster.ideal_speed`);
            # the prediction read the same way
            fits = [p.platform_id for p in setup.cat.platforms if p.cores >= sub.truth.threads] or list(pred_rel)
            top = max((c.heterogeneity.get(q, 0.0) for q in fits), default=0.0)
            over = top > 0 and c.heterogeneity.get(platform, 0.0) / top >= PLATFORM_BAR
            classes[f"platform_{'measured' if platform in measured_p else 'unmeasured'}"
                    f"_{'overestimated' if over else 'known_slow'}"] += 1
        elif r.intf_factor < INTERFERENCE_BAR:
            classes["interference"] += 1
        else:
            classes["other"] += 1
    n = len(setup.subs)
    return {"lost": dict(sorted(classes.items())), "lost_points": {k: round(v / n, 4) for k, v in sorted(classes.items())},
            "errors": {k: {"mean": round(sum(v) / len(v), 4) if v else None, "n": len(v)} for k, v in err.items()},
            "placed_on_measured_platform": round(placed_measured / placed_total, 4) if placed_total else None,
            "runs_per_workload": round(runs / n, 3) if n else 0.0}


def variant_set(spec: str) -> Any:
    """The policy set of a `NAME:key=value:...` spec (module docstring), None for a plain profile."""
    from dataclasses import replace

    from sextant_core.planning import policysets
    from sextant_core.profiling.adaptive import AdaptiveProfilingPlan

    name, *opts = spec.split(":")
    if not opts:
        return None
    kv = dict(o.split("=", 1) for o in opts)
    if kv.get("rel") == "1":  # a hypothesis test, never a policy: every requirement read relative
        from sextant_core.planning import targets  # (95 % of the best predicted), whatever its units

        targets.UNIT_MISMATCH = 1.0 + 1e-12
    params = policysets.PLANNER_VERSIONS[kv.get("version", policysets.VERSION)]
    if "discount" in kv:
        params = replace(params, sizing=replace(params.sizing, unmeasured_discount=float(kv["discount"])))
    if "gate" in kv:
        params = replace(params, sizing=replace(params.sizing, slow_gate=float(kv["gate"])))
    plan = kv.get("plan", "default")
    profiling: Any = None
    if plan == "dense":
        profiling = policysets.DENSE_PROFILING
    elif plan == "adaptive":
        base = policysets.ADAPTIVE_PROFILING
        profiling = AdaptiveProfilingPlan(
            max_runs=int(kv.get("runs", base.max_runs)), platform_weight=float(kv.get("pw", base.platform_weight)),
            floor_sources=int(kv.get("fs", base.floor_sources)), floor_platforms=int(kv.get("fp", base.floor_platforms)),
            platform_choice=kv.get("choice", base.platform_choice), coverage=float(kv.get("cov", base.coverage)))
    return policysets.sextant_policy_set(name=name, params=params, profiling=profiling,
                                         version=kv.get("version", policysets.VERSION))


def run_variant(setup: Any, spec: str, seed: int) -> Any:
    """`run_profile` for a plain profile; a spec's policy set run on the same setup otherwise."""
    ps = variant_set(spec)
    if ps is None:
        return run_profile(setup, spec, seed)
    import time

    from sextant_sim.engine import Engine
    from sextant_sim.runner import RunResult, summary_of

    started = time.perf_counter()
    engine = Engine(setup, ps)
    engine.run()
    wall = time.perf_counter() - started
    return RunResult(profile=spec, summary=summary_of(engine, wall), engine=engine, wall_seconds=wall)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="paragon-ec2-2500")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--profiles", default="sextant", help="comma-separated; ';' between specs with options")
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    out: dict[str, Any] = {"benchmark": "profiling-diagnosis", "scenario": args.scenario,
                           "code_version": code_version(), "per_seed": {}}
    for seed in seeds_of(args.seeds):
        setup = prepare(load_scenario(args.scenario), seed)
        for profile in args.profiles.split(";" if ";" in args.profiles else ","):
            res = run_variant(setup, profile, seed)
            d = {"qos": res.summary["qos_met_fraction"], **diagnose(setup, res.engine),
                 "wall_seconds": round(res.wall_seconds, 1)}
            out["per_seed"].setdefault(str(seed), {})[profile] = d
            print(f"seed {seed} {profile}: {json.dumps(d)}", flush=True)
    write_result(out, args.json_path)
    return 0


def write_result(out: dict[str, Any], path: str | None) -> None:
    """`out` with the load average at the end of the runs, written as JSON to `path` when given."""
    out["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.exit(main())
