"""Drawing one ground-truth workload from its family (groundtruth/v2.yaml) and its own stream.

The draw order is fixed (shape-independent draws first), so a workload's truth depends only on
(scenario seed, workload index, family, catalogue, options) — common random numbers across every
profile of a `compare`.

Interference truth, two worlds:

- v1–v3 (`_interference`, roles of `interference.heavy_caused` ...): a low base level of caused
  pressure and a high base tolerance on every source, 1–3 heavy sources drawn with the family's
  weights (high caused pressure), sensitive sources (low tolerance) overlapping the heavy ones with
  probability `heavy_sensitive` plus a few extra ones — independent across sources.
- v4 (`latent_interference`, the ground truth's `latent` section): latent demands on three
  factors (core, memory, io) around the family's centroid; each source's caused level and
  tolerated score are monotone in its loadings on them plus idiosyncratic noise, so sources that
  share hardware move together. Drawn from `latent_rng`, a child stream of the workload's seed
  sequence; the v3 roles are still drawn from the main stream (and discarded), so every other draw
  — durations, reservations, phases, hence targets — is v3's. A phase scales a latent factor.

Caused levels are clipped to [0, 100], tolerated scores to [3, 100].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sextant_contracts.model import WorkloadKind

from ..groundtruth import SOURCES, Family, GroundTruth
from ..platforms import Catalogue
from .base import AnalyticsTruth, InjectedStraggler, Phase, ServiceTruth, WorkloadTruth
from .draws import choice, draw, uniform
from .performance import (
    cpu_trait_matrix,
    draw_analytics_shape,
    draw_service_exponent,
    draw_speeds,
    performance_stream,
    scale_out_curve,
)
from .service import max_qps_at_bound, trace

N = len(SOURCES)
THREAD_EXPONENT = 0.6  # caused pressure grows sub-linearly with threads (they share data)


@dataclass(frozen=True, slots=True)
class DrawOptions:
    reservations: str = "exact"  # exact | twitter
    phases: str | None = None  # a phase model of the ground truth, e.g. "memory"
    load_trace: str = "flat"  # service load trace kind
    trace_segment_s: float = 900.0
    duration_scale: float = 1.0
    lifetime_s: float | None = None  # a fixed duration (e.g. a 24 h service), drawn one ignored
    stragglers: float = 0.0  # share of analytics jobs with an injected slow node


def generate(ref: str, family_name: str, rng: np.random.Generator, cat: Catalogue, concepts: np.ndarray,
             gt: GroundTruth, opts: DrawOptions) -> WorkloadTruth:
    fam = gt.families[family_name]
    prng = performance_stream(rng)  # v4's performance draws; `rng`'s sequence stays v3's
    threads = choice(fam.threads, rng)
    f = uniform(fam.parallel_fraction, rng)
    footprint = draw(fam.footprint_gb, rng)
    duration = draw(fam.duration_s, rng) * opts.duration_scale
    if opts.lifetime_s is not None:
        duration = opts.lifetime_s
    activity = uniform(fam.activity, rng)
    sens = np.array([uniform(fam.sensitivity.get(c, (0.0, 0.0)), rng) for c in gt.performance.concepts])
    speed = draw_speeds(sens, concepts, gt, rng, cpu_trait_matrix(cat, gt.performance.cpu_traits), prng)
    caused, tolerated = _interference(fam, gt, rng)  # v4 still draws it: the stream stays aligned
    scale = fam.interference.caused_scale
    mult = float(threads) ** THREAD_EXPONENT if scale is None else scale
    shares: tuple[np.ndarray, np.ndarray] | None = None
    if gt.latent is not None:
        lat = latent_interference(family_name, gt, latent_rng(rng))
        caused, tolerated = lat.caused, lat.tolerated
        if fam.shape != "single":
            mult *= gt.latent.multi_node_caused
        if opts.phases:
            shares = lat.shares(gt.latent.factors.index(gt.latent.phase_factor[opts.phases]))
    caused = np.clip(caused * mult, 0.0, 100.0)
    mem_over = uniform(fam.requested_memory_over, rng)
    res_factor, mem_under = _reservation(gt, opts.reservations, rng)
    phases = _phases(gt, opts.phases, rng, shares) if opts.phases else ()
    kind = WorkloadKind(fam.kind)
    base = dict(ref=ref, family=family_name, kind=kind, shape=fam.shape, threads=threads,
                parallel_fraction=f, footprint_gb=footprint, activity=activity, speed=speed,
                caused=caused, tolerated=tolerated, phases=phases)
    if fam.shape == "single":
        need = threads
        # alone on its best platform a phased workload still runs its slow phases: the ideal
        # includes them (otherwise no placement could meet QoS through a 10-60 % slower phase)
        return WorkloadTruth(**base, work=duration, ideal_s=duration * phase_time_factor(phases),  # type: ignore[arg-type]
                             requested_cores=max(1, round(need * res_factor)),
                             requested_memory_gb=round(footprint * mem_over / mem_under, 3),
                             needed_cores=need)
    if fam.shape == "analytics":
        a = _analytics(fam, threads, f, duration, rng, gt, opts.stragglers, prng)
        need = a.reference_nodes * threads
        return WorkloadTruth(**base, work=a.bulk + a.tail, ideal_s=duration,  # type: ignore[arg-type]
                             analytics=a, requested_cores=max(1, round(need * res_factor)),
                             requested_memory_gb=round(a.reference_nodes * footprint * mem_over / mem_under, 3),
                             needed_cores=need)
    s = _service(fam, family_name, threads, f, duration, rng, opts, gt, prng)
    need = s.reference_nodes * threads
    return WorkloadTruth(**base, work=duration, ideal_s=duration, service=s,  # type: ignore[arg-type]
                         requested_cores=max(1, round(need * res_factor)),
                         requested_memory_gb=round(s.reference_nodes * footprint * mem_over / mem_under, 3),
                         needed_cores=need)


def _interference(fam: Family, gt: GroundTruth, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(caused, tolerated) per source from the family's roles (see groundtruth/v2.yaml)."""
    roles, p = fam.interference, gt.interference
    caused = np.clip(rng.normal(roles.caused_base[0], roles.caused_base[1], size=N), 0.0, 100.0)
    tolerated = np.clip(rng.normal(roles.tolerated_base[0], roles.tolerated_base[1], size=N), 3.0, 100.0)
    weights = np.array([roles.heavy.get(s, 0.0) for s in SOURCES])
    k = choice(roles.heavy_count, rng)
    heavy = _top_k(weights, k, rng)
    levels = rng.uniform(*p.heavy_caused, size=3)
    caused[heavy] = levels[: len(heavy)]
    hs = p.heavy_sensitive if roles.heavy_sensitive is None else roles.heavy_sensitive
    also = rng.random(3) < hs
    sensitive = [int(h) for h, a in zip(heavy, also[: len(heavy)], strict=True) if a]
    extra = choice(p.extra_sensitive, rng)
    pool = weights + p.extra_weight
    pool[heavy] = 0.0
    sensitive += [int(x) for x in _top_k(pool, extra, rng)]
    tol_levels = rng.uniform(*p.sensitive_tolerated, size=N)
    tolerated[sensitive] = tol_levels[sensitive]
    return caused, tolerated


