"""Recurring-job analysis of a job record: train on its head, predict and score its tail.

`analyse(jobs, train_end_s)` runs the detector (`periodicity`) on the jobs submitted before
`train_end_s`, predicts the submit slots (`arrivals`) and the run-time P95 (`runtime`) of the
rest, and scores both against what happened. Definitions (the benchmark's, bench/morpheus.py):

- `periodic_job_share`: jobs of the whole record in templates detected on the training window
  with a natural period, over all jobs (`periodic_job_share_train`: the same within the window);
- `still_running_share`: those templates with a submission in the test window, over them;
- `slot_hit_rate`, `slot_recall`: `arrivals.score_slots` summed over those templates (and per
  natural period in `slots_by_period_s`);
- `p95_coverage`, `p95_median_ratio`: over the test window's FINISH runs (run time
  `end_s − schedule_s`) of every template with at least `min_runs` such training runs, the share
  at or below the predicted P95 and the median of predicted / actual (runs of 0 s left out of
  the ratio); `baseline_*` the same for `runtime.plain_quantile`;
- `kill_share`: of those templates' test-window jobs, the share that ended in KILL (they have no
  run time and are not scored).

**Gaps in the record** (the documented fallback): a stretch of more than `record_gap_s` with no
submission of any template is a gap of the recording, not of the jobs; predicted slots inside a
gap (± the hit tolerance) are not scored and are counted in `slots_in_record_gaps`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .arrivals import SlotScore, hit_tolerance_s, predict_slots, score_slots
from .periodicity import DetectorParams, Periodicity, detect
from .runtime import TARGET_QUANTILE, Runs, RuntimeParams, burst_position, fit_runtime_model, plain_quantile

FINISH, KILL = 4, 5


@dataclass(frozen=True)
class JobTable:
    """One row per job (the Google 2011 job-table columns); NaN where a time or event is missing."""

    job_id: np.ndarray
    submit_s: np.ndarray
    schedule_s: np.ndarray
    end_s: np.ndarray
    end_event: np.ndarray
    sched_class: np.ndarray
    template: np.ndarray  # int64 template key (the logical name)

    def __post_init__(self) -> None:
        n = len(self.job_id)
        cols = (self.submit_s, self.schedule_s, self.end_s, self.end_event, self.sched_class, self.template)
        if any(len(c) != n for c in cols):
            raise ValueError("JobTable columns must have the same length")
        if n and (not np.all(np.isfinite(self.submit_s)) or float(np.min(self.submit_s)) < 0):
            raise ValueError("submit_s must be finite and >= 0")

    def take(self, mask: np.ndarray) -> JobTable:
        return JobTable(self.job_id[mask], self.submit_s[mask], self.schedule_s[mask], self.end_s[mask],
                        self.end_event[mask], self.sched_class[mask], self.template[mask])


@dataclass(frozen=True)
class AnalysisParams:
    detector: DetectorParams = field(default_factory=DetectorParams)
    runtime: RuntimeParams = field(default_factory=RuntimeParams)
    record_gap_s: float = 3600.0


@dataclass(frozen=True)
class TemplatePrediction:
    template: Periodicity
    slots: np.ndarray  # predicted submit times in the test window
    score: SlotScore


@dataclass(frozen=True)
class TraceAnalysis:
    train_end_s: float
    test_end_s: float
    templates: list[TemplatePrediction]  # detected with a natural period, ascending key
    record_gaps: list[tuple[float, float]]
    metrics: dict[str, Any]


def record_gaps(submit_s: np.ndarray, min_gap_s: float) -> list[tuple[float, float]]:
    """Intervals longer than `min_gap_s` between consecutive submissions (of any template)."""
    t = np.unique(np.asarray(submit_s, dtype=float))
    if len(t) < 2:
        return []
    d = np.diff(t)
    idx = np.flatnonzero(d > min_gap_s)
    return [(float(t[i]), float(t[i + 1])) for i in idx]


def _outside_gaps(slots: np.ndarray, gaps: list[tuple[float, float]], tol: float) -> np.ndarray:
    keep = np.ones(len(slots), dtype=bool)
    for a, b in gaps:
        keep &= ~((slots > a - tol) & (slots < b + tol))
    return keep


def analyse(jobs: JobTable, train_end_s: float, params: AnalysisParams | None = None,
            progress: Callable[[str], None] | None = None, *, runtime: bool = True) -> TraceAnalysis:
    """See the module docstring. The test window is [train_end_s, last submit + 1 s); `runtime`
    False leaves the run-time metrics out. Raises `ValueError` when the training window holds no job."""
    p = params or AnalysisParams()
    say = progress or (lambda _msg: None)
    n = len(jobs.job_id)
    test_end_s = float(np.max(jobs.submit_s)) + 1.0 if n else train_end_s
    train = jobs.submit_s < train_end_s
    if not train.any():
        raise ValueError(f"no job submitted before {train_end_s:g} s")
    say(f"detecting periods over {int(train.sum())} training jobs")
    detected = [t for t in detect(jobs.template[train], jobs.submit_s[train], p.detector)
                if t.periodic and t.natural_period_s is not None]
    gaps = record_gaps(jobs.submit_s, p.record_gap_s)
    test = ~train
    order = np.lexsort((jobs.submit_s[test], jobs.template[test]))
    tk, ts = jobs.template[test][order], jobs.submit_s[test][order]
    uk, start, count = np.unique(tk, return_index=True, return_counts=True)
    say(f"predicting the submit slots of {len(detected)} periodic templates")
    preds: list[TemplatePrediction] = []
    total = SlotScore(0, 0, 0)
    still = in_gaps = 0
    for t in detected:
        j = int(np.searchsorted(uk, t.key))
        sub = ts[start[j]:start[j] + count[j]] if j < len(uk) and uk[j] == t.key else np.empty(0)
        still += len(sub) > 0
        slots = predict_slots(t, train_end_s, test_end_s)
        keep = _outside_gaps(slots, gaps, hit_tolerance_s(t.period_s))
        in_gaps += int((~keep).sum())
        score = score_slots(slots[keep], sub, t.period_s)
        total = total + score
        preds.append(TemplatePrediction(t, slots[keep], score))
    by_label: dict[str, SlotScore] = {}
    for tp in preds:
        lab = f"{tp.template.natural_period_s:g}"
        by_label[lab] = by_label.get(lab, SlotScore(0, 0, 0)) + tp.score
    periodic_keys = np.array([t.key for t in detected], dtype=np.int64)
    in_periodic = np.isin(jobs.template, periodic_keys)
    metrics: dict[str, Any] = {
        "jobs": n, "train_jobs": int(train.sum()), "test_jobs": int(test.sum()),
        "periodic_templates": len(detected),
        "periodic_job_share": _r(in_periodic.mean() if n else float("nan")),
        "periodic_job_share_train": _r(in_periodic[train].mean()),
        "still_running_share": _r(still / len(detected) if detected else float("nan")),
        "slot_hit_rate": _r(total.hit_rate), "slot_recall": _r(total.recall),
        "slots_predicted": total.slots, "slots_scored": total.scored, "slot_hits": total.hits,
        "slots_in_record_gaps": in_gaps, "record_gaps": len(gaps),
        "slots_by_period_s": {k: {"templates": sum(1 for tp in preds if f"{tp.template.natural_period_s:g}" == k),
                                  "slots": v.slots, "scored": v.scored, "hits": v.hits,
                                  "hit_rate": _r(v.hit_rate)}
                              for k, v in sorted(by_label.items(), key=lambda kv: float(kv[0]))},
    }
    if runtime:
        say("fitting the run-time model")
        metrics.update(_runtime_metrics(jobs, train_end_s, p.runtime))
    return TraceAnalysis(train_end_s, test_end_s, preds, gaps, metrics)


def _r(x: float) -> float:
    return round(float(x), 4)


def _runtime_metrics(jobs: JobTable, train_end_s: float, rp: RuntimeParams) -> dict[str, Any]:
    rt = jobs.end_s - jobs.schedule_s
    fin = (jobs.end_event == FINISH) & np.isfinite(rt) & (rt >= 0)
    runs = Runs(jobs.template[fin], jobs.submit_s[fin], rt[fin], jobs.sched_class[fin])
    pos = burst_position(jobs.template, jobs.submit_s, rp.burst_window_s)[fin]
    tr = runs.submit_s < train_end_s
    te = ~tr
    train_runs, test_runs = runs.take(tr), runs.take(te)
    base = plain_quantile(train_runs, test_runs, TARGET_QUANTILE, rp.min_runs)
    scored = np.isfinite(base)
    out: dict[str, Any] = {"runtime_templates": int(len(np.unique(test_runs.key[scored]))),
                           "runtime_test_runs": int(scored.sum())}
    try:
        model = fit_runtime_model(train_runs, pos[tr], train_end_s, rp)
        pred = model.predict(test_runs, pos[te])
    except ValueError:
        pred = np.full(len(test_runs.key), np.nan)  # no template has enough history: baseline only
    actual = test_runs.runtime_s[scored]
    for name, pr in (("", pred[scored]), ("baseline_", base[scored])):
        pos_rt = actual > 0
        ok = np.isfinite(pr)
        out[f"{name}p95_coverage"] = _r((actual[ok] <= pr[ok]).mean()) if ok.any() else float("nan")
        both = ok & pos_rt
        out[f"{name}p95_median_ratio"] = _r(np.median(pr[both] / actual[both])) if both.any() else float("nan")
    keys, counts = np.unique(train_runs.key, return_counts=True)
    evaluated = np.isin(jobs.template, keys[counts >= rp.min_runs])
    test_jobs = evaluated & (jobs.submit_s >= train_end_s) & np.isfinite(jobs.end_event)
    out["kill_share"] = _r((jobs.end_event[test_jobs] == KILL).mean()) if test_jobs.any() else float("nan")
    ended = np.isfinite(jobs.end_event)
    out["kill_share_all_jobs"] = _r((jobs.end_event[ended] == KILL).mean()) if ended.any() else float("nan")
    return out
