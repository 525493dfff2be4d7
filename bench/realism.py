"""Calibration report of the twin: its observable matrices against measured statistics (../shared/REALISM.md).

    .venv/bin/python bench/realism.py --seed N [--seeds 6-10] [--dump DIR] --json PATH [--quick]
                                      [--world v4|v3]

Per seed, three observable outcomes of the ground truth (`sextant_sim.realism`):

- `colocation`: single-node batch victims × co-runners on the reference platform at full
  occupancy, the victim's speed factor (`colocation_matrix`, 240 × 180);
- `heterogeneity`: workloads × platforms, speed (`heterogeneity_matrix`);
- `scaleout`: analytics workloads × 1, 2, 4, 8 nodes, throughput (`scaleout_matrix`);

each summarised by the statistics of `shared/tools/realism_check.py` at the measured shape
(`{"twin": {"r1", "r3", "corr", "rms"}, "band": {...}, "within": bool}`). `colocation_all_families`:
the same co-location statistics with every scenario family as victims and co-runners (300 × 200;
the multi-node families' caused multiplier is set on it). A builder that raises
`NotImplementedError` is reported as `{"error": "not built"}`. Reported but never calibrated on:
`interference_scores`, the same statistics of the matrix the classifier fills (tolerated + caused
per source, 20 columns, noise-free) with its column-shuffled null, and `pair_keep_share`, the second
screen (random batch pairs that both keep ≥ 0.98 of their speed on a small platform at half
occupancy).

`--seed N` reports one seed; `--seeds 6-10` several: the top-level keys then hold the seed mean,
`per_seed` each seed and `worst` the seed-wise extreme of every statistic (the one furthest from its
band's centre, `within` = every seed within); `--dump DIR` writes
`colocation.csv`, `heterogeneity.csv`, `scaleout.csv` of the first seed (check them with
`python ../shared/tools/realism_check.py DIR`); `--quick` uses smaller matrices (a smoke run, the
statistics drift with small dumps). No timings are part of any result; `load_avg` records the
machine's load.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from quality import code_version, seeds_of  # the same code version and seed syntax as the other benches

SCORE_SHAPE = (71, 20)


def _matrix_report(name: str, build: Callable[[], Any], dump: Path | None) -> dict[str, Any]:
    from sextant_sim.realism import BANDS, band_stats, within_band, write_csv

    try:
        m = build()
    except NotImplementedError:
        return {"error": "not built"}
    shape, band = BANDS[name]
    s = band_stats(m.values, shape)
    if dump is not None:
        write_csv(dump / f"{name}.csv", m)
    return {"twin": {k: round(v, 4) for k, v in s.items()}, "band": {k: list(v) for k, v in band.items()},
            "within": within_band(name, s), "shape": list(m.values.shape)}


def _shuffled_null(values: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = values.copy()
    for j in range(out.shape[1]):
        out[:, j] = rng.permutation(out[:, j])
    return out


def one_seed(seed: int, world: str, quick: bool, dump: Path | None) -> dict[str, Any]:
    from sextant_sim.realism import band_stats, colocation, heterogeneity_matrix, scaleout_matrix, within_band

    # quick: still at least the measured shapes (scale-out is compared at 56 rows)
    rows, cols, het_rows, pairs, score_rows = (80, 40, 60, 300, 100) if quick else (240, 180, 120, 2000, 400)
    out: dict[str, Any] = {
        "colocation": _matrix_report("colocation", lambda: colocation.colocation_matrix(
            seed, rows=rows, cols=cols, world=world), dump),
        "heterogeneity": _matrix_report("heterogeneity", lambda: heterogeneity_matrix(seed, rows=het_rows), dump),
        "scaleout": _matrix_report("scaleout", lambda: scaleout_matrix(seed, rows=het_rows), dump),
    }
    allf = colocation.colocation_matrix(seed, rows=rows + rows // 4, cols=cols + cols // 9, world=world,
                                        families=colocation.ALL_FAMILIES)
    out["colocation_all_families"] = {"twin": {k: round(v, 4) for k, v in band_stats(allf.values, (71, 22)).items()},
                                      "shape": list(allf.values.shape)}
    out["colocation_all_families"]["within"] = within_band("colocation", out["colocation_all_families"]["twin"])
    sc = colocation.interference_scores(seed, rows=score_rows, world=world)
    twin = band_stats(sc.values, SCORE_SHAPE)
    null = band_stats(_shuffled_null(sc.values, seed), SCORE_SHAPE)
    out["interference_scores"] = {"twin": {k: round(v, 4) for k, v in twin.items()},
                                  "null": {k: round(v, 4) for k, v in null.items()},
                                  "shape": list(sc.values.shape), "calibrated_on": False}
    out["pair_keep_share"] = round(colocation.pair_keep_share(seed, pairs=pairs, world=world), 4)
    return out


def _worst(per_seed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per matrix and statistic, the seed value furthest from its band's centre; `within` = every
    seed within."""
    from sextant_sim.realism import BANDS

    out: dict[str, Any] = {}
    for name, (_shape, band) in BANDS.items():
        reps = [r[name] for r in per_seed.values() if "twin" in r.get(name, {})]
        if not reps:
            out[name] = {"error": "not built"}
            continue
        stats = {}
        for k, (lo, hi) in band.items():
            mid = (lo + hi) / 2
            stats[k] = max((r["twin"][k] for r in reps), key=lambda v, mid=mid: abs(v - mid))
        out[name] = {"twin": stats, "within": all(r["within"] for r in reps)}
    keeps = [r["pair_keep_share"] for r in per_seed.values()]
    out["pair_keep_share"] = {"min": min(keeps), "max": max(keeps)}
    return out


