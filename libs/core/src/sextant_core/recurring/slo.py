"""SLO (deadline) inference from provenance (Morpheus §4; spec/morpheus.md §3.2).

For each past instance of a periodic job, the times T_inAvail (last write to any input), T_start,
T_end and T_outRead (first read of any output) are taken relative to the instance's period start.
The contract is a = P95(T_inAvail) (earliest start) and d = P50(T_outRead) (deadline), both
percentiles configurable, and it is **actionable** when the output is read at a nearly fixed time
(CV(T_outRead) = MAD/median ≤ `max_read_cv`) with real slack
(median((T_outRead − T_end)/(T_end − T_start)) ≥ `min_slack_ratio`).

Decisions on the spec's gaps (§8.2–8.4), each tested in `tests/recurring/test_slo.py`:

- **Successful runs only**: failed instances are dropped before anything is computed.
- **Period start** is wall-clock aligned: `period_start(t, P) = floor(t / P) · P` on the record's
  clock (hour and day boundaries), the instance's submit time deciding. Relative times are not
  wrapped: an input written before the period began is negative, a read in the next period is
  larger than P (a window 22:00 → 02:00 stays contiguous).
- **Several consumers**: the earliest read over all consumers and egress counts; reads by the
  job's own template (its next instance reading its previous output) are not a deadline and are
  ignored.
- **Consumer-period rule** (footnote 5): a read by a consumer whose period is longer than the
  job's counts as at most one period after the instance's input became available (T_inAvail + P:
  when the next instance may start), so a daily job read by a monthly report gets a daily
  deadline. A reader with no known period (egress) counts as is. [choice; `consumer_cap`] The
  earlier cap, the end of the wall-clock period (`"period_end"`, kept for logs decided under it),
  gave a job whose run crosses the period boundary (an hourly job starting at :47 for 15
  minutes, read by a daily report) a deadline before its own end: no slack, no contract.
- **No input** (nothing written before the run): T_inAvail = the period start (relative 0).
- Thresholds: `max_read_cv` 0.1, `min_slack_ratio` 0.5, `min_instances` 5 successful instances
  with a read (the paper's weekly jobs with four samples fail).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np


class SloVerdict(StrEnum):
    ACTIONABLE = "actionable"
    TOO_FEW_RUNS = "too_few_runs"
    IRREGULAR_READS = "irregular_reads"
    NO_SLACK = "no_slack"


@dataclass(frozen=True, slots=True)
class OutputRead:
    """A first read of one instance's output by `reader` (a template key; None = egress)."""

    time_s: float
    reader: int | None = None
    reader_period_s: float | None = None


@dataclass(frozen=True, slots=True)
class InstanceProvenance:
    """One instance of template `key`, absolute times in seconds."""

    key: int
    submit_s: float
    start_s: float
    end_s: float
    succeeded: bool
    input_available_s: float | None = None
    reads: tuple[OutputRead, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class SloParams:
    earliest_start_percentile: float = 95.0
    deadline_percentile: float = 50.0
    max_read_cv: float = 0.1
    min_slack_ratio: float = 0.5
    min_instances: int = 5
    consumer_cap: str = "next_input"  # or "period_end" (module doc, consumer-period rule)


@dataclass(frozen=True, slots=True)
class SloContract:
    """The inferred contract; `earliest_start_s` and `deadline_s` are relative to the period start."""

    key: int
    period_s: float
    verdict: SloVerdict
    instances: int  # successful instances with an output read
    earliest_start_s: float = math.nan
    deadline_s: float = math.nan
    read_cv: float = math.nan
    slack_ratio: float = math.nan

    @property
    def actionable(self) -> bool:
        return self.verdict is SloVerdict.ACTIONABLE


def period_start(t_s: float, period_s: float) -> float:
    """The wall-clock-aligned start of the period that contains `t_s`."""
    return math.floor(t_s / period_s) * period_s


def first_read(inst: InstanceProvenance, period_s: float, consumer_cap: str = "next_input") -> float | None:
    """The effective first read of the instance's output (absolute), or None if never read."""
    t0 = period_start(inst.submit_s, period_s)
    if consumer_cap == "period_end":
        end_of_period = t0 + period_s
    elif consumer_cap == "next_input":
        end_of_period = (inst.input_available_s if inst.input_available_s is not None else t0) + period_s
    else:
        raise ValueError(f"consumer_cap must be 'next_input' or 'period_end', not {consumer_cap!r}")
    times = []
    for r in inst.reads:
        if r.reader is not None and r.reader == inst.key:
            continue  # the template's own next instance
        t = r.time_s
        if r.reader_period_s is not None and r.reader_period_s > period_s:
            t = min(t, end_of_period)
        times.append(t)
    return min(times) if times else None


def _cv(x: np.ndarray) -> float:
    med = float(np.median(x))
    if med <= 0:
        return math.inf
    return float(np.median(np.abs(x - med))) / med


def infer_slo(key: int, period_s: float, instances: list[InstanceProvenance],
              params: SloParams | None = None) -> SloContract:
    """Infer the contract of template `key` (period `period_s` > 0) from its past instances."""
    p = params or SloParams()
    if not period_s > 0:
        raise ValueError("period_s must be > 0")
    rows = []
    for inst in instances:
        if inst.key != key or not inst.succeeded:
            continue
        read = first_read(inst, period_s, p.consumer_cap)
        if read is None:
            continue
        t0 = period_start(inst.submit_s, period_s)
        avail = inst.input_available_s if inst.input_available_s is not None else t0
        rows.append((avail - t0, inst.start_s - t0, inst.end_s - t0, read - t0))
    if len(rows) < p.min_instances:
        return SloContract(key, period_s, SloVerdict.TOO_FEW_RUNS, len(rows))
    arr = np.asarray(rows, dtype=float)
    in_avail, start, end, out_read = arr.T
    a = float(np.percentile(in_avail, p.earliest_start_percentile))
    d = float(np.percentile(out_read, p.deadline_percentile))
    cv = _cv(out_read)
    duration = np.maximum(end - start, 1e-9)
    slack = float(np.median((out_read - end) / duration))
    verdict = (SloVerdict.IRREGULAR_READS if cv > p.max_read_cv else
               SloVerdict.NO_SLACK if slack < p.min_slack_ratio else SloVerdict.ACTIONABLE)
    return SloContract(key, period_s, verdict, len(rows), earliest_start_s=a, deadline_s=d, read_cv=cv,
                       slack_ratio=slack)
