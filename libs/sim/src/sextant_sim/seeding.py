"""The offline profiling campaign of the twin: exhaustively profiled seed workloads for the
classification engine (docs/classification.md; Paragon §2.2, Quasar §3.2).

Paragon seeds each matrix with "a few tens" of workloads profiled on every column ("20 and 30
offline workloads for a 40 and 1000-server cluster"); Quasar profiles "20–30 workload types"
exhaustively (scale-out: 1–100 nodes). Here a campaign draws its own workloads from the twin's
workload families — never the scenario's workloads — and *measures* every column through the twin's
`Profiler` (noisy, as a real campaign's runs are). Only the measurements leave this module, as
`KnowledgeSeeded` events (`sextant_core.classification.seeding.seed_events`); the truths stay in the
world, like the profiler's.

[IMPL CHOICE] what a campaign is:

* **workloads**: `per_kind` (default 30, Paragon's figure for a 1 000-server cluster) per workload
  kind present in the scenario, spread round-robin over that kind's families of the scenario
  (sorted); seed j of family f is drawn from ``rng_for(seed, "seeding", f, j)`` with the default draw
  options (no phases, flat load) — a stream no scenario workload uses; row ids ``seed:<family>:<j>``;
* **scale-up**: every ``c<k>`` column of the profiling plan (1, 2, 4, … and the high-end platform's
  cores) on the high-end platform, 1 node;
* **heterogeneity**: the seed's *reference configuration* on every platform that has its cores:
  1 core for batch and analytics workloads (whose performance is proportional to the speed of
  their cores, so 1 core fits every platform and the row's ratios hold at any configuration), and
  for services the configuration the online profiling plan gives the same request
  (`profiling.plan.reference_column`: near the request, at most the cores half of the platforms
  have — QPS within a latency bound is not proportional to cores, so a seed row measured at another
  configuration, e.g. its 8 threads where new services are profiled on 4 cores, is another shape;
  measured on the twin's benchmark, 30 new services: heterogeneity 73 -> 53 % avg error, see
  docs/classification.md); a platform with fewer cores is left out, and online profiling never
  runs a reference configuration on such a platform either;
* **scale-out** (multi-node kinds): ``n<k>`` for k in `SCALE_OUT_NODES` (1–4 as online profiling
  runs, then up to Quasar's 100) on the high-end platform, the reference configuration per node;
* **interference**: a ramp on every source on the high-end platform, giving the tolerated and the
  caused score.

One measurement per cell with the scenario's noise; a run measuring ≤ 0 (a service whose latency
bound a slow platform cannot meet) is left out of the row (the knowledge base would skip it anyway).
Campaigns are memoised per (catalogue, families, per_kind, twin version, interference model, noise
scale, seed): every profile of a `compare` gets the same events.

`events_for(setup, params)` is the engine's hook: the campaign's events for a run whose classifier
learns from the knowledge base (`CollaborativeClassifier`), nothing for the others (the baselines'
estimate port ignores it, and their logs stay as they were). The events are the first of the run's
log after the servers, so a replay rebuilds the same matrices and models.
"""

from __future__ import annotations

from dataclasses import dataclass

from sextant_contracts.events import KnowledgeSeeded, ProfileRun
from sextant_contracts.model import Classification, WorkloadKind
from sextant_core.classification.seeding import SeedProfile, seed_events
from sextant_core.policies import PolicySet, RetrainingClassifier
from sextant_core.profiling.plan import (
    _default_columns,  # the plan's column set, by design
    column_cores,
    reference_column,
)

from .arrivals import rng_for
from .groundtruth import SOURCES
from .setup import Setup
from .workloads.base import WorkloadTruth
from .workloads.generate import DrawOptions, generate
from .workloads.performance import concept_matrix

PER_KIND = 30
SCALE_OUT_NODES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 100)
MULTI_NODE = frozenset({WorkloadKind.ANALYTICS, WorkloadKind.SERVICE})


@dataclass(frozen=True, slots=True)
class SeedWorkload:
    """One campaign workload: its truth (world side) and what the campaign measured."""

    row_id: str
    truth: WorkloadTruth
    profile: SeedProfile


def scale_up_cores(high_cores: int) -> list[int]:
    """1, 2, 4, … below `high_cores`, then `high_cores`: the profiling plan's default scale-up
    columns (`DefaultProfilingPlan`), so that seeds and new workloads share one column set."""
    return [int(c[1:]) for c in _default_columns(high_cores)]


def scenario_families(setup: Setup) -> tuple[str, ...]:
    return tuple(sorted({f for g in setup.scenario.groups for f in g.mix}))


