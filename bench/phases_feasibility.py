"""How much proactive detection an in-place probe can reach on paragon-local-phases within a probe
budget (bench-only analysis; docs/adaptation/phases.md, "Proactive detection: what 0.60 needs").

From the twin's ground truth (never the policy's view): for every phase change of every workload, the
true shift of each source's tolerated score (noise-free, `Profiler.interference`, on the platform the
workload is profiled on — the reference platform) and Table III's noise sd for that source
(`score_noise_sd`). A probe of source s then has a signal-to-noise z_s = |shift_s| / sd_s, and the
best a test can do with n source-probes after the change, against a baseline known exactly, is to
spend them all on the source with the largest z_s: mean z = z_max · √n (z adds in quadrature).

The probe budget fixes n: probing at a share B of server time, 5 s per ramped source
(`probe_source_s`), a window of L seconds after the change holds n = B · L / 5 source-probes when
the probes are spread evenly (the core does not know when a batch workload will change phase: it does
not see its progress). L is what the proactive measure leaves: the probe must come before the
reactive detection (one 60 s telemetry window; L = 300 s if it waited for a full period).

Detection at a one-sided threshold c (a probe flags when its z exceeds c): P = Φ(z − c); false
claims: Q(c) per test without a change. Printed: the distribution of z_max, the detection reached at
B = 0.05 for L = 60 and 300 s at the threshold that keeps the false-claim share ≤ 0.15 (tests
without a change outnumber those across one by the ratio of a workload's life to the window), and
the budget B needed for a 0.60 detection.

    .venv/bin/python bench/phases_feasibility.py --seeds 1-5 [--delays 1] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptation import PHASES, scenario  # noqa: E402
from quality import seeds_of  # noqa: E402

PROBE_SOURCE_S = 5.0
FALSE_SHARE = 0.15
BAR = 0.60


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def shifts(seed: int) -> dict[str, Any]:
    """Per phase change: the largest per-probe z over the ten sources, and the mean z of the four
    memory-hierarchy sources (8.6's probe), from the twin's truth."""
    import numpy as np
    from sextant_sim.groundtruth import SOURCES
    from sextant_sim.profiler import score_noise_sd
    from sextant_sim.setup import prepare

    _key, sc = scenario(PHASES, False)
    setup = prepare(sc, seed)
    prof = setup.profiler
    ref = setup.cat.index(setup.cat.reference().platform_id)
    zmax: list[float] = []
    zmem: list[float] = []
    zcap: list[float] = []
    life: list[float] = []
    best_src: dict[str, int] = {}
    for sub in setup.subs:
        t = sub.truth
        if not t.phases or len(t.phases) < 2:
            continue
        life.append(t.ideal_s / (len(t.phases) - 1))
        for ph in range(1, len(t.phases)):
            before, _c0 = prof.interference(t, ref, ph - 1)
            after, _c1 = prof.interference(t, ref, ph)
            sd = score_noise_sd(setup.gt, before, setup.scenario.noise_scale)
            z = np.abs(np.asarray(after) - np.asarray(before)) / np.maximum(sd, 1e-9)
            zmax.append(float(z.max()))
            zcap.append(float(z[SOURCES.index("memory_cap")]))
            name = SOURCES[int(z.argmax())]
            best_src[name] = best_src.get(name, 0) + 1
            mem = [SOURCES.index(x) for x in ("memory_cap", "memory_bw", "llc_cap", "llc_bw")]
            d = float(np.mean(np.asarray(after)[mem] - np.asarray(before)[mem]))
            zmem.append(abs(d) / (float(np.mean(sd[mem])) / 2.0))  # mean of 4 sources: sd / √4
    return {"seed": seed, "zmax": zmax, "zmem": zmem, "best_source": best_src, "life": life, "zcap": zcap}


def detection(z: list[float], n: float, c: float) -> float:
    """Mean over changes of the chance a test with n source-probes (all on the best source) flags
    it; n < 1: a probe lands in the window with probability n."""
    if n <= 0:
        return 0.0
    k = max(n, 1.0)
    hit = min(n, 1.0)
    return hit * statistics.fmean(_phi(x * math.sqrt(k) - c) for x in z)


def threshold(z: list[float], n: float, nulls_per_change: float) -> float:
    """The lowest threshold c keeping the false-claim share ≤ FALSE_SHARE: false = nulls · Q(c),
    true = detection(z, n, c)."""
    c = 0.0
    while c < 8.0:
        fa = nulls_per_change * (1.0 - _phi(c)) * min(n, 1.0)
        tp = detection(z, n, c)
        if tp > 0 and fa / (fa + tp) <= FALSE_SHARE:
            return c
        c += 0.01
    return c


def reactive_delays(seed: int, profile: str) -> dict[str, Any]:
    """One run of `profile`: for each phase change, the delay to the first reactive decision on its
    workload within the scoring window (two telemetry periods) — the L the proactive measure leaves."""
    from sextant_contracts import events as ev
    from sextant_sim.adaptation.run import run
    from sextant_sim.setup import prepare

    _key, sc = scenario(PHASES, False)
    setup = prepare(sc, seed)
    r = run(setup, profile, seed)
    window = 2.0 * setup.scenario.telemetry.period_s
    reactive: dict[str, list[float]] = {}
    for e in r.events:
        if isinstance(e, ev.ReclassificationRequested | ev.AllocationAdjusted | ev.MigrationDecided) \
                and e.reason.startswith("reactive"):
            reactive.setdefault(e.workload_id, []).append(e.at)
    delays = []
    for wid, at, _ph in r.phase_changes:
        later = [t - at for t in reactive.get(wid, []) if 0.0 <= t - at <= window]
        if later:
            delays.append(min(later))
    q = statistics.quantiles(delays, n=4) if len(delays) > 1 else delays
    return {"seed": seed, "profile": profile, "changes": len(r.phase_changes), "detected": len(delays),
            "delay_quartiles_s": [round(x, 1) for x in q], "delay_mean_s": round(statistics.fmean(delays), 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--delays", metavar="SEED", type=int,
                    help="also run --profile on this seed and report the reactive detection delays")
    ap.add_argument("--profile", default="sextant-adaptive@9+8.13")
    args = ap.parse_args(argv)

    zmax: list[float] = []
    zmem: list[float] = []
    best: dict[str, int] = {}
    life: list[float] = []
    zcap: list[float] = []
    for s in seeds_of(args.seeds):
        d = shifts(s)
        zcap += d["zcap"]
        zmax += d["zmax"]
        zmem += d["zmem"]
        life += d["life"]
        for k, v in d["best_source"].items():
            best[k] = best.get(k, 0) + v
    q = statistics.quantiles(zmax, n=4)
    out: dict[str, Any] = {"changes": len(zmax), "zmax_quartiles": [round(x, 3) for x in q],
                           "zmax_mean": round(statistics.fmean(zmax), 3),
                           "zmem_mean": round(statistics.fmean(zmem), 3), "zcap_mean": round(statistics.fmean(zcap), 3), "best_source_counts": best, "rows": []}
    life_s = statistics.fmean(life)  # ideal run time per phase change: fewer null tests than the real run
    out["ideal_s_per_change"] = round(life_s, 1)
    print(f"{len(zmax)} phase changes, {life_s:.0f} s of ideal run time per change; per-probe z of the best source: quartiles {out['zmax_quartiles']}, "
          f"mean {out['zmax_mean']}; 8.6's four-source mean: z {out['zmem_mean']} per probe")
    for window in (60.0, 300.0):
        nulls = life_s / window
        for budget in (0.05, 0.10, 0.25, 0.5, 1.0, 2.0):
            n = budget * window / PROBE_SOURCE_S
            c = threshold(zmax, n, nulls)
            det = detection(zmax, n, c)
            # 8.6's probe: the four memory-hierarchy sources at once (4 source-probes a test)
            c4 = threshold(zmem, n / 4.0, nulls)
            det4 = detection(zmem, n / 4.0, c4)
            c1 = threshold(zcap, n, nulls)
            det1 = detection(zcap, n, c1)
            row = {"window_s": window, "memory_cap_detection": round(det1, 3), "budget": budget, "source_probes": round(n, 2), "threshold": round(c, 2),
                   "detection": round(det, 3), "four_source_threshold": round(c4, 2),
                   "four_source_detection": round(det4, 3)}
            out["rows"].append(row)
            print(f"  L {window:>4.0f} s  budget {budget:>5.2f}: {n:>5.1f} source-probes; best source: threshold "
                  f"{c:.2f}, detection {det:.3f}; memory_cap: {det1:.3f}; four sources: threshold {c4:.2f}, detection {det4:.3f}")
    for window in (60.0, 300.0):
        nulls = life_s / window
        need = {}
        for name, z, per in (("best source", zmax, 1.0), ("memory_cap", zcap, 1.0), ("four sources", zmem, 4.0)):
            b = 0.01
            while b < 20.0:
                n = b * window / PROBE_SOURCE_S / per
                if detection(z, n, threshold(z, n, nulls)) >= BAR:
                    break
                b *= 1.05
            need[name] = round(b, 3)
        out[f"budget_for_{BAR}_at_{window:g}s"] = need
        print(f"  budget for detection {BAR} within {window:.0f} s: {need}")
    if args.delays is not None:
        out["reactive_delays"] = reactive_delays(args.delays, args.profile)
        print(f"  reactive detection delays: {out['reactive_delays']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
