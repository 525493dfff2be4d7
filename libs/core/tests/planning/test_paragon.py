"""Paragon's planner (planning/paragon.py) through `decide`: capacity, filters, best platform,
best fit, backtracking notes, spreading a reservation, deferral, ARQ pool bound."""

from __future__ import annotations

from sextant_contracts import events as ev
from sextant_core.planning.paragon import ParagonPlanner

from .conftest import World, chosen, place, vec


def test_best_platform_then_best_fit() -> None:
    # B predicted 2× A. b1 and b2 are both B; b2 hosts a resident (t 60 / c 30 on tlb) that brings the
    # slack down: L1 = Σ|D1 + D2|. Newcomer t = 100, c = 0: empty b1: Σ (100 + 100) = 2000;
    # b2 on tlb: D1 = 60 − 0, D2 = 100 − 30 → 130 instead of 200 → 1930 < 2000 → b2 (tightest fit)
    st = (World().server("a1", platform="A").server("b1", platform="B").server("b2", platform="B")
          .workload("r", on=(("b2", 1, 1.0),), tolerated=vec(100, tlb=60), caused=vec(0, tlb=30))
          .workload("new", cores=2, memory_gb=2.0, heterogeneity={"A": 1.0, "B": 2.0}).state())
    d = place(st, ParagonPlanner())
    assert chosen(d) == (("b2", 2, 2.0),)
    e = d.events[0]
    assert isinstance(e, ev.PlacementDecided) and e.trace.top[0][0] == "b2" and e.trace.backtracks == 0


def test_interference_filters_before_platform() -> None:
    # b1 (the best platform) hosts a resident that the newcomer would hurt (D1 on core: 20 − 30 < 0)
    st = (World().server("a1", platform="A").server("b1", platform="B")
          .workload("r", on=(("b1", 1, 1.0),), tolerated=vec(100, core=20))
          .workload("new", cores=1, heterogeneity={"A": 1.0, "B": 2.0}, caused=vec(0, core=30)).state())
    d = place(st, ParagonPlanner())
    assert chosen(d) == (("a1", 1, 1.0),)
    assert d.events[0].trace.filtered["interference-d1"] == {"d1_core": 1}  # type: ignore[attr-defined]


def test_backtracking_when_every_server_violates() -> None:
    # the only server: newcomer tolerates 20 on core, residents cause 27 → D2 = −7 → relaxed to 10
    st = (World().server("a1")
          .workload("r", on=(("a1", 1, 1.0),), caused=vec(0, core=27))
          .workload("new", cores=1, tolerated=vec(100, core=20)).state())
    d = place(st, ParagonPlanner())
    t = d.events[0].trace  # type: ignore[attr-defined]
    assert chosen(d) == (("a1", 1, 1.0),) and t.backtracks == 1 and "backtracked" in t.notes


def test_a_reservation_larger_than_any_server_is_spread() -> None:
    st = (World().server("a1", cores=4, memory_gb=16).server("a2", cores=4, memory_gb=16)
          .workload("new", cores=6, memory_gb=6.0).state())
    d = place(st, ParagonPlanner())
    assert chosen(d) == (("a1", 4, 4.0), ("a2", 2, 2.0))
    assert "scale_out" in d.events[0].trace.notes  # type: ignore[attr-defined]


def test_deferred_without_capacity() -> None:
    st = World().server("a1", cores=2).workload("new", cores=4, memory_gb=1.0).state()
    st2 = World().server("a1", cores=2).server("a2", cores=1).workload("new", cores=4, memory_gb=1.0).state()
    e = place(st, ParagonPlanner()).events[0]
    assert isinstance(e, ev.PlacementDeferred) and e.reasons == ("fit/insufficient_cores",)
    assert isinstance(place(st2, ParagonPlanner()).events[0], ev.PlacementDeferred)  # 2 + 1 < 4


def test_work_budget_bounds_the_search() -> None:
    w = World()
    for i in range(30):
        w.server(f"a{i:02d}")
    st = w.workload("new", cores=1).state()
    d = place(st, ParagonPlanner(budget=40))
    t = d.events[0].trace  # type: ignore[attr-defined]
    assert t.budget_exhausted and "budget_exhausted" in t.notes and t.examined >= 40
    assert isinstance(d.events[0], ev.PlacementDecided)  # the best examined so far is still placed
