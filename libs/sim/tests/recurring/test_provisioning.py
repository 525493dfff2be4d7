"""The user baseline matches Morpheus Fig. 2a, measured against each job's observed peak."""

from __future__ import annotations

import numpy as np
from sextant_sim.recurring.provisioning import user_provisioning
from sextant_sim.recurring.workload import DAY_S, Workload


def _ratio_at_peak(wl: Workload) -> np.ndarray:
    """User allocation / median peak of the template's first-week instances."""
    ins = wl.instances
    up = user_provisioning(wl)
    first = ins.submit_s < 7 * DAY_S
    peak = np.array([np.median(ins.peak[first & (ins.template == k)]) for k in range(wl.templates.count)])
    return np.asarray(up.containers / peak)


def test_three_quarters_over_provisioned_at_peak_a_fifth_over_10x(month_wl: Workload) -> None:
    r = _ratio_at_peak(month_wl)
    assert 0.70 <= float((r > 1).mean()) <= 0.80
    assert 0.17 <= float((r > 10).mean()) <= 0.23


def test_fifteen_percent_under_provisioned_at_peak_by_1_5_to_3x(month_wl: Workload) -> None:
    r = _ratio_at_peak(month_wl)
    under = (r < 1 / 1.4) & (r > 1 / 3.3)
    assert 0.12 <= float(under.mean()) <= 0.18
    assert float((r < 1 / 3.3).mean()) <= 0.02  # none far below


def test_over_80_percent_unchanged_over_the_month(month_wl: Workload) -> None:
    ins = month_wl.instances
    up = user_provisioning(month_wl)
    alloc = up.allocation(ins.template, ins.submit_s)
    changed = np.array([np.unique(alloc[ins.template == k]).size > 1 for k in range(month_wl.templates.count)])
    assert 0.8 < float((~changed).mean()) < 0.9
    assert (alloc >= 1).all()
