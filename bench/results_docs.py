"""The results pages of `docs/results/`, generated from the benchmarks' JSON (no benchmark runs here).

    .venv/bin/python bench/results_docs.py            # rewrite docs/results/*.md
    .venv/bin/python bench/results_docs.py --check    # exit 1 when a page differs from its JSON

One page per JSON document: `bench/results/<name>.json` → `docs/results/<name>.md`, and the folder
`bench/results/sim-compare/` (one `sextant sim compare --json` document per scenario) →
`docs/results/baselines.md` (tables of `bench/baselines_doc.py`). A page holds what the JSON holds:
the machine and the code version it records, then its numbers as tables — nested objects become
sections, collections of records become one table each. Its text is the page's heading and the
few lines of `INTRO` (what is measured, the command that wrote the JSON, where the definitions
live); interpretation belongs to the how-it-works pages, history to CHANGELOG.md.

Output is a pure function of the JSON files (in the JSON's own key order), so
`tests/architecture/test_docs.py` regenerates every page and compares bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is scripts, not a package

import baselines_doc  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PAGES = ROOT / "docs" / "results"
VERSION_KEYS = ("code_version", "twin_version", "oracle_code", "oracle_twin_version", "commit")
SKIP = {"machine"}  # rendered in the header

# name of the JSON (without .json) → (title, what it measures and how to reproduce it)
INTRO: dict[str, tuple[str, str]] = {
    "adaptation": (
        "Monitoring and reprovisioning",
        "Phase detection on `paragon-local-phases`, the diurnal memcached service (with the "
        "ground-truth floor of its server-hours) on `quasar-memcached-diurnal`, stragglers on "
        "`quasar-hadoop-stragglers-v2` (per-task telemetry, LATE as the paper defines it; seeds 6-10), "
        "against the adaptation baselines. Written by "
        "`bench/adaptation.py --json bench/results/adaptation.json --seeds 1-3 --diurnal-seeds 1-3` "
        "(stragglers: `--studies stragglers --seeds 6-10`, merged; diurnal: `--studies diurnal "
        "--diurnal-seeds 6-10 --update bench/results/adaptation.json`, docs/adaptation/diurnal.md; "
        "phases: `--studies phases --seeds 6-10 --update bench/results/adaptation.json`, "
        "docs/adaptation/phases.md). "
        "Definitions: docs/adaptation.md, \"The benchmark\"."),
    "adaptation-stragglers-8.12": (
        "Stragglers with ladder 8.12 (not the default ladder)",
        "The stragglers study of `bench/adaptation.py` on `quasar-hadoop-stragglers-v2`, seeds 6-10, with "
        "`sextant-adaptive@9+8.12` in the `sextant-adaptive` row (`adaptive_profile`). Written by "
        "`bench/adaptation.py --studies stragglers --seeds 6-10 --adaptive-profile sextant-adaptive@9+8.12 "
        "--json bench/results/adaptation-stragglers-8.12.json`. The rule and its tuning: "
        "docs/adaptation/stragglers.md, \"Ladder 8.12\"; definitions: docs/adaptation.md."),
    "adaptation-phases-8.13": (
        "Phase detection with ladder 8.13 (not the default ladder)",
        "The phases study of `bench/adaptation.py` on `paragon-local-phases`, seeds 6-10, with "
        "`sextant-adaptive` at ladder 8.13 (batch workloads moved only off a measured shortfall). "
        "Written by `bench/adaptation.py --studies phases --seeds 6-10 --ladder 8.13 --json "
        "bench/results/adaptation-phases-8.13.json`. Definitions: docs/adaptation.md, \"The "
        "benchmark\"; the rule and its tuning: docs/adaptation/phases.md, \"Ladder 8.13\"."),
    "adaptation-phases-8.16": (
        "Phase detection with ladder 8.16 (not the default ladder)",
        "The phases study of `bench/adaptation.py` on `paragon-local-phases`, seeds 6-10, with "
        "`sextant-adaptive` at ladder 8.16 (a step a co-resident's own telemetry explains is not claimed). "
        "Written by `bench/adaptation.py --studies phases --seeds 6-10 --ladder 8.16 --json "
        "bench/results/adaptation-phases-8.16.json`. Definitions: docs/adaptation.md, \"The "
        "benchmark\"; the rule, its tuning and the reactive ceiling: docs/adaptation/phases.md, \"Ladder 8.16\"."),
    "adaptation-diurnal-8.11": (
        "Diurnal memcached with ladder 8.11 (held-out seeds)",
        "`sextant-adaptive@9+8.11` (ladder 8.11, not the default) on `quasar-memcached-diurnal`, seeds "
        "6-10, with `no-adaptation` and the autoscaling sweep re-run on the same code. Written by "
        "`bench/adaptation.py --studies diurnal --diurnal-seeds 6-10 --adaptive-profile "
        "sextant-adaptive@9+8.11 --json bench/results/adaptation-diurnal-8.11.json --plot "
        "docs/adaptation/diurnal-frontier.png`; docs/adaptation/diurnal.md, \"Ladder 8.11\"."),
    "adaptation-diurnal-8.15": (
        "Diurnal memcached with ladder 8.15 (held-out seeds)",
        "`sextant-adaptive@9+8.15` (ladder 8.15, not the default) on `quasar-memcached-diurnal`, seeds "
        "6-10; `no-adaptation` and the autoscaling sweep are 8.11's study's "
        "(`--diurnal-baselines-from bench/results/adaptation-diurnal-8.11.json`). Written by "
        "`bench/adaptation.py --studies diurnal --diurnal-seeds 6-10 --ladder 8.15 "
        "--diurnal-baselines-from bench/results/adaptation-diurnal-8.11.json --json "
        "bench/results/adaptation-diurnal-8.15.json`; docs/adaptation/diurnal.md, \"Ladder 8.15\"."),
    "classification": (
        "Classification engine, full run",
        "Accuracy (Quasar Table 2 and Paragon Table I forms), the density sweep, the 300-seed "
        "yardstick, QoS and speed, on the twin. Written by `bench/classification.py --parts "
        "accuracy,sweep,yardstick,qos,speed --json bench/results/classification.json`. Errors are "
        "scored on hidden cells against the noise-free truth: relative error for performance, "
        "absolute points for interference scores. Definitions: docs/classification.md."),
    "classification-twin-accuracy": (
        "Classification engine on the twin, beside the reference estimator",
        "Accuracy on the twin's v4 world (`paragon-ec2-2500`'s catalogue, every family; 2 entries per "
        "row), per seed: the engine's tables, the reference estimator's (the floor from the same noisy "
        "entries; `reference_half_draws`: with half its prior draws, `ess`: its effective sample sizes) "
        "and `bars`: engine vs max(8 %, 1.25 × reference), interference max(6 points, 1.25 × reference); "
        "`worst`: per cell, the seed farthest over its bar; `accuracy` repeats the first seed. Written "
        "by `bench/classification.py --source twin --parts accuracy,reference --seeds 6-10 --draws 8000 "
        "--json bench/results/classification-twin-accuracy.json`. "
        "Definitions: docs/classification.md and docs/classification/reference.md."),
    "classification-twin-accuracy-3.2": (
        "Classification engine 3.2 on the twin, beside the reference estimator (not the default engine)",
        "The tables of classification-twin-accuracy.md with engine 3.2 (`sextant` 9.2; services' "
        "scale-up reads a measured 0 through shifted analogs), same seeds, entries and reference. "
        "Written by `bench/classification.py --source twin --parts accuracy,reference --seeds 6-10 "
        "--draws 8000 --engine 3.2 --json bench/results/classification-twin-accuracy-3.2.json`. "
        "The rule, its tuning and the comparison with engine 3: docs/classification/engine-3.2.md."),
    "quality-sextant92-tuning": (
        "Sextant 9.2 (engine 3.2) against 9 on paragon-ec2-2500, tuning seeds 1-2",
        "QoS met and the other quality metrics of `sextant@9` and `sextant@9.2` (9 with classification "
        "engine 3.2), seeds 1-2. Written by `bench/quality.py --scenarios paragon-ec2-2500 --profiles "
        "sextant@9,sextant@9.2 --seeds 1-2 --no-robustness --json bench/results/quality-sextant92-tuning.json`. "
        "Engine 3.2: docs/classification/engine-3.2.md; definitions: docs/quality.md."),
    "classification-twin-sweep": (
        "Classification engine on the twin: density sweep and yardstick",
        "New workloads' errors at 1–8 entries per row and with 300 dense seed rows per kind instead of "
        "30, on the twin's v4 world, seed 6. Written by `bench/classification.py --source twin --parts "
        "sweep,yardstick --seed 6 --json bench/results/classification-twin-sweep.json`. Definitions: "
        "docs/classification.md."),
    "classification-rank": (
        "Classification engine: automatic rank vs fixed ranks",
        "Points of average error the automatic rank loses per matrix on held-out synthetic low-rank "
        "matrices (150 new workloads per seed, 2 entries per row): against the fixed rank chosen on "
        "seeds 1–5 and against each seed's best fixed rank (after the fact). Bar ≤ 1 point. Written "
        "by `bench/classification.py --source synthetic --parts rank --seeds 6-10 --tune-seeds 1-5 "
        "--json bench/results/classification-rank.json`. Definitions: docs/classification/reference.md."),
    "classification-synthetic": (
        "Classification engine on the synthetic world",
        "Accuracy, density sweep and yardstick on `classification/synthetic.py`'s world. Written by "
        "`bench/classification.py --source synthetic --parts accuracy,sweep,yardstick --json "
        "bench/results/classification-synthetic.json`. Definitions: docs/classification.md."),
    "morpheus": (
        "Recurring jobs (Morpheus)",
        "All sections of `bench/morpheus.py --seeds 6-10 --json bench/results/morpheus.json` (a "
        "section left out by `--sections` is kept from the previous file, with the code version that "
        "wrote it). `real`: periodic-template detection, submit-slot prediction and run-time P95 on the "
        "Google 2011 job table (train = days 0–21, test = the remaining 8 days; deterministic), beside "
        "the plain per-template P95, and how the free parameters were chosen (`selection`). `speed`: "
        "the skyline LP on 30 and 100 runs × 1 440 steps and adding one reservation to a plan holding "
        "900 (`bench/morpheus_speed.py`). `twin`: one month per seed, 70 % training / 30 % testing; "
        "worst-case (no opportunistic capacity) misses of the user baseline, of Sextant with and "
        "without DRA and the floor no provisioning can beat; the smallest cluster matching the "
        "baseline's misses (bisection), the ablation, the α sweep and the slack CDF "
        "(docs/results/morpheus-slack-cdf.png). Definitions: docs/recurring.md and "
        "`sextant_sim.recurring.comparison`."),
    "decision-speed": (
        "Decision speed",
        "Admission and placement of one workload on a cell folded from events (1 000 and 10 000 "
        "servers), each decision timed alone (`decide`, state → events); wall time in ms "
        "(`place_cpu`: the placement's thread time). Written by `bench/decision_speed.py --sizes "
        "1000,10000 --decisions 300 --json bench/results/decision-speed.json`; the machine is shared, "
        "its load average at the start and end of the run is in `load_avg`. Timings never gate tests."),
    "fairness": (
        "Fairness over time between virtual clusters",
        "MaxMin, capacity-weighted MaxMin, strict history, decayed usage and Sextant's history-aware "
        "policy (ours) on the LCG grid log (28 groups as VCs, capacities by the mean-demand rule; "
        "`lcg_rules`: other rules) and the synthetic six-VC month (claims: worst of seeds 6–10, "
        "Sextant's configuration chosen on seeds 1–5); `priority_large` is a reference bound, not a "
        "policy. Written by `bench/fairness.py --json bench/results/fairness.json`. "
        "Definitions: docs/fairness.md."),
    "fairness-frontier": (
        "Fairness: what the LCG replay allows",
        "A ladder of sharing rules on the LCG log, from MaxMin to the whole free pool to the large VC "
        "first, each with and without immediate reclamation; per capacity rule, the large VC's "
        "stretch, the VC that pays most against MaxMin and whether the bars and the price hold "
        "together. Written by `bench/fairness_frontier.py --json bench/results/fairness-frontier.json`. "
        "Reading: docs/fairness/frontier.md."),
    "quality-cf": (
        "Decision quality, every profile on the classification engine",
        "`paragon-ec2-2500`, seeds 6–10, every profile classifying with the seeded engine. Written by "
        "`bench/quality.py --scenarios paragon-ec2-2500 --seeds 6-10 --no-robustness --profiles "
        "sextant,sextant-dense,paragon,least-loaded,heterogeneity-oblivious,interference-oblivious,"
        "random,oracle --json bench/results/quality-cf.json`. Metrics: docs/twin.md, \"Metrics\"."),
    "quality-est": (
        "Decision quality on the estimate port",
        "The planning profiles on the twin's estimate port (ground truth + Paragon Table III noise): "
        "the planner isolated from classification; worlds `@gradedx2`, `@logisticx1`, "
        "`@thresholdx1` are the robustness variants. Written by `bench/quality.py --classifier "
        "estimates`. Metrics: docs/twin.md, \"Metrics\"."),
    "corral": (
        "Corral: the planner on its twin, the resource selector, speed",
        "Batch: W1, W2, W3 and SWIM on the Corral twin (7 racks × 30 machines, 5:1 core, background up to 50 %), "
        "Corral's plan and runtime against Yarn-CS with delay scheduling: makespan and cross-rack bytes "
        "vs Yarn-CS, lp_gap = the plan vs LP-Batch; LocalShuffle and ShuffleWatcher-like beside them "
        "(`baselines`: lowest and highest over the seeds, no bar); robustness: Corral vs Yarn-CS median "
        "and mean JCT online with and without 50 % size error and ±4 min jitter on half the starts (W1, "
        "and W1x10 = 1 000 jobs over the hour; no bar); online: arrivals over 60 minutes, median JCT vs "
        "Yarn-CS (worst workload), lp_gap = the plan's mean completion − arrival vs LP-Online; SWIM online "
        "beside the bar (`swim_*`); online_sweep (`--parts online-sweep`, diagnosis, no bar): the online hour "
        "with every job's bytes × K, Corral vs Yarn-CS, headroom to the isolated floor, utilisation, "
        "queueing, LP-Online (docs/corral/online.md). Selector: Corral-I, Corral-R and Corral-T against Baseline on a "
        "request-level simulator (15 000 requests on 16 000 VMs, 75 % offered occupancy, 10:1; no "
        "flow-level shuffle, no outliers); speed: CPU time of one selection "
        "on 64 000 VMs and of planning 200 jobs on 50 racks. Runtime (reported, no bars): a rack failure "
        "mid-run (Corral with fall-back vs Yarn-CS and vs no fall-back, and with re-planning) and a 25 % ad hoc "
        "mix (planned and ad hoc JCT vs Yarn-CS; docs/corral/runtime.md), `--parts runtime`; "
        "runtime.replan_under_perturbation (`--parts replan`): the perturbed robustness runs with "
        "re-planning every 600 s on observed arrivals and sizes. "
        "Claims: worst of seeds 6–10. Written by "
        "`bench/corral.py --quick --seeds 6-10 --json bench/results/corral.json`, then the selector and "
        "speed at full size by `bench/corral.py --parts selector,speed --seeds 6-10 --json "
        "bench/results/corral.json` (`quick_parts`). Definitions: "
        "docs/corral/README.md, docs/corral/selector.md, docs/corral/twin.md, docs/corral/baselines.md."),
    "quality-planning": (
        "Decision quality: the planning loss",
        "`sextant-true-rows` (`sextant` fed the true classification rows), `sextant` on the estimate "
        "port (`sextant-estimates`) and on the engine, beside `oracle` and `oracle-estimates`, same "
        "arrivals; `ratios` are the planning bars (QoS met, worst seed and worst per-seed ratio). "
        "Written by `bench/quality.py --ladder --scenarios paragon-ec2-2500 --profiles "
        "oracle,oracle-estimates,sextant-true-rows,sextant-estimates,sextant --seeds 6-10 --json "
        "bench/results/quality-planning.json`. Metrics: docs/twin.md, \"Metrics\"."),
    "quality-stress-v3": (
        "Decision quality in the stress world (v3 interference)",
        "`paragon-ec2-2500` run in the v3 world (interference independent per source: two profiled "
        "sources say nothing about the other eight), seeds 6–10, every profile on the classification "
        "engine; `margins` = `sextant` − `paragon` and − the best baseline (highest of the four, seed "
        "by seed). Written by `bench/quality.py --world v3 --scenarios paragon-ec2-2500 --seeds 6-10 "
        "--no-robustness --profiles sextant,paragon,least-loaded,heterogeneity-oblivious,"
        "interference-oblivious,random --json bench/results/quality-stress-v3.json`. Reading: "
        "docs/quality/planning.md, \"Stress world\"."),
    "quality-stress-v3-baselines2": (
        "Decision quality in the stress world (v3 interference): the baselines at version 2",
        "`paragon-ec2-2500` run in the v3 world, seeds 6–10, the placement baselines at version 2 "
        "(`least-loaded@2` …: `sextant` 9's classification engine and adaptive profiling plan, the "
        "decision-quality acceptance's \"best baseline\"; `sextant_sim.baselines`). Written by `bench/quality.py --world v3 "
        "--scenarios paragon-ec2-2500 --seeds 6-10 --no-robustness --profiles least-loaded@2,"
        "heterogeneity-oblivious@2,… --json bench/results/quality-stress-v3-baselines2.json`. Reading: "
        "docs/quality/planning.md, \"Stress world against the baselines at version 2\"."),
    "quality-v4-baselines2": (
        "Decision quality on paragon-ec2-2500 (v4): the classification-reading baselines at version 2",
        "`interference-oblivious@2` and `heterogeneity-oblivious@2` (`sextant` 9's classification engine "
        "and adaptive profiling plan, the decision-quality acceptance's \"best baseline\") on the v4 twin, "
        "seeds 6–10. Written by `bench/quality.py --scenarios paragon-ec2-2500 --profiles "
        "interference-oblivious@2,heterogeneity-oblivious@2 --seeds 6-10 --no-robustness --json "
        "bench/results/quality-v4-baselines2.json`. Reading: docs/quality/planning.md, \"The v4 world "
        "against the baselines at version 2\"."),
    "quality-v4-baselines2-ll-random": (
        "Decision quality on paragon-ec2-2500 (v4): least-loaded and random at version 2",
        "The other two baselines of the acceptance's \"best baseline\" (`sextant`'s engine and adaptive "
        "plan), seeds 6–10. Written by `bench/quality.py --scenarios paragon-ec2-2500 --no-robustness "
        "--profiles least-loaded@2,random@2 --seeds 6-10 --json "
        "bench/results/quality-v4-baselines2-ll-random.json`. Reading: docs/quality/planning.md, \"The "
        "v4 world against the baselines at version 2\"."),
    "quality-paragon8500-seed6": (
        "Decision quality on paragon-ec2-8500, seed 6, `sextant` 9",
        "`sextant` (engine, adaptive profiling) alone, `bench/quality.py --ladder --scenarios "
        "paragon-ec2-8500 --profiles sextant --seeds 6`; `oracle-estimates` on seed 6 (0.233) from the "
        "run at code b259e703 (same twin, no yardstick change). "
        "Reading: docs/quality/planning.md, \"paragon-ec2-8500, seed 6\"."),
    "quality-paragon5000-sextant9": (
        "Decision quality on paragon-ec2-5000 at sextant 9",
        "`sextant-true-rows` and `sextant` (engine, adaptive profiling) run at this code, merged "
        "(`bench/quality.py --ladder --merge`) with the frozen `oracle` and `oracle-estimates` rows "
        "of `quality-ladder.json` (same twin; `code_versions` per row); `ratios` over the seeds both "
        "ran. Reading: docs/quality/planning.md, \"paragon-ec2-5000 at sextant 9\"."),
    "quality-ladder": (
        "The information ladder",
        "`bench/quality.py --ladder`, seeds 6-10: the `sextant` rungs (true rows, port, engine, dense) "
        "re-run at `sextant` 9 and merged (`--ladder --merge`) with the oracle rungs and the baselines "
        "of the previous ladder (this file at commit 99f5f92; `code_versions` per row); paragon-ec2-5000's "
        "`sextant` rungs from `quality-paragon5000-sextant9.json`. The table (`bench/ladder_doc.py`) is "
        "in docs/quality.md; reading: docs/quality/planning.md, \"The information ladder at sextant 9\"."),
    "quality-reference-rows": (
        "The information yardstick: `sextant` fed the reference rows",
        "`bench/quality.py --scenarios paragon-ec2-2500 --profiles sextant-reference-rows,"
        "sextant-reference-dense --seeds 6-10 --no-robustness --json bench/results/quality-reference-rows.json`: "
        "`sextant`'s planner fed the reference estimator's posterior rows (`sextant_sim.refrows`) from "
        "exactly the entries its plan measured (adaptive plan; dense plan); `reference_rows` per run: "
        "posterior ESS and the rows' errors against the truth. Reading: docs/quality/information.md."),
    "quality-oracle-measured-dense": (
        "The oracle placing on the rows the dense profiling plan measures (paragon-ec2-2500)",
        "`oracle-measured-dense`: the oracle's placement fed, instead of the truth, the classification "
        "rows `sextant-dense`'s engine returns (dense plan, about 29 runs a workload). Written by "
        "`bench/quality.py --scenarios paragon-ec2-2500 --no-robustness --profiles oracle-measured-dense "
        "--seeds 6-10 --json bench/results/quality-oracle-measured-dense.json`. Reading: "
        "docs/quality/planning.md, \"The oracle on measured rows\"."),
    "quality-quasar-sextant9": (
        "Decision quality on quasar-ec2-200 at sextant 9",
        "`sextant-true-rows` and `sextant` (9: engine 3, adaptive profiling) run at this code "
        "(`bench/quality.py --ladder --scenarios quasar-ec2-200 --profiles sextant-true-rows,sextant "
        "--seeds 6-10`), merged (`--ladder --merge quality-planning-quasar-8.json:oracle,oracle-estimates "
        "RUNS.json`) with the frozen `oracle` and `oracle-estimates` rows of that JSON (same twin; seed 7 "
        "of both re-run at this code gave all eleven metrics identical); `scenarios` holds every metric. "
        "Reading: docs/quality/planning.md, \"quasar-ec2-200 at sextant 9\"."),
    "quality-planning-loss": (
        "Planners 7 (resident protection) and 8 (ARQ past its class queue, guarded fallbacks) against 6.1 "
        "on paragon-ec2-2500",
        "QoS met of `sextant-true-rows` and `sextant` on the estimate port (`sextant-estimates`), "
        "planner 6.1 on seeds 1–3 beside `oracle` and `oracle-estimates`, planners 7 and 8 on seeds 1–5 "
        "(tuning) and 6–10 (held out); each run's rows from one `bench/quality.py --ladder --scenarios "
        "paragon-ec2-2500 --profiles ...` JSON, condensed by hand. Reading: docs/quality/planning.md."),
    "sizing-diagnosis": (
        "Where sextant loses workloads interference-oblivious@2 keeps (paragon-ec2-2500, seeds 1-2)",
        "Per profile and kind: QoS met, cores placed against the request and the true need, the share "
        "placed on a platform within 0.95 of the workload's best, and the lost workloads by cause; per "
        "pair, the workloads the baseline keeps and `sextant` 9 loses. Written by `bench/sizing_diagnosis.py "
        "--seeds 1-2 --json PATH` (`sextant@9,interference-oblivious@2`, then the 9.4 variants on seeds 1 and "
        "2 with `--profiles`, merged by hand under descriptive labels; tuning seeds only). Reading: "
        "docs/quality/planning.md, \"Sizing and platform choice\"."),
    "quality-sextant94": (
        "Decision quality on paragon-ec2-2500 (v4), `sextant` 9.4, seeds 6-10",
        "QoS met and the other quality metrics of `sextant@9.4` (9 with the request as the sizing floor "
        "and the platform tier for estimated rows). Written by `bench/quality.py --scenarios paragon-ec2-2500 "
        "--profiles sextant@9.4 --seeds 6-10 --no-robustness --json bench/results/quality-sextant94.json`. "
        "Reading: docs/quality/planning.md, \"Sizing and platform choice\"."),
    "quality-stress-v3-sextant94": (
        "Stress world (v3 interference), `sextant` 9.4, seeds 6-10",
        "QoS met and the other quality metrics of `sextant@9.4` on paragon-ec2-2500 in the v3 world, "
        "seeds 6-10. Written by `bench/quality.py --world v3 "
        "--scenarios paragon-ec2-2500 --profiles sextant@9.4 --seeds 6-10 --no-robustness --json "
        "bench/results/quality-stress-v3-sextant94.json`. "
        "Reading: docs/quality/planning.md, \"Sizing and platform choice\"."),
    "quality-sextant94-tuning": (
        "Sextant 9.4 against 9 and interference-oblivious@2 on paragon-ec2-2500, tuning seeds 3-5",
        "QoS met and the other quality metrics, seeds 3-5 (seeds 1-2: `sizing-diagnosis`). Written by "
        "`bench/quality.py --scenarios paragon-ec2-2500 --profiles sextant@9.4,sextant@9,interference-oblivious@2 "
        "--seeds 3-5 --no-robustness --json bench/results/quality-sextant94-tuning.json`. Reading: "
        "docs/quality/planning.md, \"Sizing and platform choice\"."),
    "quality-quasar-sextant94": (
        "Decision quality on quasar-ec2-200, `sextant` 9.4, seeds 6-10",
        "QoS met, performance against the target, CPU utilisation and over-provisioning of "
        "`sextant@9.4` on quasar-ec2-200 (v4). Written by `bench/quality.py --scenarios quasar-ec2-200 "
        "--profiles sextant@9.4 --seeds 6-10 --no-robustness --json "
        "bench/results/quality-quasar-sextant94.json`. "
        "Reading: docs/quality/planning.md, \"Sizing and platform choice\"."),
    "planner-rows-diagnosis": (
        "What the sextant planner was told beside the truth (paragon-ec2-2500, seed 1)",
        "Per run spec, the workloads lost on a platform below 0.95 of their best by how the planner got "
        "there, the as-close-as-possible placements and what filtered them, and the bias of the rows it "
        "was fed against the truth. Written by `bench/planner_rows_diagnosis.py --seed 1 --profiles ... "
        "--json PATH` (several runs, merged by hand; tuning seed only). "
        "Reading: docs/quality/profiling.md, \"Planner fed engine rows\"."),
    "kwiken": (
        "Kwiken on the request simulator",
        "Reissue budgets (SumVar, uniform, fixed rule, 100 %, best of random allocations), partial "
        "answers, the combined policy on a 150-stage DAG, catch-up and global reissues, on simulated "
        "service DAGs, trained on one period and tested on another; cuts are relative p99 "
        "reductions. Written by `bench/kwiken.py --quick --seeds 6-10 --tuned OLD.json --jobs 2 --json "
        "bench/results/kwiken.json`, reusing the (γ, κ) table chosen on seeds 1–5 by an earlier "
        "`--tune-seeds 1-5` run (the reissue code is unchanged since) (the quick sizes: 15 DAGs per seed, 4 000 requests per period, 1 000 "
        "random allocations; claims the worst of seeds 6–10, κ and γ chosen on seeds 1–5); its speed "
        "keys at the top level are that quick run's (1 000 random allocations timed once, against the fastest of 5 "
        "SumVar calls of the code before its vectorised paths). The `speed` "
        "section holds the speed bars at 10 000 random allocations: written by `bench/kwiken_speed.py "
        "--json OUT --merge-into bench/results/kwiken.json` (thread CPU time, 9 small DAGs per seed, "
        "the median of 3 random searches over the median of 75 SumVar calls; its own code version). "
        "Definitions: docs/kwiken.md, docs/kwiken/speed.md."),
    "realism": (
        "Twin realism",
        "The twin's observable matrices (co-location, platform speed, 1–8-node scaling) against the "
        "measured bands of `../shared/REALISM.md`, seeds 6–10 (calibrated on seeds 1–2). Written by "
        "`bench/realism.py --seeds 6-10 --json bench/results/realism.json`. Design: docs/twin.md."),
    "twin-acceptance": (
        "Twin acceptance screen",
        "`paragon-ec2-2500`, seeds 6–10: QoS met of the blind baselines (≤ 0.35) and the oracle "
        "(≥ 0.90), and each run's CPU seconds (user + system of a single-threaded run: the stand-in "
        "for its wall time alone on the shared machine, ≤ 60 s). Written by "
        "`bench/twin_acceptance.py --seeds 6-10 --json bench/results/twin-acceptance.json` (one "
        "process per seed, joined with `--merge`)."),
    "sim": (
        "Twin speed",
        "`paragon-ec2-2500`, seed 6, one run per profile on one prepared scenario. Written by "
        "`bench/sim.py --seed 6 --json bench/results/sim.json`."),
    "eventstore": (
        "Event store",
        "`PostgresEventStore.append` throughput (batch 1 and 100, 1 and 8 writers in one process), "
        "`tail()` reads, and PG → relay → Kafka → consumer latency at fixed rates (*delivered*: "
        "append committed → the consumer's handler sees the event; *processed*: → the consumer's "
        "output and tracking row are committed). Written by `bench/eventstore.py --json "
        "bench/results/eventstore.json` (real PostgreSQL with fsync on, real Kafka). "
        "Design: docs/platform.md."),
    "eventstore-floor": (
        "Event store: the transport floor per workload",
        "The platform's event traffic without its decisions, at fixed workloads/s: a driver appending "
        "submissions as admission does, the production relay and N echo decider processes "
        "(`runtime.decider_task` around a decider that only answers its trigger type), 25 logged "
        "events per workload. CPU ms per workload by process (PostgreSQL and Kafka apart), chain "
        "latency from the envelopes' times, per configuration `HOPS@RATE` and repetition (`per_seed`; "
        "`worst`: the repetition with the most client CPU). Written by `bench/eventstore.py --floor "
        "--configs 5@50,3@50,1@50,5@100 --seconds 30 --seeds 6-7 --json "
        "bench/results/eventstore-floor.json`, then runs with `--update` adding repetitions and "
        "configurations (the commands: docs/platform/floor.md, \"Reproduce\")."),
    "chaos": (
        "Chaos under supervision",
        "While twin workloads are submitted over REST to the platform as `make up` runs it (under "
        "supervisord), each service and the agent is killed with SIGKILL once; per victim, the "
        "seconds from the kill until supervisord reports it running again (`running_s`, which "
        "includes supervisord's 5 s `startsecs`) and until the API's `/readyz` answers 200 again "
        "(`ready_s`), polled through `sextant ps`. Written by `tests/e2e/test_chaos.py` "
        "(`pytest -m chaos`), which asserts 0 lost and 0 duplicated decisions and replay 0 "
        "differences but not these times. Design: docs/platform.md, \"Supervision\"."),
    "e2e": (
        "Platform end to end",
        "Open-loop HTTP submissions at fixed rates to the whole platform (Kafka, PostgreSQL, six "
        "services, relay, twin agent as separate processes); a workload's latency ends at its first "
        "placement decision; platform CPU per workload from `/proc`; replay speed over an in-process "
        "log. Written by `bench/e2e.py --json bench/results/e2e.json`. Design: docs/platform.md."),
    "replay": (
        "Replay and state rebuild",
        "In process, CPU seconds, on a log of the platform-demo cell (`events` envelopes: 20 000 "
        "with `--quick`, 100 000 without) stored as the `events` table holds it: decoding the rows "
        "(trusted under a matching checksum) and folding them (*rebuilt*), re-deriving every "
        "decision with 0 differences (*re-derived*), and a restart from the newest snapshot. "
        "Written by `bench/replay.py --json bench/results/replay.json --seeds 6`. "
        "Method and history: docs/platform/replay.md; "
        "figures side by side: docs/platform/throughput.md, \"Replay\"."),
    "replay-core": (
        "Replay: the decision core's exact speed-ups",
        "As `replay` (the same bench and log), after the decision core's exact speed-ups (no decision "
        "changed: 0 differences). Written by `bench/replay.py --json bench/results/replay-core.json "
        "--seeds 6`. Method, the paired before/after runs and the profile: "
        "docs/platform/replay.md, \"Decision core\"."),
    "recurring-platform": (
        "Recurring reservations through the platform: submission latency",
        "Sign-offs of inferred contracts (`POST /v1/contracts/{id}/accept` or `/override`) sent open "
        "loop to the whole platform (Kafka, PostgreSQL, the services, relay, twin agent as processes); "
        "a reservation's latency ends at the planning decision the sign-off caused "
        "(`ReservationPlanned` or `ReservationRefused`). Written by `bench/recurring_platform.py "
        "--json bench/results/recurring-platform.json`. Definitions: docs/recurring/platform-latency.md."),
    "console": (
        "Web console render times",
        "Each console page with 10 000 workloads (the console tests' world), signed in as the "
        "operator: *server* = an HTTP request until its body is read (the page rendered by the API), "
        "*browser* = headless Chromium's load of the page (scripts and charts included); p50 / p95 "
        "per page, `worst` over the seeds (which change nothing here: one repetition each). Written "
        "by `bench/console.py --json bench/results/console.json`. Pages: docs/console/README.md."),
}

BASELINES_INTRO = (
    "Every table is one `sextant sim compare` run: all baseline profiles and the oracle on the same "
    "arrivals, ground truths and measurement noise (common random numbers). Written by "
    "`sextant sim compare SCENARIO --seed 6 --json bench/results/sim-compare/SCENARIO.json --profiles "
    "least-loaded,heterogeneity-oblivious,interference-oblivious,random,reservation-least-loaded,oracle`. "
    "Profiles ↔ papers: Paragon's LL = `least-loaded`, NH = `heterogeneity-oblivious`, NI = "
    "`interference-oblivious`; Quasar's \"reservation + LL\" = `reservation-least-loaded`; `random` is "
    "ours; `oracle` places with the ground truth (a yardstick, not a policy). The paper column gives "
    "the papers' figure for the profile that plays the paper's scheduler (the oracle's row carries "
    "Paragon's or Quasar's own). Columns and definitions: docs/twin.md, \"Metrics\"; demand/capacity "
    "of each scenario: docs/twin.md, \"Scenarios\".")


# --- values -------------------------------------------------------------------------------------


def is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def is_plain(v: Any) -> bool:
    """A cell: a scalar or a list of scalars."""
    return is_scalar(v) or (isinstance(v, list) and all(is_scalar(x) for x in v))


def fmt(v: Any) -> str:
    """A cell's text: about four significant digits, never scientific notation for ordinary sizes."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        a = abs(v)
        if v == 0:
            return "0"
        if a >= 1000:
            return f"{v:.0f}"
        if a >= 1e-4:
            return f"{v:.4g}"
        return f"{v:.2e}"
    if isinstance(v, list):
        return ", ".join(fmt(x) for x in v)
    return str(v).replace("|", "\\|").replace("\n", " ")


