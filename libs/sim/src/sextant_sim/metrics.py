"""The twin's metrics, defined once (docs/twin.md repeats these definitions).

Per workload w (every *submitted* workload counts, whatever happened to it):

- time E_w = end − the end of its profiling (submission for workloads that skip profiling):
  classification, admission queueing and waiting for a placement count against it, profiling does
  not — it is reported apart as the profiling overhead. [IMPL CHOICE] This follows Paragon §6.5 /
  Fig. 12, which measures performance as execution time and reports training (profiling) overhead
  separately (1.2 %); every profile here runs the same profiling plan.
- normalised performance N_w (Paragon §6.5: vs running alone on its best platform):
  batch and analytics = ideal_s / E_w when completed; failed or revoked = 0; still live when the
  run ended = ideal work done / time elapsed (< its share, and QoS missed); services = requests
  answered within the latency bound / requests offered since submission (requests offered before
  the service started are unanswered).
- QoS met ⟺ completed (or, for a service, alive to its end) and N_w ≥ 0.95 — for a service the
  fraction within the bound must be ≥ 0.99 (a p99 bound).
- performance vs target P_w = min(1, N_w / threshold) (Quasar §6.5's "performance normalised to
  target", capped at 1), threshold 0.95 (0.99 for services).

Aggregates:
- `qos_met_fraction` = #QoS met / #submitted;
- `mean_normalized_performance`, `mean_performance_vs_target` = means over all submitted;
- steady-state window [t0, t1]: t0 = arrival of the workload at the 10th percentile of arrivals,
  t1 = the time by which 90 % of workloads had ended (the run's end if fewer did);
- `cpu_utilization` = busy core-seconds / (cluster cores × (t1 − t0)) over the window (busy =
  min(allocated, threads) × activity of every running node);
- `overprovisioning` = (allocated − busy) core-seconds / allocated core-seconds over the window;
- degradation split (Paragon spec §9 item 15): heterogeneity loss = 1 − time-averaged platform factor
  (speed on its platform / on its best), interference loss = 1 − time-averaged interference factor;
  reported as means and bins none (< 1 %), < 10 %, 10–20 %, > 20 % over workloads that ran;
- overheads: profiling = (profiled − submitted) / (end − submitted), queueing = (started −
  profiled) / (end − submitted), means over workloads that started;
- failures by reason, and `unfinished` (live when the run ended).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from .ledger import Record

QOS = 0.95
SERVICE_QOS = 0.99
BINS = (("none", 0.0, 0.01), ("lt10", 0.01, 0.10), ("10to20", 0.10, 0.20), ("gt20", 0.20, 2.0))


def clock_start(r: Record) -> float:
    """When a workload's time starts counting: the end of its profiling (or its submission)."""
    return r.profiled_at if r.profiled_at is not None else r.submitted_at


def normalized(r: Record, end: float, first_load: float, peak_qps: float) -> float:
    if r.status in ("failed", "revoked"):
        return 0.0
    t0 = clock_start(r)
    if r.kind == "service":
        waited = ((r.started_at if r.started_at is not None else end) - t0)
        unserved = peak_qps * first_load * max(waited, 0.0)
        offered = r.offered_requests + unserved
        return r.met_requests / offered if offered > 0 else 0.0
    if r.status == "completed" and r.ended_at is not None:
        return r.ideal_s / max(r.ended_at - t0, 1e-9)
    elapsed = end - t0
    return min(1.0, r.ideal_s * r.progress / elapsed) if elapsed > 0 else 0.0


def qos_met(r: Record, n: float) -> bool:
    if r.kind == "service":
        return r.status == "completed" and n >= SERVICE_QOS
    return r.status == "completed" and n >= QOS


def steady_window(records: list[Record], end: float) -> tuple[float, float]:
    arrivals = sorted(r.submitted_at for r in records)
    ends = sorted(r.ended_at for r in records if r.ended_at is not None)
    if not arrivals:
        return 0.0, end
    t0 = arrivals[int(0.1 * (len(arrivals) - 1))]
    k = int(np.ceil(0.9 * len(records)))
    t1 = ends[k - 1] if len(ends) >= k > 0 else end
    return t0, max(t1, t0)


