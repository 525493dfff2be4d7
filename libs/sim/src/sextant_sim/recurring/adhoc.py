"""Ad-hoc (non-periodic) load beside the recurring jobs (spec/morpheus.md §3.6, §5.4, §7).

`adhoc_load(seed, minutes, capacity)` is the ad-hoc demand in containers per minute: a diurnal
base (mean `mean_share` of capacity, busiest in the afternoon), AR(1) noise, and bursts (about
`bursts_per_day`, 30–120 min, each raising demand towards `peak_share`), clipped to
[0, peak_share · capacity] — up to 75 % of the cluster, as in the adversarial run of Fig. 12.
The demand is exogenous: ad-hoc work gets only opportunistic capacity (fair share of what the
guarantees leave), and what it does not get is not carried over.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

from ..arrivals import rng_for


def adhoc_load(seed: int, minutes: int, capacity: float, mean_share: float = 0.15, peak_share: float = 0.75,
               bursts_per_day: float = 3.0) -> np.ndarray:
    """Containers of ad-hoc demand in each of `minutes` minutes (module doc)."""
    if minutes < 0 or capacity < 0 or not 0 <= mean_share <= peak_share <= 1:
        raise ValueError("minutes and capacity must be >= 0 and 0 <= mean_share <= peak_share <= 1")
    rng = rng_for(seed, "recurring", "adhoc")
    t = np.arange(minutes)
    diurnal = mean_share * (1.0 + 0.5 * np.sin(2 * np.pi * (t / 1440.0 - 0.35)))
    noise = lfilter([1.0], [1.0, -0.98], rng.normal(0.0, 0.02, minutes))  # AR(1), 0.98 per minute
    level = diurnal + noise
    n_bursts = rng.poisson(bursts_per_day * minutes / 1440.0)
    starts = rng.integers(0, max(minutes, 1), n_bursts)
    lengths = rng.integers(30, 121, n_bursts)
    heights = rng.uniform(0.3, 1.0, n_bursts) * peak_share
    for s, ln, h in zip(starts, lengths, heights, strict=True):
        level[s:s + ln] = np.maximum(level[s:s + ln], h)
    return np.asarray(np.clip(level, 0.0, peak_share) * capacity)
