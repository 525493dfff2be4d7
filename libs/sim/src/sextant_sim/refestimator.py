"""The reference estimator: the classification floor of the twin (docs/classification/reference.md).

A yardstick for `bench/classification.py`, never a policy. It knows what no classifier knows —
the twin's own prior over workloads (its generator, `workloads.generate`, and the catalogue) and
the profiler's noise model — and sees what the engine sees: the same noisy profiling entries of
one workload. Its error is what the best classifier could reach from those entries; the engine's
error is reported beside it (issue "decision quality", acceptance row "v4, 2 entries per row").

Method (Monte-Carlo posterior, exact as `draws` → ∞):

1. **prior** — `draws` workloads drawn by the twin's generator from the given families, round-robin
   (draw j is of family ``families[j % len(families)]``, stream ``rng_for(seed, stream, family, j)``:
   the same distribution as the workloads under test, fresh seeds); each draw's noise-free run
   values come from the twin's `Profiler` (`performance`, `interference`);
2. **likelihood** of the measured entries under each draw, with the profiler's noise model:
   performance ``m = t · exp(σ ε)``, σ = `noise.perf_sd` × noise scale (log-normal; a measured 0
   needs a true 0); scores ``m = clip(t + sd(t) ε, 0, 100)`` with sd(t) of `score_noise_sd`
   (normal, censored at 0 and 100);
3. **self-normalised importance weights** w_i ∝ likelihood_i (`posterior`), with the effective
   sample size ESS = 1 / Σ w_i² (how many prior draws the estimate effectively rests on: small
   ESS = the floor is not converged, raise `draws`);
4. **point estimates** of hidden cells minimising the benchmark's own error under the posterior:
   for a relative error |e/t − 1| the minimiser of Σ w_i |e − t_i| / t_i is the weighted median of
   t_i with weights w_i / t_i (`Posterior.relative`; cells whose truth is 0 are not scored, so
   draws with t_i = 0 drop out); for an absolute error (interference points) the weighted median
   (`Posterior.median`). The weighted mean (`Posterior.mean`) minimises a squared error.

`posterior` and `Posterior` are general (any log-likelihood vector over prior draws);
`ReferenceEstimator` binds them to the twin. It reads the ground truth's generator: a sanctioned
reader (`SANCTIONED_TRUTH_READ`), imported by benchmarks and by `refrows` (the reference rows, itself
a sanctioned yardstick) only — no policy uses it (`tests/architecture/test_no_peeking.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr
from sextant_contracts.events import ProfileRun
from sextant_contracts.model import Classification

from . import seeding
from .groundtruth import SOURCES
from .profiler import score_noise_sd
from .setup import Setup
from .workloads.base import WorkloadTruth

# a yardstick that reads the twin's prior and profiler (test_no_peeking): benchmarks only
SANCTIONED_TRUTH_READ = "reference-estimator"

Observation = tuple[ProfileRun, float, "float | None"]  # (run, measured value, measured caused score)


@dataclass(frozen=True, slots=True)
class Posterior:
    """Normalised importance weights over the prior draws (Σ weights = 1) and their ESS."""

    weights: np.ndarray
    ess: float

    def mean(self, values: np.ndarray) -> float:
        """Posterior mean of `values` (one per draw): minimises the expected squared error."""
        return float(self.weights @ values)

    def median(self, values: np.ndarray) -> float:
        """Posterior median of `values`: minimises the expected absolute error."""
        return weighted_median(values, self.weights)

    def relative(self, values: np.ndarray) -> float:
        """Minimiser of the expected relative error |e/t − 1| over draws with t > 0: the median
        of t under weights w/t. NaN when no weighted draw has t > 0."""
        pos = values > 0
        w = np.where(pos, self.weights / np.where(pos, values, 1.0), 0.0)
        return weighted_median(values, w) if w.sum() > 0 else math.nan


def entries(obs: Sequence[Observation]) -> dict[str, list[Observation]]:
    """The measured entries each classification's row gets (`classification.observations.cells`):
    scale-up, its runs; heterogeneity, the reference run (the first scale-up run) and the
    heterogeneity runs; scale-out, the reference run (``n1``) and the scale-out runs;
    interference, the ramps (tolerated and caused score of each)."""
    by = {c: [o for o in obs if o[0].classification is c] for c in Classification}
    ref = by[Classification.SCALE_UP][:1]
    return {"scale_up": by[Classification.SCALE_UP], "heterogeneity": ref + by[Classification.HETEROGENEITY],
            "scale_out": ref + by[Classification.SCALE_OUT], "interference": by[Classification.INTERFERENCE]}


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The smallest value whose cumulative weight reaches half the total (a minimiser of
    Σ w_i |e − v_i|). `weights` ≥ 0 with a positive sum."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    k = int(np.searchsorted(cum, 0.5 * cum[-1], side="left"))
    return float(values[order][min(k, len(values) - 1)])


def posterior(loglik: np.ndarray) -> Posterior:
    """Self-normalised importance weights from per-draw log-likelihoods (−inf allowed). A vector
    that is −inf everywhere (no draw explains the data) gives uniform weights and ESS 0."""
    finite = np.isfinite(loglik)
    if not finite.any():
        return Posterior(np.full(len(loglik), 1.0 / len(loglik)), 0.0)
    w = np.where(finite, np.exp(loglik - loglik[finite].max()), 0.0)
    w /= w.sum()
    return Posterior(w, float(1.0 / np.sum(w * w)))


def lognormal_loglik(true: np.ndarray, measured: float, sd: float) -> np.ndarray:
    """log p(measured | true) for measured = true · exp(sd ε), up to a constant; a measured 0
    is explained only by a true 0 (the profiler clips at 0), and a true 0 explains only a 0."""
    if measured <= 0:
        return np.where(true <= 0, 0.0, -np.inf)
    with np.errstate(divide="ignore"):
        z = (math.log(measured) - np.log(np.where(true > 0, true, 1.0))) / sd
    return np.where(true > 0, -0.5 * z * z, -np.inf)


def censored_normal_loglik(true: np.ndarray, sd: np.ndarray, measured: float, lo: float = 0.0,
                           hi: float = 100.0) -> np.ndarray:
    """log p(measured | true) for measured = clip(true + sd ε, lo, hi): the normal density inside,
    the tail mass at a bound."""
    sd = np.maximum(sd, 1e-9)
    if measured <= lo:
        return log_ndtr((lo - true) / sd)
    if measured >= hi:
        return log_ndtr((true - hi) / sd)
    z = (measured - true) / sd
    return -0.5 * z * z - np.log(sd)


class ReferenceEstimator:
    """The Monte-Carlo posterior over `draws` prior workloads of `families` in `setup`'s world."""

    def __init__(self, setup: Setup, families: Sequence[str], draws: int, stream: str = "reference",
                 prior: Sequence[WorkloadTruth] | None = None) -> None:
        """`prior`: the draws themselves (e.g. `refrows.prior_draws`: the scenario's own mix)
        instead of `draws` round-robin draws of `families`."""
        if not families or draws < 1 or (prior is not None and len(prior) != draws):
            raise ValueError("need at least one family and one draw (and `draws` prior draws when given)")
        self.setup = setup
        self.families = tuple(families)
        self.draws = draws
        self.prior: tuple[WorkloadTruth, ...] = tuple(prior) if prior is not None else tuple(
            seeding.draw(setup, self.families[j % len(self.families)], j, stream=stream) for j in range(draws))
        self._perf: dict[tuple[int, int, int], np.ndarray] = {}
        self._scores: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._perf_sd = setup.gt.noise.perf_sd * setup.profiler.noise_scale

    def performance(self, platform: str, cores: int, nodes: int) -> np.ndarray:
        """(draws,) noise-free value of a run on `platform` with `cores` per node on `nodes`."""
        key = (self.setup.cat.index(platform), cores, nodes)
        hit = self._perf.get(key)
        if hit is None:
            prof = self.setup.profiler
            hit = np.array([prof.performance(t, key[0], cores, nodes) for t in self.prior])
            self._perf[key] = hit
        return hit

    def scores(self, platform: str) -> tuple[np.ndarray, np.ndarray]:
        """(draws, 10) noise-free tolerated and caused scores of a ramp on `platform`."""
        i = self.setup.cat.index(platform)
        hit = self._scores.get(i)
        if hit is None:
            pairs = [self.setup.profiler.interference(t, i) for t in self.prior]
            hit = (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))
            self._scores[i] = hit
        return hit

    def loglik(self, observations: Sequence[Observation]) -> np.ndarray:
        """(draws,) log-likelihood of the measured entries (independent noise per run)."""
        out = np.zeros(self.draws)
        gt, scale = self.setup.gt, self.setup.profiler.noise_scale
        for run, value, caused in observations:
            if run.classification is Classification.INTERFERENCE:
                k = SOURCES.index(run.column)
                tol, cau = self.scores(run.platform)
                out += censored_normal_loglik(tol[:, k], score_noise_sd(gt, tol, scale)[:, k], value)
                if caused is not None:
                    out += censored_normal_loglik(cau[:, k], score_noise_sd(gt, cau, scale)[:, k], caused)
            else:
                out += lognormal_loglik(self.performance(run.platform, run.cores, run.nodes), value, self._perf_sd)
        return out

    def posterior(self, observations: Sequence[Observation]) -> Posterior:
        return posterior(self.loglik(observations))