LATENT_STREAM = 0x4C41  # spawn key of the latent-demand child stream ("LA")


def latent_rng(rng: np.random.Generator) -> np.random.Generator:
    """The workload's dedicated stream for its latent demands: a child of its own seed sequence
    (same entropy, spawn key + `LATENT_STREAM`), derived without drawing from or mutating `rng`, so
    every other draw of the workload (durations, reservations, phases, targets) is v3's."""
    ss = rng.bit_generator.seed_seq
    assert isinstance(ss, np.random.SeedSequence)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        ss.entropy, spawn_key=(*ss.spawn_key, LATENT_STREAM))))


@dataclass(frozen=True, slots=True)
class LatentDraw:
    """One workload's latent interference: demand `d` and sensitivity `sens` per factor, and the
    resulting per-source caused level (per thread, before the family's multiplier) and tolerated
    score; `load_c`/`load_t` are the per-source, per-factor terms Λ_sk·d_k and Λ_sk·σ_k."""

    demand: np.ndarray
    sens: np.ndarray
    caused: np.ndarray
    tolerated: np.ndarray
    load_c: np.ndarray
    load_t: np.ndarray
    base_c: float
    base_t: float

    def shares(self, factor: int) -> tuple[np.ndarray, np.ndarray]:
        """Per source, the share of its caused level and of its sensitivity that comes from
        `factor`: a phase that scales that factor by (1 + m) scales the source's caused level by
        1 + m·share (exactly 1 + m on a source loaded on that factor alone)."""
        c = self.load_c[:, factor] / (self.load_c.sum(axis=1) + self.base_c)
        t = self.load_t[:, factor] / (self.load_t.sum(axis=1) + self.base_t)
        return c, t


