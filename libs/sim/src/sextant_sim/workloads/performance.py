"""The latent performance model across platforms (Paragon spec §8 item 2; Quasar spec §8.2) and the
shapes of scale-out curves.

Platform speeds:

    log speed(w, p) = Σ_k a_wk · log(x_pk / x_ref,k) + Σ_j b_wj · h_cpu(p),j + ε_wp + η_wp   (then normalised: max_p = 1)

with concepts k = compute (GHz × IPC), cache (LLC MiB, capped), memory bandwidth (capped), disk and
network bandwidth, workload sensitivities a_wk ≥ 0 drawn per family, ε_wp ~ N(0, `noise_sigma`)
measurement-free idiosyncrasy, and rare multiplicative pathologies (Quasar §3.4: "TCP incast on one
platform") that no low-rank model can predict. v4 adds what the five concepts leave out (absent in
v3: both terms are 0):

- **CPU-model traits** h_cpu,j (j < `cpu_traits`, standard normal, one vector per CPU model — the
  (GHz, IPC) pair, so instance types on the same processor share it, and fixed for the catalogue
  whatever the scenario seed): ISA extensions, prefetchers, branch predictors, turbo and SMT
  behaviour that GHz × IPC does not capture. A workload's loadings b_wj ~ N(0, `cpu_trait_sd`) say
  how much its code cares (vectorised kernels, pointer chasing, ...). The deviation is structured —
  shared by every platform with that CPU — but workload-specific.
- **instance idiosyncrasy** η_wp ~ N(0, `idiosyncratic_sigma`): hypervisor, NUMA layout and
  storage/network virtualisation of one instance type as one workload meets them.

The matrix of log speeds is therefore rank ≤ 5 plus per-CPU structure plus noise — the structure
collaborative filtering exploits, with errors it cannot remove — calibrated on the measured
platform-speed statistics of ../shared/REALISM.md.

Scale-out (`scale_out_curve`): v3's n^beta / (1 + kappa (n − 1)) plus, in v4, a crosstalk term,
the overhead of leaving one node and an irregular per-job deviation (`draw_analytics_shape`);
services scale as n^exponent with a per-service exponent ≤ 1 (`draw_service_exponent`).

Every v4 draw comes from the workload's *performance stream* (`performance_stream`), a child of its
truth stream: the truth stream's sequence — and with it arrivals, targets, reservations, phases and
interference roles — stays exactly as in v3.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from sextant_contracts.ids import seed_from

from ..groundtruth import GroundTruth
from ..platforms import Catalogue
from .draws import draw, uniform

WIGGLE_KNOTS = 7  # irregularity knots at n = 2, 4, …, 128 nodes (beyond: held)


def concept_matrix(cat: Catalogue, gt: GroundTruth) -> np.ndarray:
    """(platforms × concepts) log capability relative to the catalogue's reference platform."""
    perf = gt.performance
    rows = []
    for p in cat.platforms:
        vals = {
            "compute": p.per_core_speed,
            "cache": min(p.llc_mb, perf.cache_cap_mb),
            "membw": min(p.mem_bw_gbs, perf.membw_cap_gbs),
            "disk": p.disk_bw_gbs,
            "net": p.net_bw_gbs,
        }
        rows.append([np.log(vals[c]) for c in perf.concepts])
    m = np.asarray(rows, dtype=float)
    ref = cat.index(cat.reference().platform_id)
    return m - m[ref]


@lru_cache(maxsize=32)
def cpu_trait_matrix(cat: Catalogue, traits: int) -> np.ndarray:
    """(platforms × `traits`) standard-normal traits of each platform's CPU model (GHz, IPC): equal
    for platforms on the same processor, fixed per CPU model (independent of any scenario seed).
    Read-only."""
    rows = []
    for p in cat.platforms:
        rng = np.random.Generator(np.random.PCG64(seed_from("cpu-traits", f"{p.ghz:g}", f"{p.ipc:g}")))
        rows.append(rng.normal(size=traits))
    m = np.asarray(rows, dtype=float).reshape(len(cat.platforms), traits)
    m.setflags(write=False)
    return m


def performance_stream(rng: np.random.Generator) -> np.random.Generator:
    """The workload's performance stream: a generator seeded from `rng`'s own seed sequence (its
    entropy and spawn key) and the name "performance" — never from `rng`'s state, so drawing from
    either leaves the other's sequence unchanged."""
    ss = rng.bit_generator.seed_seq
    if not isinstance(ss, np.random.SeedSequence):
        raise TypeError("a workload's truth stream must be seeded from a numpy SeedSequence")
    return np.random.Generator(np.random.PCG64(seed_from(ss.entropy, ss.spawn_key, "performance")))


