"""Recurring jobs (Morpheus) — the acceptance benchmark of the recurring-job core (docs/recurring.md).

    .venv/bin/python bench/morpheus.py --json bench/results/morpheus.json [--quick] [--seeds 6-10]
                                       [--trace PATH] [--sections real,speed,twin] [--jobs N] [--fresh]

**real** — the Google 2011 job table (`shared/data/google-2011-jobs/jobs.csv.gz`, 672 074 jobs,
deterministic): train = days 0–21, test = the rest (8 days); jobs submitted at time 0 are left
out of the gap statistics; run time = `end_s − schedule_s` of FINISH jobs, templates with ≥ 5
such training runs. `sextant_core.recurring.analysis.analyse` computes `periodic_job_share`,
`still_running_share`, `slot_hit_rate`, `slot_recall`, `p95_coverage`, `p95_median_ratio` (and the
plain per-template P95 beside it as `baseline_*`) and `kill_share`; the definitions are in that
module's docstring. No seed enters: `per_seed` holds the one deterministic result under `"all"`
and `worst` equals it.

**selection** (left out by `--quick`) — how the two free parameters were chosen, on the training
weeks only: the phase anchor (`DetectorParams.anchor_arrivals`) by the mean slot hit rate over
three rolling-origin folds (train to day 10 / 14 / 17, test the next 4 / 4 / 4 days) with the CV
filter at 0.2; then the CV filter (`DetectorParams.max_cv`) as the strictest of 0.2 … 0.01 whose
fold-mean share of periodic training jobs stays ≥ 0.38; then the
on-line filter (`DetectorParams.min_on_line`) as the strictest of 0 / 0.5 / 0.7 / 0.8 / 0.9 whose
fold-mean share of periodic training jobs stays ≥ 0.38 (it trades that share for hit rate); and the
run-time model's pinball level (`RuntimeParams.quantile`) as the lowest of 0.92 / 0.94 / 0.95 whose
coverage on the inner split (train days 0–14, test 14–21) is ≥ 0.91. `chosen` is what this run
selects; `defaults` what the code uses (they must agree).

**speed** — `bench/morpheus_speed.py`'s `measure_speed` (skyline LP 30 and 100 runs × 1 440 steps,
adding one reservation to a plan holding 900; `--quick`: seed 6 only; `--no-speed` leaves it
null).

**twin** — one month of recurring jobs per seed (`sextant_sim.recurring`, docs/recurring.md
"In the twin", docs/recurring/twin.md), 70 % training / 30 % testing, at the workload's nominal
cluster size (`sextant_sim.recurring.comparison`): `slo_derivable_share`; test-deadline misses of
the baseline "user static provisioning + fair share", of Sextant (skyline LP + LowCost
reservations + DRA) and of Sextant without DRA, with fair share and in the worst case (no
opportunistic capacity); `floor_misses` (every job gets all it can use from its start on an
unbounded cluster: what no provisioning prevents) and `floor_bound_x` = baseline / floor, the
largest reduction the twin allows; `worst_case_miss_reduction_x` = baseline / max(Sextant, 1);
`cluster_size_reduction` by bisection on capacity (Sextant with DRA and fair share misses no more
than the baseline at the nominal size); the ablation (Fig. 10a) as the same bisection for each
variant; the α sweep (Fig. 9c); slack/duration (Fig. 9a, PNG at docs/results/morpheus-slack-cdf.png);
P(B fails | A missed) vs met under the baseline and under Sextant. `--quick`: 100 templates instead
of 200, 3 bisection steps instead of 5, the ablation, α sweep (0.01, 0.1) and slack on the first
seed only. `--jobs N` runs the seeds in N processes (the same figures; `--quick` defaults to 2).

`--sections` picks the sections (default `real,speed,twin`); a section left out is copied from
the file already at `--json` (it keeps the code version that wrote it), unless `--fresh`: one
results file, bench/results/morpheus.json, holds them all.

The parsed trace is cached under `bench/results/morpheus/` (ignored), keyed by the file's size
and modification time. Timings are never claims; `load_avg` records the machine's load.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from morpheus_speed import measure_speed
from quality import code_version, seeds_of  # the same code version and seed syntax as the other benches
from sextant_cli.recurring import load_jobs, write_json_atomically
from sextant_core.recurring.analysis import AnalysisParams, JobTable, analyse
from sextant_sim.recurring.comparison import alpha_sweep, slack_ratios, smallest_cluster, train, worst_case
from sextant_sim.recurring.evaluation import measure_month_on as measure_baseline_on
from sextant_sim.recurring.evaluation import month
from sextant_sim.recurring.workload import WorkloadParams, recurring_version

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "data" / "google-2011-jobs" / "jobs.csv.gz"
CACHE = ROOT / "bench" / "results" / "morpheus"
DAY_S = 86400.0
TRAIN_DAYS = 21.0
REAL_KEYS = ("periodic_job_share", "still_running_share", "slot_hit_rate", "slot_recall", "p95_coverage",
             "p95_median_ratio", "kill_share")
ANCHORS = (0, 1, 3, 5, 10)
QUANTILES = (0.92, 0.94, 0.95)
ROLLING = ((10.0, 14.0), (14.0, 18.0), (17.0, 21.0))
INNER = (14.0, 21.0)
MIN_INNER_COVERAGE = 0.91
MAX_CVS = (0.2, 0.1, 0.05, 0.03, 0.02, 0.01)
ON_LINE = (0.0, 0.5, 0.7, 0.8, 0.9)
MIN_FOLD_SHARE = 0.38  # the 0.35 claim plus a margin: a stricter filter may not cost more than that


def load_cached(trace: Path) -> JobTable:
    st = trace.stat()
    path = CACHE / f"jobs-{st.st_size}-{int(st.st_mtime)}.npz"
    if path.exists():
        z = np.load(path)
        return JobTable(**{k: z[k] for k in z.files})
    jobs = load_jobs(trace)
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **{k: getattr(jobs, k) for k in ("job_id", "submit_s", "schedule_s", "end_s", "end_event",
                                                   "sched_class", "template")})
    os.replace(tmp, path)
    return jobs


def _window(jobs: JobTable, end_day: float) -> JobTable:
    return jobs.take(jobs.submit_s < end_day * DAY_S)


def _fold_means(jobs: JobTable, p: AnalysisParams) -> dict[str, float]:
    ms = [analyse(_window(jobs, t2), t1 * DAY_S, p, runtime=False).metrics for t1, t2 in ROLLING]
    return {k: round(float(np.mean([m[k] for m in ms])), 4)
            for k in ("slot_hit_rate", "slot_recall", "periodic_job_share_train")}


def selection(jobs: JobTable, say: Any) -> dict[str, Any]:
    base = AnalysisParams()
    anchors: dict[str, Any] = {}
    for a in ANCHORS:  # with the paper-range CV filter 0.2, before the CV filter is chosen
        p = replace(base, detector=replace(base.detector, anchor_arrivals=a, max_cv=0.2))
        rates = []
        for t1, t2 in ROLLING:
            m = analyse(_window(jobs, t2), t1 * DAY_S, p, runtime=False).metrics
            rates.append(m["slot_hit_rate"])
        anchors[str(a)] = {"per_fold": rates, "mean": round(float(np.mean(rates)), 4)}
        say(f"selection: anchor_arrivals {a}: mean hit rate {anchors[str(a)]['mean']}")
    best_anchor = max(ANCHORS, key=lambda a: (anchors[str(a)]["mean"], -a))
    cvs: dict[str, Any] = {}
    for cv in MAX_CVS:
        p = replace(base, detector=replace(base.detector, anchor_arrivals=best_anchor, max_cv=cv))
        cvs[str(cv)] = _fold_means(jobs, p)
        say(f"selection: max_cv {cv}: {cvs[str(cv)]}")
    best_cv = min([c for c in MAX_CVS if cvs[str(c)]["periodic_job_share_train"] >= MIN_FOLD_SHARE],
                  default=max(MAX_CVS))
    on_line: dict[str, Any] = {}
    for share in ON_LINE:
        p = replace(base, detector=replace(base.detector, anchor_arrivals=best_anchor, max_cv=best_cv,
                                           min_on_line=share))
        on_line[str(share)] = _fold_means(jobs, p)
        say(f"selection: min_on_line {share}: {on_line[str(share)]}")
    best_on_line = max([s for s in ON_LINE if on_line[str(s)]["periodic_job_share_train"] >= MIN_FOLD_SHARE],
                       default=0.0)
    quantiles: dict[str, Any] = {}
    inner = _window(jobs, INNER[1])
    for q in QUANTILES:
        p = replace(base, runtime=replace(base.runtime, quantile=q))
        m = analyse(inner, INNER[0] * DAY_S, p).metrics
        quantiles[str(q)] = {"p95_coverage": m["p95_coverage"], "p95_median_ratio": m["p95_median_ratio"]}
        say(f"selection: quantile {q}: inner coverage {m['p95_coverage']} ratio {m['p95_median_ratio']}")
    ok = [q for q in QUANTILES if quantiles[str(q)]["p95_coverage"] >= MIN_INNER_COVERAGE]
    best_q = min(ok) if ok else max(QUANTILES)
    return {"anchor_arrivals": anchors, "max_cv": cvs, "min_on_line": on_line, "quantile": quantiles,
            "chosen": {"anchor_arrivals": best_anchor, "max_cv": best_cv, "min_on_line": best_on_line,
                       "quantile": best_q},
            "defaults": {"anchor_arrivals": base.detector.anchor_arrivals, "max_cv": base.detector.max_cv,
                         "min_on_line": base.detector.min_on_line, "quantile": base.runtime.quantile}}


def table(real: dict[str, Any]) -> str:
    claims = {"periodic_job_share": ">= 0.35", "still_running_share": ">= 0.75", "slot_hit_rate": ">= 0.90",
              "slot_recall": "reported", "p95_coverage": "0.90-0.98", "p95_median_ratio": "<= 1.6",
              "kill_share": "reported"}
    base = {"p95_coverage": real["baseline_p95_coverage"], "p95_median_ratio": real["baseline_p95_median_ratio"]}
    rows = [f"{'metric':<22} {'value':>8} {'plain P95':>10}  claim"]
    for k in REAL_KEYS:
        b = base.get(k, "")
        rows.append(f"{k:<22} {real[k]:>8} {b!s:>10}  {claims[k]}")
    return "\n".join(rows)


TWIN_KEYS = ("slo_derivable_share", "baseline_misses_worst_case", "sextant_misses_worst_case",
             "sextant_no_dra_misses_worst_case", "floor_misses", "worst_case_miss_reduction_x", "cluster_size_reduction")
ALPHAS = (0.001, 0.01, 0.1, 0.5)
SLACK_PNG = ROOT / "docs" / "results" / "morpheus-slack-cdf.png"


def twin_seed(seed: int, quick: bool, params: WorkloadParams, full_extras: bool, say: Any,
              sizes: bool = True) -> dict[str, Any]:
    """One seed's month: the baseline, Sextant with and without DRA, the floor, the smallest
    cluster by bisection; with `full_extras` also the ablation, the α sweep and the slack ratios."""
    t0 = time.process_time()
    setup = month(seed, params)
    trained = train(setup)
    row = measure_baseline_on(setup, trained.baseline)
    row.update(worst_case(trained))
    say(f"twin seed {seed}: worst case {row['baseline_misses_worst_case']} -> {row['sextant_misses_worst_case']} "
        f"(no DRA {row['sextant_no_dra_misses_worst_case']}, floor {row['floor_misses']})")
    steps = 3 if quick else 5
    if not sizes:  # --twin-parts worst: the worst-case misses only
        row["cluster_size_reduction"] = None
        row["cpu_seconds"] = round(time.process_time() - t0, 1)
        return row
    size = smallest_cluster(trained, "both", steps)
    row["cluster_size_reduction"] = size["reduction"]
    row["smallest_cluster"] = size
    say(f"twin seed {seed}: smallest cluster {size}")
    if full_extras:
        row["ablation"] = {v: smallest_cluster(trained, v, steps, target=size["baseline_misses"])["reduction"]
                           for v in ("slo_packing", "modelling")} | {"both": size["reduction"]}
        say(f"twin seed {seed}: ablation {row['ablation']}")
        row["alpha_sweep"] = alpha_sweep(trained, ALPHAS[1:3] if quick else ALPHAS)
        say(f"twin seed {seed}: alpha sweep {row['alpha_sweep']}")
        ratios = slack_ratios(trained)
        row["slack"] = {"instances": int(ratios.size), "median": round(float(np.median(ratios)), 3),
                        "share_at_least_1": round(float((ratios >= 1).mean()), 4),
                        "share_at_least_2": round(float((ratios >= 2).mean()), 4)}
        row["_slack_ratios"] = ratios.tolist()  # drawn by the parent process, then dropped
    row["cpu_seconds"] = round(time.process_time() - t0, 1)
    return row


def slack_png(ratios: np.ndarray, seed: int) -> None:
    """Fig. 9a: the CDF of slack / duration, as a PNG beside the results page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=100)
    y = np.arange(1, ratios.size + 1) / max(ratios.size, 1)
    ax.step(np.clip(ratios, 1e-2, 1e3), y, where="post")
    ax.set_xscale("log")
    ax.set_xlabel("slack / duration  (T_outRead − T_end) / (T_end − T_start)")
    ax.set_ylabel("CDF of instances")
    ax.set_title(f"Slack of periodic instances (twin, seed {seed}, training weeks)", fontsize=9)
    ax.axvline(2.0, color="grey", linestyle=":", linewidth=1)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    SLACK_PNG.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(SLACK_PNG, metadata={"Software": None})
    plt.close(fig)


