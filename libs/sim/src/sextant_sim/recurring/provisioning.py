"""The user's static provisioning of periodic jobs (Morpheus Fig. 2a; spec/morpheus.md §5.1, §7).

Each template gets a static allocation in containers, `ratio × peak` with `peak` its nominal
peak parallelism. The classes are assigned by an exact count (a seeded permutation), so the
shares hold for any number of templates up to rounding:

- 20 % over-provisioned more than 10× (ratio 10–30, log-uniform);
- 55 % over-provisioned 1.2–10× (log-uniform), so 75 % are over-provisioned at their peak;
- 10 % provisioned at 0.8–1.0 of their peak;
- 15 % under-provisioned at their peak by 1.5–3× (ratio 1/3–1/1.5) — "large under-provisioned
  jobs" that lean on fair share.

[choice] "20 % over 10×" is read as 20 % of all periodic jobs (the issue's wording); the paper's
"20 % of them" could mean of the over-provisioned ones (15 % of all).

Changes over the month: `changed_share` (15 %, so > 80 % unchanged) of templates get a new
allocation from a random day (× 0.5–2). `allocation(wl, instances)` is what each instance runs with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrivals import rng_for
from .workload import DAY_S, Workload

CLASSES: tuple[tuple[str, float, float, float], ...] = (  # name, share, ratio low, ratio high
    ("over_10x", 0.20, 10.0, 30.0),
    ("over", 0.55, 1.2, 10.0),
    ("near", 0.10, 0.8, 1.0),
    ("under", 0.15, 1.0 / 3.0, 1.0 / 1.5),
)


@dataclass(frozen=True)
class UserProvisioning:
    """Per template: containers before and after `change_day` (nan = never changes)."""

    containers: np.ndarray
    changed_to: np.ndarray
    change_day: np.ndarray
    klass: np.ndarray  # index into CLASSES

    def allocation(self, template: np.ndarray, submit_s: np.ndarray) -> np.ndarray:
        """Containers the user gave each instance (template, submit time)."""
        after = submit_s / DAY_S >= np.nan_to_num(self.change_day, nan=np.inf)[template]
        return np.asarray(np.where(after, self.changed_to[template], self.containers[template]))


def user_provisioning(wl: Workload, changed_share: float = 0.15) -> UserProvisioning:
    """The user baseline of `wl` (module doc), drawn from its own seeded stream."""
    rng = rng_for(wl.seed, "recurring", "provisioning")
    t = wl.templates.count
    shares = np.array([c[1] for c in CLASSES])
    counts = np.floor(shares * t).astype(int)
    counts[np.argsort(-shares, kind="stable")[: t - counts.sum()]] += 1
    klass = rng.permutation(np.repeat(np.arange(len(CLASSES)), counts))
    lo = np.array([c[2] for c in CLASSES])[klass]
    hi = np.array([c[3] for c in CLASSES])[klass]
    ratio = np.exp(rng.uniform(np.log(lo), np.log(hi)))
    peak = wl.templates.peak
    containers = np.maximum(np.floor(ratio * peak), 1.0)
    changed = rng.permutation(t) < round(changed_share * t)
    change_day = np.where(changed, rng.uniform(1.0, wl.params.days - 1.0, t), np.nan)
    changed_to = np.where(changed, np.maximum(np.round(containers * np.exp(rng.uniform(np.log(0.5), np.log(2.0), t))),
                                              1.0), containers)
    changed_to = np.where(changed & (changed_to == containers), containers + 1, changed_to)
    return UserProvisioning(containers, changed_to, change_day, klass)
