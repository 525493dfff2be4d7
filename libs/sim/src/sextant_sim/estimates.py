"""The estimate port: a `Classifier` that returns the ground truth plus Table III noise.

It stands in for the classification engine (docs/classification.md) so the baselines have estimates to
act on, exactly as Paragon's NH/NI baselines use Paragon's classification (§5). It is one of the two
sanctioned readers of the ground truth (the other is `oracle.py`); `SANCTIONED_TRUTH_READ` marks it
so `tests/architecture/test_no_peeking.py` can tell it apart. Swap it for the real engine by putting
another `Classifier` into the `PolicySet` (`baselines.policy_set(..., classifier=...)`).

What it returns (the fields of `WorkloadClassified`):
- `heterogeneity`: per platform id, the per-core speed relative to the workload's fastest platform
  (0..1], × log-normal noise of sd `noise.perf_sd` (Paragon §2.2: 3.8 % mean deviation);
- `tolerated` / `caused`: the scores the twin's microbenchmark ramp measures on the reference
  (profiling) platform in the workload's current phase, + unbiased noise (`noisy_scores`);
- `scale_up`: `c<n>` for n = 1, 2, 4, ... up to the reference platform's cores: speed-up relative
  to all its threads; `scale_out`: `n<k>` for k in 1, 2, 4, ..., 64, 100 (multi-node kinds only):
  aggregate throughput relative to one node.
All noise is drawn from the workload's own stream `seed_from(seed, workload_id, "estimate",
ctx.seed)`, so every profile sees the same estimate for the same decision.

The interference noise is unbiased (`noisy_scores`): the expected estimate of every score equals
its true value. A score v in [0, 100] gets noise e = clip(sd' · z, −a, a) with z ~ N(0, 1),
a = min(v, 100 − v) (the distance to the nearer end of the scale) and sd' = min(sd, a / 3), where
sd is the Table III sd of `profiler.score_noise_sd`. The noise is symmetric about 0, so its mean is
0 and v + e stays in [0, 100] without a one-sided clip. Where the scale allows (a ≥ 3 sd: scores
from about 30 to about 85 points at the default noise) it is the Table III normal, clipped at
±3 sd (0.3 % of draws); nearer an end its sd shrinks to a third of the distance to that end (a
score of 0.6 points gets sd 0.2). The port used to
add N(0, sd) and clip at 0: with caused scores below 1 point for most (workload, source) entries
that roughly doubled the mean caused score (paragon-ec2-2500 seed 6: 3.22 true, 6.12 noisy per
source), so everything fed by the port over-counted pressure.

`noise_scale` multiplies every sd (the scenario's `noise_scale`, times the ladder's factor in
`oracle-estimates` variants); `platform` / `interference` (both True by default) switch the noise
on the performance entries (heterogeneity, scale-up, scale-out) and on the interference scores off
independently, for the information ladder (`bench/quality.py --ladder`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from sextant_core.policies import Classified
from sextant_core.state.model import ClusterState, WorkloadState

from .arrivals import rng_for
from .groundtruth import SOURCES, GroundTruth
from .platforms import Catalogue
from .profiler import Profiler, score_noise_sd
from .workloads.base import WorkloadTruth

if TYPE_CHECKING:
    from sextant_core.decide import DecisionContext

SCALE_OUT_COLUMNS = (1, 2, 4, 8, 16, 32, 64, 100)
PORT_VERSION = "2"  # 2: unbiased interference noise (`noisy_scores`)


def noisy_scores(values: np.ndarray, sd: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Scores `values` (0..100) plus unbiased noise: `values` + clip(sd' · z, −a, a) with
    a = min(v, 100 − v) and sd' = min(sd, a / 3) (module docstring). For z ~ N(0, 1) the noise is
    symmetric about 0, so E[result] = `values` exactly, and the result stays within [0, 100]."""
    v = np.clip(np.asarray(values, dtype=float), 0.0, 100.0)
    a = np.minimum(v, 100.0 - v)
    e = np.clip(np.minimum(np.asarray(sd, dtype=float), a / 3.0) * z, -a, a)
    return np.clip(v + e, 0.0, 100.0)  # a no-op but for float rounding at the ends