def _mean(per_seed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The seed-mean of every statistic (`within` judged on the mean; see `worst` for each seed)."""
    from sextant_sim.realism import within_band

    reps = list(per_seed.values())
    out: dict[str, Any] = {}
    for name in ("colocation", "heterogeneity", "scaleout", "colocation_all_families", "interference_scores"):
        if "twin" not in reps[0][name]:
            out[name] = reps[0][name]
            continue
        out[name] = dict(reps[0][name])
        for part in ("twin", "null"):
            if part in reps[0][name]:
                out[name][part] = {k: round(float(np.mean([r[name][part][k] for r in reps])), 4)
                                   for k in reps[0][name][part]}
        if "within" in out[name]:
            out[name]["within"] = within_band("colocation" if name.startswith("colocation") else name,
                                              out[name]["twin"])
    out["pair_keep_share"] = round(float(np.mean([r["pair_keep_share"] for r in reps])), 4)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seeds", default=None, help="e.g. 6-10 (overrides --seed)")
    ap.add_argument("--dump", default=None, help="directory for colocation.csv, heterogeneity.csv, scaleout.csv")
    ap.add_argument("--json", dest="json_path", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--world", default=None, help="ground-truth world (default: v4)")
    args = ap.parse_args()
    from sextant_sim import groundtruth

    world = args.world or groundtruth.DEFAULT_WORLD
    seeds = seeds_of(args.seeds) if args.seeds else [args.seed if args.seed is not None else 1]
    load_start = os.getloadavg()
    started = time.perf_counter()
    per_seed: dict[str, dict[str, Any]] = {}
    for i, seed in enumerate(seeds):
        dump = Path(args.dump) if args.dump and i == 0 else None
        per_seed[str(seed)] = r = one_seed(seed, world, args.quick, dump)
        co = r["colocation"]
        line = " ".join(f"{k} {v:.3f}" for k, v in co["twin"].items()) if "twin" in co else co["error"]
        print(f"seed {seed}: colocation {line} within={co.get('within')}  keep {r['pair_keep_share']:.3f}  "
              f"scores r1 {r['interference_scores']['twin']['r1']:.3f} (null {r['interference_scores']['null']['r1']:.3f})"
              f"  heterogeneity {r['heterogeneity'].get('within', 'not built')}  scaleout "
              f"{r['scaleout'].get('within', 'not built')}", flush=True)
    first = _mean(per_seed)
    doc: dict[str, Any] = {
        "benchmark": "realism", "code_version": code_version(), "twin_version": groundtruth.world_version(world),
        "world": world, "seeds": seeds, "quick": args.quick,
        "colocation": first["colocation"], "heterogeneity": first["heterogeneity"], "scaleout": first["scaleout"],
        "colocation_all_families": first["colocation_all_families"],
        "interference_scores": first["interference_scores"], "pair_keep_share": first["pair_keep_share"],
        "per_seed": per_seed, "worst": _worst(per_seed),
        "load_avg": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]},
        "machine": {"python": sys.version.split()[0], "cpus": os.cpu_count()},
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json_path).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
