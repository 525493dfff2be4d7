"""Interference ground truth over the 10 sources of Paragon Table II — richer than any policy's view.

The per-workload caused and tolerated levels are drawn in `workloads/generate.py` (v4: from latent
resource demands shared across sources; v3: independently per source). Inputs per server: the
residents' caused pressures `C` (n × 10, reference-intensity units already
divided by the platform's capacity scale, so a low-end server feels the same co-runner more), their
tolerated scores `T` (n × 10) and the core occupancy of the server. Output: each resident's speed
factor in (0, 1] (1 = no interference). Three models, selectable per scenario (`interference_model`):

- `graded` (default): pressure combines per source class — capacity sources add footprints;
  bandwidth sources add utilisation and queueing amplifies it near saturation
  (× (1 + κ U/(1−U))); private per-core sources (L1-i, L1-d, TLB, core) combine as an L_q norm (the
  heaviest co-runner dominates) and are felt in proportion to core sharing: a base share, growing
  linearly to 1 as the server's occupancy goes from the knee (hyperthread siblings start being
  shared) to full.
  Slowdown per source is 0.05·(P/τ)^α: exactly 5 % at the tolerated score (Paragon §2.3's
  definition), already non-zero below it, steep above it. Sources combine multiplicatively.
- `threshold`: the world as Paragon's filter imagines it — pressures add, nothing happens below τ,
  5 % at τ, then linear growth. The easy world, for sensitivity studies.
- `logistic`: pressures combine as a probabilistic union 100·(1 − Π(1 − c/100)) (strongly
  sub-additive) and slowdown is a logistic curve through 5 % at τ.

Every model caps a source's slowdown at `max_slowdown`. A microbenchmark of intensity I on one
source is a pure-pressure co-runner (its intensity is already relative to the platform, Table II:
"from minimal to the maximum achieved for a given platform"); `tolerated_scores` ramps it to find
the 5 % point, `caused_scores` reports the pressure a probe feels next to the workload (oriented so
that higher = more pressure, Paragon spec §9 item 3).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np

from .groundtruth import SOURCES, GroundTruth
from .platforms import Catalogue

QOS_SLOWDOWN = 0.05


def _bcast(x: float | np.ndarray, ndim: int) -> float | np.ndarray:
    """A per-server value (scalar, or (batch,) for a batch of servers) shaped to broadcast
    against (..., residents, sources)."""
    if np.ndim(x) == 0:
        return x
    return np.reshape(x, np.shape(x) + (1,) * (ndim - np.ndim(x)))


class InterferenceModel(Protocol):
    name: str

    def factors(self, c: np.ndarray, t: np.ndarray, occupancy: float | np.ndarray) -> np.ndarray:
        """Speed factor per resident from caused and tolerated, shape (n, 10) → (n,), or a batch
        of servers (b, n, 10) → (b, n) with `occupancy` of shape (b,). Padding rows with caused 0
        are neutral (they add no pressure)."""
        ...

    def single_source(self, intensity: np.ndarray, own: np.ndarray, t: np.ndarray,
                      occupancy: float) -> np.ndarray:
        """Slowdown (10,) of a workload next to one microbenchmark per source at `intensity` (10,)."""
        ...

    def probe(self, own: np.ndarray, occupancy: float) -> np.ndarray:
        """Pressure (10,) a neutral probe feels next to the workload alone."""
        ...


class _Base:
    name = ""

    def __init__(self, gt: GroundTruth) -> None:
        p = gt.interference
        cls = [p.classes[s] for s in SOURCES]
        self.cap = np.array([c == "capacity" for c in cls])
        self.bw = np.array([c == "bandwidth" for c in cls])
        self.priv = np.array([c == "private" for c in cls])
        self.alpha = np.array([p.alpha[c] for c in cls])
        self.kappa = p.bandwidth_kappa
        self.q = p.private_q
        self.share_base = p.private_sharing["base"]
        self.share_knee = p.private_sharing["knee"]
        self.max_s = p.max_slowdown
        self.beta = p.threshold_beta
        self.width = p.logistic_width
        self.u_max = p.bandwidth_saturation
        self.floor = p.min_factor

    def _share(self, occupancy: float | np.ndarray) -> float | np.ndarray:
        shared = np.clip((np.asarray(occupancy) - self.share_knee) / (1.0 - self.share_knee), 0.0, 1.0)
        return self.share_base + (1.0 - self.share_base) * shared

    def _amplify(self, utilisation: np.ndarray | float) -> np.ndarray | float:
        u = np.minimum(utilisation, self.u_max)
        return 1.0 + self.kappa * u / (1.0 - u)


class Graded(_Base):
    name = "graded"

    def _slowdown(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        return np.minimum(QOS_SLOWDOWN * (p / t) ** self.alpha, self.max_s)

    def factors(self, c: np.ndarray, t: np.ndarray, occupancy: float | np.ndarray) -> np.ndarray:
        total = c.sum(axis=-2, keepdims=True)
        others = total - c
        amp = self._amplify(total / 100.0)
        cq = c ** self.q
        share = _bcast(self._share(occupancy), c.ndim)
        priv = np.maximum(cq.sum(axis=-2, keepdims=True) - cq, 0.0) ** (1.0 / self.q) * share
        p = np.where(self.cap, others, np.where(self.bw, others * amp, priv))
        return np.maximum(np.prod(1.0 - self._slowdown(p, t), axis=-1), self.floor)

    def single_source(self, intensity: np.ndarray, own: np.ndarray, t: np.ndarray,
                      occupancy: float) -> np.ndarray:
        amp = self._amplify((own + intensity) / 100.0)
        p = np.where(self.bw, intensity * amp, np.where(self.priv, intensity * self._share(occupancy),
                                                        intensity))
        return self._slowdown(p, t)

    def probe(self, own: np.ndarray, occupancy: float) -> np.ndarray:
        amp = self._amplify(own / 100.0)
        return np.where(self.bw, own * amp, np.where(self.priv, own * self._share(occupancy), own))


class Threshold(_Base):
    name = "threshold"

    def _slowdown(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        s = np.where(p > t, QOS_SLOWDOWN + self.beta * (p - t) / 100.0, 0.0)
        return np.minimum(s, self.max_s)

    def factors(self, c: np.ndarray, t: np.ndarray, occupancy: float | np.ndarray) -> np.ndarray:
        others = c.sum(axis=-2, keepdims=True) - c
        return np.maximum(np.prod(1.0 - self._slowdown(others, t), axis=-1), self.floor)

    def single_source(self, intensity: np.ndarray, own: np.ndarray, t: np.ndarray,
                      occupancy: float) -> np.ndarray:
        # at exactly p == t the slowdown is still 0; the ramp reports the first intensity past it
        return self._slowdown(intensity, t)

    def probe(self, own: np.ndarray, occupancy: float) -> np.ndarray:
        return own.copy()


class Logistic(_Base):
    name = "logistic"

    def __init__(self, gt: GroundTruth) -> None:
        super().__init__(gt)
        self.offset = math.log((QOS_SLOWDOWN / self.max_s) / (1.0 - QOS_SLOWDOWN / self.max_s))

    def _raw(self, p: np.ndarray | float, t: np.ndarray) -> np.ndarray:
        x = (p / t - 1.0) / self.width + self.offset
        return self.max_s / (1.0 + np.exp(-x))

    def _slowdown(self, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        # minus the value at zero pressure, so a workload alone runs at full speed
        return np.maximum(self._raw(p, t) - self._raw(0.0, t), 0.0)

    def factors(self, c: np.ndarray, t: np.ndarray, occupancy: float | np.ndarray) -> np.ndarray:
        log_free = np.log1p(-np.clip(c / 100.0, 0.0, 0.999))
        p = 100.0 * (1.0 - np.exp(log_free.sum(axis=-2, keepdims=True) - log_free))
        return np.maximum(np.prod(1.0 - self._slowdown(p, t), axis=-1), self.floor)

    def single_source(self, intensity: np.ndarray, own: np.ndarray, t: np.ndarray,
                      occupancy: float) -> np.ndarray:
        return self._slowdown(intensity, t)

    def probe(self, own: np.ndarray, occupancy: float) -> np.ndarray:
        return own.copy()


MODELS: dict[str, Callable[[GroundTruth], InterferenceModel]] = {
    m.name: m for m in (Graded, Threshold, Logistic)}


def model(name: str, gt: GroundTruth) -> InterferenceModel:
    try:
        return MODELS[name](gt)
    except KeyError:
        raise KeyError(f"unknown interference model {name!r}; known: {', '.join(sorted(MODELS))}") from None


def pressure_scale(cat: Catalogue, gt: GroundTruth) -> np.ndarray:
    """(platforms × 10) divisors: the fraction of the reference platform's resource each platform
    has, raised to the source's gamma (1.0 on the reference platform)."""
    ref = cat.reference()
    p = gt.interference
    rows = []
    for plat in cat.platforms:
        row = []
        for s in SOURCES:
            res = p.platform_resource[s]
            if res == "none":
                row.append(1.0)
            else:
                ratio = float(getattr(plat, res)) / float(getattr(ref, res))
                row.append(ratio ** p.platform_gamma[s])
        rows.append(row)
    return np.asarray(rows, dtype=float)


def tolerated_scores(m: InterferenceModel, own: np.ndarray, t: np.ndarray, occupancy: float,
                     iterations: int = 22) -> np.ndarray:
    """Microbenchmark intensity (10,) at which the workload first slows by 5 % (100 if never),
    by vectorised bisection over all sources at once."""
    lo = np.zeros(len(SOURCES))
    hi = np.full(len(SOURCES), 100.0)
    never = m.single_source(hi, own, t, occupancy) < QOS_SLOWDOWN
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        hit = m.single_source(mid, own, t, occupancy) >= QOS_SLOWDOWN
        hi = np.where(hit, mid, hi)
        lo = np.where(hit, lo, mid)
    return np.where(never, 100.0, hi)


def caused_scores(m: InterferenceModel, own: np.ndarray, occupancy: float) -> np.ndarray:
    return np.clip(m.probe(own, occupancy), 0.0, 100.0)
