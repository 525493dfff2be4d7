"""Stage latency families of the Kwiken request simulator (fixed here so that no one tunes them).

Each stage (and each responder of a fan-out stage) draws its latency, in ms, from

- a lognormal with median `m` drawn log-uniformly in [1, 100] ms and shape σ uniform in [0.3, 1.2],
- mixed with a slow mode of probability `q` uniform in [0.5 %, 5 %]: the same lognormal with its
  median multiplied by `f` uniform in [5, 30],
- truncated at a stage timeout `τ` uniform in [20, 50] × `m`: a draw above `τ` returns at `τ`.

A reissue is an independent draw from the same distribution. A fan-out stage of `n` responders
answers when its slowest responder has (without partial answers), so its latency is the maximum of
`n` draws, sampled exactly by inverting `F(x)^n` on a fine grid (no `n`-wide matrix).

Periods: a service is trained on one period and tested on another; a period multiplies every
stage's median by `exp(N(0, DRIFT_MEDIAN))` and its slow-mode probability by
`exp(N(0, DRIFT_SLOW))` (mild day-to-day drift; the thesis tests on other days of the same week);
the stage timeout `τ` is configuration and does not drift.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import log_ndtr

MEDIAN_MS = (1.0, 100.0)
SIGMA = (0.3, 1.2)
SLOW_PROB = (0.005, 0.05)
SLOW_FACTOR = (5.0, 30.0)
TIMEOUT_FACTOR = (20.0, 50.0)
DRIFT_MEDIAN = 0.05
DRIFT_SLOW = 0.10


@dataclass(frozen=True)
class StageFamily:
    """One stage's latency law (ms) and its number of responders."""

    median: float
    sigma: float
    slow_prob: float
    slow_factor: float
    timeout: float
    responders: int = 1

    def mean(self) -> float:
        """The mean of one draw, ignoring truncation (used only for costs)."""
        ln = np.exp(self.sigma**2 / 2)
        return float(self.median * ln * ((1 - self.slow_prob) + self.slow_prob * self.slow_factor))

    def cost(self) -> float:
        """Per-request cost (§5.3): mean latency, summed over responders for a fan-out stage."""
        return self.mean() * self.responders


def draw_family(rng: np.random.Generator, responders: int = 1) -> StageFamily:
    m = float(np.exp(rng.uniform(*np.log(MEDIAN_MS))))
    return StageFamily(m, float(rng.uniform(*SIGMA)), float(rng.uniform(*SLOW_PROB)),
                       float(rng.uniform(*SLOW_FACTOR)), m * float(rng.uniform(*TIMEOUT_FACTOR)), responders)


def in_period(f: StageFamily, rng: np.random.Generator) -> StageFamily:
    """The family as seen in one period (drifted median and slow-mode probability)."""
    k = float(np.exp(rng.normal(0, DRIFT_MEDIAN)))
    q = min(0.2, f.slow_prob * float(np.exp(rng.normal(0, DRIFT_SLOW))))
    return replace(f, median=f.median * k, slow_prob=q)  # the stage timeout is configuration: it stays


def draw(f: StageFamily, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Independent single draws (one responder each)."""
    z = rng.standard_normal(size)
    slow = rng.random(size) < f.slow_prob
    x = f.median * np.exp(f.sigma * z) * np.where(slow, f.slow_factor, 1.0)
    return np.minimum(x, f.timeout)


def _log_survival(f: StageFamily, x: np.ndarray) -> np.ndarray:
    lx = np.log(x)
    a = np.log1p(-f.slow_prob) + log_ndtr(-(lx - np.log(f.median)) / f.sigma)
    b = np.log(f.slow_prob) + log_ndtr(-(lx - np.log(f.median * f.slow_factor)) / f.sigma)
    return np.logaddexp(a, b)


def draw_stage(f: StageFamily, size: int, rng: np.random.Generator) -> np.ndarray:
    """Stage latencies: one draw, or the maximum of `responders` draws for a fan-out stage."""
    if f.responders == 1:
        return draw(f, size, rng)
    u = rng.random(size)
    # max of n draws ≤ x  ⇔  F(x)^n ≥ u  ⇔  S(x) ≤ 1 − u^(1/n)
    return at_log_survival(f, np.log(-np.expm1(np.log(u) / f.responders)))


def at_log_survival(f: StageFamily, target: np.ndarray) -> np.ndarray:
    """The latency `x` of one draw with `log S(x) = target` (the inverse survival function on a
    fine grid; the stage timeout where the survival is below the grid's last value)."""
    xs = np.geomspace(f.median * 1e-3, f.timeout, 4000)
    ls = _log_survival(f, xs)  # decreasing in x
    out = np.interp(-target, -ls, xs)  # x with log S(x) = target
    return np.where(target < ls[-1], f.timeout, out)
