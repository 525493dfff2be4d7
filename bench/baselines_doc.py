"""Tables of docs/results/baselines.md from the `sim compare --json` documents (no simulation here).

    .venv/bin/python bench/baselines_doc.py [--dir bench/results/sim-compare] > tables.md

`bench/results_docs.py` writes the page with `table` and `dominance`; run alone, this script also
prints each scenario's demand/capacity ratios (recomputed from the scenario and seed, so they
follow the current twin, not the JSON).

For every `SCENARIO.json` in the folder (written by `sextant sim compare SCENARIO --seed 6
--profiles ... --json DIR/SCENARIO.json`, or `bench/sim.py --compare-json` for paragon-ec2-2500):
one markdown table of the profiles' headline metrics with the paper's figure beside them where the
papers report one, and at the end the sanity question — is the oracle at least as good as every other profile
on QoS met and on mean normalised performance — answered per scenario from the same numbers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ORDER = ("least-loaded", "heterogeneity-oblivious", "interference-oblivious", "random", "reservation-least-loaded",
         "oracle")
SCENARIOS = ("paragon-ec2-2500", "paragon-ec2-5000", "paragon-ec2-8500", "paragon-local-medium",
             "paragon-local-oversubscribed", "paragon-local-phases", "quasar-ec2-200", "quasar-memcached-diurnal",
             "quasar-hadoop-stragglers", "smoke", "platform-demo")
# the papers' QoS-met fractions (Paragon §6.1–6.2) and Quasar's performance vs target (§6.5), by profile
PAPER_QOS: dict[str, dict[str, str]] = {
    "paragon-ec2-2500": {"least-loaded": "LL 0.03", "heterogeneity-oblivious": "NH 0.14",
                         "interference-oblivious": "NI 0.11", "oracle": "Paragon 0.91"},
    "paragon-ec2-5000": {"heterogeneity-oblivious": "NH 0.04", "interference-oblivious": "NI 0.03",
                         "oracle": "Paragon 0.61"},
    "paragon-ec2-8500": {"least-loaded": "LL 0.0009", "heterogeneity-oblivious": "NH 0.05",
                         "interference-oblivious": "NI 0.01", "oracle": "Paragon 0.52"},
    "paragon-local-medium": {"least-loaded": "LL 0.07", "heterogeneity-oblivious": "NH 0.23",
                             "interference-oblivious": "NI 0.19", "oracle": "Paragon 0.79"},
    "paragon-local-oversubscribed": {"oracle": "Paragon 0.825"},
    "paragon-local-phases": {"oracle": "Paragon 0.66"},
    "quasar-ec2-200": {"reservation-least-loaded": "perf/target: reservation + LL 0.62",
                       "oracle": "perf/target: Quasar 0.98"},
}


def _f(x: Any) -> str:
    return "—" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def ratios(scenario: str, seed: int) -> tuple[float, float]:
    from sextant_sim.scenarios import load_scenario
    from sextant_sim.setup import prepare

    st = prepare(load_scenario(scenario), seed)
    return st.demand_capacity_ratio, st.peak_demand_ratio()


def table(doc: dict[str, Any], demand: tuple[float, float] | None = None) -> list[str]:
    """The scenario's table; `demand` = (demand/capacity, peak) ratios for the heading, if known."""
    sc, seed, prof = doc["scenario"], doc["seed"], doc["profiles"]
    paper = PAPER_QOS.get(sc, {})
    ratio = "" if demand is None else f", demand/capacity {demand[0]:.3f} (peak {demand[1]:.3f})"
    twin = f", twin `{doc['twin_version']}`" if "twin_version" in doc else ""
    lines = [f"### `{sc}` — seed {seed}, classifier {doc.get('classifier', 'cf')}{twin}{ratio}", "",
             "| profile | QoS met | paper | mean perf | perf/target | CPU | overprov. | failed | unfinished | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    best_q = max(v["qos_met_fraction"] for v in prof.values())
    for name in [p for p in ORDER if p in prof] + sorted(set(prof) - set(ORDER)):
        v = prof[name]
        q = _f(v["qos_met_fraction"])
        q = f"**{q}**" if v["qos_met_fraction"] == best_q else q
        lines.append(f"| {name} | {q} | {paper.get(name, '—')} | {_f(v['mean_normalized_performance'])} | "
                     f"{_f(v['mean_performance_vs_target'])} | {_f(v['cpu_utilization'])} | "
                     f"{_f(v['overprovisioning'])} | {v['failed']} | {v.get('unfinished', 0)} | "
                     f"{v['wall_seconds']:.1f} |")
    kinds = prof.get("oracle", {}).get("by_kind", {})
    svc = [k for k in kinds if k.startswith("memcached")]
    if svc:
        cells = ", ".join(f"{p} {prof[p]['by_kind'][svc[0]]['mean_normalized_performance']:.3f}"
                          for p in ORDER if p in prof and svc[0] in prof[p].get("by_kind", {}))
        lines += ["", f"{svc[0]}: fraction of its requests within the p99 bound — {cells}."]
    return lines


def dominance(docs: list[dict[str, Any]]) -> list[str]:
    lines = ["| scenario | QoS met: oracle ≥ every profile | mean normalised performance: oracle ≥ every profile |",
             "|---|---|---|"]
    for doc in docs:
        prof = doc["profiles"]
        o = prof.get("oracle")
        if o is None:
            continue
        cells = []
        for key in ("qos_met_fraction", "mean_normalized_performance"):
            above = [f"{p} {v[key]:.3f}" for p, v in prof.items() if p != "oracle" and v[key] > o[key]]
            cells.append("yes" if not above else f"**no** ({', '.join(above)} > {o[key]:.3f})")
        lines.append(f"| {doc['scenario']} | {cells[0]} | {cells[1]} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=str(ROOT / "bench" / "results" / "sim-compare"))
    args = ap.parse_args()
    folder = Path(args.dir)
    docs = [json.loads((folder / f"{s}.json").read_text()) for s in SCENARIOS if (folder / f"{s}.json").exists()]
    out: list[str] = []
    for doc in docs:
        out += [*table(doc, ratios(doc["scenario"], doc["seed"])), ""]
    out += ["### Is the oracle at least as good as every other profile?", "", *dominance(docs)]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
