"""From a scenario to the stream of submissions: arrival times, families, ground truths, targets.

Everything here is drawn from the scenario seed only (never from a profile), so every profile of a
`compare` sees the same arrivals and the same workloads (common random numbers, DESIGN §5):

- arrival times and families: one stream per group, `seed_from(seed, "arrivals", group)`;
- each workload's truth: its own stream, `seed_from(seed, workload_id, "truth")`.

Workload ids are `w00000`, `w00001`, ... in arrival order (ties: group order, then index), so a
workload keeps its id — and its truth — whatever profile runs it.

Targets (units of `sextant_contracts.model`): single-node workloads get an instruction rate of
0.95 × their ideal rate (ideal = 1e9 relative instructions/s alone on the best platform: Paragon's
QoS, §2.3); analytics jobs a completion time of ideal / 0.95; services their peak QPS at their
latency bound (Quasar §2).

[IMPL CHOICE] An analytics job's ideal (its target, the oracle's aim, the metrics' yardstick) is
its reference run: `reference_nodes` nodes of the
catalogue's fastest platform for it, `threads` cores each. A cluster with fewer such servers cannot
run that configuration at all, so there the ideal is the best the cluster offers in its place: the
job alone on its `reference_nodes` fastest servers (`threads` cores each, or all a smaller server
has), timed with the world's analytics model (`cluster.World`: bulk at e(n) · Σ speed · S(cores),
the straggler tail on the slowest of those nodes). Paragon's QoS is "95 % of the performance on
its best server configuration" (§2.3): a configuration the cluster does not have cannot be it. On
`platform-demo` (40 servers, 2 of the fastest platform) every analytics target had been out of
reach even for the job alone (11 of 12 late; docs/twin.md); a cluster that has the reference
configuration keeps the drawn ideal, bit for bit (`in_cluster`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from sextant_contracts.events import WorkloadSubmitted
from sextant_contracts.ids import seed_from
from sextant_contracts.model import (
    CompletionTimeTarget,
    InstructionRateTarget,
    ThroughputLatencyTarget,
    TwinWorkloadRef,
)

from .groundtruth import GroundTruth
from .platforms import Catalogue
from .scenarios import Arrivals, Group, Scenario
from .workloads.base import WorkloadTruth
from .workloads.generate import DrawOptions, generate

IDEAL_IPS = 1e9
QOS_FRACTION = 0.95


@dataclass(frozen=True, slots=True)
class Submission:
    at: float
    workload_id: str
    group: str
    truth: WorkloadTruth
    event: WorkloadSubmitted


def rng_for(*parts: object) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed_from(*parts))))


def _times(arr: Arrivals, n: int, rng: np.random.Generator) -> list[float]:
    if arr.process == "fixed":
        gaps = np.full(n, arr.interval_s)
    elif arr.process == "gaussian":
        gaps = np.maximum(rng.normal(arr.interval_s, arr.sigma_s, size=n), 0.0)
    else:
        gaps = rng.exponential(arr.interval_s, size=n)
    gaps[0] = 0.0
    return [float(t) for t in arr.start_s + np.cumsum(gaps)]


def _group_times(g: Group, rng: np.random.Generator) -> list[float]:
    main = _times(g.arrivals, g.count, rng)
    out = list(main)
    for b in g.bursts:
        t0 = main[min(b.after, len(main)) - 1] if b.after > 0 else g.arrivals.start_s
        out.extend(t0 + (i + 1) * b.interval_s for i in range(b.count))
    return sorted(out)


def target_for(t: WorkloadTruth) -> InstructionRateTarget | CompletionTimeTarget | ThroughputLatencyTarget:
    if t.service is not None:
        return ThroughputLatencyTarget(qps=round(t.service.peak_qps, 3),
                                       p99_latency_ms=round(t.service.latency_bound_ms, 4))
    if t.analytics is not None:
        return CompletionTimeTarget(seconds=round(t.ideal_s / QOS_FRACTION, 3))
    return InstructionRateTarget(ips=QOS_FRACTION * IDEAL_IPS)


def in_cluster(t: WorkloadTruth, cat: Catalogue) -> WorkloadTruth:
    """`t` as a cluster of `cat` sees it: an analytics job's ideal is `analytics_ideal_s`."""
    if t.analytics is None:
        return t
    ideal = analytics_ideal_s(t, cat)
    return t if ideal == t.ideal_s else replace(t, ideal_s=ideal)


def analytics_ideal_s(t: WorkloadTruth, cat: Catalogue) -> float:
    """An analytics job's ideal completion in a cluster of `cat` (module doc): the drawn ideal when
    the cluster has its reference configuration, else its time alone on its fastest servers."""
    an = t.analytics
    assert an is not None
    n = an.reference_nodes
    ranked = sorted(((float(t.speed[i]), min(p.cores, t.threads)) for i, p in enumerate(cat.platforms)
                     for _ in range(p.count)), reverse=True)[:n]
    if len(ranked) == n and all(sp == 1.0 and c == t.threads for sp, c in ranked):
        return t.ideal_s
    bulk_rate = min(sum(sp * t.scale_up(c) for sp, c in ranked) * an.efficiency(len(ranked)), float(len(an.task_work)))
    return an.bulk / bulk_rate + an.tail / min(sp for sp, _ in ranked)


def submissions(sc: Scenario, seed: int, cat: Catalogue, concepts: np.ndarray,
                gt: GroundTruth) -> list[Submission]:
    """Every submission of the scenario, in arrival order."""
    raw: list[tuple[float, int, int, str, Group]] = []
    for gi, g in enumerate(sc.groups):
        rng = rng_for(seed, "arrivals", g.name)
        times = _group_times(g, rng)
        fams = sorted(g.mix)
        weights = np.array([g.mix[f] for f in fams], dtype=float)
        picks = rng.choice(len(fams), size=len(times), p=weights / weights.sum())
        raw.extend((t, gi, i, fams[int(picks[i])], g) for i, t in enumerate(times))
    raw.sort(key=lambda r: (r[0], r[1], r[2]))
    out = []
    for idx, (at, _gi, _i, family, g) in enumerate(raw):
        wid = f"w{idx:05d}"
        opts = DrawOptions(reservations=g.reservations, phases=g.phases, load_trace=g.load_trace,
                           trace_segment_s=g.trace_segment_s, duration_scale=g.duration_scale,
                           lifetime_s=g.lifetime_s, stragglers=g.stragglers)
        truth = in_cluster(generate(f"{family}:{wid}", family, rng_for(seed, wid, "truth"), cat, concepts, gt, opts), cat)
        ev = WorkloadSubmitted(at=round(at, 6), workload_id=wid, tenant=g.tenant, name=f"{g.name}/{family}",
                               kind=truth.kind, target=target_for(truth),
                               spec=TwinWorkloadRef(ref=truth.ref), priority=g.priority,
                               best_effort=g.best_effort, requested_cores=truth.requested_cores,
                               requested_memory_gb=truth.requested_memory_gb)
        out.append(Submission(at=ev.at, workload_id=wid, group=g.name, truth=truth, event=ev))
    return out
