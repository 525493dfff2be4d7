"""Metrics of performance (in)consistency between VCs (spec §2.4 with the definitions of the
fairness benchmark, bench/fairness.py).

- job stretch = (completion − submission) / max(run time alone, 60 s) — bounded slowdown (the LCG
  jobs use one processor, so the paper's "size / VC capacity" form would only measure capacity);
  `paper_stretch` = (completion − submission) / (work / VC capacity), the paper's form, for the
  malleable synthetic set-up.
- VC stretch = mean job stretch of the VC's jobs; the all-jobs mean is work-weighted.
- load = the VC's work / (capacity × window); daily load counts a job's work on its submission day.
- similar-load VCs: ≥ `min_jobs` jobs, load ≥ 0.5, |ln(load_i / load_j)| ≤ 0.2; the largest
  max/min VC-stretch ratio over those pairs and the CV of VC stretch over the VCs in a pair.
- overload-day stretch of a VC: mean stretch of its jobs submitted on days of daily load > 1.
- the large bursty VC: the largest-capacity VC with daily load > 1 on at least two days (ties:
  lower row). The small comparator: the smallest-capacity other VC with an overload day.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from .engine import SimResult
from .workloads import DAY, FloatArray, IntArray, Jobs


def job_stretch(jobs: Jobs, res: SimResult) -> FloatArray:
    return (res.done - jobs.submit) / np.maximum(jobs.alone, 60.0)


def paper_stretch(jobs: Jobs, res: SimResult, capacity: IntArray) -> FloatArray:
    return (res.done - jobs.submit) / (jobs.work / np.maximum(capacity[jobs.vc], 1))


def loads(jobs: Jobs, capacity: IntArray) -> FloatArray:
    work = np.bincount(jobs.vc, weights=jobs.work, minlength=jobs.n_vcs)
    return work / (np.maximum(capacity, 1) * jobs.horizon)


def daily_loads(jobs: Jobs, capacity: IntArray) -> FloatArray:
    """Rows VC, columns day of the submission window."""
    day = np.minimum((jobs.submit // DAY).astype(np.int64), jobs.days - 1)
    w = np.zeros((jobs.n_vcs, jobs.days))
    np.add.at(w, (jobs.vc, day), jobs.work)
    return w / (np.maximum(capacity, 1)[:, None] * DAY)


def daily_stretch(jobs: Jobs, stretch: FloatArray) -> FloatArray:
    """Mean job stretch by VC and submission day (NaN where a VC submitted nothing)."""
    day = np.minimum((jobs.submit // DAY).astype(np.int64), jobs.days - 1)
    s = np.zeros((jobs.n_vcs, jobs.days))
    k = np.zeros((jobs.n_vcs, jobs.days))
    np.add.at(s, (jobs.vc, day), stretch)
    np.add.at(k, (jobs.vc, day), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / k


def vc_stretch(jobs: Jobs, stretch: FloatArray) -> FloatArray:
    k = np.bincount(jobs.vc, minlength=jobs.n_vcs)
    return np.bincount(jobs.vc, weights=stretch, minlength=jobs.n_vcs) / np.maximum(k, 1)


@dataclass(frozen=True)
class Subjects:
    """Which VCs the comparisons are about, fixed by the workload (not by a policy's outcome)."""

    pairs: list[tuple[int, int]]
    large: int  # −1 when no VC qualifies
    small: int
    overload_days: np.ndarray  # bool, rows VC, columns day


def subjects(jobs: Jobs, capacity: IntArray, min_jobs: int = 500) -> Subjects:
    ld = loads(jobs, capacity)
    counts = np.bincount(jobs.vc, minlength=jobs.n_vcs)
    ok = [i for i in range(jobs.n_vcs) if counts[i] >= min_jobs and ld[i] >= 0.5]
    pairs = [(i, j) for a, i in enumerate(ok) for j in ok[a + 1:] if abs(math.log(ld[i] / ld[j])) <= 0.2]
    over = daily_loads(jobs, capacity) > 1.0
    bursty = [i for i in range(jobs.n_vcs) if over[i].sum() >= 2]
    large = min(bursty, key=lambda i: (-int(capacity[i]), i)) if bursty else -1
    others = [i for i in range(jobs.n_vcs) if i != large and over[i].any() and counts[i] >= min(min_jobs, 100)]
    small = min(others, key=lambda i: (int(capacity[i]), i)) if others else -1
    return Subjects(pairs, large, small, over)


def overload_stretch(jobs: Jobs, stretch: FloatArray, over: np.ndarray, vc: int) -> float:
    if vc < 0:
        return float("nan")
    day = np.minimum((jobs.submit // DAY).astype(np.int64), jobs.days - 1)
    m = (jobs.vc == vc) & over[vc][day]
    return float(stretch[m].mean()) if m.any() else float("nan")


def summary(jobs: Jobs, capacity: IntArray, total: int, res: SimResult, sub: Subjects) -> dict[str, Any]:
    """The issue's per-policy keys (except `max_vc_stretch_vs_maxmin`, which needs two runs) and
    the per-VC figures behind them."""
    js = job_stretch(jobs, res)
    vs = vc_stretch(jobs, js)
    ld = loads(jobs, capacity)
    ratios = [max(vs[i], vs[j]) / min(vs[i], vs[j]) for i, j in sub.pairs]
    in_pair = sorted({v for p in sub.pairs for v in p})
    cv = float(np.std(vs[in_pair]) / np.mean(vs[in_pair])) if in_pair else float("nan")
    rho = spearmanr(ld, vs).statistic if jobs.n_vcs > 2 else float("nan")
    total_work = float(jobs.work.sum())
    return {
        "similar_load_pairs": len(sub.pairs),
        "similar_load_stretch_ratio": float(max(ratios)) if ratios else float("nan"),
        "similar_load_stretch_cv": cv,
        "large_vc_overload_stretch": overload_stretch(jobs, js, sub.overload_days, sub.large),
        "small_vc_overload_stretch": overload_stretch(jobs, js, sub.overload_days, sub.small),
        "idle_while_waiting_s": res.idle_while_waiting,
        "preempted_work_share": res.lost_work / total_work,
        "utilisation": res.busy_in_window / (total * jobs.horizon),
        "weighted_mean_job_stretch": float(np.average(js, weights=jobs.work)),
        "spearman_load_stretch": float(rho),
        "contributed_server_h": (res.history.lent / 3600).round(1).tolist(),
        "received_server_h": (res.history.received / 3600).round(1).tolist(),
        "vc_stretch": vs.tolist(),
        "vc_load": ld.tolist(),
    }
