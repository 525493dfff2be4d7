"""Periodic-job detection: templates, arrivals, period, CV filter (Morpheus §4; spec/morpheus.md §3.1).

Input is columnar: one template key (an integer: the trace's logical name, or the id of a
normalised name, `templates.template_key`) and one submit time in seconds per job. Output is one
`Periodicity` per template, in ascending key order. Pure and deterministic: NumPy only, every
group reduction is a sort or a `bincount`, ties broken by the job's input position.

Decisions on the spec's gaps (§8.1), each tested in `tests/recurring/test_periodicity.py`:

- **Arrivals, not jobs.** Submissions of one template less than `burst_window_s` (60 s) after the
  previous one belong to the same arrival (a template that submits its shards together is one
  instance). Gaps, CV and period are computed over arrivals.
- **Jobs already running when the record starts** (submitted at or before `window_start_s`, the
  trace's time 0) count as jobs of their template but never as arrivals.
- **CV = MAD / median of the gaps between consecutive arrivals**; a template is periodic when it
  has at least `min_arrivals` arrivals (5: the paper's weekly jobs with four samples fail) and a
  CV at most `max_cv` (0.03: the strictest of 0.2 / 0.1 / 0.05 / 0.03 / 0.02 / 0.01 that keeps the
  share of periodic jobs on the training folds ≥ 0.38; a looser filter admits templates whose
  slots are mostly missed). A median gap of 0 is irregular.
- **Natural period (a label only):** the median gap snaps to the nearest natural period (the
  divisors of a day from 5 min to 24 h) when within `snap_tolerance` (5 %) in ratio; otherwise
  the template is periodic but off-kilter (`natural_period_s` None).
- **The contract's period** (`contract_period`): the natural period only when the fitted line
  keeps the job in the same place of it over the arrivals seen — the drift |period − natural| ×
  periods spanned at most the inlier tolerance max(5 % of the natural period, 60 s) — else the
  fitted period. A 58-minute job is labelled hourly (within 5 %) but drifts two minutes an hour:
  on an hourly contract its deadline (a time of the hour) moves through its runs and its
  reservation (a fixed offset in the hour) misses most of them.
- **The estimated period** is not snapped: arrivals get an index (a gap of about k median gaps
  advances it by k, so a skipped run does not shift the phase); the line is anchored on the
  median offset of the last `anchor_arrivals` (3) arrivals, the arrivals within max(5 % of the
  median gap, 60 s) of it are inliers, least squares through them gives `period_s`, and the anchor
  is re-taken on that period (two rounds) to give `phase_s` (the line's value at index 0). A job
  restarted at another offset keeps its period and continues at its newest offset. Predictions
  (`arrivals.predict_slots`) use this line. 3 arrivals: the best mean hit rate of 0 (all), 1, 3, 5,
  10 over three rolling-origin folds inside the training weeks (bench/morpheus.py, `selection`).
- **On the line** (`on_line`): the share of the newest third of the arrivals within that tolerance
  of the final line. A job re-submitted a fixed delay after its previous run *ended* has regular
  gaps but a wandering phase; `min_on_line` > 0 rejects it as `OFF_GRID`. Default 0 (off): on the
  training folds every stricter value cost more periodic jobs than the share margin allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

NATURAL_PERIODS_S: tuple[float, ...] = (300.0, 600.0, 900.0, 1200.0, 1800.0, 3600.0, 7200.0, 10800.0,
                                        14400.0, 21600.0, 28800.0, 43200.0, 86400.0)


class Verdict(StrEnum):
    """Why a template is (not) periodic; constant reasons."""

    PERIODIC = "periodic"
    TOO_FEW_ARRIVALS = "too_few_arrivals"
    IRREGULAR = "irregular"  # CV above the threshold, or a median gap of 0
    OFF_GRID = "off_grid"  # regular gaps, but the newest arrivals wander off any fixed-period line


@dataclass(frozen=True, slots=True)
class DetectorParams:
    """Detector parameters (spec §4 leaves them open; chosen on the training weeks only)."""

    min_arrivals: int = 5
    burst_window_s: float = 60.0
    max_cv: float = 0.03
    snap_tolerance: float = 0.05
    anchor_arrivals: int = 3
    min_on_line: float = 0.0
    natural_periods_s: tuple[float, ...] = NATURAL_PERIODS_S

    def __post_init__(self) -> None:
        if self.min_arrivals < 3:
            raise ValueError("min_arrivals must be >= 3 (two gaps are needed for a dispersion)")
        if self.burst_window_s < 0 or self.max_cv < 0 or not 0 <= self.snap_tolerance < 1:
            raise ValueError("burst_window_s, max_cv >= 0 and 0 <= snap_tolerance < 1 required")
        if not self.natural_periods_s or min(self.natural_periods_s) <= 0:
            raise ValueError("natural_periods_s must be non-empty and positive")


@dataclass(frozen=True, slots=True)
class Periodicity:
    """One template's detection result; times in seconds of the input's clock."""

    key: int
    n_jobs: int
    n_arrivals: int
    median_gap_s: float  # NaN with fewer than two arrivals
    cv: float  # MAD / median of the gaps; NaN when undefined
    verdict: Verdict
    period_s: float  # fitted period (NaN unless periodic)
    phase_s: float  # fitted time of arrival index 0 (NaN unless periodic)
    natural_period_s: float | None  # the label; None when off-kilter or not periodic
    on_line: float  # share of the newest third of the arrivals on the fitted line (NaN unless fitted)
    first_arrival_s: float
    last_arrival_s: float

    @property
    def periodic(self) -> bool:
        return self.verdict is Verdict.PERIODIC


def _group_median(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Median of `values` per group id in 0..n_groups-1 (NaN for an empty group)."""
    order = np.lexsort((values, group))
    v, g = values[order], group[order]
    counts = np.bincount(g, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    out = np.full(n_groups, np.nan)
    has = counts > 0
    lo = starts[has] + (counts[has] - 1) // 2
    hi = starts[has] + counts[has] // 2
    out[has] = (v[lo] + v[hi]) / 2.0
    return out


def snap_period(median_gap_s: float, params: DetectorParams) -> float | None:
    """The natural period within `snap_tolerance` (in ratio) of the median gap, else None."""
    if not median_gap_s > 0:
        return None
    nat = np.asarray(params.natural_periods_s, dtype=float)
    dist = np.abs(np.log(median_gap_s / nat))
    i = int(np.argmin(dist))
    return float(nat[i]) if dist[i] <= np.log1p(params.snap_tolerance) else None


def contract_period(p: Periodicity) -> float:
    """The period a periodic template's SLO is inferred on (module doc): `natural_period_s` when
    the fitted period stays within the inlier tolerance of it from the first arrival to the last,
    else `period_s`. NaN for a template that is not periodic."""
    if not p.periodic:
        return float("nan")
    nat = p.natural_period_s
    if nat is None:
        return p.period_s
    spanned = (p.last_arrival_s - p.first_arrival_s) / p.period_s
    drift = abs(p.period_s - nat) * spanned
    return nat if drift <= max(0.05 * nat, 60.0) else p.period_s


def detect(keys: np.ndarray, submit_s: np.ndarray, params: DetectorParams | None = None, *,
           window_start_s: float = 0.0) -> list[Periodicity]:
    """Detect periodic templates. `keys` (int) and `submit_s` (float, finite) are per job, same length.

    Returns one `Periodicity` per distinct key, ascending. Raises `ValueError` on mismatched
    lengths or non-finite submit times.
    """
    p = params or DetectorParams()
    keys = np.asarray(keys, dtype=np.int64)
    t = np.asarray(submit_s, dtype=float)
    if keys.shape != t.shape or keys.ndim != 1:
        raise ValueError("keys and submit_s must be 1-D arrays of the same length")
    if not np.all(np.isfinite(t)):
        raise ValueError("submit_s must be finite")
    uniq, inv, n_jobs = np.unique(keys, return_inverse=True, return_counts=True)
    n_groups = len(uniq)
    live = t > window_start_s
    order = np.lexsort((np.arange(len(t))[live], t[live], inv[live]))
    g, ts = inv[live][order], t[live][order]
    new_group = np.ones(len(g), dtype=bool)
    new_group[1:] = g[1:] != g[:-1]
    new_arrival = new_group.copy()
    new_arrival[1:] |= np.diff(ts) >= p.burst_window_s
    ag, at = g[new_arrival], ts[new_arrival]  # arrivals: group, time (first job of the burst)
    n_arr = np.bincount(ag, minlength=n_groups)
    gap_ok = np.zeros(len(ag), dtype=bool)
    gap_ok[1:] = ag[1:] == ag[:-1]
    gaps = np.zeros(len(ag))
    gaps[1:] = np.diff(at)
    gap_g = ag[gap_ok]
    med = _group_median(gaps[gap_ok], gap_g, n_groups)
    mad = _group_median(np.abs(gaps[gap_ok] - med[gap_g]), gap_g, n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        cv = np.where(med > 0, mad / med, np.nan)
    enough = n_arr >= p.min_arrivals
    periodic = enough & (med > 0) & (cv <= p.max_cv)
    period, phase, on_line = _fit_lines(ag, at, gaps, gap_ok, med, periodic, n_groups, p.anchor_arrivals)
    unstable = periodic & ~(on_line >= p.min_on_line)
    periodic &= ~unstable
    first = np.full(n_groups, np.nan)
    last = np.full(n_groups, np.nan)
    if len(ag):  # arrivals are sorted by group, then time
        gi, fi = np.unique(ag, return_index=True)
        first[gi] = at[fi]
        last[gi] = at[np.append(fi[1:], len(ag)) - 1]
    out: list[Periodicity] = []
    for i in range(n_groups):
        verdict = (Verdict.PERIODIC if periodic[i] else
                   Verdict.TOO_FEW_ARRIVALS if not enough[i] else
                   Verdict.OFF_GRID if unstable[i] else Verdict.IRREGULAR)
        ok = verdict is Verdict.PERIODIC
        out.append(Periodicity(
            key=int(uniq[i]), n_jobs=int(n_jobs[i]), n_arrivals=int(n_arr[i]), median_gap_s=float(med[i]),
            cv=float(cv[i]), verdict=verdict, period_s=float(period[i]) if ok else float("nan"),
            phase_s=float(phase[i]) if ok else float("nan"),
            natural_period_s=snap_period(float(med[i]), p) if ok else None, on_line=float(on_line[i]),
            first_arrival_s=float(first[i]), last_arrival_s=float(last[i])))
    return out


def _fit_lines(ag: np.ndarray, at: np.ndarray, gaps: np.ndarray, gap_ok: np.ndarray, med: np.ndarray,
               periodic: np.ndarray, n_groups: int, anchor_arrivals: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per periodic group, the line time = phase + period · index through the current regime.

    Arrival indices advance by round(gap / median gap) (at least 1). The anchor is the median
    offset of the last `anchor_arrivals` arrivals (all arrivals when 0); inliers are the arrivals
    within max(5 % of the median gap, 60 s) of the anchored line; least squares through the
    inliers gives the period, and the anchor is re-taken on it. Two rounds: a job restarted at
    another offset keeps its period, and only the arrivals of its newest offset fit the line.
    """
    sel = periodic[ag]
    if not sel.any():
        return med.copy(), np.full(n_groups, np.nan), np.full(n_groups, np.nan)
    g, tt, gp, cont = ag[sel], at[sel], gaps[sel], gap_ok[sel]
    step = np.where(cont, np.maximum(1.0, np.rint(gp / med[g])), 0.0)
    csum = np.cumsum(step)
    start_of = np.flatnonzero(~cont)
    sizes = np.diff(np.append(start_of, len(g)))
    idx = csum - np.repeat(csum[start_of], sizes)  # 0 at each group's first arrival
    t0 = np.repeat(tt[start_of], sizes)
    rel = tt - t0
    from_end = np.repeat(np.append(start_of[1:], len(g)), sizes) - np.arange(len(g))
    recent = from_end <= anchor_arrivals if anchor_arrivals > 0 else np.ones(len(g), dtype=bool)
    tol = np.maximum(0.05 * med[g], 60.0)
    period = med.copy()
    offset = np.zeros(n_groups)
    for _ in range(2):
        resid = rel - idx * period[g]
        offset = _group_median(resid[recent], g[recent], n_groups)
        w = (np.abs(resid - offset[g]) <= tol).astype(float)
        cnt = np.maximum(np.bincount(g, weights=w, minlength=n_groups), 1.0)
        mx = np.bincount(g, weights=w * idx, minlength=n_groups) / cnt
        my = np.bincount(g, weights=w * rel, minlength=n_groups) / cnt
        dx = idx - mx[g]
        sxx = np.bincount(g, weights=w * dx * dx, minlength=n_groups)
        sxy = np.bincount(g, weights=w * dx * (rel - my[g]), minlength=n_groups)
        with np.errstate(divide="ignore", invalid="ignore"):
            period = np.where(sxx > 0, sxy / sxx, period)
    resid = rel - idx * period[g]
    offset = _group_median(resid[recent], g[recent], n_groups)
    first_t = np.full(n_groups, np.nan)
    first_t[g[start_of]] = tt[start_of]
    # on the line: the share of the newest third of the arrivals within the tolerance of it
    newest = from_end <= np.repeat(np.maximum(sizes // 3, 1), sizes)
    on = (np.abs(resid - offset[g]) <= tol) & newest
    share = np.full(n_groups, np.nan)
    share[g[start_of]] = (np.bincount(g, weights=on.astype(float), minlength=n_groups)
                          / np.maximum(np.bincount(g, weights=newest.astype(float), minlength=n_groups), 1.0))[g[start_of]]
    return period, first_t + offset, share
