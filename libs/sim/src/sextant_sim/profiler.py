"""Profiling in the twin: what a short sandboxed run, or a microbenchmark ramp, measures.

Part of the world (the cluster agent's side), not a policy. A run of `ProfileRun` returns:

- scale-up / heterogeneity / scale-out runs: the workload's performance on that configuration,
  in its own units — relative instructions/s for single-node jobs (1e9 = alone on its best
  platform with all its threads), relative task throughput for analytics jobs (1e9 = its reference
  allocation), the highest QPS within the latency bound for services — times log-normal noise
  (sd `noise.perf_sd` × scenario noise scale);
- interference runs (Paragon §2.3, Table II): a tunable-intensity microbenchmark on one source of
  the run's platform ramped until the workload slows by 5 % → tolerated score; the pressure a probe
  feels next to the workload → caused score (higher = more pressure); both plus the Table III
  noise of `score_noise_sd`.

Profiling runs execute on dedicated sandbox servers of the named platform, outside the cluster's
capacity [IMPL CHOICE for Paragon spec §9 item 17], so they never interfere with placed workloads;
the runs of one plan execute in parallel and the plan takes as long as its longest run.
Noise comes from `seed_from(seed, workload, "profile", run_id)`: the same run of the same workload
measures the same value under every profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sextant_contracts.events import ProfileRun
from sextant_contracts.model import Classification

from .arrivals import IDEAL_IPS, rng_for
from .groundtruth import SOURCES, GroundTruth
from .interference import InterferenceModel, caused_scores, tolerated_scores
from .platforms import Catalogue
from .workloads.base import WorkloadTruth
from .workloads.service import max_qps_at_bound


def score_noise_sd(gt: GroundTruth, values: np.ndarray, noise_scale: float) -> np.ndarray:
    """Table III noise sd per source for true scores `values` (10,)."""
    n = gt.noise
    lf = n.level_factor
    level = np.where(values < 30, lf["below_30"], np.where(values < 60, lf["below_60"], lf["above_60"]))
    src = np.array([n.source_factor[s] for s in SOURCES])
    return n.score_sd * src * level * noise_scale


PINNED = 1.0  # occupancy seen by a microbenchmark pinned next to the workload


@dataclass(frozen=True, slots=True)
class Measurement:
    value: float
    caused: float | None = None


class Profiler:
    def __init__(self, cat: Catalogue, gt: GroundTruth, model: InterferenceModel, scale: np.ndarray,
                 seed: int, noise_scale: float) -> None:
        self.cat = cat
        self.gt = gt
        self.model = model
        self.scale = scale
        self.seed = seed
        self.noise_scale = noise_scale
        self._pidx = {p.platform_id: i for i, p in enumerate(cat.platforms)}
        self._cache: dict[tuple[str, int, int], tuple[np.ndarray, np.ndarray]] = {}

    # --- noise-free truth of what a run measures --------------------------------------------------

    def performance(self, t: WorkloadTruth, platform: int, cores: int, nodes: int, speed_factor: float = 1.0) -> float:
        p = self.cat.platforms[platform]
        c = max(1, min(cores, p.cores))
        s = float(t.speed[platform]) * speed_factor
        if t.service is not None:
            sv = t.service
            mu = sv.qps_per_core * s * t.scale_up(c) * sv.node_efficiency(nodes)
            return nodes * max_qps_at_bound(mu, sv.base_latency_ms, sv.latency_bound_ms)
        if t.analytics is not None:
            an = t.analytics
            agg = nodes * s * t.scale_up(c) * an.efficiency(nodes)
            ref = an.reference_nodes * t.scale_up(t.threads) * an.efficiency(an.reference_nodes)
            return IDEAL_IPS * agg / ref
        ideal = max(float(t.speed[i]) for i, q in enumerate(self.cat.platforms) if q.cores >= t.threads) \
            if any(q.cores >= t.threads for q in self.cat.platforms) else float(t.speed.max())
        return IDEAL_IPS * s / ideal * t.scale_up(c) / t.scale_up(t.threads)

    def interference(self, t: WorkloadTruth, platform: int, phase: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(tolerated, caused) scores (10,) measured alone on `platform` in `phase`, noise-free."""
        key = (t.ref, platform, phase)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        ph = t.phases[phase] if t.phases else None
        caused = t.caused * (ph.caused if ph is not None else 1.0)
        tol = t.tolerated * (ph.tolerated if ph is not None else 1.0)
        if t.service is not None:
            caused = caused * 1.0  # measured at peak load
        own = caused / self.scale[platform]
        # microbenchmarks of per-core structures are pinned to the workload's cores (iBench), so
        # the ramp sees full core sharing whatever the server's occupancy
        out = (tolerated_scores(self.model, own, tol, PINNED), caused_scores(self.model, own, PINNED))
        self._cache[key] = out
        return out

    # --- a noisy run ---------------------------------------------------------------------------

    def measure(self, workload_id: str, t: WorkloadTruth, run: ProfileRun, phase: int = 0) -> Measurement:
        rng = rng_for(self.seed, workload_id, "profile", run.run_id)
        platform = self._pidx.get(run.platform, self.cat.index(self.cat.reference().platform_id))
        if run.classification == Classification.INTERFERENCE:
            k = SOURCES.index(run.column) if run.column in SOURCES else 0
            tol, caused = self.interference(t, platform, phase)
            sd_t = score_noise_sd(self.gt, tol, self.noise_scale)[k]
            sd_c = score_noise_sd(self.gt, caused, self.noise_scale)[k]
            e = rng.normal(size=2)
            return Measurement(value=float(np.clip(tol[k] + sd_t * e[0], 0.0, 100.0)),
                               caused=float(np.clip(caused[k] + sd_c * e[1], 0.0, 100.0)))
        speed = t.phases[phase].speed if t.phases else 1.0
        true = self.performance(t, platform, run.cores, run.nodes, speed)
        noise = math.exp(float(rng.normal()) * self.gt.noise.perf_sd * self.noise_scale)
        return Measurement(value=max(true * noise, 0.0))
