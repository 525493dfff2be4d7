"""The train/test analysis of a job record, on a synthetic trace with known templates."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.recurring.analysis import FINISH, KILL, AnalysisParams, JobTable, analyse, record_gaps
from sextant_core.recurring.runtime import RuntimeParams

DAY = 86400.0


def synthetic_trace(days: float = 14.0, *, hole: tuple[float, float] | None = None, seed: int = 0) -> JobTable:
    """Template 1 hourly at :05, template 2 daily at 04:00 (two shards), template 3 random
    (the record's background, a submission every ~minute), template 4 hourly until day 5 only."""
    rng = np.random.default_rng(seed)
    parts = [
        (1, np.arange(0, days * DAY, 3600.0) + 300.0 + rng.uniform(-20, 20, int(days * 24))),
        (2, np.repeat(np.arange(0, days * DAY, DAY) + 4 * 3600.0, 2) + np.tile([0.0, 7.0], int(days))),
        (3, np.sort(rng.uniform(1, days * DAY, int(days * 1440)))),
        (4, np.arange(0, 5 * DAY, 3600.0) + 1200.0),
    ]
    keys = np.concatenate([np.full(len(t), k) for k, t in parts])
    submit = np.concatenate([t for _, t in parts])
    if hole is not None:
        keep = ~((submit >= hole[0]) & (submit < hole[1]))
        keys, submit = keys[keep], submit[keep]
    n = len(submit)
    schedule = submit + 5.0
    runtime = np.where(keys == 2, 600.0, 60.0) * rng.lognormal(0, 0.1, n)
    event = np.where(rng.uniform(size=n) < 0.1, KILL, FINISH).astype(float)
    return JobTable(job_id=np.arange(n, dtype=float), submit_s=submit, schedule_s=schedule, end_s=schedule + runtime,
                    end_event=event, sched_class=np.zeros(n), template=keys.astype(np.int64))


FAST = AnalysisParams(runtime=RuntimeParams(max_iter=20))


def test_the_periodic_templates_are_found_and_their_slots_hit():
    res = analyse(synthetic_trace(), 10 * DAY, FAST)
    m = res.metrics
    assert [t.template.key for t in res.templates] == [1, 2, 4]
    assert [t.template.natural_period_s for t in res.templates] == [3600.0, DAY, 3600.0]
    # templates 1 and 2 run on: every scored slot is a hit; template 4 stopped: its slots are empty
    assert m["slot_hit_rate"] == 1.0
    jobs = synthetic_trace()
    test = jobs.submit_s >= 10 * DAY
    # every test run of template 1 and every test day of template 2 receives its slot
    expected = int((test & (jobs.template == 1)).sum() + (test & (jobs.template == 2)).sum() // 2)
    assert m["slots_scored"] == expected
    assert m["slots_predicted"] >= expected + 3 * 24  # template 4's slots stay empty
    assert m["slot_recall"] == pytest.approx(expected / m["slots_predicted"], abs=1e-4)
    assert m["still_running_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["periodic_job_share"] == pytest.approx(np.isin(jobs.template, [1, 2, 4]).mean(), abs=1e-4)
    assert 0 <= m["kill_share"] <= 0.2 and np.isfinite(m["p95_coverage"]) and np.isfinite(m["baseline_p95_coverage"])


def test_slots_in_a_gap_of_the_record_are_not_scored():
    hole = (11 * DAY, 11.5 * DAY)
    res = analyse(synthetic_trace(hole=hole), 10 * DAY, FAST)
    m = res.metrics
    assert m["record_gaps"] == 1 and m["slots_in_record_gaps"] >= 12 + 12  # templates 1 and 4, half a day
    assert m["slot_hit_rate"] == 1.0
    assert record_gaps(np.array([0.0, 10.0, 5000.0, 5001.0]), 3600.0) == [(10.0, 5000.0)]


def test_the_analysis_is_deterministic_and_refuses_an_empty_training_window():
    a = analyse(synthetic_trace(), 10 * DAY, FAST).metrics
    b = analyse(synthetic_trace(), 10 * DAY, FAST).metrics
    assert a == b
    with pytest.raises(ValueError, match="no job submitted before"):
        analyse(synthetic_trace(), 0.0, FAST)
    with pytest.raises(ValueError):
        JobTable(np.zeros(2), np.array([1.0, -1.0]), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2),
                 np.zeros(2, dtype=np.int64))