def latent_interference(family: str, gt: GroundTruth, rng: np.random.Generator) -> LatentDraw:
    """(caused per thread, tolerated) per source from latent resource demands (`groundtruth.Latent`).

    Draw order (fixed): factor demand noise (K), sensitivity noise (K), caused noise (10),
    tolerated noise (10)."""
    lat = gt.latent
    assert lat is not None
    lam = lat.matrix()
    k = lam.shape[1]
    centre = np.asarray(lat.centroids[family], dtype=float)
    demand = centre * np.exp(lat.spread * rng.standard_normal(k) - lat.spread ** 2 / 2)
    sens = demand ** lat.coupling * np.exp(lat.sensitivity_spread * rng.standard_normal(k)
                                           - lat.sensitivity_spread ** 2 / 2)
    ec = rng.standard_normal(N)
    et = rng.standard_normal(N)
    load_c = lam * demand
    load_t = lam * sens
    c, t = lat.caused, lat.tolerated
    caused = c.scale * (load_c.sum(axis=1) + c.base) * np.exp(c.noise * ec - c.noise ** 2 / 2)
    tol = lat.tolerated_max / (1.0 + t.scale * (load_t.sum(axis=1) + t.base)
                               * np.exp(t.noise * et - t.noise ** 2 / 2))
    return LatentDraw(demand=demand, sens=sens, caused=caused, tolerated=np.clip(tol, 3.0, 100.0),
                      load_c=load_c, load_t=load_t, base_c=c.base, base_t=t.base)


def _top_k(weights: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k distinct indices drawn with probabilities ∝ weights (Gumbel top-k; always N draws)."""
    g = rng.gumbel(size=len(weights))
    keys = np.where(weights > 0, np.log(np.maximum(weights, 1e-300)) + g, -np.inf)
    order = np.argsort(-keys, kind="stable")
    k = min(k, int((weights > 0).sum()))
    return np.sort(order[:k])


def _reservation(gt: GroundTruth, model: str, rng: np.random.Generator) -> tuple[float, float]:
    """(core reservation factor, memory under-statement divisor ≥ 1)."""
    res = gt.reservations[model]
    u = float(rng.random())
    over = draw(res["over"].factor, rng)
    under = draw(res["under"].factor, rng)
    factor = over if u < res["over"].share else (1.0 / under if u < res["over"].share + res["under"].share
                                                 else 1.0)
    mem = gt.reservations["memory_understated"]["under"]
    v = float(rng.random())
    mem_under = draw(mem.factor, rng)
    return factor, (mem_under if v < mem.share else 1.0)


def phase_time_factor(phases: tuple[Phase, ...]) -> float:
    """Run time alone relative to a phase-free run: Σ over phases of (share of the work) / speed."""
    if not phases:
        return 1.0
    ends = [p.start for p in phases[1:]] + [1.0]
    return sum((end - p.start) / p.speed for p, end in zip(phases, ends, strict=True))


def _phases(gt: GroundTruth, model: str, rng: np.random.Generator,
            shares: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[Phase, ...]:
    """Three phases (same draws in every version). v1–v3: phase 2 multiplies the caused level of
    the model's `sources` by 1 + m and divides their tolerance by 1 + m/2. v4 (`shares`, from
    `LatentDraw.shares`): the phase scales one latent factor, so each source moves by its share of
    that factor — 1 + m·share_c and 1 / (1 + m/2·share_t): several sources at once, v3's
    magnitude on a source loaded on that factor alone."""
    pm = gt.phases[model]
    b1 = uniform(pm.boundaries[0], rng)
    b2 = uniform(pm.boundaries[1], rng)
    m = draw(pm.magnitude, rng)
    growth = uniform(pm.footprint_growth, rng)
    if pm.speed_drop is not None:  # v1/v2: an independent drop (same draw order as before)
        drop = uniform(pm.speed_drop, rng)
    else:  # v3: the phase magnitude sets the speed too
        assert pm.speed_per_magnitude is not None
        drop = min(pm.speed_per_magnitude * m, 0.9)
    if shares is None:
        idx = [SOURCES.index(s) for s in pm.sources]
        hi_c = np.ones(N)
        hi_c[idx] = 1.0 + m
        hi_t = np.ones(N)
        hi_t[idx] = 1.0 / (1.0 + 0.5 * m)
    else:
        hi_c = 1.0 + m * shares[0]
        hi_t = 1.0 / (1.0 + 0.5 * m * shares[1])
    return (Phase(start=0.0),
            Phase(start=b1, speed=1.0 - drop, caused=hi_c, tolerated=hi_t, footprint=1.0 + growth),
            Phase(start=b2, speed=1.0, caused=1.0 + (hi_c - 1.0) * 0.1, tolerated=np.ones(N),
                  footprint=1.0 + 0.1 * growth))


def scale_out_efficiency(n: int | float, beta: float, kappa: float) -> float:
    """v3's per-node efficiency e(n), aggregate throughput ∝ n · e(n) = n^beta / (1 + κ(n−1)); a
    job's own curve is `AnalyticsTruth.efficiency` (v4 adds shape terms)."""
    n = max(float(n), 1.0)
    return n ** (beta - 1.0) / (1.0 + kappa * (n - 1.0))