def campaign_families(setup: Setup, families: tuple[str, ...], per_kind: int) -> list[tuple[str, int]]:
    """(family, index within family) of every campaign workload, kinds in `WorkloadKind` order."""
    by_kind: dict[WorkloadKind, list[str]] = {}
    for f in families:
        by_kind.setdefault(WorkloadKind(setup.gt.families[f].kind), []).append(f)
    out: list[tuple[str, int]] = []
    for kind in WorkloadKind:
        fams = sorted(by_kind.get(kind, []))
        out.extend((fams[i % len(fams)], i // len(fams)) for i in range(per_kind if fams else 0))
    return out


def draw(setup: Setup, family: str, j: int, stream: str = "seeding") -> WorkloadTruth:
    """Workload j of `family` from the stream ``rng_for(seed, stream, family, j)`` (the campaign's
    stream by default; the benchmark draws its new workloads from another one)."""
    concepts = concept_matrix(setup.cat, setup.gt)
    return generate(f"{stream}:{family}:{j}", family, rng_for(setup.seed, stream, family, j), setup.cat,
                    concepts, setup.gt, DrawOptions())


def reference_cores(setup: Setup, t: WorkloadTruth) -> int:
    """A seed's reference configuration: 1 core, or for a service the configuration the online
    profiling plan would give it (`profiling.plan.reference_column`: near its request, at most the
    cores half of the platforms have), so that its heterogeneity and scale-out rows are measured
    where a new service's are."""
    if t.service is None:
        return 1
    col = reference_column(_default_columns(setup.cat.reference().cores), t.requested_cores,
                           [p.cores for p in setup.cat.platforms])
    return (column_cores(col) or 1) if col is not None else max(1, min(t.threads, setup.cat.reference().cores))


def measure(setup: Setup, row_id: str, t: WorkloadTruth) -> SeedProfile:
    """Every column of the four classifications, measured once through the twin's profiler."""
    cat, prof = setup.cat, setup.profiler
    high = cat.reference().platform_id

    def run(cls: Classification, column: str, platform: str, cores: int = 1, nodes: int = 1) -> ProfileRun:
        return ProfileRun(run_id=f"{cls.value}:{column}", classification=cls, column=column, platform=platform,
                          server_id=f"campaign-{platform}", cores=cores, nodes=nodes)

    def perf(r: ProfileRun) -> float:
        return prof.measure(row_id, t, r).value

    ref = reference_cores(setup, t)
    up = {f"c{c}": perf(run(Classification.SCALE_UP, f"c{c}", high, c))
          for c in scale_up_cores(cat.reference().cores)}
    het = {p.platform_id: perf(run(Classification.HETEROGENEITY, p.platform_id, p.platform_id, ref))
           for p in cat.platforms if p.cores >= ref}
    out: dict[str, float] = {}
    if t.kind in MULTI_NODE:
        out = {f"n{n}": perf(run(Classification.SCALE_OUT, f"n{n}", high, ref, n)) for n in SCALE_OUT_NODES}
    tol: dict[str, float] = {}
    caused: dict[str, float] = {}
    for s in SOURCES:
        m = prof.measure(row_id, t, run(Classification.INTERFERENCE, s, high))
        tol[s] = m.value
        if m.caused is not None:
            caused[s] = m.caused

    def positive(d: dict[str, float]) -> dict[str, float]:
        return {k: round(v, 9) for k, v in d.items() if v > 0}

    return SeedProfile(row_id=row_id, kind=t.kind, scale_up=positive(up), scale_out=positive(out),
                       heterogeneity=positive(het), tolerated={k: round(v, 6) for k, v in tol.items()},
                       caused={k: round(v, 6) for k, v in caused.items()})


def campaign(setup: Setup, families: tuple[str, ...] | None = None, per_kind: int = PER_KIND
             ) -> tuple[SeedWorkload, ...]:
    """The campaign's workloads for `setup`'s world (default families: the scenario's)."""
    fams = scenario_families(setup) if families is None else tuple(sorted(families))
    out = []
    for family, j in campaign_families(setup, fams, per_kind):
        row_id = f"seed:{family}:{j}"
        t = draw(setup, family, j)
        out.append(SeedWorkload(row_id=row_id, truth=t, profile=measure(setup, row_id, t)))
    return tuple(out)


def _key(setup: Setup, families: tuple[str, ...], per_kind: int) -> tuple[object, ...]:
    sc = setup.scenario
    return (setup.cat.name, families, per_kind, setup.twin_version, sc.interference_model, sc.noise_scale, setup.seed)


_CACHE: dict[tuple[object, ...], tuple[KnowledgeSeeded, ...]] = {}


def seeding_events(setup: Setup, families: tuple[str, ...] | None = None, per_kind: int = PER_KIND
                   ) -> tuple[KnowledgeSeeded, ...]:
    """The campaign's `KnowledgeSeeded` events (at t = 0), memoised per world and seed."""
    fams = scenario_families(setup) if families is None else tuple(sorted(families))
    key = _key(setup, fams, per_kind)
    hit = _CACHE.get(key)
    if hit is None:
        hit = seed_events([w.profile for w in campaign(setup, fams, per_kind)], at=0.0)
        if len(_CACHE) >= 16:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = hit
    return hit


def learns_from_knowledge(params: PolicySet) -> bool:
    """The classifier learns from the knowledge base: it has the `RetrainingClassifier`
    capability (the `CollaborativeClassifier`, or a wrapper around it that declares it)."""
    return isinstance(params.classifier, RetrainingClassifier)


def events_for(setup: Setup, params: PolicySet) -> tuple[KnowledgeSeeded, ...]:
    """The engine's hook: the campaign for a classifier that learns from the knowledge base."""
    return seeding_events(setup) if learns_from_knowledge(params) else ()
