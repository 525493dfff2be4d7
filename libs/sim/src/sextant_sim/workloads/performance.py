"""The latent performance model across platforms (Paragon spec §8 item 2; Quasar spec §8.2).

    log speed(w, p) = Σ_k a_wk · log(x_pk / x_ref,k) + ε_wp        (then normalised: max_p = 1)

with concepts k = compute (GHz × IPC), cache (LLC MiB, capped), memory bandwidth (capped), disk and
network bandwidth, workload sensitivities a_wk ≥ 0 drawn per family, ε_wp ~ N(0, σ) idiosyncratic,
and rare multiplicative pathologies (Quasar §3.4: "TCP incast on one platform") that no low-rank
model can predict. The matrix of log speeds is therefore rank ≤ 5 plus noise — the structure
collaborative filtering exploits, with errors it cannot remove.
"""

from __future__ import annotations

import numpy as np

from ..groundtruth import GroundTruth
from ..platforms import Catalogue


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


def draw_speeds(sens: np.ndarray, concepts: np.ndarray, gt: GroundTruth,
                rng: np.random.Generator) -> np.ndarray:
    """Per-platform per-core speed relative to the fastest platform (max exactly 1.0)."""
    perf = gt.performance
    log_speed = concepts @ sens + rng.normal(0.0, perf.noise_sigma, size=concepts.shape[0])
    hit = rng.random(concepts.shape[0]) < perf.pathology_rate
    factor = rng.uniform(*perf.pathology_factor, size=concepts.shape[0])
    speed = np.exp(log_speed) * np.where(hit, factor, 1.0)
    return speed / speed.max()