def _analytics(fam: Family, threads: int, f: float, duration: float, rng: np.random.Generator,
               gt: GroundTruth, straggler_share: float, prng: np.random.Generator) -> AnalyticsTruth:
    """A job's tasks and scale-out curve: beta, kappa and every v3 draw from `rng`; v4's shape
    terms (`performance.draw_analytics_shape`) from the performance stream `prng`."""
    assert fam.tasks and fam.reference_nodes and fam.scale_out_beta and fam.scale_out_kappa
    assert fam.straggler_rate is not None and fam.straggler_factor
    n_tasks = int(rng.integers(fam.tasks[0], fam.tasks[1] + 1))
    n_ref = int(rng.integers(fam.reference_nodes[0], fam.reference_nodes[1] + 1))
    beta = uniform(fam.scale_out_beta, rng)
    kappa = uniform(fam.scale_out_kappa, rng)
    overhead, coherency, wiggle = draw_analytics_shape(gt, prng)
    rel = rng.lognormal(0.0, 0.3, size=n_tasks)
    rel = rel / rel.mean()
    strag = rng.random(n_tasks) < fam.straggler_rate
    mult = rng.uniform(*fam.straggler_factor, size=n_tasks)
    excess = np.where(strag, (mult - 1.0) * rel, 0.0)
    tail_rel = float(excess.max()) if strag.any() else 0.5
    per_node = 1.0 / ((1.0 - f) + f / threads)  # Amdahl speed-up of `threads` slots on one node
    r_ref = min(float(n_tasks), n_ref * per_node * scale_out_curve(n_ref, beta, kappa, overhead, coherency, wiggle))
    tau = duration / (n_tasks / r_ref + tail_rel)  # mean task work so the reference run takes `duration`
    work = rel * tau
    injected = _injected(gt, straggler_share, rng)
    return AnalyticsTruth(task_work=work * np.where(strag, mult, 1.0), straggler=strag,
                          bulk=float(work.sum()), tail=tail_rel * tau, beta=beta, kappa=kappa,
                          reference_nodes=n_ref, injected=injected, overhead=overhead, coherency=coherency,
                          wiggle=wiggle)


def _injected(gt: GroundTruth, share: float, rng: np.random.Generator) -> InjectedStraggler | None:
    """An injected slow node with probability `share` (always 4 draws, after every other draw of
    the job, so jobs of scenarios without stragglers keep their truth)."""
    u = rng.random(4)
    if gt.stragglers is None or not u[0] < share:
        return None
    st = gt.stragglers
    return InjectedStraggler(start=st.start[0] + float(u[1]) * (st.start[1] - st.start[0]), node=float(u[2]),
                             slowdown=st.slowdown[0] + float(u[3]) * (st.slowdown[1] - st.slowdown[0]))


def _service(fam: Family, family_name: str, threads: int, f: float, duration: float, rng: np.random.Generator,
             opts: DrawOptions, gt: GroundTruth, prng: np.random.Generator) -> ServiceTruth:
    """A service: every v3 draw from `rng`, its scale-out exponent from the performance stream. The
    peak load is what its reference deployment serves at the reference utilisation: n_ref nodes at
    their per-node capacity on n_ref nodes (`ServiceTruth.node_efficiency`)."""
    assert fam.qps_per_core and fam.base_latency_ms and fam.latency_bound_ms and fam.reference_nodes
    assert fam.reference_utilisation is not None
    q = uniform(fam.qps_per_core, rng)
    base = uniform(fam.base_latency_ms, rng)
    bound = max(uniform(fam.latency_bound_ms, rng), base * 2.5)
    n_ref = int(rng.integers(fam.reference_nodes[0], fam.reference_nodes[1] + 1))
    exponent = draw_service_exponent(gt, family_name, prng)
    mu = q / ((1.0 - f) + f / threads) * float(n_ref) ** (exponent - 1.0)
    per_node = min(fam.reference_utilisation * mu, 0.9 * max_qps_at_bound(mu, base, bound))
    tr = trace(opts.load_trace, duration, opts.trace_segment_s, rng)
    return ServiceTruth(qps_per_core=q, base_latency_ms=base, latency_bound_ms=bound,
                        peak_qps=n_ref * per_node, trace=tr, reference_nodes=n_ref, exponent=exponent)
