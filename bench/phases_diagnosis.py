"""Which of `sextant-adaptive`'s actions turn a workload that meets its QoS without adaptation into
one that misses, on paragon-local-phases (bench-only analysis; docs/adaptation/phases.md, "Ladder 8.13").

For one seed, runs an adaptive profile and `no-adaptation` on the same arrivals (one `Setup`) and
pairs the workloads: *lost* = QoS met by `no-adaptation`, not by the adaptive profile; *won* = the
other way. Every lost (and won) workload is tagged with what happened to it in the adaptive run:

- `placed_elsewhere`: its first placement is on other servers than without adaptation (the
  cluster had already diverged; no action on it caused that);
- `reclass_moved` / `reclass_kept`: re-planned after a reclassification onto other servers / kept
  where it ran; `false_reclass`: a reclassification with no phase change of it since its latest
  classification (a false claim); `reactive` / `proactive`: the claim's kind;
- `migrated`, `scale_up`, `evict`, `scale_out`, `relaunch`: the ladder's own actions on it;
- `probed`: proactive probes of it (counted, not a tag of harm);
- `neighbour_in`: another workload moved onto one of its servers while it ran (a re-plan after a
  reclassification or a migration), `evicted_by`: moved or killed as best effort;
- `failed`: failed or revoked; `untouched`: none of the above.

    .venv/bin/python bench/phases_diagnosis.py --seeds 1-5 [--profile sextant-adaptive@9+8.13] [--json PATH]

Per-workload QoS met is the twin's own (`metrics.qos_met`); the truths (phase changes) are read from
the twin, never by the policy: this script is a yardstick, not part of the decision path.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptation import PHASES, scenario  # noqa: E402
from quality import seeds_of  # noqa: E402


def per_workload(r: Any) -> dict[str, dict[str, Any]]:
    """workload -> met, normalised performance, platform and interference factors, status."""
    from sextant_sim import metrics

    eng = r.engine
    st = eng.setup
    first_load = {s.workload_id: s.truth.service.trace[0][1] for s in st.subs if s.truth.service is not None}
    peak = {s.workload_id: s.truth.service.peak_qps for s in st.subs if s.truth.service is not None}
    out = {}
    for s in st.subs:
        rec = eng.ledger.records[s.workload_id]
        n = metrics.normalized(rec, eng.now, first_load.get(s.workload_id, 1.0), peak.get(s.workload_id, 0.0))
        out[s.workload_id] = {"met": metrics.qos_met(rec, n), "norm": round(n, 4), "status": rec.status,
                              "het": round(rec.het_factor, 3), "intf": round(rec.intf_factor, 3), "kind": rec.kind,
                              "best_effort": rec.best_effort}
    return out


def actions(r: Any) -> dict[str, Counter[str]]:
    """workload -> counts of what the adaptive run did to it (the tags of the module docstring)."""
    from sextant_contracts import events as ev

    tags: dict[str, Counter[str]] = defaultdict(Counter)
    changes: dict[str, list[float]] = defaultdict(list)
    for wid, at, _ph in r.phase_changes:
        changes[wid].append(at)
    where: dict[str, set[str]] = {}  # running workload -> its servers
    classified: dict[str, float] = {}
    pending: dict[str, str] = {}  # workload -> the kind of its pending reclassification
    for e in r.events:
        wid = getattr(e, "workload_id", None)
        if wid is None:
            continue
        if isinstance(e, ev.WorkloadClassified):
            classified[wid] = e.at
        elif isinstance(e, ev.ReclassificationRequested):
            kind = "reactive" if e.reason.startswith("reactive") else "proactive"
            tags[wid][kind] += 1
            since = classified.get(wid, -1.0)
            if not any(since < t <= e.at for t in changes[wid]):
                tags[wid]["false_reclass"] += 1
            pending[wid] = kind
        elif isinstance(e, ev.ProbeRequested) and e.purpose == "proactive":
            tags[wid]["probed"] += 1
        elif isinstance(e, ev.PlacementDecided | ev.MigrationDecided | ev.AllocationAdjusted):
            new = set(e.allocation.servers)
            old = where.get(wid)
            if isinstance(e, ev.PlacementDecided) and old is not None:
                tags[wid]["reclass_moved" if new != old else "reclass_kept"] += 1
                pending.pop(wid, None)
            elif isinstance(e, ev.MigrationDecided):
                tags[wid]["evicted_by" if e.reason.startswith("evicted") else "migrated"] += 1
            elif isinstance(e, ev.AllocationAdjusted):
                tags[wid][e.action] += 1
            if old is not None and new - old:
                for other, sv in where.items():
                    if other != wid and sv & (new - old):
                        tags[other]["neighbour_in"] += 1
            if old is not None or isinstance(e, ev.PlacementDecided):
                where[wid] = new
        elif isinstance(e, ev.WorkloadStarted):
            where[wid] = set(e.allocation.servers)
        elif isinstance(e, ev.WorkloadCompleted | ev.WorkloadFailed | ev.WorkloadRevoked):
            if not isinstance(e, ev.WorkloadCompleted):
                tags[wid]["failed"] += 1
            where.pop(wid, None)
    return tags


def first_servers(r: Any) -> dict[str, tuple[str, ...]]:
    from sextant_contracts import events as ev

    out: dict[str, tuple[str, ...]] = {}
    for e in r.events:
        if isinstance(e, ev.WorkloadStarted) and e.workload_id not in out:
            out[e.workload_id] = tuple(sorted(e.allocation.servers))
    return out


HARM = ("reclass_moved", "migrated", "scale_up", "evict", "scale_out", "relaunch", "reclass_kept",
        "false_reclass", "neighbour_in", "evicted_by", "failed")


def diagnose(seed: int, profile: str) -> dict[str, Any]:
    from sextant_sim.adaptation.run import run
    from sextant_sim.setup import prepare

    _key, sc = scenario(PHASES, False)
    setup = prepare(sc, seed)
    ra = run(setup, profile, seed)
    rn = run(setup, "no-adaptation", seed)
    wa, wn = per_workload(ra), per_workload(rn)
    tags = actions(ra)
    fa, fn = first_servers(ra), first_servers(rn)
    lost = sorted(w for w in wa if wn[w]["met"] and not wa[w]["met"])
    won = sorted(w for w in wa if wa[w]["met"] and not wn[w]["met"])

    def tagged(ws: list[str]) -> tuple[Counter[str], list[dict[str, Any]]]:
        count: Counter[str] = Counter()
        rows = []
        for w in ws:
            t = {k: v for k, v in tags[w].items() if k in HARM and v > 0}
            if fa.get(w) != fn.get(w):
                t["placed_elsewhere"] = 1
            if not t:
                t["untouched"] = 1
            count.update(t.keys())
            rows.append({"workload": w, "tags": t, "probed": tags[w]["probed"], "adaptive": wa[w], "none": wn[w]})
        return count, rows

    lost_count, lost_rows = tagged(lost)
    won_count, won_rows = tagged(won)
    totals: Counter[str] = Counter()
    for t in tags.values():
        for k in (*HARM, "reactive", "proactive", "probed"):
            totals[k] += t[k]
    from sextant_sim.adaptation import scoring

    det = scoring.score_phases(ra.events, ra.phase_changes, setup.scenario.telemetry.period_s).as_json()
    return {"seed": seed, "profile": profile, "qos_met": ra.summary["qos_met_fraction"], "detection": {
        k: det.get(k) for k in ("reactive_detection", "proactive_detection", "reactive_false_claim_share",
                                "proactive_false_claim_share", "false_claims_per_workload_hour", "probe_cost_share")},
            "no_adaptation_qos_met": rn.summary["qos_met_fraction"], "lost": len(lost), "won": len(won),
            "lost_tags": dict(lost_count), "won_tags": dict(won_count), "totals": dict(totals),
            "lost_rows": lost_rows, "won_rows": won_rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--profile", default="sextant-adaptive")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--base", default="8.10", help="the ladder --set starts from")
    ap.add_argument("--set", default="", metavar="K=V,...",
                    help="tuning: run the profile's ladder with these parameters replaced, as ladder 'tune' "
                         "(e.g. --profile sextant-adaptive@9+tune --set batch_move_below=0.9)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.set:
        from dataclasses import replace

        from sextant_core.reprovisioning.adaptive import LADDERS

        base, _, _ = args.profile.rpartition("+")
        kv = dict(x.split("=", 1) for x in args.set.split(","))
        LADDERS["tune"] = replace(LADDERS[args.base], **{k: None if v == "None" else float(v) for k, v in kv.items()})
        args.profile = f"{base}+tune"
    out = []
    for s in seeds_of(args.seeds):
        d = diagnose(s, args.profile)
        out.append(d)
        print(f"seed {s}: QoS met {d['qos_met']} vs no-adaptation {d['no_adaptation_qos_met']}; lost {d['lost']}, "
              f"won {d['won']}", flush=True)
        print(f"  lost: {dict(sorted(d['lost_tags'].items()))}", flush=True)
        print(f"  won:  {dict(sorted(d['won_tags'].items()))}", flush=True)
        print(f"  detection: {d['detection']}", flush=True)
        print(f"  all actions: {dict(sorted(d['totals'].items()))}", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