def _say(msg: str) -> None:
    print(f"morpheus: {msg}", file=sys.stderr, flush=True)


def twin(seeds: list[int], quick: bool, say: Any, jobs: int = 1, templates: int | None = None,
         sizes: bool = True) -> dict[str, Any]:
    """Every seed is independent and seeded, so `jobs` processes give the same rows as one."""
    params = WorkloadParams(templates=templates or (100 if quick else 200))
    args = [(seed, quick, params, sizes and (not quick or n == 0), _say, sizes) for n, seed in enumerate(seeds)]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            rows = list(pool.map(twin_seed, *zip(*args, strict=True)))
    else:
        rows = [twin_seed(*a) for a in args]
    per_seed: dict[str, Any] = {}
    drawn = False
    for seed, row in zip(seeds, rows, strict=True):
        ratios = row.pop("_slack_ratios", None)
        if ratios is not None and not drawn:  # the first seed's (Fig. 9a is one CDF)
            slack_png(np.asarray(ratios), seed)
            drawn = True
        per_seed[str(seed)] = row
        say(f"twin seed {seed}: {row['cpu_seconds']} CPU s")
    vals = list(per_seed.values())
    worst = {"slo_derivable_share": min(v["slo_derivable_share"] for v in vals),
             "worst_case_miss_reduction_x": min(v["worst_case_miss_reduction_x"] for v in vals),
             "cluster_size_reduction": min((v["cluster_size_reduction"] for v in vals
                                            if v["cluster_size_reduction"] is not None), default=None),
             "baseline_misses_worst_case": min(v["baseline_misses_worst_case"] for v in vals),
             "floor_bound_x": min(v["floor_bound_x"] for v in vals)}
    with_ab = [v["ablation"] for v in vals if "ablation" in v]
    ablation = {k: min(a[k] for a in with_ab) for k in ("slo_packing", "modelling", "both")} if with_ab else None
    dra = {"on": max(v["sextant_misses_worst_case"] for v in vals),
           "off": max(v["sextant_no_dra_misses_worst_case"] for v in vals)}
    return {"per_seed": per_seed, "worst": worst, "ablation": ablation, "dra_worst_case_misses_max": dra,
            "templates": params.templates, "days": params.days, "train_share": 0.7,
            "slack_cdf_png": str(SLACK_PNG.relative_to(ROOT))}


