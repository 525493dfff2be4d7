"""Planner 8.1's reading of rows not in the target's units (`SizingParams.units`, targets.py):
throughput and time targets against rows of relative speed, and a multi-node kind's relative
requirement from its requested allocation — beside planner 8's one wide band, still replayed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sextant_contracts.model import CompletionTimeTarget, InstructionRateTarget
from sextant_core.planning.assess import SizingParams
from sextant_core.planning.model import PerformanceModel
from sextant_core.planning.policysets import PLANNER_VERSIONS
from sextant_core.planning.sextant import SextantParams, SextantPlanner
from sextant_core.planning.targets import UNIT_BAND, requirement

from .conftest import World, chosen, place

COMPLETION = {"type": "completion_time", "seconds": 100.0}
T100 = CompletionTimeTarget(seconds=100.0)


def planner(version: str) -> SextantPlanner:
    return SextantPlanner(PLANNER_VERSIONS[version])


def test_a_time_target_against_relative_rows_is_read_relative_in_8_1_only() -> None:
    # R = 1/(100 − 4) ≈ 0.0104 against a best node of 8 (relative speed × 8 cores): 0.0013 ×
    # apart — inside 8's band of 10⁴ (read as 1/seconds: one core "meets" it), outside 8.1's 20
    wide = requirement(T100, now=5.0, submitted_at=1.0, best_single=8.0, best_requested=24.0)
    kind = requirement(T100, now=5.0, submitted_at=1.0, best_single=8.0, best_requested=24.0,
                       unit_band=UNIT_BAND)
    assert not wide.relative and wide.value == pytest.approx(1 / 96)
    assert kind.relative and kind.value == pytest.approx(0.95 * 24.0)
    # rows in the target's units (a node completes it in ~2 × the time left): absolute in both
    near = requirement(T100, now=5.0, submitted_at=1.0, best_single=1 / 200, unit_band=UNIT_BAND)
    assert not near.relative and near.value == pytest.approx(1 / 96)


def test_an_instruction_rate_keeps_the_wide_band() -> None:
    # a rate 50 × the best node is in the target's units under both readings (the band is 10⁴)
    r = requirement(InstructionRateTarget(ips=50.0), now=5.0, submitted_at=1.0, best_single=1.0,
                    unit_band=UNIT_BAND)
    assert not r.relative and r.value == 50.0


def test_best_allocation_scales_up_then_out() -> None:
    # S(c) = c up to 8 cores (flat beyond: c_sat = 8), best level 1, E = 1 up to 4 nodes then 0.5
    m = PerformanceModel(reference_cores=1, platform_factor={"A": 1.0, "B": 0.5}, default_factor=0.7,
                         curve=np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 8, 8]), nodes=np.array([1.0, 4.0, 8.0]),
                         efficiency=np.array([1.0, 1.0, 0.5]))
    assert m.best_allocation(6) == m.best_at(6) == 6.0  # one node
    assert m.best_allocation(24) == pytest.approx(3 * 8.0)  # 3 nodes of 8
    assert m.best_allocation(20) == pytest.approx(3 * 7.0)  # 3 nodes of ⌈20/3⌉ = 7
    assert m.best_allocation(64) == pytest.approx(0.5 * 8 * 8.0)  # E(8) = 0.5


def analytics_world(**kw: Any) -> World:
    w = World()
    for i in range(4):
        w.server(f"a{i}", platform="A")
    # relative rows: speed 1 on A, U(c) = c/8 (S(c) = c), E = 1; 24 cores requested
    return w.workload("new", kind="analytics", target=COMPLETION, heterogeneity={"A": 1.0},
                      scale_up={"c1": 0.125, "c8": 1.0}, scale_out={"n1": 1.0, "n2": 2.0, "n4": 4.0},
                      cores=24, memory_gb=24.0, **kw)


def test_an_analytics_job_on_relative_rows_gets_its_requested_allocation() -> None:
    st = analytics_world().state()
    # 8: R = 0.0104 in the rows' units → one core on one node, "met"
    assert chosen(place(st, planner("8"))) == (("a0", 1, 24.0),)
    # 8.1: R = 0.95 · 3 nodes × 8 cores = 22.8 → scale out over 3 nodes of 8 cores (1 GiB a core)
    d = place(st, planner("8.1"))
    assert chosen(d) == (("a0", 8, 8.0), ("a1", 8, 8.0), ("a2", 8, 8.0))
    assert "scale_out" in d.events[0].trace.notes  # type: ignore[attr-defined]


def test_a_service_on_relative_rows_is_not_spread_as_unreachable() -> None:
    w = World()
    for i in range(4):
        w.server(f"a{i}", platform="A")
    st = w.workload("new", kind="service", target={"type": "throughput_latency", "qps": 600.0, "p99_latency_ms": 5.0},
                    heterogeneity={"A": 1.0}, scale_up={"c1": 0.25, "c4": 1.0},
                    scale_out={"n1": 1.0, "n2": 2.0, "n4": 4.0}, cores=8, memory_gb=8.0).state()
    # 8: R = 600 against nodes of 4 → unreachable: as close as possible over every server
    old = place(st, planner("8"))
    assert len(chosen(old)) == 4 and "target_not_met" in old.events[0].trace.notes  # type: ignore[attr-defined]
    # 8.1: R = 0.95 · 2 nodes × 4 = 7.6 → 2 nodes of 4 cores, met
    new = place(st, planner("8.1"))
    assert [(s, c) for s, c, _ in chosen(new)] == [("a0", 4), ("a1", 4)]
    assert "target_not_met" not in new.events[0].trace.notes  # type: ignore[attr-defined]


def test_units_must_be_known() -> None:
    with pytest.raises(ValueError, match="units"):
        SizingParams(units="narrow")
    assert SextantParams().sizing.units == "kind" and PLANNER_VERSIONS["8"].sizing.units == "wide"


def test_version_9_1_is_9_with_engine_3_1_and_9_is_unchanged() -> None:
    from sextant_core.classification.classifier import CollaborativeClassifier
    from sextant_core.classification.engine import ENGINE_VERSIONS
    from sextant_core.planning.policysets import (
        ADAPTIVE_PROFILING,
        ARQ_VERSIONS,
        ENGINE_OF,
        sextant_policy_set,
    )

    new, old = sextant_policy_set(version="9.1"), sextant_policy_set(version="9")
    assert PLANNER_VERSIONS["9.1"] == PLANNER_VERSIONS["9"] and ARQ_VERSIONS["9.1"] == ARQ_VERSIONS["9"]
    assert new.profiling is ADAPTIVE_PROFILING and old.profiling is ADAPTIVE_PROFILING
    assert (ENGINE_OF["9.1"], ENGINE_OF["9"]) == ("3.1", "3")
    assert isinstance(new.classifier, CollaborativeClassifier) and isinstance(old.classifier, CollaborativeClassifier)
    assert new.classifier.params.caused_offset == 2.0 and old.classifier.params == ENGINE_VERSIONS["3"]
    assert old.classifier.params.caused_offset == 0.0 and new.version == "9.1" and old.version == "9"


def test_version_9_2_is_9_with_engine_3_2_and_the_defaults_are_unchanged() -> None:
    from sextant_core.classification.classifier import CollaborativeClassifier
    from sextant_core.classification.engine import CURRENT_ENGINE, ENGINE_VERSIONS
    from sextant_core.planning.policysets import (
        ADAPTIVE_PROFILING,
        ARQ_VERSIONS,
        ENGINE_OF,
        VERSION,
        sextant_policy_set,
    )

    new = sextant_policy_set(version="9.2")
    assert PLANNER_VERSIONS["9.2"] == PLANNER_VERSIONS["9"] and ARQ_VERSIONS["9.2"] == ARQ_VERSIONS["9"]
    assert new.profiling is ADAPTIVE_PROFILING and new.version == "9.2"
    assert isinstance(new.classifier, CollaborativeClassifier) and new.classifier.params == ENGINE_VERSIONS["3.2"]
    assert (VERSION, ENGINE_OF[VERSION], CURRENT_ENGINE) == ("9.4", "3", "3")  # no default moved