class EstimateSource:
    """Read-only access to the ground truth for the estimate port (not for any other policy)."""

    def __init__(self, truths: dict[str, WorkloadTruth], profiler: Profiler, cat: Catalogue,
                 gt: GroundTruth, seed: int, noise_scale: float,
                 phase_of: Callable[[str], int] | None = None, *, platform: bool = True,
                 interference: bool = True) -> None:
        self._truths = truths
        self._profiler = profiler
        self._cat = cat
        self._gt = gt
        self._seed = seed
        self._noise = noise_scale
        self._perf_noise = noise_scale if platform else 0.0
        self._int_noise = noise_scale if interference else 0.0
        self._phase_of = phase_of if phase_of is not None else (lambda wid: 0)
        self._ref = cat.index(cat.reference().platform_id)

    def variant(self, factor: float = 1.0, *, platform: bool = True, interference: bool = True) -> EstimateSource:
        """The same port with every sd × `factor`, and the performance (`platform`) or the
        interference noise switched off when False (the information ladder's variants)."""
        return EstimateSource(self._truths, self._profiler, self._cat, self._gt, self._seed, self._noise * factor,
                              self._phase_of, platform=platform, interference=interference)

    def estimate(self, workload_id: str, stream: int) -> Classified:
        t = self._truths[workload_id]
        rng = rng_for(self._seed, workload_id, "estimate", stream)
        sd = self._gt.noise.perf_sd * self._perf_noise
        plats = [p.platform_id for p in self._cat.platforms]
        het_noise = rng.normal(size=len(plats))
        het = {pid: round(float(t.speed[i]) * math.exp(sd * float(het_noise[i])), 6)
               for i, pid in enumerate(plats)}
        tol, caused = self._profiler.interference(t, self._ref, self._phase_of(workload_id))
        e = rng.normal(size=(2, len(SOURCES)))
        tol_n = noisy_scores(tol, score_noise_sd(self._gt, tol, self._int_noise), e[0])
        cau_n = noisy_scores(caused, score_noise_sd(self._gt, caused, self._int_noise), e[1])
        ref_cores = self._cat.platforms[self._ref].cores
        ups = [c for c in (1, 2, 4, 8, 16, 32, 64) if c <= ref_cores]
        up_noise = rng.normal(size=len(ups))
        scale_up = {f"c{c}": round(t.scale_up(c) / t.scale_up(t.threads) * math.exp(sd * float(z)), 6)
                    for c, z in zip(ups, up_noise, strict=True)}
        out_noise = rng.normal(size=len(SCALE_OUT_COLUMNS))
        scale_out: dict[str, float] = {}
        if t.shape != "single":
            for k, z in zip(SCALE_OUT_COLUMNS, out_noise, strict=True):
                agg = k * (t.analytics.efficiency(k) if t.analytics is not None
                           else t.service.node_efficiency(k) if t.service is not None else 1.0)
                scale_out[f"n{k}"] = round(agg * math.exp(sd * float(z)), 6)
        return Classified(
            scale_up=scale_up, scale_out=scale_out, heterogeneity=het,
            tolerated={s: round(float(v), 4) for s, v in zip(SOURCES, tol_n, strict=True)},
            caused={s: round(float(v), 4) for s, v in zip(SOURCES, cau_n, strict=True)},
            confidence={"scale_up": 1.0, "scale_out": 1.0 if scale_out else 0.0, "heterogeneity": 1.0,
                        "interference": 1.0},
            model_versions={"estimate-port": PORT_VERSION})


class EstimateClassifier:
    """`Classifier` of the baseline profiles until the classification engine replaces it."""

    SANCTIONED_TRUTH_READ: ClassVar[str] = "estimate-port"

    def __init__(self, source: EstimateSource) -> None:
        self._source = source

    def classify(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> Classified:
        return self._source.estimate(w.workload_id, ctx.seed)
