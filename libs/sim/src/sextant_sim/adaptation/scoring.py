"""Scoring detection against the twin's injected truths (evaluation, not policy).

Phases (Paragon §3.4 Table IV, Quasar §4.1):

- **truth**: every injected phase change (workload, time), recorded by the agent
  (`hooks.AdaptationHooks.phase_changed`).
- **reactive detection** = the share of *observable* phase changes followed, within the
  detection window W, by a reactive decision for that workload (a `ReclassificationRequested`,
  `AllocationAdjusted` or `MigrationDecided` whose reason starts with `reactive`). A change is
  observable when the workload is still running one full telemetry window after it (monitoring
  cannot see a change of a workload that ended first). [IMPL CHOICE] W = 2 telemetry periods: the
  window in which the change happens is partly before it, so the first window that shows it
  fully ends up to two periods later.
- **proactive detection** = among the phase changes whose new phase was probed at least once
  (before the next change and before any reactive detection of it), the share whose probes
  flagged a significant change — Paragon's denominator ("sampled applications with phases").
  `proactive_coverage` says how many changes were probed at all.
- **visible changes** (a diagnostic): observable changes across which the observed ratio to
  target moved by more than 5 % — what any performance-based detector could see at all.
- **false positives**: proactive — probes whose verdict is "significant change" (whether or not
  the policy acted on it) of workloads whose phase is the one they were
  classified in, over all probes of such workloads; reactive — reactive phase/mis-classification
  claims (`ReclassificationRequested`, reason `reactive`) on such workloads, over their
  observations.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sextant_contracts import events as ev
from sextant_core.reprovisioning.detection import measured_scores, probe_change
from sextant_core.reprovisioning.params import AdaptationParams


@dataclass(frozen=True, slots=True)
class PhaseScore:
    changes: int
    observable: int
    reactive_detected: int
    probed: int
    proactive_detected: int
    probes_unchanged: int
    proactive_false: int
    observations_unchanged: int
    reactive_false: int
    mean_reactive_delay_s: float | None
    visible: int = 0  # observable changes that moved the observed performance by > VISIBLE
    visible_detected: int = 0
    # claims (the false-claim shares): reactive = reactive reclassifications, proactive =
    # flagged probes; false = on a workload still in the phase it was classified in
    reactive_claims: int = 0
    proactive_claims: int = 0
    workload_hours: float = 0.0  # Σ running time of the workloads observed, hours
    probe_server_s: float = 0.0  # server-seconds spent in proactive probes (per ramped source)
    server_s: float = 0.0  # server-seconds the workloads ran on (Σ nodes × time)

    def as_json(self) -> dict[str, Any]:
        def frac(a: int, b: int) -> float:
            return round(a / b, 4) if b else 0.0

        return {"reactive_detection": frac(self.reactive_detected, self.observable),
                "proactive_detection": frac(self.proactive_detected, self.probed),
                "proactive_coverage": frac(self.probed, self.changes),
                "false_positive_rate": frac(self.proactive_false, self.probes_unchanged),
                "reactive_false_positive_rate": frac(self.reactive_false, self.observations_unchanged),
                "phase_changes": self.changes, "observable_changes": self.observable,
                "reactive_detected": self.reactive_detected, "probed_changes": self.probed,
                "proactive_detected": self.proactive_detected, "probes_of_unchanged": self.probes_unchanged,
                "proactive_false_positives": self.proactive_false,
                "observations_of_unchanged": self.observations_unchanged,
                "reactive_false_positives": self.reactive_false,
                "mean_reactive_delay_s": None if self.mean_reactive_delay_s is None
                else round(self.mean_reactive_delay_s, 3),
                "visible_changes": self.visible, "visible_share": frac(self.visible, self.observable),
                "reactive_detection_of_visible": frac(self.visible_detected, self.visible),
                "reactive_claims": self.reactive_claims, "proactive_claims": self.proactive_claims,
                "reactive_false_claim_share": frac(self.reactive_false, self.reactive_claims),
                "proactive_false_claim_share": frac(self.proactive_false, self.proactive_claims),
                "workload_hours": round(self.workload_hours, 4),
                "false_claims_per_workload_hour": round((self.reactive_false + self.proactive_false)
                                                        / self.workload_hours, 4) if self.workload_hours else 0.0,
                "probe_cost_share": round(self.probe_server_s / self.server_s, 5) if self.server_s else 0.0}


def _reason(e: ev.Event) -> str:
    return str(getattr(e, "reason", ""))


def score_phases(events: Sequence[ev.Event], changes: Sequence[tuple[str, float, int]], period_s: float,
                 params: AdaptationParams | None = None) -> PhaseScore:
    """Score a run's events (in log order) against its phase changes (workload, time, new phase).
    A proactive probe counts as flagged by its *verdict* (`detection.probe_change` against the
    classification in force, the policy's own rule and parameters), whether or not the policy
    acted on it (a reclassification is not repeated within `reclassify_gap_s`). With
    `probe_test` "combined" (ladder 8.6, which acts on every verdict) a probe is flagged when the
    policy reclassified on it (a `ReclassificationRequested`, reason `proactive`, at its time).
    Probe cost: `probe_source_s` server-seconds per ramped source of each proactive probe, over
    the server-seconds the workloads ran (Σ nodes × time, from their allocations)."""
    params = params or AdaptationParams()
    combined = params.probe_test == "combined"
    running: dict[str, float] = {}  # running workload -> since (its latest allocation change or start)
    alloc_k: dict[str, int] = {}  # workload -> nodes of its latest allocation
    server_s = 0.0
    run_s = 0.0
    probe_s = 0.0
    started: dict[str, float] = {}
    last_at = 0.0
    window = 2.0 * period_s
    by_w: dict[str, list[float]] = defaultdict(list)
    for wid, at, _ph in changes:
        by_w[wid].append(at)
    ended: dict[str, float] = {}
    classified: dict[str, list[float]] = defaultdict(list)
    reactive: dict[str, list[float]] = defaultdict(list)
    reactive_claims: list[tuple[str, float]] = []
    raw: list[tuple[str, float, bool]] = []  # (workload, time, flagged by the rule's verdict)
    flagged_at: set[tuple[str, float]] = set()
    observations: list[tuple[str, float]] = []
    latest: dict[str, ev.WorkloadClassified] = {}
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    samples: dict[str, list[tuple[str, str, str, float, float | None]]] = defaultdict(list)
    for e in events:
        if not isinstance(e, ev.WorkloadEvent):
            continue
        wid = e.workload_id
        last_at = max(last_at, e.at)
        alloc = getattr(e, "allocation", None)
        moved = isinstance(e, ev.PlacementDecided | ev.AllocationAdjusted | ev.MigrationDecided) and alloc is not None
        if (moved or isinstance(e, ev.WorkloadStarted)) and wid in running:
            server_s += alloc_k.get(wid, 1) * (e.at - running[wid])
            running[wid] = e.at
        if moved and alloc is not None:
            alloc_k[wid] = len(alloc.assignments)
        if isinstance(e, ev.WorkloadStarted):
            started.setdefault(wid, e.at)
            running[wid] = e.at
        if isinstance(e, ev.WorkloadCompleted | ev.WorkloadFailed | ev.WorkloadRevoked):
            ended[wid] = e.at
            if wid in running:
                server_s += alloc_k.get(wid, 1) * (e.at - running.pop(wid))
                run_s += e.at - started[wid]
        elif isinstance(e, ev.WorkloadClassified):
            classified[wid].append(e.at)
            latest[wid] = e
        elif isinstance(e, ev.ProfileSampleRecorded):
            samples[wid].append((e.run_id, e.classification.value, e.column, e.value, e.caused))
        elif isinstance(e, ev.PerformanceObserved):
            observations.append((wid, e.at))
            series[wid].append((e.at, e.ratio_to_target))
        elif isinstance(e, ev.ReclassificationRequested | ev.AllocationAdjusted | ev.MigrationDecided):
            r = _reason(e)
            if r.startswith("reactive"):
                reactive[wid].append(e.at)
                if isinstance(e, ev.ReclassificationRequested):
                    reactive_claims.append((wid, e.at))
            elif r.startswith("proactive") and isinstance(e, ev.ReclassificationRequested):
                flagged_at.add((wid, e.at))
        elif isinstance(e, ev.InterferenceProbed) and e.purpose == "proactive":
            probe_s += params.probe_source_s * len(e.tolerated)
            verdict = None if combined else probe_change(latest.get(wid), e.tolerated, e.caused, params.probe_change,
                                                         params.probe_floor, measured_scores(samples[wid]),
                                                         params.probe_scores)
            raw.append((wid, e.at, verdict is not None))
    # the policy's own claims follow their probe in the log: resolved once all are read
    probes = [(wid, at, v or (wid, at) in flagged_at) for wid, at, v in raw]
    for wid, since in running.items():  # still running at the end of the log
        server_s += alloc_k.get(wid, 1) * (last_at - since)
        run_s += last_at - started[wid]

    def phase_index(wid: str, t: float) -> int:  # number of changes at or before t
        return bisect.bisect_right(by_w.get(wid, []), t)

    def unchanged(wid: str, t: float) -> bool:
        cls = classified.get(wid, [])
        i = bisect.bisect_right(cls, t) - 1
        since = cls[i] if i >= 0 else float("-inf")
        return phase_index(wid, t) == phase_index(wid, since)

    observable = detected = probed = pro = visible = visible_detected = 0
    delays: list[float] = []
    for wid, times in by_w.items():
        for j, t in enumerate(times):
            nxt = times[j + 1] if j + 1 < len(times) else float("inf")
            end = ended.get(wid, float("inf"))
            hit = next((d for d in reactive.get(wid, []) if t <= d <= min(t + window, nxt)), None)
            if end >= t + period_s:
                observable += 1
                if hit is not None:
                    detected += 1
                    delays.append(hit - t)
                if _moved(series.get(wid, []), t, period_s):
                    visible += 1
                    visible_detected += int(hit is not None)
            horizon = min(nxt, end, hit if hit is not None else float("inf"))
            mine = [f for w, pt, f in probes if w == wid and t <= pt < horizon]
            if mine:
                probed += 1
                pro += int(any(mine))
    unchanged_probes = [f for w, t, f in probes if unchanged(w, t)]
    unchanged_obs = [1 for w, t in observations if unchanged(w, t)]
    false_claims = [1 for w, t in reactive_claims if unchanged(w, t)]
    proactive_claims = sum(1 for _w, _t, f in probes if f)
    return PhaseScore(changes=len(changes), observable=observable, reactive_detected=detected, probed=probed,
                      proactive_detected=pro, probes_unchanged=len(unchanged_probes),
                      proactive_false=sum(unchanged_probes), observations_unchanged=len(unchanged_obs),
                      reactive_false=len(false_claims),
                      mean_reactive_delay_s=sum(delays) / len(delays) if delays else None,
                      visible=visible, visible_detected=visible_detected, reactive_claims=len(reactive_claims),
                      proactive_claims=proactive_claims, workload_hours=run_s / 3600.0, probe_server_s=probe_s,
                      server_s=server_s)


VISIBLE = 0.05  # a change of the observed ratio to target that performance monitoring can see


def _moved(series: Sequence[tuple[float, float]], t: float, period_s: float) -> bool:
    """Did the observed performance move by more than VISIBLE across a change at `t`: the last
    observation before it against the first whose window starts after it (a diagnostic of what
    any performance-based detector could see; telemetry noise is 1 %)."""
    before = [r for at, r in series if at <= t]
    after = [r for at, r in series if at >= t + period_s]
    if not before or not after or before[-1] <= 0:
        return False
    return abs(after[0] / before[-1] - 1.0) > VISIBLE


# --- stragglers (Quasar §4.3) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StragglerScore:
    precision: float
    recall: float
    detected_pairs: int
    true_pairs: int
    injected: int
    delays: dict[tuple[str, str], float]  # injected (job, server) -> detection delay after injection, s

    @property
    def mean_delay_s(self) -> float | None:
        return _mean_of(self.delays)


def relaunches(events: Sequence[ev.Event]) -> list[tuple[str, str, float]]:
    """(job, server, time) of every relaunch decision (`AllocationAdjusted`, action `relaunch`)."""
    out = []
    for e in events:
        if isinstance(e, ev.AllocationAdjusted) and e.action == "relaunch":
            for n in e.trace.notes:
                if n.startswith("straggler:"):
                    out.append((e.workload_id, n.split(":", 1)[1], e.at))
    return out


def score_stragglers(injected: Sequence[tuple[str, str, float, float]], detections: Sequence[tuple[str, str, float]],
                     extra_delay_s: float = 0.0) -> StragglerScore:
    """Score detections against injected (job, server, time, slowdown). A detected (job, server)
    pair is true when that pair was injected and detected at or after the injection; its delay is
    the first such detection − the injection (+ `extra_delay_s`, e.g. the in-place probe's time).
    Precision is 1 without detections; recall is 1 with nothing injected."""
    t0 = {(w, s): at for w, s, at, _f in injected}
    first_after: dict[tuple[str, str], float] = {}
    pairs: set[tuple[str, str]] = set()
    for w, s, at in detections:
        pairs.add((w, s))
        if (w, s) in t0 and at >= t0[(w, s)] - 1e-9:
            first_after[(w, s)] = min(at, first_after.get((w, s), at))
    delays = {k: v - t0[k] + extra_delay_s for k, v in first_after.items()}
    return StragglerScore(precision=len(first_after) / len(pairs) if pairs else 1.0,
                          recall=len(first_after) / len(t0) if t0 else 1.0, detected_pairs=len(pairs),
                          true_pairs=len(first_after), injected=len(t0), delays=delays)


def censored_delays(score: StragglerScore, injected: Sequence[tuple[str, str, float, float]],
                    ends: dict[str, float]) -> dict[tuple[str, str], float]:
    """Detection delay of every injected straggler, undetected ones censored at the end of their
    job (completion, failure or the horizon: `ends`): a straggler never relaunched was slow for
    the rest of the job. [IMPL CHOICE] Defined for every rule, also one that detects nothing
    (LATE in the twin), unlike the mean over true detections, and it charges a rule for what it
    misses."""
    out: dict[tuple[str, str], float] = {}
    for w, s, at, _f in injected:
        hit = score.delays.get((w, s))
        out[(w, s)] = hit if hit is not None else max(ends[w] - at, 0.0)
    return out


def _mean_of(delays: dict[tuple[str, str], float]) -> float | None:
    return sum(delays.values()) / len(delays) if delays else None


def _lead(a: float | None, b: float | None) -> float | None:
    """1 − a / b: how much earlier a delay of `a` is than one of `b`; None without both."""
    return None if a is None or b is None or b <= 0 else 1.0 - a / b


def censored_lead(ours: dict[tuple[str, str], float], theirs: dict[tuple[str, str], float]) -> float | None:
    """1 − (our mean censored delay / theirs), each over its own injected stragglers."""
    return _lead(_mean_of(ours), _mean_of(theirs))


def lead(ours: StragglerScore, theirs: StragglerScore) -> float | None:
    """1 − (our mean detection delay / theirs), each over its own true detections: how much
    earlier we detect (Quasar §4.3: 19 % earlier than Hadoop, 8 % than LATE). [IMPL CHOICE] not
    restricted to stragglers both detected: the runs diverge after the first relaunch, so the
    same (job, server) is rarely injected in both. None when either detected nothing."""
    return _lead(ours.mean_delay_s, theirs.mean_delay_s)


# --- a service's server-hours (Quasar §6.4) ------------------------------------------------------------


def server_hours(events: Sequence[ev.Event], workload_id: str, end: float) -> float:
    """∫ (servers in the workload's allocation) dt / 3600, from its start to its end (or `end`)."""
    timeline: list[tuple[float, int]] = []
    stop = end
    for e in events:
        if getattr(e, "workload_id", None) != workload_id:
            continue
        if isinstance(e, ev.WorkloadStarted | ev.AllocationAdjusted | ev.MigrationDecided):
            timeline.append((e.at, len(set(e.allocation.servers))))
        elif isinstance(e, ev.WorkloadCompleted | ev.WorkloadFailed | ev.WorkloadRevoked):
            stop = min(stop, e.at)
    total = 0.0
    for i, (t, n) in enumerate(timeline):
        nxt = timeline[i + 1][0] if i + 1 < len(timeline) else stop
        total += n * max(min(nxt, stop) - t, 0.0)
    return total / 3600.0


# --- the ground truth's floor on a service's server-hours ------------------------------------------


@dataclass(frozen=True, slots=True)
class ServerHoursBound:
    lower_bound: float  # no allocation meeting `share` of requests uses fewer server-hours (Lagrangian dual)
    plan: float  # server-hours of a plan that meets `share` (the primal of the best multiplier)
    plan_share: float  # the share of requests that plan serves within the bound
    share: float


def server_hours_floor(mus: Sequence[float], base_ms: float, bound_ms: float,
                       segments: Sequence[tuple[float, float]], share: float,
                       max_servers: int | None = None,
                       node_efficiency: Callable[[int], float] | None = None) -> ServerHoursBound:
    """The fewest server-hours with which *any* allocation serves at least `share` of a service's
    requests within its latency bound, from the twin's ground truth.

    `mus`: the service's capacity μ (requests/s within nothing else's interference) of one node on
    each server; `segments`: (seconds, offered requests/s) of the load trace. The twin runs a
    service on k nodes, one per server, with the load split evenly, and counts the requests within
    the bound as the mean of its nodes' shares, (1/k) Σᵢ `met_fraction(μᵢ, λ/k)` (`cluster`'s
    `_service_quality`), each node's μ × `node_efficiency(k)` (a sub-linear service,
    `ServiceTruth.node_efficiency`; 1 when None). Each share grows with μᵢ, so for a given k the k
    servers of highest μ, with no co-runner, serve the most; re-sized at every segment boundary
    with perfect knowledge of the coming load, and k = 0 (paused) allowed. Minimising
    Σ k·dt subject to Σ met·requests ≥ share · Σ requests is a knapsack over the segments; its
    Lagrangian dual — maxₐ Σ_seg min_k (k·dt − β·met_k·requests) + β·share·Σ requests — is a lower
    bound on every such allocation, so on every policy in the twin (each pays interference, delays
    and imperfect estimates on top). The dual is maximised over a fine log grid of β (any β gives
    a valid bound); `plan` is the cheapest grid point whose per-segment choices meet `share`."""
    from ..workloads.service import met_fraction

    caps = sorted((m for m in mus if m > 0), reverse=True)[:max_servers]
    if not caps or not segments:
        return ServerHoursBound(lower_bound=0.0, plan=0.0, plan_share=1.0, share=share)
    k = len(caps)
    # column j = j nodes (0 … k): server-hours and requests within the bound per segment
    hours = np.array([[j * dt / 3600.0 for j in range(k + 1)] for dt, _lam in segments])
    reqs = np.array([dt * lam for dt, lam in segments])
    eff = [1.0] * (k + 1) if node_efficiency is None else [node_efficiency(j) for j in range(k + 1)]
    met = np.array([[0.0] + [sum(met_fraction(caps[i] * eff[j], lam / j, base_ms, bound_ms) for i in range(j))
                             / j * dt * lam for j in range(1, k + 1)] for dt, lam in segments])
    total = float(reqs.sum())
    if float(met.max(axis=1).sum()) < share * total - 1e-9 * total:  # not even the best k per segment serves it
        return ServerHoursBound(lower_bound=math.inf, plan=math.inf, plan_share=0.0, share=share)
    best_dual, best_plan, plan_met = -np.inf, np.inf, 0.0
    scale = float(hours.max()) / max(float(met.max()), 1e-300)  # β in units of hours per request
    for beta in scale * np.logspace(-4, 6, 4001):
        obj = hours - beta * met
        j = obj.argmin(axis=1)
        rows = np.arange(len(segments))
        dual = float(obj[rows, j].sum()) + beta * share * total
        best_dual = max(best_dual, dual)
        served = float(met[rows, j].sum())
        cost = float(hours[rows, j].sum())
        if served >= share * total - 1e-9 * total and cost < best_plan:
            best_plan, plan_met = cost, served / total
    return ServerHoursBound(lower_bound=float(best_dual), plan=best_plan, plan_share=plan_met, share=share)


def service_floor(setup: Any, share: float, started_at: float | None = None) -> ServerHoursBound:
    """`server_hours_floor` for the (first) service of a twin setup, over its life within the
    horizon from `started_at` (its trace runs from its start; default: its submission, the
    earliest it can start): μ per server = qps/core × the platform's per-core speed × scale-up on
    the server's cores (no interference, no phase) × the service's node efficiency on as many
    nodes, the load = peak × the trace's fraction."""
    sub = next(s for s in setup.subs if s.truth.service is not None)
    t = sub.truth
    sv = t.service
    pidx = {p.platform_id: i for i, p in enumerate(setup.cat.platforms)}
    mus = [sv.qps_per_core * float(t.speed[pidx[p.platform_id]]) * t.scale_up(p.cores) for _sid, p in setup.servers]
    end = min(t.work, setup.horizon - (sub.at if started_at is None else started_at))
    segments = []
    for i, (off, frac) in enumerate(sv.trace):
        nxt = sv.trace[i + 1][0] if i + 1 < len(sv.trace) else t.work
        dt = min(nxt, end) - off
        if dt > 0:
            segments.append((dt, sv.peak_qps * frac))
    return server_hours_floor(mus, sv.base_latency_ms, sv.latency_bound_ms, segments, share,
                              node_efficiency=sv.node_efficiency)