def integrate(series: list[tuple[float, float, float]], t0: float, t1: float) -> tuple[float, float]:
    """∫ busy and ∫ allocated over [t0, t1] of a piecewise-constant (t, busy, allocated) series."""
    busy = alloc = 0.0
    for i, (t, b, a) in enumerate(series):
        nxt = series[i + 1][0] if i + 1 < len(series) else max(t1, t)
        lo, hi = max(t, t0), min(nxt, t1)
        if hi > lo:
            busy += b * (hi - lo)
            alloc += a * (hi - lo)
    return busy, alloc


def summarize(records: list[Record], usage: list[tuple[float, float, float]], cores: int, end: float,
              first_load: dict[str, float], peak_qps: dict[str, float]) -> dict[str, Any]:
    n = len(records)
    norms = [normalized(r, end, first_load.get(r.workload_id, 1.0), peak_qps.get(r.workload_id, 0.0))
             for r in records]
    met = [qos_met(r, x) for r, x in zip(records, norms, strict=True)]
    vs_target = [min(1.0, x / (SERVICE_QOS if r.kind == "service" else QOS)) for r, x in zip(records, norms, strict=True)]
    t0, t1 = steady_window(records, end)
    busy, alloc = integrate(usage, t0, t1)
    ran = [r for r in records if r.run_time > 0]
    het_loss = [1.0 - r.het_factor for r in ran]
    intf_loss = [1.0 - r.intf_factor for r in ran]
    started = [r for r in records if r.started_at is not None and r.profiled_at is not None]
    e2e = [max((r.ended_at if r.ended_at is not None else end) - r.submitted_at, 1e-9) for r in started]
    fails = Counter(r.reason for r in records if r.status == "failed")
    return {
        "workloads": n,
        "qos_met_fraction": _r(sum(met) / n if n else 0.0),
        "mean_normalized_performance": _r(float(np.mean(norms)) if n else 0.0),
        "mean_performance_vs_target": _r(float(np.mean(vs_target)) if n else 0.0),
        "cpu_utilization": _r(busy / (cores * (t1 - t0)) if t1 > t0 else 0.0),
        "overprovisioning": _r((alloc - busy) / alloc if alloc > 0 else 0.0),
        "completed": sum(1 for r in records if r.status == "completed"),
        "failed": sum(fails.values()),
        "failures": dict(sorted(fails.items())),
        "unfinished": sum(1 for r in records if r.status == "pending"),
        "steady_window_s": [_r(t0), _r(t1)],
        "degradation": {
            "heterogeneity_mean": _r(float(np.mean(het_loss)) if ran else 0.0),
            "interference_mean": _r(float(np.mean(intf_loss)) if ran else 0.0),
            "heterogeneity_bins": _bins(het_loss),
            "interference_bins": _bins(intf_loss),
        },
        "overheads": {
            "profiling": _r(float(np.mean([(r.profiled_at - r.submitted_at) / e  # type: ignore[operator]
                                           for r, e in zip(started, e2e, strict=True)])) if started else 0.0),
            "queueing": _r(float(np.mean([(r.started_at - r.profiled_at) / e  # type: ignore[operator]
                                          for r, e in zip(started, e2e, strict=True)])) if started else 0.0),
        },
        "by_kind": _by_kind(records, met, norms),
        "normalized_performance": [_r(x) for x in norms],
    }


def _bins(losses: list[float]) -> dict[str, float]:
    if not losses:
        return {name: 0.0 for name, _, _ in BINS}
    arr = np.asarray(losses)
    return {name: _r(float(np.mean((arr >= lo) & (arr < hi)))) for name, lo, hi in BINS}


def _by_kind(records: list[Record], met: list[bool], norms: list[float]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for fam in sorted({r.family for r in records}):
        idx = [i for i, r in enumerate(records) if r.family == fam]
        out[fam] = {"workloads": len(idx), "qos_met_fraction": _r(sum(met[i] for i in idx) / len(idx)),
                    "mean_normalized_performance": _r(float(np.mean([norms[i] for i in idx])))}
    return out


def _r(x: float) -> float:
    return round(float(x), 6)
