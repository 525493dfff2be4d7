"""Where `sextant-adaptive`'s server-hours above the floor go on quasar-memcached-diurnal (bench-only
analysis; docs/adaptation/diurnal.md, "Ladder 8.7").

One run of the bench's diurnal variant (`adaptation.scenario`) for one seed and profile. At every
decision on the service (`Adaptive._service`) it records what the policy saw (offered load, p99,
the classification's capacity estimate of the allocation, the calibration of ladder 8.7 when on)
next to the twin's truth at that moment (the load within the bound that the allocation could carry:
k × the weakest node's knee, with the nodes' interference and without). Per hour it prints the
service's servers against a per-segment floor (the fewest of the best servers, whole, that keep
the segment's requests within the bound at `TARGET_SHARE`: not the Lagrangian floor, a reference
per hour), the ratio true capacity / estimated capacity, and `factor`: the latency fit's capacity /
the estimate (whether or not `calibration_max_factor` lets ladder 8.7 use it).

    .venv/bin/python bench/diurnal_diagnosis.py --seed 3 [--profile sextant-adaptive@7+8.5] [--json PATH]

The truth is read from the twin's world (never by the policy): this script is a yardstick, not
part of the decision path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptation import DIURNAL, TARGET_SHARE, scenario  # noqa: E402


def _fewest(mus: list[float], load: float, sv: Any, share: float = TARGET_SHARE) -> int:
    """The fewest of `mus` (strongest first) whose nodes keep `share` of `load`'s requests within
    the bound (the twin's M/M/1 share, the service's node efficiency); len(mus) + 1 if none do."""
    from sextant_sim.workloads.service import met_fraction

    for k in range(1, len(mus) + 1):
        eff = sv.node_efficiency(k)
        if sum(met_fraction(mu * eff, load / k, sv.base_latency_ms, sv.latency_bound_ms) for mu in mus[:k]) / k \
                >= share:
            return k
    return len(mus) + 1


def _reference_only(seed: int) -> int:
    """The references of `main` without a run (the seed's setup only), each the fewest of the best
    servers of the cluster, whole, re-sized with perfect foresight: per hour (at the load of the
    hour's midpoint, `main`'s), per trace segment (15 min), and per telemetry window (10 min: the
    largest segment load the window holds, as a policy deciding once a window must carry) — each
    meeting TARGET_SHARE, and the last two also the target's own 0.99, in every period; over the
    Lagrangian floor (`scoring.service_floor`, from the service's submission)."""
    from sextant_sim.adaptation import scoring
    from sextant_sim.setup import prepare

    _key, sc = scenario(DIURNAL, False)
    setup = prepare(sc, seed)
    sub = next(s for s in setup.subs if s.truth.service is not None)
    t, sv = sub.truth, sub.truth.service
    pidx = {p.platform_id: i for i, p in enumerate(setup.cat.platforms)}
    mus = sorted((sv.qps_per_core * float(t.speed[pidx[p.platform_id]]) * t.scale_up(p.cores)
                  for _sid, p in setup.servers), reverse=True)
    life = min(t.work, setup.horizon - sub.at)

    def load_at(x: float) -> float:
        return sv.peak_qps * next((frac for o, frac in reversed(sv.trace) if o <= x), sv.trace[0][1])

    def periods(step: float) -> list[tuple[float, float]]:
        """(duration h, the largest load) of each period of `step` s over the service's life."""
        out = []
        a = 0.0
        while a < life - 1e-9:
            b = min(a + step, life)
            out.append(((b - a) / 3600, max(load_at(x) for x in (a, *(o for o, _ in sv.trace if a < o < b)))))
            a = b
        return out

    floor = scoring.service_floor(setup, TARGET_SHARE).lower_bound
    hourly = sum(_fewest(mus, load_at(h * 3600 + 1800), sv) for h in range(int(life // 3600)))
    line = f"seed {seed}: floor {floor:.1f}; per hour {hourly} ({hourly / floor:.3f} x)"
    for name, step in (("per segment", 900.0), ("per 10-min window", 600.0)):
        for share in (TARGET_SHARE, 0.99):
            ref = sum(dt * _fewest(mus, lam, sv, share) for dt, lam in periods(step))
            line += f"; {name} at {share}: {ref:.1f} ({ref / floor:.3f} x)"
    print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--profile", default="sextant-adaptive")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--reference-only", action="store_true",
                    help="the per-hour reference and the floor alone (no run: the seed's setup only)")
    args = ap.parse_args(argv)
    if args.reference_only:
        return _reference_only(args.seed)

    from sextant_core.reprovisioning import adaptive as adaptive_mod
    from sextant_sim.adaptation import run as run_mod
    from sextant_sim.adaptation import scoring
    from sextant_sim.setup import prepare
    from sextant_sim.workloads.service import max_qps_at_bound, met_fraction

    engines: list[Any] = []
    orig_init = run_mod._Recording.__init__

    def init(self: Any, *a: Any, **k: Any) -> None:
        orig_init(self, *a, **k)
        engines.append(self)

    run_mod._Recording.__init__ = init  # type: ignore[method-assign]
    rows: list[dict[str, Any]] = []
    orig_service = adaptive_mod.Adaptive._service

    def service(self: Any, state: Any, w: Any, c: Any, ctx: Any) -> Any:
        from sextant_core.reprovisioning.estimate import performance_model, predicted

        out = orig_service(self, state, w, c, ctx)
        m = performance_model(state, w)
        cap = predicted(state, w, w.allocation, m)
        fitted = self._latency_fit(state, w, m, c, ctx.at) if hasattr(self, "_latency_fit") else None
        factor = None
        fit_info = None
        pts: list[tuple[float, float, float]] = []
        hist = w.latency_history
        if c.offered is not None and c.p99_latency_ms is not None and (not hist or hist[-1][0] < ctx.at):
            hist = (*hist, (ctx.at, c.offered, c.p99_latency_ms, w.allocation))
        for _t, offered, p99, alloc in hist[-self.params.calibration_points:]:
            k = adaptive_mod._nodes_up(state, alloc)
            est = predicted(state, w, alloc, m)
            if k > 0 and est > 0:
                pts.append((offered / k, est / k, p99))
        if fitted is not None:
            fit_info = {"scale": fitted.scale, "base": fitted.base_ms, "rms": fitted.rms_ms, "points": fitted.points}
        if fitted is not None and cap > 0:
            nodes = adaptive_mod._node_estimates(state, w.allocation, m)
            factor = fitted.capacity(nodes, w.target.p99_latency_ms, self.params.calibrated_share) / cap
        world = engines[0].world
        a = world.active.get(w.workload_id)
        true_cap = true_clean = None
        node_mus: list[int] = []
        if a is not None and a.truth.service is not None:
            sv = a.truth.service
            eff = sv.node_efficiency(len(a.nodes))
            mus = [sv.qps_per_core * float(a.truth.speed[world.platform[n.server]]) * a.truth.scale_up(n.cores) * eff
                   for n in a.nodes]
            knees = [max_qps_at_bound(mu * n.factor, sv.base_latency_ms, sv.latency_bound_ms) for mu, n in
                     zip(mus, a.nodes, strict=True)]
            clean = [max_qps_at_bound(mu, sv.base_latency_ms, sv.latency_bound_ms) for mu in mus]
            true_cap, true_clean = len(knees) * min(knees), len(clean) * min(clean)
            node_mus = sorted(round(mu) for mu in mus)
        # the gap's pieces at this decision (the twin's truth, clean of interference): how many of
        # the servers held, strongest first, meet TARGET_SHARE at this load (`held_k`); how many of the
        # best servers free to the service now (its own, or ≥ 8 cores free counting best-effort ones
        # as free) do (`free_k`); how many of the best servers of the cluster, whole (`all_k`)
        held_k = free_k = all_k = None
        ranks: dict[str, tuple[int, int]] = {}
        free_platforms: list[str] = []
        if c.offered is not None and a is not None and a.truth.service is not None:
            sv = a.truth.service
            own = {x.server_id: x.cores for x in w.allocation.assignments}
            pidx = {pl.platform_id: i for i, pl in enumerate(engines[0].setup.cat.platforms)}

            def mu(pid: str, cores: int) -> float:
                return sv.qps_per_core * float(a.truth.speed[pidx[pid]]) * a.truth.scale_up(cores)

            held = sorted((mu(state.servers[sid].platform, k) for sid, k in own.items() if sid in state.servers),
                          reverse=True)
            free = sorted((mu(srv.platform, min(srv.capacity.cores, avail)) for sid, srv in state.servers.items()
                           if srv.up and srv.schedulable
                           and (avail := srv.free_cores + srv.best_effort_cores + own.get(sid, 0)) >= 8),
                          reverse=True)
            whole = sorted((mu(srv.platform, srv.capacity.cores) for srv in state.servers.values()), reverse=True)
            held_k, free_k, all_k = (_fewest(x, c.offered, sv) for x in (held, free, whole))
            # each platform's true μ (8 cores) next to the classification's node estimate
            ranks = {srv.platform: (round(mu(srv.platform, 8)), round(m.node(srv.platform, 8)))
                     for srv in state.servers.values()}
            free_platforms = sorted(srv.platform for sid, srv in state.servers.items() if sid not in own
                                    and srv.up and srv.schedulable and srv.free_cores >= 8)
        rows.append({"at": ctx.at, "held_k": held_k, "free_k": free_k, "all_k": all_k, "ranks": ranks,
                     "platforms": sorted(state.servers[x].platform for x in w.allocation.servers
                                         if x in state.servers), "free_platforms": free_platforms, "offered": c.offered, "p99": c.p99_latency_ms, "ratio": c.ratio_to_target,
                     "bound": w.target.p99_latency_ms, "nodes": len(w.allocation.assignments),
                     "cores": [x.cores for x in w.allocation.assignments], "cap": cap, "factor": factor, "fit": fit_info, "points": pts,
                     "node_estimates": adaptive_mod._node_estimates(state, w.allocation, m),
                     "true_cap": true_cap, "true_clean": true_clean, "mus": node_mus,
                     "acts": [f"{type(e).__name__}:{getattr(e, 'reason', '')}" for e in out]})
        return out

    adaptive_mod.Adaptive._service = service  # type: ignore[method-assign]

    key, sc = scenario(DIURNAL, False)
    setup = prepare(sc, args.seed)
    r = run_mod.run(setup, args.profile, args.seed)
    eng = r.engine
    svc = next(sub.workload_id for sub in eng.setup.subs if sub.truth.service is not None)
    rec = eng.ledger.records[svc]
    from sextant_contracts import events as ev

    start = next(e.at for e in r.events if isinstance(e, ev.WorkloadStarted) and e.workload_id == svc)
    floor = scoring.service_floor(eng.setup, TARGET_SHARE, start)
    sh = scoring.server_hours(r.events, svc, eng.now)
    share = rec.met_requests / rec.offered_requests
    # the per-segment reference: the fewest best servers (whole) meeting TARGET_SHARE in each segment
    sub = next(s for s in eng.setup.subs if s.truth.service is not None)
    t, sv = sub.truth, sub.truth.service
    pidx = {p.platform_id: i for i, p in enumerate(eng.setup.cat.platforms)}
    mus = sorted((sv.qps_per_core * float(t.speed[pidx[p.platform_id]]) * t.scale_up(p.cores)
                  for _sid, p in eng.setup.servers), reverse=True)

    def seg_k(lam: float) -> int:
        for k in range(1, len(mus) + 1):
            eff = sv.node_efficiency(k)
            if sum(met_fraction(mu * eff, lam / k, sv.base_latency_ms, sv.latency_bound_ms) for mu in mus[:k]) / k \
                    >= TARGET_SHARE:
                return k
        return len(mus)

    timeline: list[tuple[float, int]] = []
    for e in r.events:
        if getattr(e, "workload_id", None) == svc and isinstance(e, ev.WorkloadStarted | ev.AllocationAdjusted
                                                                 | ev.MigrationDecided):
            timeline.append((e.at, len(set(e.allocation.servers))))

    def servers_at(x: float) -> int:
        n = 0
        for at, k in timeline:
            if at <= x:
                n = k
        return n

    print(f"seed {args.seed} {args.profile}: server-hours {sh:.1f}, floor {floor.lower_bound:.1f} "
          f"({sh / floor.lower_bound:.3f} x), requests within the bound {share:.4f}; "
          f"base {sv.base_latency_ms:.3f} ms, bound {sv.latency_bound_ms:.3f} ms")
    print("hour  load/peak  servers  seg-floor  true/est-cap  est-cap/true(clean)  p99/bound  factor")
    hours: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        hours.setdefault(int((row["at"] - start) // 3600), []).append(row)
    per_hour = []
    for h in sorted(hours):
        rs = hours[h]
        mid = start + h * 3600 + 1800
        off = next((frac for o, frac in reversed(sv.trace) if o <= mid - start), sv.trace[0][1])
        servers = statistics.fmean(servers_at(start + h * 3600 + q * 600) for q in range(6))
        ratio = [x["true_cap"] / x["cap"] for x in rs if x["true_cap"] and x["cap"]]
        clean = [x["cap"] / x["true_clean"] for x in rs if x["true_clean"] and x["cap"]]
        p99 = [x["p99"] / x["bound"] for x in rs if x["p99"] is not None]
        fac = [x["factor"] for x in rs if x["factor"] is not None]
        segk = seg_k(sv.peak_qps * off)
        pieces = {key: statistics.fmean(x[key] for x in rs if x[key] is not None)
                  for key in ("held_k", "free_k", "all_k") if any(x[key] is not None for x in rs)}
        line = {"hour": h, "load": off, "servers": servers, "segment_floor": segk, **pieces,
                "true_over_est": statistics.fmean(ratio) if ratio else None,
                "p99_over_bound": statistics.fmean(p99) if p99 else None,
                "factor": statistics.fmean(fac) if fac else None}
        per_hour.append(line)
        print(f"{h:4d}  {off:9.2f}  {servers:7.1f}  {segk:9d}  "
              f"{line['true_over_est'] or 0:12.2f}  {statistics.fmean(clean) if clean else 0:19.2f}  "
              f"{line['p99_over_bound'] or 0:9.2f}  {line['factor'] or 0:6.2f}")
    # the gap's pieces over the day (server-hours; each hour's means): sizing = servers held − the
    # held servers needed at the decisions' loads; choice = those − the best free servers needed;
    # availability = those − the best servers of the cluster, whole; by the hour's kind (a ramp:
    # the load moving more than 4 % of the peak between the hours around)
    loads = {x["hour"]: x["load"] for x in per_hour}
    kinds: dict[str, dict[str, float]] = {}
    for x in per_hour:
        if not {"held_k", "free_k", "all_k"} <= x.keys():
            continue
        h = x["hour"]
        move = loads.get(h + 1, x["load"]) - loads.get(h - 1, x["load"])
        kind = "first 2 h" if h < 2 else "ramp up" if move > 0.04 else "ramp down" if move < -0.04 else "level"
        k = kinds.setdefault(kind, {"hours": 0, "servers": 0.0, "sizing": 0.0, "choice": 0.0, "availability": 0.0,
                                    "segment_floor": 0.0})
        k["hours"] += 1
        k["servers"] += x["servers"]
        k["segment_floor"] += x["segment_floor"]
        k["sizing"] += x["servers"] - x["held_k"]
        k["choice"] += x["held_k"] - x["free_k"]
        k["availability"] += x["free_k"] - x["all_k"]
    print("kind        hours  servers  seg-floor  sizing  choice  availability")
    for kind, k in kinds.items():
        print(f"{kind:10s}  {k['hours']:5d}  {k['servers']:7.1f}  {k['segment_floor']:9.1f}  {k['sizing']:6.1f}  "
              f"{k['choice']:6.1f}  {k['availability']:12.1f}")
    acts = [(round((x["at"] - start) / 3600, 2), a) for x in rows for a in x["acts"]]
    for at, a in acts:
        print(f"  {at:6.2f} h  {a[:200]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"seed": args.seed, "profile": args.profile, "server_hours": sh,
                                               "floor": floor.lower_bound, "requests": share, "rows": rows, "kinds": kinds,
                                               "per_hour": per_hour}, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
