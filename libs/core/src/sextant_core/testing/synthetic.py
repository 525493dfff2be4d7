"""A synthetic ground truth for the classification engine's tests and benchmark (beside
the cluster twin's catalogue).

Not a model of any real machine: a generator of *plausible* utility matrices with the structure
the papers rely on ("similarity concepts", Paragon §2.1) plus what breaks it, all seeded:

* heterogeneity: ``log perf(w, p) = b_w + s_w g_p + Σ_k a_wk x_pk + ε`` — a general platform speed
  g (σ 0.3: ≈ 2× between the fastest and slowest platform, Paragon §1) that every workload feels
  with its own strength s ∈ [0.6, 1.4], K concept-specific capabilities x (σ `concept_spread`,
  0.12: cache, memory bandwidth, …) with workload sensitivities a ≥ 0 (Dirichlet × intensity), and
  an unmodelled per-cell term ε (σ `idiosyncrasy`);
* scale-up and scale-out: Universal Scalability Law speedups ``N / (1 + σ(N−1) + κN(N−1))`` with
  per-workload contention σ and coherency κ (sub-linear shapes and retrograde ones past a knee,
  Quasar Fig. 2), over cores ``c1, c2, c4, …`` (σ ∈ [0, 0.2], κ ∈ 10^[−4.5, −2.5]) and node counts
  ``n1 … n<nodes>`` (σ ∈ [0, 0.1], κ ∈ 10^[−5.5, −3.5]: the knee lies between ~10 and ~300
  nodes, so 1–4-node runs reveal it only partly — scale-out far from the profiled counts is the
  hardest classification here);
* interference: tolerated ``100·(1 − Σ_j g_wj h_sj)`` and caused ``100·Σ_j g'_wj h'_sj`` over the 10
  sources, with caused sensitivities correlated to tolerated ones (a memory-bound job both suffers
  from and causes memory pressure), clipped to 0..100.

Workload kinds differ in their distributions (batch: no scale-out). Profiling noise is separate
(`measure`): multiplicative for performance, additive points for scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sextant_contracts.model import INTERFERENCE_SOURCES, WorkloadKind

from ..classification.observations import interference_cells
from ..classification.seeding import SeedProfile

KINDS: tuple[WorkloadKind, ...] = (WorkloadKind.BATCH, WorkloadKind.ANALYTICS, WorkloadKind.SERVICE)


@dataclass(frozen=True, slots=True)
class TrueWorkload:
    """One workload's ground truth, separable in log space (Quasar §9.1's obvious reading)::

        log perf(p, c, n) = base + het[p] + up[c] + out[n]

    (each term carries its own unmodelled noise). Rows of the four matrices: scale-up on the
    reference platform at 1 node, heterogeneity at 1 core and 1 node, scale-out on the reference
    platform at 1 core per node, plus the interference scores.
    """

    row_id: str
    kind: WorkloadKind
    base: float
    het: dict[str, float]  # platform -> log factor
    up: dict[str, float]  # "c<k>" -> log speedup
    out: dict[str, float]  # "n<k>" -> log speedup (empty for batch)
    tolerated: dict[str, float]
    caused: dict[str, float]

    def perf(self, platform: str, cores: int = 1, nodes: int = 1) -> float:
        return math.exp(self.base + self.het[platform] + self.up[f"c{cores}"]
                        + (self.out[f"n{nodes}"] if self.out else 0.0))

    def rows(self, reference: str) -> dict[str, dict[str, float]]:
        """The dense rows: scale_up, scale_out, heterogeneity, interference (raw units)."""
        return {
            "scale_up": {c: self.perf(reference, int(c[1:])) for c in self.up},
            "scale_out": {n: self.perf(reference, 1, int(n[1:])) for n in self.out},
            "heterogeneity": {p: self.perf(p) for p in self.het},
            "interference": dict(interference_cells(self.tolerated, self.caused)),
        }

    def seed(self, reference: str) -> SeedProfile:
        r = self.rows(reference)
        return SeedProfile(row_id=self.row_id, kind=self.kind, scale_up=r["scale_up"], scale_out=r["scale_out"],
                           heterogeneity=r["heterogeneity"], tolerated=self.tolerated, caused=self.caused)


def _usl(n: np.ndarray, sigma: float, kappa: float) -> np.ndarray:
    return n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


class SyntheticWorld:
    """`workload(i, kind)` draws workload i; the same (seed, i, kind) always gives the same one."""

    def __init__(self, seed: int = 0, *, platforms: int = 10, concepts: int = 4, max_cores: int = 16,
                 nodes: int = 16, idiosyncrasy: float = 0.02, concept_spread: float = 0.12) -> None:
        self.seed = seed
        r = np.random.default_rng([seed, 0])
        self.platforms = tuple(f"p{i:02d}" for i in range(platforms))
        self.general = r.normal(0.0, 0.3, size=platforms)
        self.capability = r.normal(0.0, concept_spread, size=(platforms, concepts))
        cores, c = [], 1
        while c <= max_cores:
            cores.append(c)
            c *= 2
        self.cores = np.array(cores, dtype=float)
        self.nodes = np.arange(1, nodes + 1, dtype=float)
        self.scale_up_columns = tuple(f"c{int(x)}" for x in self.cores)
        self.scale_out_columns = tuple(f"n{int(x)}" for x in self.nodes)
        n_src = len(INTERFERENCE_SOURCES)
        self.h_tol = r.dirichlet(np.ones(n_src) * 0.7, size=3).T * 3.0  # (sources, 3)
        self.h_cau = np.clip(self.h_tol + r.normal(0, 0.15, size=self.h_tol.shape), 0, None)
        self.idiosyncrasy = idiosyncrasy

    def workload(self, i: int, kind: WorkloadKind, row_id: str | None = None) -> TrueWorkload:
        k = KINDS.index(kind)
        r = np.random.default_rng([self.seed, 1, k, i])
        eps = self.idiosyncrasy
        concepts = self.capability.shape[1]
        a = r.dirichlet(np.ones(concepts) * 0.6) * r.uniform(0.6, 1.6)
        het = r.uniform(0.6, 1.4) * self.general + self.capability @ a + r.normal(0, eps, size=len(self.platforms))
        sig_up, kap_up = r.uniform(0.0, 0.2), 10 ** r.uniform(-4.5, -2.5)
        up = np.log(_usl(self.cores, sig_up, kap_up)) + r.normal(0, eps, len(self.cores))
        up -= up[0]
        out: dict[str, float] = {}
        if kind is not WorkloadKind.BATCH:
            sig, kap = r.uniform(0.0, 0.1), 10 ** r.uniform(-5.5, -3.5)
            so = np.log(_usl(self.nodes, sig, kap)) + r.normal(0, eps, len(self.nodes))
            out = dict(zip(self.scale_out_columns, map(float, so - so[0]), strict=True))
        g = r.dirichlet(np.ones(3) * 0.8) * r.uniform(0.05, 0.3)
        g_c = np.clip(g + r.normal(0, 0.03, 3), 0, None) * r.uniform(0.5, 1.5)
        tol = 100 * np.clip(1 - self.h_tol @ g + r.normal(0, 0.02, len(INTERFERENCE_SOURCES)), 0, 1)
        cau = 100 * np.clip(self.h_cau @ g_c + r.normal(0, 0.02, len(INTERFERENCE_SOURCES)), 0, 1)
        src = [s.value for s in INTERFERENCE_SOURCES]
        return TrueWorkload(
            row_id=row_id or f"{kind.value}-{i}", kind=kind, base=float(r.normal(0, 2.0)),
            het=dict(zip(self.platforms, map(float, het), strict=True)),
            up=dict(zip(self.scale_up_columns, map(float, up), strict=True)), out=out,
            tolerated=dict(zip(src, map(float, tol), strict=True)),
            caused=dict(zip(src, map(float, cau), strict=True)))


def measure(value: float, *, score: bool, rng: np.random.Generator, perf_noise: float = 0.03,
            score_noise: float = 2.0) -> float:
    """A noisy profiling measurement of `value`: ×exp(N(0, perf_noise)) or +N(0, score_noise) points."""
    if score:
        return float(np.clip(value + rng.normal(0, score_noise), 0.0, 100.0))
    return float(value * np.exp(rng.normal(0, perf_noise)))