def twin_table(tw: dict[str, Any]) -> str:
    rows = [f"{'seed':<6} " + " ".join(f"{k[:22]:>22}" for k in TWIN_KEYS)]
    for seed, v in tw["per_seed"].items():
        rows.append(f"{seed:<6} " + " ".join(f"{v[k]!s:>22}" for k in TWIN_KEYS))
    rows.append(f"{'worst':<6} " + " ".join(f"{tw['worst'].get(k, '')!s:>22}" for k in TWIN_KEYS))
    rows.append(f"ablation (cluster-size reduction, worst seed): {tw['ablation']}")
    return "\n".join(rows)


def keep_previous(path: Path, doc: dict[str, Any]) -> list[str]:
    """The sections this run left out, copied from the JSON already at `path` (each carries the
    code version that produced it): one results file holds every section."""
    if not path.exists():
        return []
    old = json.loads(path.read_text())
    kept = []
    for name in ("real", "speed", "twin"):
        if doc[name] is None and old.get(name) is not None:
            doc[name] = old[name]
            kept.append(name)
            for seed, row in old.get("per_seed", {}).items():
                if name in row:
                    doc["per_seed"].setdefault(seed, {})[name] = row[name]
            if name in old.get("worst", {}):
                doc["worst"][name] = old["worst"][name]
    return kept


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", dest="json_path", required=True)
    ap.add_argument("--quick", action="store_true", help="shorter: no parameter selection, speed on seed 6, twin at 100 templates (module doc)")
    ap.add_argument("--seeds", default="6-10", help="recorded; the real trace is deterministic")
    ap.add_argument("--trace", default=str(TRACE))
    ap.add_argument("--sections", default="real,speed,twin", help="comma-separated: real, speed, twin")
    ap.add_argument("--no-speed", action="store_true", help="leave the speed section null")
    ap.add_argument("--jobs", type=int, help="twin seeds run in this many processes (same results; default 1, "
                    "--quick 2: the quick run's seeds take ~850 CPU s)")
    ap.add_argument("--templates", type=int, help="twin templates (default 200, --quick 100)")
    ap.add_argument("--twin-parts", choices=("all", "worst"), default="all",
                    help="worst: the worst-case misses only (no bisection, ablation, α sweep, slack)")
    ap.add_argument("--fresh", action="store_true",
                    help="do not keep the sections left out from an existing --json file (they stay null)")
    args = ap.parse_args()
    load_start = os.getloadavg()
    started = time.perf_counter()

    def say(msg: str) -> None:
        print(f"morpheus: {msg}", file=sys.stderr, flush=True)

    sections = set(args.sections.split(","))
    if not sections <= {"real", "speed", "twin"}:
        ap.error(f"unknown section in {args.sections!r}")
    if args.no_speed:
        sections.discard("speed")
    seeds = seeds_of(args.seeds)
    doc: dict[str, Any] = {"benchmark": "morpheus", "quick": args.quick, "seeds": seeds, "real": None,
                           "twin": None, "speed": None, "per_seed": {}, "worst": {}}
    if "real" in sections:
        say(f"loading {args.trace}")
        jobs = load_cached(Path(args.trace))
        result = analyse(jobs, TRAIN_DAYS * DAY_S, AnalysisParams(), progress=say)
        real = dict(result.metrics)
        doc["real"] = {**{k: real[k] for k in REAL_KEYS}, "details": real,
                       "split": {"train_days": TRAIN_DAYS,
                                 "test_days": round((result.test_end_s - result.train_end_s) / DAY_S, 3)}}
        doc["per_seed"]["all"] = {"real": {k: real[k] for k in REAL_KEYS}}
        doc["worst"]["real"] = {k: real[k] for k in REAL_KEYS}
        if not args.quick:
            doc["selection"] = selection(jobs, say)
        print(table(real))
    if "speed" in sections:
        say("speed: skyline LP and plan additions")
        doc["speed"] = measure_speed(args.quick, None if args.quick else seeds)
    if "twin" in sections:
        jobs = args.jobs or (2 if args.quick else 1)
        doc["twin"] = twin(seeds, args.quick, say, jobs, args.templates, args.twin_parts != "worst")
        for seed, v in doc["twin"]["per_seed"].items():
            doc["per_seed"].setdefault(seed, {})["twin"] = {k: v[k] for k in TWIN_KEYS}
        doc["worst"]["twin"] = doc["twin"]["worst"]
        print(twin_table(doc["twin"]))
    twin_params = WorkloadParams(templates=args.templates or (100 if args.quick else 200))
    for name in ("real", "speed", "twin"):
        if doc[name] is not None:
            doc[name]["code_version"] = code_version()
    kept = [] if args.fresh else keep_previous(Path(args.json_path), doc)
    twin_version = recurring_version(twin_params) if "twin" in sections else (doc.get("twin") or {}).get("twin_version")
    if doc["twin"] is not None:
        doc["twin"]["twin_version"] = twin_version
    doc.update({"code_version": code_version(), "sections_kept_from_previous_run": kept,
                "twin_version": twin_version,
                "load_avg": {"start": [round(x, 2) for x in load_start],
                             "end": [round(x, 2) for x in os.getloadavg()]},
                "machine": {"python": sys.version.split()[0], "cpus": os.cpu_count()},
                "wall_seconds": round(time.perf_counter() - started, 1)})
    write_json_atomically(args.json_path, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
