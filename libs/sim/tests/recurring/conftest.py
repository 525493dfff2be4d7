from __future__ import annotations

import pytest
from sextant_sim.recurring.workload import Workload, generate


@pytest.fixture(scope="session")
def month_wl() -> Workload:
    """The default month (200 templates, 30 days) of one seed: the calibration under test."""
    return generate(3)
