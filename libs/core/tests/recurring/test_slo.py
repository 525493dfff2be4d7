"""SLO inference on synthetic provenance (the real trace has no file reads)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.recurring.slo import (
    InstanceProvenance,
    OutputRead,
    SloParams,
    SloVerdict,
    first_read,
    infer_slo,
    period_start,
)

DAY, H = 86400.0, 3600.0


def daily(n: int = 20, *, read_h: float = 8.0, read_jitter: float = 300.0, ok: bool = True, seed: int = 0,
          submit_h: float = 2.0, reader: int | None = 9, reader_period: float | None = DAY,
          inputs: bool = True) -> list[InstanceProvenance]:
    """A daily job: inputs land 01:00 + U(0, 20 min), runs 02:00–03:00, its output read at `read_h`."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        day = i * DAY
        out.append(InstanceProvenance(
            key=1, submit_s=day + submit_h * H, start_s=day + submit_h * H + 60, end_s=day + (submit_h + 1) * H,
            succeeded=ok, input_available_s=day + H + rng.uniform(0, 1200) if inputs else None,
            reads=(OutputRead(day + read_h * H + rng.uniform(-read_jitter, read_jitter), reader, reader_period),)))
    return out


def test_a_daily_job_read_at_eight_gets_an_actionable_contract():
    c = infer_slo(1, DAY, daily())
    assert c.verdict is SloVerdict.ACTIONABLE and c.instances == 20
    assert H <= c.earliest_start_s <= H + 1200 and c.earliest_start_s > H + 1000  # P95 of U(0, 20 min)
    assert c.deadline_s == pytest.approx(8 * H, abs=300)
    assert c.slack_ratio == pytest.approx((8 * H - 3 * H) / (H - 60), rel=0.05)


def test_failed_runs_are_ignored():
    bad = daily(20, read_h=20.0, ok=False, seed=1)  # failures read late: must not move d
    c = infer_slo(1, DAY, daily() + bad)
    assert c.instances == 20 and c.deadline_s == pytest.approx(8 * H, abs=300)
    assert infer_slo(1, DAY, bad).verdict is SloVerdict.TOO_FEW_RUNS


def test_the_earliest_read_counts_and_own_template_reads_do_not():
    inst = InstanceProvenance(1, 2 * H, 2 * H, 3 * H, True, None, reads=(
        OutputRead(4 * H, reader=1),             # the job's own next instance: ignored
        OutputRead(9 * H, reader=5),
        OutputRead(7 * H, reader=None)))         # egress
    assert first_read(inst, DAY) == 7 * H


def test_a_slower_consumer_is_clipped_to_the_jobs_own_period():
    # a monthly report reads the daily output 10 days later: the deadline is one day after the
    # input (01:00 + U(0, 20 min): the next instance may start then), the P50 of those
    c = infer_slo(1, DAY, daily(read_h=10 * 24.0, read_jitter=0.0, reader_period=30 * DAY))
    assert DAY + H < c.deadline_s < DAY + H + 1200
    assert c.verdict is SloVerdict.ACTIONABLE
    old = infer_slo(1, DAY, daily(read_h=10 * 24.0, read_jitter=0.0, reader_period=30 * DAY),
                    SloParams(consumer_cap="period_end"))  # the rule of logs decided before
    assert old.deadline_s == DAY
    with pytest.raises(ValueError, match="consumer_cap"):
        infer_slo(1, DAY, daily(), SloParams(consumer_cap="never"))


def test_a_run_across_the_period_end_read_by_a_slower_consumer_keeps_its_slack():
    # hourly, input at :40, runs :47 to :02 of the next hour, read by a daily report at 1:30 after
    hourly = [InstanceProvenance(key=1, submit_s=k * H + 47 * 60, start_s=k * H + 47 * 60, end_s=k * H + 62 * 60,
                                 succeeded=True, input_available_s=k * H + 40 * 60,
                                 reads=(OutputRead(k * H + 90 * 60, 9, DAY),)) for k in range(10)]
    c = infer_slo(1, H, hourly)
    assert c.actionable and c.deadline_s == 90 * 60  # within one period of the input: the read itself
    old = infer_slo(1, H, hourly, SloParams(consumer_cap="period_end"))
    assert old.verdict is SloVerdict.NO_SLACK and old.deadline_s == H  # before its own end


def test_a_window_across_midnight_stays_contiguous():
    # submitted 22:00, read 02:00 the next day: d = 26 h, beyond the period, not wrapped
    c = infer_slo(1, DAY, daily(submit_h=22.0, read_h=26.0, read_jitter=60.0))
    assert c.deadline_s == pytest.approx(26 * H, abs=60)
    assert period_start(22 * H + 3 * DAY, DAY) == 3 * DAY


def test_no_input_means_available_at_the_period_start():
    assert infer_slo(1, DAY, daily(inputs=False)).earliest_start_s == 0.0


@pytest.mark.parametrize("kwargs,verdict", [
    ({"read_jitter": 4 * H}, SloVerdict.IRREGULAR_READS),   # MAD ≈ 2 h over a median of 8 h: CV ≈ 0.25
    ({"read_h": 3.2, "read_jitter": 0.0}, SloVerdict.NO_SLACK),  # 12 min after a 59 min run: 0.2 < 0.5
    ({"n": 4}, SloVerdict.TOO_FEW_RUNS),
], ids=["irregular", "no-slack", "four-samples"])
def test_non_actionable_jobs(kwargs, verdict):
    assert infer_slo(1, DAY, daily(**kwargs)).verdict is verdict


def test_percentiles_are_configurable_and_period_must_be_positive():
    lo = infer_slo(1, DAY, daily(), SloParams(earliest_start_percentile=5.0, deadline_percentile=10.0))
    hi = infer_slo(1, DAY, daily())
    assert lo.earliest_start_s < hi.earliest_start_s and lo.deadline_s < hi.deadline_s
    with pytest.raises(ValueError):
        infer_slo(1, 0.0, daily())
