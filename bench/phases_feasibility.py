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

`--reactive` (docs/adaptation/phases.md, "Ladder 8.16"): the reactive side instead. One run of
`--profile` per seed; for every observable phase change its reactive detector missed, what the
telemetry shows (the windows of the period before the change against those of the period after,
z in units of the twin's 1 % per 300 s window noise) and the likely cause; then the ROC of an
open-loop step detector over the same telemetry (`detector`: a threshold z on the latest k windows
against the baseline since the latest reset, a claim re-baselines), scored as the study scores
claims, for the resets the policy can see, those only the truth knows, and the issue's 300 s
reference windows:

    .venv/bin/python bench/phases_feasibility.py --reactive --seeds 1-5 --profile sextant-adaptive \
        [--cache DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
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


# --- the reactive ceiling (ladder 8.16 study): what the telemetry shows, what any threshold reaches ----------

TELEMETRY_SD = 0.01  # the twin's telemetry noise per 300 s reference window (docs/twin.md), ∝ 1/√length
REF_S = 300.0


def _events(seed: int, profile: str, cache: str | None) -> tuple[list[Any], list[tuple[str, float, int]], float]:
    """One run of `profile` on `seed`: its kept events, its phase changes and the telemetry period
    (pickled under `cache` when given: the analysis re-reads one run many times)."""
    import pickle

    path = Path(cache) / f"phases-{profile.replace('@', '_').replace('+', '_')}-seed{seed}.pkl" if cache else None
    if path is not None and path.exists():
        data: tuple[list[Any], list[tuple[str, float, int]], float] = pickle.loads(path.read_bytes())
        return data
    from sextant_sim.adaptation.run import run
    from sextant_sim.setup import prepare

    _key, sc = scenario(PHASES, False)
    setup = prepare(sc, seed)
    r = run(setup, profile, seed)
    out = (r.events, list(r.phase_changes), float(setup.scenario.telemetry.period_s))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(out))
    return out


def timelines(events: list[Any], changes: list[tuple[str, float, int]]) -> dict[str, dict[str, Any]]:
    """Per workload, from a run's events and the twin's phase changes: its telemetry windows
    (start, end, ratio to target), its own resets (start, allocation changes), the times the
    residents of its servers changed (arrivals, departures: what the policy sees) and the times a
    co-resident changed phase (the twin's truth: what it does not), its reactive decisions and
    claims, its classifications and its end."""
    from sextant_contracts import events as ev

    w: dict[str, dict[str, Any]] = defaultdict(lambda: {"obs": [], "own": [], "nb": [], "nb_phase": [], "reactive": [],
                                                        "claims": [], "classified": [], "changes": [],
                                                        "end": math.inf, "last": None})
    servers: dict[str, set[str]] = {}  # workload -> its servers while it runs
    residents: dict[str, set[str]] = defaultdict(set)
    pc = sorted(changes, key=lambda x: x[1])
    for wid, at, _ph in pc:
        w[wid]["changes"].append(at)
    k = 0

    def phase_until(t: float) -> None:
        nonlocal k
        while k < len(pc) and pc[k][1] <= t:
            wid, at, _ph = pc[k]
            for s in servers.get(wid, ()):
                for o in residents[s]:
                    if o != wid:
                        w[o]["nb_phase"].append(at)
            k += 1

    def move(wid: str, new: set[str], at: float) -> None:
        old = servers.get(wid, set())
        for s in old ^ new:
            for o in residents[s]:
                if o != wid:
                    w[o]["nb"].append(at)
        for s in old - new:
            residents[s].discard(wid)
        for s in new - old:
            residents[s].add(wid)
        if new:
            servers[wid] = new
        else:
            servers.pop(wid, None)

    for e in events:
        wid = getattr(e, "workload_id", None)
        if wid is None:
            continue
        phase_until(e.at)
        x = w[wid]
        if isinstance(e, ev.WorkloadStarted):
            x["own"].append(e.at)
            x["last"] = e.at
            move(wid, set(e.allocation.servers), e.at)
        elif isinstance(e, ev.AllocationAdjusted | ev.MigrationDecided):
            x["own"].append(e.at)
            if wid in servers:
                move(wid, set(e.allocation.servers), e.at)
        elif isinstance(e, ev.WorkloadCompleted | ev.WorkloadFailed | ev.WorkloadRevoked):
            x["end"] = e.at
            move(wid, set(), e.at)
        elif isinstance(e, ev.WorkloadClassified):
            x["classified"].append(e.at)
        elif isinstance(e, ev.PerformanceObserved):
            start = x["last"] if x["last"] is not None else e.at
            x["obs"].append((start, e.at, e.ratio_to_target))
            x["last"] = e.at
        if isinstance(e, ev.ReclassificationRequested | ev.AllocationAdjusted | ev.MigrationDecided) \
                and str(getattr(e, "reason", "")).startswith("reactive"):
            x["reactive"].append(e.at)
            if isinstance(e, ev.ReclassificationRequested):
                x["claims"].append(e.at)
    phase_until(math.inf)
    return dict(w)


def _sd(length: float) -> float:
    return TELEMETRY_SD * math.sqrt(REF_S / max(length, 1.0)) if length < REF_S else TELEMETRY_SD


def _z(before: list[tuple[float, float, float]], after: list[tuple[float, float, float]]) -> tuple[float, float]:
    """(relative shift, z) of the length-weighted mean of `after` against that of `before`
    (windows (start, end, ratio)); the noise of a mean of total length L is 1 % · √(300 / L)."""
    lb = sum(e - s for s, e, _r in before)
    la = sum(e - s for s, e, _r in after)
    if lb <= 0 or la <= 0:
        return 0.0, 0.0
    mb = sum((e - s) * r for s, e, r in before) / lb
    ma = sum((e - s) * r for s, e, r in after) / la
    if mb <= 0:
        return 0.0, 0.0
    rel = ma / mb - 1.0
    sd = math.sqrt(_sd(lb) ** 2 + _sd(la) ** 2)
    return rel, abs(rel) / sd


def missed(tl: dict[str, dict[str, Any]], period_s: float) -> dict[str, Any]:
    """Every observable phase change (the workload ran a period past it) the run's reactive
    detector missed (no reactive decision within two periods, before the next change), with what
    its telemetry shows: the windows of the period before the change against those of the period
    after it (each cut at the workload's own resets), its relative shift and z, and why a detector
    with the policy's view would miss it: `own_reset` (its own start or allocation change within a
    period before or after), `neighbour` (its servers' residents changed within that span),
    `neighbour_phase` (a co-resident changed phase then: the truth, not seen by the policy),
    `invisible` (z < 3) — the first that applies, in that order after `invisible`; `split`: the
    window that holds the change ends at a resident change (the agent's split report)."""
    window = 2.0 * period_s
    rows = []
    observable = 0
    for wid, x in tl.items():
        times = x["changes"]
        for j, t in enumerate(times):
            nxt = times[j + 1] if j + 1 < len(times) else math.inf
            if x["end"] < t + period_s:
                continue
            observable += 1
            if any(t <= d <= min(t + window, nxt) for d in x["reactive"]):
                continue
            lo = max([t - period_s, *(o for o in x["own"] if o <= t)])
            hi = min([t + period_s, nxt, *(o for o in x["own"] if o > t)])
            before = [o for o in x["obs"] if o[0] >= lo - 1e-9 and o[1] <= t + 1e-9]
            after = [o for o in x["obs"] if o[0] >= t - 1e-9 and o[1] <= hi + 1e-9]
            rel, z = _z(before, after)
            span = (t - period_s, t + period_s)
            if not before or not after:
                why = "own_reset"
            elif z < 3.0:
                why = "invisible"
            elif any(t - period_s <= o <= t + period_s for o in x["own"]):
                why = "own_reset"
            elif any(span[0] <= o <= span[1] for o in x["nb"]):
                why = "neighbour"
            elif any(span[0] <= o <= span[1] for o in x["nb_phase"]):
                why = "neighbour_phase"
            else:
                why = "other"
            # the window that holds the change ends at a resident change (the agent's split report)
            holding = next((o for o in x["obs"] if o[0] < t <= o[1]), None)
            split = holding is not None and any(abs(holding[1] - o) <= 1e-6 for o in x["nb"])
            rows.append({"workload": wid, "at": t, "shift": round(rel, 4), "z": round(z, 2), "why": why,
                         "split": split})
    return {"observable": observable, "missed": rows}


def _blocks(obs: list[tuple[float, float, float]], cuts: list[float], length: float) -> list[tuple[float, float, float]]:
    """The windows merged into blocks of at least `length` seconds (the issue's 300 s reference
    windows), never across a cut; a window with a cut inside it is dropped (it ends a block)."""
    out: list[tuple[float, float, float]] = []
    cur: list[tuple[float, float, float]] = []

    def close() -> None:
        if cur:
            n = sum(e - s for s, e, _r in cur)
            out.append((cur[0][0], cur[-1][1], sum((e - s) * r for s, e, r in cur) / n if n > 0 else cur[-1][2]))
            cur.clear()

    for s, e, r in obs:
        if any(s + 1e-9 < c < e - 1e-9 for c in cuts):
            close()
            continue
        if cur and (any(abs(c - s) <= 1e-9 for c in cuts) or abs(cur[-1][1] - s) > 1e-9):
            close()
        cur.append((s, e, r))
        if cur[-1][1] - cur[0][0] >= length - 1e-9:
            close()
    return out  # a trailing partial block is not yet reported


def detector(tl: dict[str, dict[str, Any]], period_s: float, c: float, k: int, resets: str,
             floor: float = 0.0, block_s: float | None = None) -> tuple[int, int, int, int]:
    """An open-loop reactive detector over the run's telemetry, scored as `score_phases` scores
    claims: (observable changes, detected, claims, false claims). Per workload, the baseline is
    the length-weighted mean of the windows since the latest reset; a claim when the mean of the
    latest `k` windows (each on the same side) is beyond `c` sd of the difference and `floor`
    relative — and the claim is a reset (the policy reclassifies). `resets`: "own" (the workload's
    own start and allocation changes), "policy" (+ its servers' residents changing, as the policy's
    gate None), "oracle" (+ a co-resident's phase change: the truth no policy has), "attribution"
    ("policy", and a would-be claim is dropped — a reset instead — when a co-resident changed phase
    within its window or a fifth of a period before it: perfect attribution, the truth again). A
    claim is false with no phase change of the workload since the previous claim (or its start)."""
    window = 2.0 * period_s
    obs_n = det_n = claims_n = false_n = 0
    for x in tl.values():
        cuts = list(x["own"])
        vetoes = sorted(x["nb_phase"]) if resets == "attribution" else []
        if resets in ("policy", "oracle", "attribution"):
            cuts += x["nb"]
        if resets == "oracle":
            cuts += x["nb_phase"]
        cuts.sort()
        claims: list[float] = []
        last_reset = -math.inf
        prev_claim = -math.inf
        obs = x["obs"] if block_s is None else _blocks(x["obs"], cuts, block_s)
        ci = 0
        for i, (s, e, _r) in enumerate(obs):
            while ci < len(cuts) and cuts[ci] <= s + 1e-9:
                last_reset = max(last_reset, cuts[ci])
                ci += 1
            if ci < len(cuts) and cuts[ci] < e - 1e-9:  # a cut inside this window: it starts afresh
                continue
            since = max(last_reset, prev_claim)
            inside = [o for o in obs[: i + 1] if o[0] >= since - 1e-9]
            if len(inside) <= k:
                continue
            test, base = inside[-k:], inside[:-k]
            rel, z = _z(base, test)
            lb = sum(b - a for a, b, _ in base) or 1.0
            mb = sum((b - a) * r for a, b, r in base) / lb
            if mb <= 0:
                continue
            if k > 1 and not all((r / mb - 1.0) * rel > 0 for _a, _b, r in test):
                continue
            if z > c and abs(rel) > floor:
                if any(s - period_s / 5.0 < t <= e + 1e-9 for t in vetoes):
                    last_reset = e  # a co-resident changed phase in or just before it: not claimed
                    continue
                claims.append(e)
                prev_claim = e
        times = x["changes"]
        for j, t in enumerate(times):
            nxt = times[j + 1] if j + 1 < len(times) else math.inf
            if x["end"] >= t + period_s:
                obs_n += 1
                det_n += int(any(t <= d <= min(t + window, nxt) for d in claims))
        prev = x["obs"][0][0] if x["obs"] else -math.inf
        for d in claims:
            claims_n += 1
            false_n += int(not any(prev < t <= d for t in times))
            prev = d
    return obs_n, det_n, claims_n, false_n


def reactive_ceiling(seeds: list[int], profile: str, cache: str | None) -> dict[str, Any]:
    """The run's misses and their z, and the ROC of `detector` over its telemetry: per variant
    (k windows, resets), the best detection at a false-claim share ≤ 0.15 over the thresholds."""
    out: dict[str, Any] = {"profile": profile, "seeds": seeds, "per_seed": {}, "roc": {}}
    tls = []
    why_all: dict[str, int] = defaultdict(int)
    zs: list[float] = []
    observable = splits = 0
    for s in seeds:
        events, changes, period = _events(s, profile, cache)
        tl = timelines(events, changes)
        tls.append((tl, period))
        m = missed(tl, period)
        observable += m["observable"]
        why: dict[str, int] = defaultdict(int)
        for r in m["missed"]:
            splits += int(r["split"])
            why[r["why"]] += 1
            why_all[r["why"]] += 1
            zs.append(r["z"])
        out["per_seed"][str(s)] = {"observable": m["observable"], "missed": len(m["missed"]), "why": dict(why)}
        print(f"seed {s}: {m['observable']} observable changes, {len(m['missed'])} missed: {dict(why)}", flush=True)
    q = statistics.quantiles(zs, n=4) if len(zs) > 1 else zs
    out["missed"] = {"observable": observable, "missed": len(zs), "why": dict(why_all), "split": splits,
                     "z_quartiles": [round(v, 2) for v in q], "z_at_least_3": sum(1 for v in zs if v >= 3.0)}
    print(f"missed {len(zs)} of {observable}: {dict(why_all)}; {splits} held in a window closed by a split report; z quartiles {out['missed']['z_quartiles']}, "
          f"{out['missed']['z_at_least_3']} with z ≥ 3", flush=True)
    for resets, k, block in (("own", 1, None), ("own", 2, None), ("policy", 1, None), ("policy", 2, None),
                             ("policy", 3, None), ("policy", 1, REF_S), ("oracle", 1, None), ("oracle", 2, None),
                             ("oracle", 1, REF_S), ("attribution", 1, None)):
        if True:
            best: dict[str, Any] | None = None
            curve = []
            for c in (2.0, 2.25, 2.5, 2.75, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0):
                tot = [0, 0, 0, 0]
                for tl, period in tls:
                    for i, v in enumerate(detector(tl, period, c, k, resets, block_s=block)):
                        tot[i] += v
                o, d, cl, f = tot
                det = d / o if o else 0.0
                share = f / cl if cl else 0.0
                curve.append({"z": c, "detection": round(det, 4), "false_claim_share": round(share, 4)})
                if share <= FALSE_SHARE and (best is None or det > best["detection"]):
                    best = curve[-1]
            name = f"{resets}-k{k}" + ("" if block is None else f"-{block:g}s")
            out["roc"][name] = {"curve": curve, "best": best}
            print(f"  {name:16}: best at ≤ {FALSE_SHARE} false: {best}; curve "
                  + ", ".join(f"{p['z']:g}:{p['detection']:.3f}/{p['false_claim_share']:.3f}" for p in curve), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--delays", metavar="SEED", type=int,
                    help="also run --profile on this seed and report the reactive detection delays")
    ap.add_argument("--profile", default="sextant-adaptive@9+8.13")
    ap.add_argument("--reactive", action="store_true",
                    help="the reactive ceiling instead: --profile's misses on --seeds and the ROC of a threshold "
                         "on the observed telemetry (docs/adaptation/phases.md, \"Reactive detection: the ceiling\")")
    ap.add_argument("--cache", metavar="DIR", help="keep each run's events here (pickled) for re-analysis")
    args = ap.parse_args(argv)
    if args.reactive:
        out = reactive_ceiling(seeds_of(args.seeds), args.profile, args.cache)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
        return 0

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