def draw_speeds(sens: np.ndarray, concepts: np.ndarray, gt: GroundTruth,
                rng: np.random.Generator, traits: np.ndarray | None = None,
                prng: np.random.Generator | None = None) -> np.ndarray:
    """Per-platform per-core speed relative to the fastest platform (max exactly 1.0).

    `rng` draws v3's terms (always 3 × platforms variates); `prng` (the performance stream) the v4
    terms — the CPU-trait loadings against `traits` (platforms × cpu_traits) and the instance
    idiosyncrasy — only when the ground truth has them."""
    perf = gt.performance
    log_speed = concepts @ sens + rng.normal(0.0, perf.noise_sigma, size=concepts.shape[0])
    hit = rng.random(concepts.shape[0]) < perf.pathology_rate
    factor = rng.uniform(*perf.pathology_factor, size=concepts.shape[0])
    if perf.cpu_traits > 0 or perf.idiosyncratic_sigma > 0:
        if prng is None or traits is None or traits.shape != (concepts.shape[0], perf.cpu_traits):
            raise ValueError("v4 platform speeds need the performance stream and the CPU-trait matrix")
        log_speed = log_speed + traits @ prng.normal(0.0, perf.cpu_trait_sd, size=perf.cpu_traits)
        log_speed = log_speed + prng.normal(0.0, perf.idiosyncratic_sigma, size=concepts.shape[0])
    speed = np.exp(log_speed) * np.where(hit, factor, 1.0)
    return speed / speed.max()


def scale_out_curve(n: int | float, beta: float, kappa: float, overhead: float = 0.0, coherency: float = 0.0,
                    wiggle: tuple[float, ...] = ()) -> float:
    """Per-node efficiency e(n) > 0, e(1) = 1: the aggregate throughput on n nodes is n · e(n) times
    one node's, with

        n · e(n) = n^beta / (1 + kappa (n − 1) + coherency · n (n − 1)) · (1 − overhead · min(n − 1, 1)) · exp(ξ(n))

    kappa: contention (a serial share); coherency: crosstalk, an all-to-all exchange whose cost grows
    with the pairs of nodes (Gunther's universal scalability law; retrograde for large n); overhead:
    the fixed cost of leaving one node (serialisation, the network stack, barriers), < 1; ξ: the
    job's irregularity, linear in log2 n between its knots `wiggle` at n = 2, 4, 8, …, 0 at one
    node and held beyond the last knot. Without the v4 terms this is v3's curve bit for bit
    (`workloads.generate.scale_out_efficiency`)."""
    n = max(float(n), 1.0)
    if coherency == 0.0 and overhead == 0.0 and not wiggle:
        return n ** (beta - 1.0) / (1.0 + kappa * (n - 1.0))
    e = n ** (beta - 1.0) / (1.0 + kappa * (n - 1.0) + coherency * n * (n - 1.0))
    e *= 1.0 - overhead * min(n - 1.0, 1.0)
    if wiggle:
        x = min(math.log2(n), float(len(wiggle)))
        k = int(x)
        lo = 0.0 if k == 0 else wiggle[k - 1]
        hi = wiggle[k] if k < len(wiggle) else lo
        e *= math.exp(lo + (x - k) * (hi - lo))
    return e


def draw_analytics_shape(gt: GroundTruth, prng: np.random.Generator) -> tuple[float, float, tuple[float, ...]]:
    """(overhead, coherency, wiggle) of one analytics job from its performance stream (always
    2 + `WIGGLE_KNOTS` variates); (0, 0, ()) — v3's curve — when the ground truth has no `scaleout`."""
    if gt.scaleout is None:
        return 0.0, 0.0, ()
    a = gt.scaleout.analytics
    overhead = uniform(a.overhead, prng)
    coherency = draw(a.coherency, prng)
    wiggle = tuple(float(v) for v in prng.normal(0.0, a.irregularity_sd, size=WIGGLE_KNOTS))
    return overhead, coherency, wiggle


def draw_service_exponent(gt: GroundTruth, family: str, prng: np.random.Generator) -> float:
    """A service's scale-out exponent from its family's range (1.0 — exactly n× — without `scaleout`)."""
    if gt.scaleout is None:
        return 1.0
    ranges = gt.scaleout.services.exponent
    return uniform(ranges.get(family, ranges["default"]), prng)
