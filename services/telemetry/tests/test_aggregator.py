"""Telemetry's windows (services/telemetry/handlers.py): a window closes when a later one starts,
and a completed workload's last window is closed into a final verdict."""

from __future__ import annotations

from sextant_contracts import events as ev
from sextant_contracts.model import RawSample
from sextant_core.domain.lifecycle import WorkloadPhase as P
from sextant_telemetry.handlers import Aggregator


def sample(at: float, ratio: float, wid: str = "w1") -> RawSample:
    return RawSample(sample_id=f"{wid}-{at}", workload_id=wid, at=at, value=10 * ratio, ratio_to_target=ratio)


def verdicts(out: list[tuple[str, list[ev.Event]]]) -> list[tuple[str, bool, float]]:
    return [(wid, e.met, round(e.ratio_to_target, 6)) for wid, es in out for e in es if isinstance(e, ev.QosVerdict)]


def test_a_window_closes_when_a_sample_of_the_next_one_arrives() -> None:
    agg = Aggregator(window_s=10.0)
    assert agg.add(sample(1.0, 1.0), P.RUNNING) == []
    assert agg.add(sample(5.0, 0.8), P.RUNNING) == []
    # mean ratio of window 0 = (1.0 + 0.8) / 2 = 0.9 < 1 (sextant_core.qos.met): a violation
    assert verdicts(agg.add(sample(12.0, 1.0), P.RUNNING)) == [("w1:0", False, 0.9)]


def test_a_completed_workloads_last_window_gets_a_final_verdict_at_the_sweep() -> None:
    agg = Aggregator(window_s=10.0)
    agg.add(sample(1.0, 1.0), P.RUNNING)
    agg.add(sample(3.0, 1.04), P.RUNNING)
    assert agg.finish(lambda _: P.RUNNING) == []  # still running: the window stays open
    # completed: (1.0 + 1.04) / 2 = 1.02 ≥ 1, met
    assert verdicts(agg.finish(lambda _: P.COMPLETED)) == [("w1:0", True, 1.02)]
    assert agg.open == {} and agg.finish(lambda _: P.COMPLETED) == []  # judged once


def test_a_late_sample_of_a_completed_workload_closes_its_window() -> None:
    agg = Aggregator(window_s=10.0)
    agg.add(sample(1.0, 0.5), P.RUNNING)
    assert verdicts(agg.add(sample(2.0, 0.7), P.COMPLETED)) == [("w1:0", False, 0.6)]


def test_a_workload_re_placed_while_it_runs_is_still_judged() -> None:
    # a reclassification's re-plan makes it `placed` until the agent restarts it; its samples
    # meanwhile are windowed, and its last window gets the final verdict when it completes
    agg = Aggregator(window_s=10.0)
    agg.add(sample(1.0, 1.0), P.RUNNING)
    assert verdicts(agg.add(sample(11.0, 0.5), P.PLACED)) == [("w1:0", True, 1.0)]
    agg.add(sample(13.0, 0.7), P.PLACED)
    assert verdicts(agg.finish(lambda _: P.COMPLETED)) == [("w1:1", False, 0.6)]


def test_failed_or_revoked_workloads_are_not_judged() -> None:
    agg = Aggregator(window_s=10.0)
    agg.add(sample(1.0, 1.0, "a"), P.RUNNING)
    agg.add(sample(1.0, 1.0, "b"), P.RUNNING)
    phases = {"a": P.FAILED, "b": P.REVOKED}
    assert agg.finish(phases.get) == [] and agg.open == {}
    assert agg.add(sample(2.0, 1.0, "c"), P.FAILED) == [] and agg.open == {}


def test_the_offered_load_is_averaged_when_every_sample_reports_it() -> None:
    agg = Aggregator(window_s=10.0)
    for at, off in ((1.0, 100.0), (4.0, 300.0)):
        agg.add(RawSample(sample_id=f"s{at}", workload_id="w1", at=at, value=50.0, ratio_to_target=0.5,
                          offered=off), P.RUNNING)
    (_, events), = agg.add(sample(12.0, 1.0), P.RUNNING)
    obs = next(e for e in events if isinstance(e, ev.PerformanceObserved))
    assert obs.offered == 200.0  # (100 + 300) / 2
    # a window with a sample that does not know it reports none
    (_, events), = agg.add(sample(25.0, 1.0), P.RUNNING)
    assert next(e for e in events if isinstance(e, ev.PerformanceObserved)).offered is None


def test_the_verdict_is_the_cores_rule_on_the_mean_ratio() -> None:
    """Telemetry adds no margin of its own: a mean ratio of 0.99 misses, as in the twin's agent."""
    agg = Aggregator(window_s=10.0)
    agg.add(sample(1.0, 0.98), P.RUNNING)
    agg.add(sample(2.0, 1.0), P.RUNNING)
    assert verdicts(agg.add(sample(12.0, 1.0), P.RUNNING)) == [("w1:0", False, 0.99)]