# --- tables -------------------------------------------------------------------------------------


def as_row(v: Any) -> dict[str, Any] | None:
    """A record: a mapping of cells, possibly with nested mappings of cells (flattened `a.b`) when it
    has at least one cell of its own. None when `v` is not a record."""
    if not isinstance(v, dict) or not v:
        return None
    if all(is_plain(x) for x in v.values()):
        return dict(v)
    if not any(is_plain(x) for x in v.values()):
        return None
    flat: dict[str, Any] = {}
    for k, x in v.items():
        if is_plain(x):
            flat[k] = x
        elif isinstance(x, dict) and x and all(is_plain(y) for y in x.values()):
            flat.update({f"{k}.{kk}": y for kk, y in x.items()})
        else:
            return None
    return flat


def records(v: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every record under `v` with the keys that lead to it; raises ValueError when something under
    `v` is neither a record nor a collection of them."""
    row = as_row(v)
    if row is not None:
        yield path, row
    elif isinstance(v, dict) and v:
        for k, x in v.items():
            yield from records(x, (*path, str(k)))
    elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        for x in v:
            yield from records(x, path)
    else:
        raise ValueError(path)


def table_of(v: Any) -> list[str] | None:
    """One markdown table for a collection of records found at one depth, else None."""
    if as_row(v) is not None:
        return None
    try:
        rows = list(records(v))
    except ValueError:
        return None
    depths = {len(p) for p, _ in rows}
    if not rows or len(depths) != 1:
        return None
    depth = depths.pop()
    cols: list[str] = []
    for _, r in rows:
        cols += [c for c in r if c not in cols]
    lead = [""] * depth
    head = ["key" if depth == 1 else f"key {i + 1}" for i in range(depth)] if depth else []
    if depth == 0:
        lead = []
    lines = ["| " + " | ".join(head + cols) + " |", "|" + "---|" * (len(head) + len(cols))]
    for p, r in rows:
        cells = [fmt(x) for x in p] if depth else lead
        lines.append("| " + " | ".join(cells + [fmt(r.get(c)) for c in cols]) + " |")
    return lines


def section(v: dict[str, Any], level: int) -> list[str]:
    """A mapping: its cells as a key/value table, then each other entry as a table or a section."""
    out: list[str] = []
    cells = [(k, x) for k, x in v.items() if is_plain(x) and k not in SKIP]
    if cells:
        out += ["| key | value |", "|---|---|", *(f"| {fmt(k)} | {fmt(x)} |" for k, x in cells), ""]
    for k, x in v.items():
        if is_plain(x) or k in SKIP:
            continue
        out.append(f"{'#' * min(level, 6)} {k}")
        out.append("")
        row = as_row(x)
        tab = table_of(x)
        if row is not None:
            out += ["| key | value |", "|---|---|", *(f"| {fmt(kk)} | {fmt(y)} |" for kk, y in row.items()), ""]
        elif tab is not None:
            out += [*tab, ""]
        elif isinstance(x, dict):
            out += section(x, level + 1)
        else:  # a list mixing records and other values
            out += [f"- {fmt(y) if is_plain(y) else json.dumps(y, sort_keys=True)}" for y in x] + [""]
    return out


# --- pages --------------------------------------------------------------------------------------


def versions(v: Any, path: str = "") -> dict[str, list[str]]:
    """Every recorded code or twin version → the JSON paths that carry it, in document order."""
    found: dict[str, list[str]] = {}

    def walk(x: Any, p: str) -> None:
        if isinstance(x, dict):
            for k, y in x.items():
                if k in VERSION_KEYS and is_scalar(y) and y is not None:
                    found.setdefault(f"{k} `{y}`", []).append(p or "(top level)")
                else:
                    walk(y, f"{p}.{k}" if p else str(k))
        elif isinstance(x, list):
            for y in x:
                walk(y, p)

    walk(v, path)
    return found


def where(paths: list[str]) -> str:
    """The JSON paths that carry a version, three at most."""
    ps = list(dict.fromkeys(paths))
    return ", ".join(ps) if len(ps) <= 3 else f"{', '.join(ps[:3])} and {len(ps) - 3} more records"


def header(title: str, source: str, intro: str, doc: Any) -> list[str]:
    m = doc.get("machine") if isinstance(doc, dict) else None
    if isinstance(m, dict):
        machine = "; ".join(f"{k} {fmt(x)}" for k, x in m.items())
    else:
        machine = fmt(m) if m is not None else "not recorded in the JSON"
    vs = versions(doc)
    if vs:
        code = "; ".join(f"{v} ({where(ps)})" if len(vs) > 1 else v for v, ps in vs.items())
    else:
        code = "not recorded in the JSON"
    return [f"# Results: {title}", "",
            f"<!-- generated by bench/results_docs.py from {source}; edit the JSON or the generator -->", "",
            intro, "",
            f"- source: `{source}`",
            f"- machine: {machine}",
            f"- code version: {code}", ""]


def page(name: str, doc: Any) -> str:
    title, intro = INTRO.get(name, (name, f"Written by `bench/{name.split('-')[0]}.py`."))
    out = header(title, f"bench/results/{name}.json", intro, doc)
    if isinstance(doc, dict):
        out += section(doc, 2)
    else:
        out += table_of(doc) or [f"```\n{json.dumps(doc, indent=1)}\n```"]
    return "\n".join(out).rstrip() + "\n"


def baselines_page(folder: Path) -> str:
    docs = [json.loads((folder / f"{s}.json").read_text()) for s in baselines_doc.SCENARIOS
            if (folder / f"{s}.json").exists()]
    vs: dict[str, list[str]] = {}
    for d in docs:
        for v in versions({k: x for k, x in d.items() if k != "profiles"}):
            vs.setdefault(v, []).append(d["scenario"])
    code = "; ".join(f"{v} ({', '.join(s)})" for v, s in vs.items()) or "not recorded in the JSON"
    out = ["# Results: baselines on the twin, next to the papers", "",
           "<!-- generated by bench/results_docs.py from bench/results/sim-compare/*.json; "
           "edit the JSON or the generator -->", "",
           BASELINES_INTRO, "",
           "- source: `bench/results/sim-compare/<scenario>.json`",
           "- machine: not recorded in the JSON",
           f"- code version: {code}", ""]
    for d in docs:
        out += [*baselines_doc.table(d), ""]
    out += ["## Is the oracle at least as good as every other profile?", "", *baselines_doc.dominance(docs)]
    return "\n".join(out).rstrip() + "\n"


def render(results: Path = RESULTS) -> dict[str, str]:
    """File name under docs/results/ → its text, for every JSON document in `results`."""
    pages = {f"{p.stem}.md": page(p.stem, json.loads(p.read_text())) for p in sorted(results.glob("*.json"))}
    if (results / "sim-compare").is_dir():
        pages["baselines.md"] = baselines_page(results / "sim-compare")
    return pages


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = ap.parse_args()
    pages = render()
    stale = sorted(n for n, t in pages.items() if not (PAGES / n).exists() or (PAGES / n).read_text() != t)
    extra = sorted(p.name for p in PAGES.glob("*.md") if p.name not in pages) if PAGES.exists() else []
    if args.check:
        for n in stale + extra:
            print(f"docs/results/{n}: out of date (run bench/results_docs.py)")
        return 1 if stale or extra else 0
    PAGES.mkdir(parents=True, exist_ok=True)
    for n in stale:
        (PAGES / n).write_text(pages[n])
        print(f"wrote docs/results/{n}")
    for n in extra:
        (PAGES / n).unlink()
        print(f"removed docs/results/{n} (its JSON is gone)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
