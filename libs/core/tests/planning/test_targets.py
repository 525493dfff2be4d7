"""Required performance per target type (planning/targets.py), arithmetic shown per case."""

from __future__ import annotations

import math

import pytest
from sextant_contracts.model import (
    CompletionTimeTarget,
    DeadlineTarget,
    InstructionRateTarget,
    ThroughputLatencyTarget,
)
from sextant_core.planning.targets import raw_requirement, requirement


@pytest.mark.parametrize(("target", "now", "submitted", "expected", "kind"), [
    (InstructionRateTarget(ips=9.5e8), 100.0, 0.0, 9.5e8, "rate"),            # a rate: time spent is not counted
    (ThroughputLatencyTarget(qps=2e4, p99_latency_ms=1), 5.0, 0.0, 2e4, "throughput"),
    (CompletionTimeTarget(seconds=1000), 200.0, 0.0, 1 / 800, "completion"),   # 1 / (1000 − 200)
    (CompletionTimeTarget(seconds=1000), 1200.0, 0.0, math.inf, "completion"),  # no time left
    (DeadlineTarget(at=500.0), 100.0, 0.0, 1 / 400, "deadline"),                # 1 / (500 − 100)
], ids=["rate", "throughput", "completion-elapsed", "completion-late", "deadline"])
def test_raw_requirement(target: object, now: float, submitted: float, expected: float, kind: str) -> None:
    r, k = raw_requirement(target, now=now, submitted_at=submitted)
    assert k == kind and r == pytest.approx(expected)


@pytest.mark.parametrize(("best", "margin", "expected", "relative"), [
    (1.0e9, 0.0, 9.5e8, False),    # same units: R = 9.5e8
    (1.0e9, 0.04, 9.88e8, False),  # 9.5e8 · 1.04
    (1.0, 0.0, 0.95, True),        # 9.5e8 / 1 > 1e4: rows are relative → 0.95 · 1
    (2e13, 0.0, 1.9e13, True),     # 9.5e8 / 2e13 < 1e-4 → 0.95 · 2e13
], ids=["same-units", "margin", "relative-small", "relative-large"])
def test_units_and_margin(best: float, margin: float, expected: float, relative: bool) -> None:
    r = requirement(InstructionRateTarget(ips=9.5e8), now=0.0, submitted_at=0.0, best_single=best, margin=margin)
    assert r.value == pytest.approx(expected) and r.relative is relative


def test_unreachable_target_stays_unreachable() -> None:
    r = requirement(CompletionTimeTarget(seconds=10), now=50.0, submitted_at=0.0, best_single=1.0, margin=0.1)
    assert not r.reachable and math.isinf(r.value)


def test_negative_margin_is_rejected() -> None:
    with pytest.raises(ValueError):
        requirement(InstructionRateTarget(ips=1.0), now=0, submitted_at=0, best_single=1.0, margin=-0.1)


def test_relative_requirement_is_read_at_the_requested_cores() -> None:
    # relative rows (best_single 1.04 at the top of a noisy flat curve, 1.0 at the requested cores):
    # R = 0.95 · 1.0 = 0.95 (not 0.95 · 1.04 = 0.988); best_single still decides that units differ
    r = requirement(InstructionRateTarget(ips=1e9), now=0.0, submitted_at=0.0, best_single=1.04,
                    best_requested=1.0)
    assert r.relative and r.value == pytest.approx(0.95)
    same_units = requirement(InstructionRateTarget(ips=2.0), now=0.0, submitted_at=0.0, best_single=1.04,
                             best_requested=1.0)
    assert not same_units.relative and same_units.value == 2.0
