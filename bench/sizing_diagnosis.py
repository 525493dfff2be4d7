"""Where `sextant` loses workloads a baseline keeps: per workload kind, the QoS met, the cores
placed against the request and the true need, the platform chosen and why each lost workload
missed (docs/quality/planning.md, "Sizing and platform choice").

    .venv/bin/python bench/sizing_diagnosis.py [--scenario paragon-ec2-2500] [--seeds 1-2]
                                               [--profiles sextant@9,interference-oblivious@2]
                                               [--json PATH]

Every profile runs on the same arrivals (one `Setup` per seed, as `bench/quality.py`); a wrapper
around the planner's `place` (bench-side only: decisions are unchanged) records each workload's
last allocation: its cores (all nodes), nodes and the platform of its first node. After each run,
per kind (batch / analytics / service): QoS met, mean placed / requested and placed / needed
cores, the share placed on a platform whose true per-core speed is ≥ 0.95 of the workload's best,
and the lost workloads by cause — never placed or unfinished; "platform" (time-averaged platform
factor below 0.95); "interference" (interference factor below 0.97); "wait" (the wait before it
started alone takes it below the bar); "size" (fewer cores than its true need, none of the
above); "other". Per pair (first profile against each other one): the workloads the other keeps
and the first loses, with the same causes and the cores both placed. Diagnosis only, tuning seeds.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import sys
from collections import Counter, defaultdict
from statistics import mean
from typing import Any

from profiling_diagnosis import write_result
from quality import code_version, seeds_of
from sextant_sim import baselines
from sextant_sim.engine import Engine
from sextant_sim.metrics import QOS, normalized, qos_met
from sextant_sim.oracle import oracle_view
from sextant_sim.runner import estimate_source
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare

KINDS = ("batch", "analytics", "service")


def run(setup: Setup, profile: str) -> dict[str, dict[str, Any]]:
    """Per workload: kind, met, cause of a miss, cores placed, nodes, platform, request, need."""
    holder: list[Engine] = []
    source = estimate_source(setup, holder)
    view = oracle_view(profile, setup, source)
    ps = baselines.policy_set(profile, estimates=source, oracle=view)
    placed: dict[str, tuple[int, int, str]] = {}
    planner = ps.planner
    inner = planner.place
    engine: Engine | None = None

    def place(state: Any, w: Any, ctx: Any) -> Any:
        out = inner(state, w, ctx)
        if out.allocation is not None and out.allocation.assignments:
            parts = out.allocation.assignments
            placed[w.workload_id] = (sum(a.cores for a in parts), len(parts), state.servers[parts[0].server_id].platform)
        return out

    planner.place = place  # type: ignore[method-assign]
    engine = Engine(setup, ps)
    holder.append(engine)
    view.bind(engine.world, engine.ledger)
    engine.run()
    pidx = {p.platform_id: i for i, p in enumerate(setup.cat.platforms)}
    out: dict[str, dict[str, Any]] = {}
    for sub in setup.subs:
        wid, t = sub.workload_id, sub.truth
        r = engine.ledger.records[wid]
        svc = t.service
        norm = normalized(r, engine.now, svc.trace[0][1] if svc is not None else 0.0,
                          svc.peak_qps if svc is not None else 0.0)
        met = qos_met(r, norm)
        cores, nodes, plat = placed.get(wid, (0, 0, ""))
        fits = [j for j, p in enumerate(setup.cat.platforms) if p.cores >= t.threads]
        best = max(float(t.speed[j]) for j in fits) if fits else float(t.speed.max())
        good = bool(plat) and float(t.speed[pidx[plat]]) >= QOS * best
        cause = ""
        if not met:
            start = r.profiled_at if r.profiled_at is not None else r.submitted_at
            waited = (r.started_at - start) if r.started_at is not None else None
            if wid not in placed or r.status != "completed" or waited is None:
                cause = "unplaced_or_unfinished"
            elif r.het_factor < QOS:
                cause = "platform"
            elif r.intf_factor < 0.97:
                cause = "interference"
            elif r.kind != "service" and r.ideal_s / max(r.ideal_s + waited, 1e-9) < QOS:
                cause = "wait"
            elif cores < t.needed_cores:
                cause = "size"
            else:
                cause = "other"
        out[wid] = {"kind": r.kind, "best_effort": r.best_effort, "met": met, "cause": cause, "cores": cores,
                    "nodes": nodes, "platform": plat, "good_platform": good, "requested": t.requested_cores,
                    "needed": t.needed_cores}
    return out


def per_kind(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in rows.values():
        groups["all"].append(d)
        groups[d["kind"]].append(d)
    out: dict[str, Any] = {}
    for kind in ("all", *KINDS):
        g = groups.get(kind, [])
        if not g:
            continue
        p = [d for d in g if d["cores"] > 0]
        out[kind] = {
            "n": len(g), "qos": round(sum(d["met"] for d in g) / len(g), 4),
            "placed": len(p),
            "cores_over_request": round(mean(d["cores"] / max(d["requested"], 1) for d in p), 4) if p else None,
            "cores_over_need": round(mean(d["cores"] / max(d["needed"], 1) for d in p), 4) if p else None,
            "under_need": sum(d["cores"] < d["needed"] for d in p),
            "good_platform": round(sum(d["good_platform"] for d in p) / len(p), 4) if p else None,
            "lost": dict(sorted(Counter(d["cause"] for d in g if not d["met"]).items())),
        }
    return out


def pair(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Workloads `b` keeps and `a` loses (and the reverse count), per kind and cause in `a`."""
    lost = [w for w in a if not a[w]["met"] and b[w]["met"]]
    won = [w for w in a if a[w]["met"] and not b[w]["met"]]
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for w in lost:
        by[a[w]["kind"]][a[w]["cause"]] += 1
    fewer = [w for w in lost if 0 < a[w]["cores"] < b[w]["cores"]]
    return {"lost_kept_by_other": len(lost), "won_lost_by_other": len(won),
            "lost_by_kind_and_cause": {k: dict(sorted(v.items())) for k, v in sorted(by.items())},
            "lost_with_fewer_cores": len(fewer),
            "lost_on_worse_platform": sum(1 for w in lost if not a[w]["good_platform"] and b[w]["good_platform"]),
            "won_by_kind": dict(sorted(Counter(a[w]["kind"] for w in won).items()))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="paragon-ec2-2500")
    ap.add_argument("--seeds", default="1-2")
    ap.add_argument("--profiles", default="sextant@9,interference-oblivious@2")
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    profiles = args.profiles.split(",")
    out: dict[str, Any] = {"benchmark": "sizing-diagnosis", "scenario": args.scenario,
                           "code_version": code_version(), "per_seed": {}}
    for seed in seeds_of(args.seeds):
        setup = prepare(load_scenario(args.scenario), seed)
        rows = {p: run(setup, p) for p in profiles}
        first = profiles[0]
        out["per_seed"][str(seed)] = {
            "profiles": {p: per_kind(r) for p, r in rows.items()},
            "pairs": {f"{first} vs {p}": pair(rows[first], rows[p]) for p in profiles[1:]}}
        print(f"seed {seed}: {json.dumps(out['per_seed'][str(seed)])}", flush=True)
    write_result(out, args.json_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
