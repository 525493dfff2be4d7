"""Planner version 9.3 (`SextantParams.d1_filter` False): the workloads with a target are placed
without the D1 check — the predicted slowdown and the resident guard stay — beside version 9,
unchanged (docs/quality/planning.md, "Which interference check loses with engine rows")."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from sextant_core.planning.policysets import (
    ARQ_VERSIONS,
    ENGINE_OF,
    PLANNER_VERSIONS,
    PROFILING_OF,
    VERSION,
)
from sextant_core.planning.sextant import SextantPlanner

from .conftest import World, chosen, place, vec

HET = {"A": 10.0, "B": 5.0}
UP = {"c1": 10.0, "c2": 18.0, "c4": 30.0}


def ips(x: float) -> dict[str, Any]:
    return {"type": "instruction_rate", "ips": x}


def test_9_3_is_9_without_d1_and_no_default_moved() -> None:
    assert PLANNER_VERSIONS["9.3"] == dataclasses.replace(PLANNER_VERSIONS["9"], d1_filter=False)
    assert PLANNER_VERSIONS["9"].d1_filter and VERSION == "9.4"
    assert (ENGINE_OF["9.3"], ARQ_VERSIONS["9.3"], PROFILING_OF["9.3"]) == \
        (ENGINE_OF["9"], ARQ_VERSIONS["9"], PROFILING_OF["9"])


def _names(profile: Any) -> list[str]:
    return [s.name for s in profile.filters]


@pytest.mark.parametrize(("version", "has_d1"), [("9", True), ("9.3", False)])
def test_the_d1_filter_is_in_every_target_pass_or_none(version: str, has_d1: bool) -> None:
    p = SextantPlanner(PLANNER_VERSIONS[version])
    for profile in (p.profile, p.closest, p.necessary):
        assert ("paragon-d1-residual" in _names(profile)) is has_d1
    assert "paragon-d1-residual" in _names(p.best_effort)  # best-effort leftovers keep it in both


# the only server hosts a resident tolerating 30 on core (no target: nobody to protect); the
# newcomer causes 38 → residual −8. 9: D1 rejects it, as close as possible relaxes D1 by 5 then
# 10 (2 backtracking passes); 9.3: a1 meets the target with 1 core, taken at once (satisficed).
# a2 added, empty: both take it (the quietest row first; 9 because D1 rejects a1).
@pytest.mark.parametrize(("version", "servers", "expected", "backtracks", "note"), [
    ("9", ("a1",), ("a1", 1, 1.0), 2, "d1_relaxed"),
    ("9.3", ("a1",), ("a1", 1, 1.0), 0, "satisficed"),
    ("9", ("a1", "a2"), ("a2", 1, 1.0), 0, "satisficed"),
    ("9.3", ("a1", "a2"), ("a2", 1, 1.0), 0, "satisficed"),
])
def test_d1_rejects_a_server_only_in_9(version: str, servers: tuple[str, ...], expected: tuple[str, int, float],
                                       backtracks: int, note: str) -> None:
    w = World()
    for s in servers:
        w.server(s, platform="A")
    st = (w.workload("r", on=(("a1", 1, 1.0),), tolerated=vec(100, core=30))
          .workload("new", target=ips(9), heterogeneity=HET, scale_up=UP, caused=vec(0, core=38)).state())
    d = place(st, SextantPlanner(PLANNER_VERSIONS[version]))
    t = d.events[0].trace  # type: ignore[attr-defined]
    assert chosen(d) == (expected,) and t.backtracks == backtracks and note in t.notes
    assert ("d1_relaxed" in t.notes) is (note == "d1_relaxed")
