"""The QoS verdict rule (sextant_core/qos.py): one row per target type, the arithmetic shown."""

from __future__ import annotations

import pytest
from sextant_contracts.model import (
    CompletionTimeTarget,
    DeadlineTarget,
    InstructionRateTarget,
    ThroughputLatencyTarget,
    WorkloadKind,
)
from sextant_core import qos


@pytest.mark.parametrize(("target", "measured", "expected"), [
    # 0.9e9 ips observed / 1e9 required = 0.9
    (InstructionRateTarget(ips=1e9), qos.Measured(started_at=0.0, ips=0.9e9, projected_s=50.0), (0.9e9, 0.9)),
    # 100 s allowed / 80 s projected (30 elapsed + 50 remaining) = 1.25
    (CompletionTimeTarget(seconds=100.0), qos.Measured(started_at=10.0, ips=1.0, projected_s=80.0), (80.0, 1.25)),
    # deadline at 130, started at 10: 120 s allowed / 80 s projected = 1.5
    (DeadlineTarget(at=130.0), qos.Measured(started_at=10.0, projected_s=80.0), (80.0, 1.5)),
    # a deadline already past at the start: nothing allowed, ratio 0
    (DeadlineTarget(at=5.0), qos.Measured(started_at=10.0, projected_s=80.0), (80.0, 0.0)),
    # 98.01 % within the bound / 99 % = 0.99
    (ThroughputLatencyTarget(qps=10.0, p99_latency_ms=5.0), qos.Measured(started_at=0.0, within_bound=0.9801),
     (0.9801, 0.99)),
], ids=["rate", "completion", "deadline", "deadline-past", "p99"])
def test_ratio_to_target(target: object, measured: qos.Measured, expected: tuple[float, float]) -> None:
    value, ratio = qos.value_and_ratio(target, measured)  # type: ignore[misc]
    assert (value, round(ratio, 9)) == expected


@pytest.mark.parametrize(("target", "measured"), [
    (ThroughputLatencyTarget(qps=10.0, p99_latency_ms=5.0), qos.Measured(started_at=0.0, ips=1.0, projected_s=5.0)),
    (CompletionTimeTarget(seconds=100.0), qos.Measured(started_at=0.0, within_bound=1.0)),
    (InstructionRateTarget(ips=1.0), qos.Measured(started_at=0.0, within_bound=1.0)),
], ids=["p99-of-a-job", "completion-of-a-service", "rate-of-a-service"])
def test_a_measurement_without_what_the_target_needs_gives_no_ratio(target: object, measured: qos.Measured) -> None:
    assert qos.value_and_ratio(target, measured) is None


def test_met_at_exactly_one() -> None:
    assert qos.met(1.0) and not qos.met(0.999999)


def test_every_kind_takes_some_target_and_services_only_a_latency_bound() -> None:
    assert all(qos.TARGETS_BY_KIND[k] for k in WorkloadKind)
    assert qos.target_fits(WorkloadKind.SERVICE, ThroughputLatencyTarget(qps=1.0, p99_latency_ms=1.0))
    assert not qos.target_fits(WorkloadKind.SERVICE, CompletionTimeTarget(seconds=1.0))
    assert not qos.target_fits(WorkloadKind.ANALYTICS, InstructionRateTarget(ips=1.0))
