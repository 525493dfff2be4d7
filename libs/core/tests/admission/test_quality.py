"""Resource quality, classes and pools (admission/quality.py): arithmetic shown per case."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_contracts import events as ev
from sextant_core.admission.quality import class_of, pools, server_quality, workload_quality
from sextant_core.testing.builders import record

from .conftest import row10, vec


def classified(tolerated: dict[str, float], caused: dict[str, float]) -> ev.WorkloadClassified:
    return ev.WorkloadClassified(at=1.0, workload_id="w", decision=record(1), tolerated=tolerated, caused=caused)


@pytest.mark.parametrize(("tolerated", "caused", "expected"), [
    (vec(100), vec(0), 0.0),                               # tolerates everything, causes nothing
    (vec(100), vec(30), 30.0),                             # Eq. 1: mean of c = 30
    (vec(80), vec(0, core=50), (9 * 20 + 50) / 10),        # max(c, 100 − t): 20 on nine sources, 50 on core
    (vec(100, tlb=10), vec(5), (9 * 5 + 90) / 10),         # low tolerance counts: max(5, 90) on tlb
], ids=["neutral", "caused-only", "mixed", "sensitive"])
def test_workload_quality(tolerated: dict[str, float], caused: dict[str, float], expected: float) -> None:
    assert workload_quality(classified(tolerated, caused)) == pytest.approx(expected)


def test_unclassified_workload_is_neutral() -> None:
    assert workload_quality(None) == 0.0


@pytest.mark.parametrize(("t_min", "c_sum", "expected"), [
    (row10(100), row10(0), 100.0),                         # empty server: min(100, 100 − 0)
    (row10(80), row10(10), 80.0),                          # min(80, 90)
    (row10(100), row10(30, core=130), (9 * 70 + 0) / 10),  # 100 − 130 < 0 → clipped to 0
], ids=["empty", "tolerance-bound", "overloaded-source"])
def test_server_quality(t_min: list[float], c_sum: list[float], expected: float) -> None:
    assert server_quality(np.array([t_min]), np.array([c_sum]))[0] == pytest.approx(expected)


@pytest.mark.parametrize(("q", "cls"), [(0.0, 0), (9.99, 0), (10.0, 1), (55.0, 5), (99.9, 9), (100.0, 9)])
def test_class_of_deciles(q: float, cls: int) -> None:
    assert class_of(q) == cls
    assert pools(np.array([q]))[0] == cls


def test_pools_equal_floor_division_at_every_decile_bound() -> None:
    # the fast pools (exact comparisons) give what clip(q // 10, 0, 9) gives, also one ulp either
    # side of every bound 10·d and on random headrooms (the headroom mean can land anywhere)
    bounds = np.arange(0.0, 101.0)
    rng = np.random.default_rng(7)
    q = np.concatenate([bounds, np.nextafter(bounds, -np.inf), np.nextafter(bounds, np.inf),
                        rng.uniform(0.0, 100.0, 50_000), rng.uniform(0.0, 100.0, 1000).round(2),
                        [-0.0, -3.0, 150.0]])
    assert np.array_equal(pools(q), np.clip((q // 10).astype(np.int64), 0, 9))
