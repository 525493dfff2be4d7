"""Ground truth v3 (adaptation's phases): phase magnitudes drawn from a fixed distribution whose smallest
changes are 10 % and that holds a good share of small 10–30 % changes; v2 draws as before."""

from __future__ import annotations

import numpy as np
from sextant_sim import groundtruth
from sextant_sim.workloads.generate import _phases


def test_v3_every_phase_changes_speed_by_at_least_ten_percent() -> None:
    gt = groundtruth.load("v3.yaml")
    rng = np.random.default_rng(7)
    drops = np.array([1.0 - _phases(gt, "memory", rng)[1].speed for _ in range(4000)])
    assert drops.min() >= 0.1 - 1e-9 and drops.max() <= 0.6 + 1e-9
    # log-uniform on [0.1, 0.6]: P(m ≤ 0.3) = ln 3 / ln 6 = 0.613
    assert abs(float(np.mean(drops <= 0.3)) - np.log(3) / np.log(6)) < 0.03
    # phase 3 returns to the phase-1 speed: the second change is as large, upwards
    assert _phases(gt, "memory", rng)[2].speed == 1.0


def test_v2_is_unchanged() -> None:
    gt = groundtruth.load("v2.yaml")
    ph = _phases(gt, "memory", np.random.default_rng(7))
    rng = np.random.default_rng(7)  # v2's draw order: b1, b2, magnitude, growth, speed drop
    u = rng.random(5)
    assert ph[1].start == 0.25 + u[0] * (0.45 - 0.25) and ph[1].speed == 1.0 - (0.0 + u[4] * (0.15 - 0.0))
    assert ph[1].caused[0] == 1.0 + (0.1 + u[2] * (1.2 - 0.1))


def test_a_phased_workloads_ideal_includes_its_slow_phase() -> None:
    from sextant_sim.workloads.base import Phase
    from sextant_sim.workloads.generate import phase_time_factor

    # 30 % of the work (0.4 → 0.7) at speed 0.5: 0.4 + 0.3 / 0.5 + 0.3 = 1.3 × the phase-free time
    phases = (Phase(start=0.0), Phase(start=0.4, speed=0.5), Phase(start=0.7))
    assert abs(phase_time_factor(phases) - 1.3) < 1e-12
    assert phase_time_factor(()) == 1.0
