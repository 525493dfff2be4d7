"""Workloads of the fairness simulator: the LCG grid log (28 groups as VCs) and the spec's
synthetic six-VC month (spec `vc_fairness.md` §2.5), with the capacity rules for the log.

A workload is `Jobs`: arrays sorted by (submission, job number), one row per job. Work is in
server-seconds; `alone` is the job's run time with all the servers it can use.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

DAY = 86400.0
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Jobs:
    submit: FloatArray  # s from the workload's start, non-decreasing
    work: FloatArray  # server-seconds, > 0
    parallelism: IntArray  # servers the job can use at most, ≥ 1
    vc: IntArray  # row of the job's VC, 0..n_vcs-1
    n_vcs: int
    horizon: float  # the submission window (s), a whole number of days

    @property
    def alone(self) -> FloatArray:
        return self.work / self.parallelism

    @property
    def days(self) -> int:
        return int(round(self.horizon / DAY))


def _sorted(submit: FloatArray, work: FloatArray, par: IntArray, vc: IntArray, n: int, horizon: float) -> Jobs:
    order = np.lexsort((np.arange(submit.shape[0]), submit))
    return Jobs(submit[order], work[order], par[order].astype(np.int64), vc[order].astype(np.int64), n, horizon)


def load_lcg(path: Path, *, min_runtime_s: float = 1.0) -> tuple[Jobs, list[int]]:
    """The SWF log at `path` (gzip): one VC per group id (rows in increasing group id, returned),
    rigid one-processor jobs, work = run time (jobs with run time < `min_runtime_s` count
    `min_runtime_s`, a log artefact; none is dropped). Submission times shifted to start at 0."""
    rows: list[tuple[float, float, int]] = []
    with gzip.open(path, "rt") as f:
        for line in f:
            if not line.strip() or line.startswith(";"):
                continue
            p = line.split()
            rows.append((float(p[1]), float(p[3]), int(p[12])))
    a = np.array(rows, dtype=np.float64)
    groups = sorted({int(g) for g in a[:, 2]})
    row_of = {g: i for i, g in enumerate(groups)}
    submit = a[:, 0] - a[:, 0].min()
    work = np.maximum(a[:, 1], min_runtime_s)
    vc = np.array([row_of[int(g)] for g in a[:, 2]], dtype=np.int64)
    horizon = math.ceil((submit.max() + 1.0) / DAY) * DAY
    return _sorted(submit, work, np.ones(len(rows), dtype=np.int64), vc, len(groups), horizon), groups


def unconstrained_demand(jobs: Jobs, step_s: float = 60.0) -> FloatArray:
    """Per VC and per `step_s` of the submission window: servers its jobs would hold if every job
    started on submission with all its parallelism (rows VC, columns time), sampled at step ends."""
    edges = np.arange(0.0, jobs.horizon + step_s, step_s)
    out = np.zeros((jobs.n_vcs, edges.shape[0] - 1))
    end = jobs.submit + jobs.alone
    for i in range(jobs.n_vcs):
        m = jobs.vc == i
        up = np.searchsorted(np.sort(jobs.submit[m]), edges[1:], side="right")
        ends = np.sort(end[m])
        down = np.searchsorted(ends, edges[1:], side="right")
        # parallelism is 1 for rigid logs; weight by parallelism otherwise
        if np.all(jobs.parallelism[m] == 1):
            out[i] = up - down
        else:
            p = jobs.parallelism[m]
            cs = np.concatenate(([0], np.cumsum(p[np.argsort(jobs.submit[m], kind="stable")])))
            ce = np.concatenate(([0], np.cumsum(p[np.argsort(end[m], kind="stable")])))
            out[i] = cs[up] - ce[down]
    return out


def lcg_capacities(jobs: Jobs, rule: str = "mean", free_share: float = 0.3) -> tuple[IntArray, int]:
    """VC capacities and all servers of the cell for the log (capacities are not in it).

    `mean` (the issue's bars): each VC's mean unconstrained demand over the submission window,
    rounded up, at least 1. `p75`: the 75th percentile of that demand (capacities bought for
    busy hours). `equal`: the same total as `mean`, split equally. The system machines are
    `free_share` of the sum of capacities, rounded up: with 0.3 the cell is offered about
    1 / 1.3 ≈ 0.77 of its servers (the paper's 1 250 system machines are 31 % of its 4 000).
    """
    dem = unconstrained_demand(jobs)
    if rule == "mean":
        cap = np.maximum(np.ceil(dem.mean(axis=1)), 1).astype(np.int64)
    elif rule == "p75":
        cap = np.maximum(np.ceil(np.percentile(dem, 75, axis=1)), 1).astype(np.int64)
    elif rule == "equal":
        base = np.maximum(np.ceil(dem.mean(axis=1)), 1).sum()
        cap = np.full(jobs.n_vcs, max(1, math.ceil(base / jobs.n_vcs)), dtype=np.int64)
    else:
        raise ValueError(f"unknown capacity rule {rule!r}")
    total = int(cap.sum() + math.ceil(free_share * cap.sum()))
    return cap, total


SYNTHETIC_CAPACITIES = (900, 350, 500, 400, 350, 250)
SYNTHETIC_SYSTEM = 1250
# monthly loads: VC_c (900), VC_e (350), VC_d (500) about 1; VC_a (400), VC_b (350) under; VC_f (250) over
SYNTHETIC_LOADS = (1.0, 1.0, 1.0, 0.5, 0.6, 1.4)
# day-to-day burstiness (lognormal sigma of the daily load): the large VC is the bursty one
SYNTHETIC_DAILY_SIGMA = (0.8, 0.3, 0.5, 0.4, 0.4, 0.3)


@dataclass(frozen=True)
class SyntheticSpec:
    """The spec's set-up: capacities, system machines, monthly loads, daily burstiness, one month,
    no diurnal cycle; a day's load is lognormal (`daily_sigma`) clipped to `daily_max` times the
    month's (a day far beyond the whole cell is no question of sharing), then renormalised;
    hourly bursts (lognormal `hourly_sigma`) inside a day; heavy-tailed jobs:
    run time alone lognormal (median `runtime_median_s`, sigma `runtime_sigma`, 2 min – 12 h),
    parallelism lognormal around capacity / `par_div` (sigma 1, 1 … capacity)."""

    capacities: tuple[int, ...] = SYNTHETIC_CAPACITIES
    system: int = SYNTHETIC_SYSTEM
    loads: tuple[float, ...] = SYNTHETIC_LOADS
    daily_sigma: tuple[float, ...] = SYNTHETIC_DAILY_SIGMA
    days: int = 30
    daily_max: float = 2.5
    hourly_sigma: float = 0.5
    runtime_median_s: float = 1800.0
    runtime_sigma: float = 1.0
    par_div: float = 4.0


def _normalised_lognormal(rng: np.random.Generator, sigma: float, n: int, clip: float = np.inf) -> FloatArray:
    z = rng.lognormal(0.0, sigma, n) if sigma > 0 else np.ones(n)
    z = np.minimum(z / z.mean(), clip)
    return z / z.mean()


def synthetic(seed: int, spec: SyntheticSpec = SyntheticSpec()) -> tuple[Jobs, IntArray, int]:
    """One month of the six VCs for `seed` (one `SeedSequence` stream per VC): jobs, capacities,
    all servers. Each VC's month carries exactly its monthly load up to the last job's rounding."""
    caps = np.array(spec.capacities, dtype=np.int64)
    streams = np.random.SeedSequence([seed, 0x5FA1]).spawn(len(caps))
    subs, works, pars, vcs = [], [], [], []
    hours = spec.days * 24
    for i, (c, load, sig) in enumerate(zip(spec.capacities, spec.loads, spec.daily_sigma, strict=True)):
        rng = np.random.default_rng(streams[i])
        daily = _normalised_lognormal(rng, sig, spec.days, spec.daily_max) * load
        hourly = np.repeat(daily, 24) * _normalised_lognormal(rng, spec.hourly_sigma, hours)
        hour_work = hourly * c * 3600.0  # server-seconds submitted in each hour
        target = float(hour_work.sum())
        mean_job = spec.runtime_median_s * math.exp(spec.runtime_sigma**2 / 2) * max(1.0, c / spec.par_div)
        n = int(target / mean_job * 1.5) + 64
        rt = np.clip(rng.lognormal(math.log(spec.runtime_median_s), spec.runtime_sigma, n), 120.0, 43200.0)
        par = np.clip(np.rint(rng.lognormal(math.log(max(1.0, c / spec.par_div)), 1.0, n)), 1, c).astype(np.int64)
        work = rt * par
        cum = np.cumsum(work)
        k = int(np.searchsorted(cum, target, side="left")) + 1
        work, par = work[:k], par[:k]
        # place jobs in hours so that each hour's submitted work follows `hour_work`
        pos = (np.cumsum(work) - work / 2) / cum[k - 1] * target
        hour = np.minimum(np.searchsorted(np.cumsum(hour_work), pos, side="right"), hours - 1)
        sub = (hour + rng.random(k)) * 3600.0
        subs.append(sub)
        works.append(work)
        pars.append(par)
        vcs.append(np.full(k, i, dtype=np.int64))
    jobs = _sorted(np.concatenate(subs), np.concatenate(works), np.concatenate(pars), np.concatenate(vcs),
                   len(caps), spec.days * DAY)
    return jobs, caps, int(caps.sum() + spec.system)
