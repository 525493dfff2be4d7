"""The Sextant planner (planning/sextant.py) through `decide`: least resources, quality, exact D1,
scale-out, as close as possible, backtracking, best-effort leftovers, deferral."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_contracts import events as ev
from sextant_core.planning.assess import SizingParams
from sextant_core.planning.sextant import SextantParams, SextantPlanner
from sextant_core.state import fold
from sextant_core.testing.builders import record

from .conftest import World, chosen, place, vec

HET = {"A": 10.0, "B": 5.0}
UP = {"c1": 10.0, "c2": 18.0, "c4": 30.0}


def planner(margin: float = 0.0, alpha: float = 3.0, **kw: Any) -> SextantPlanner:
    # α = 3 in these tables (the arithmetic in the comments), whatever the tuned default; the
    # ranked single-node choice (version 5.1, still replayed): the satisficing one is
    # test_satisfice.py's
    kw.setdefault("choice", "rank")
    return SextantPlanner(SextantParams(sizing=SizingParams(margin=margin, alpha=alpha), **kw))


def ips(x: float) -> dict[str, Any]:
    return {"type": "instruction_rate", "ips": x}


def test_least_resources_on_the_platform_that_needs_fewest() -> None:
    # R = 17. A: U(c)·1 = 10, 18, 24, 30 → c* = 2. B: H = 5/10 = 0.5 → needs U ≥ 34 > 30: never.
    st = (World().server("a1", platform="A").server("b1", platform="B")
          .workload("new", target=ips(17), heterogeneity=HET, scale_up=UP, memory_gb=2.0).state())
    d = place(st, planner())
    assert chosen(d) == (("a1", 2, 2.0),)
    e = d.events[0]
    assert isinstance(e, ev.PlacementDecided) and e.predicted_performance == pytest.approx(18.0)
    assert e.trace.filtered["quasar-target"] == {"below_target": 1}  # b1


def test_a_slower_platform_with_more_cores_when_the_fast_one_is_full() -> None:
    # a1 has 1 free core (U(1) = 10 < 9? no: R = 9 → c* = 1 on A); make R = 12: A needs 2 cores, has 1;
    # B (H = 0.5): U(c)·0.5 ≥ 12 → U ≥ 24 → c* = 3 (interpolated 24) → b1 with 3 cores
    st = (World().server("a1", platform="A", cores=8).server("b1", platform="B", cores=8)
          .workload("hog", on=(("a1", 7, 1.0),), ref="A")
          .workload("new", target=ips(12), heterogeneity=HET, scale_up=UP).state())
    assert chosen(place(st, planner())) == (("b1", 3, 1.0),)


def test_predicted_interference_lowers_quality() -> None:
    # R = 17, newcomer tolerates 40 on llc_cap. a1 hosts a resident causing 40 there: x = 1 → f = 0.95,
    # 18·0.95 = 17.1 ≥ 17 still meets with 2 cores but ratio 1.006; a2 is empty: ratio 18/17 = 1.059.
    # Quality-only ranking picks a2.
    st = (World().server("a1").server("a2")
          .workload("r", on=(("a1", 1, 1.0),), caused=vec(0, llc_cap=40))
          .workload("new", target=ips(17), heterogeneity=HET, scale_up=UP, tolerated=vec(100, llc_cap=40)).state())
    assert chosen(place(st, planner(packing_weight=0.0, pressure_weight=0.0))) == (("a2", 2, 1.0),)
    # pressure 50 → x = 1.25: f = 1 − 0.05·1.25³ = 0.902; 18·0.902 = 16.2 < 17 → 3 cores (U(3) = 24, 21.7)
    st2 = (World().server("a1")
           .workload("r", on=(("a1", 1, 1.0),), caused=vec(0, llc_cap=50))
           .workload("new", target=ips(17), heterogeneity=HET, scale_up=UP, tolerated=vec(100, llc_cap=40)).state())
    assert chosen(place(st2, planner())) == (("a1", 3, 1.0),)


def test_exact_d1_protects_residents() -> None:
    # a1: resident tolerates 30 on core and causes 0; the newcomer causes 35 → residual 30 − 35 < 0
    st = (World().server("a1").server("a2")
          .workload("r", on=(("a1", 1, 1.0),), tolerated=vec(100, core=30))
          .workload("new", target=ips(9), heterogeneity=HET, scale_up=UP, caused=vec(0, core=35)).state())
    d = place(st, planner())
    assert chosen(d) == (("a2", 1, 1.0),)
    assert d.events[0].trace.filtered["paragon-d1-residual"] == {"d1r_core": 1}  # type: ignore[attr-defined]


def test_scale_out_when_no_single_server_meets_the_target() -> None:
    # analytics, completion T = 54 s, elapsed 5 − 1 = 4 → R = 1/50 = 0.02; U(c) = c·1e-3 (c ≤ 8), E = 1;
    # one node gives at most 0.008 → 3 nodes (0.024), trimmed to κ = 7 per node (0.021 ≥ 0.02)
    w = World()
    for i in range(4):
        w.server(f"a{i}", platform="A")
    st = w.workload("new", kind="analytics", target={"type": "completion_time", "seconds": 54.0},
                    heterogeneity={"A": 1e-3}, scale_up={"c1": 1e-3, "c8": 8e-3},
                    scale_out={"n1": 1e-3, "n2": 2e-3}, cores=8, memory_gb=8.0).state()
    d = place(st, planner())
    assert [(s, c) for s, c, _ in chosen(d)] == [("a0", 7), ("a1", 7), ("a2", 7)]
    assert [m for _, _, m in chosen(d)] == [7.0, 7.0, 7.0]   # 8 GiB / 8 cores · 7 cores
    assert "scale_out" in d.events[0].trace.notes  # type: ignore[attr-defined]


def test_a_scale_out_on_one_node_takes_the_memory_it_was_checked_for() -> None:
    # a0 has 7 cores and 12 GiB free (a resident holds 1 core, 20 GiB). The request, 8 cores and
    # 16 GiB (2 GiB a core), fits no single node's memory, so the spread runs: 6 cores fit the
    # memory, R = 1/(204 − 4) = 0.005 needs U(5) = 5e-3, a one-node spread of 5 cores, 10 GiB.
    # Before planner version 6.1 that node got the whole request's 16 GiB: 36 of 32 GiB in use.
    st = (World().server("a0", platform="A")
          .workload("r", on=(("a0", 1, 20.0),))
          .workload("new", kind="analytics", target={"type": "completion_time", "seconds": 204.0},
                    heterogeneity={"A": 1e-3}, scale_up={"c1": 1e-3, "c8": 8e-3},
                    scale_out={"n1": 1e-3, "n2": 2e-3}, cores=8, memory_gb=16.0).state())
    d = place(st, planner())
    assert chosen(d) == (("a0", 5, 10.0),)
    assert "scale_out" in d.events[0].trace.notes  # type: ignore[attr-defined]
    old = place(st, planner(scale_out_memory="request"))  # kept for replaying version 6 and 5.1
    assert chosen(old) == (("a0", 5, 16.0),)
    with pytest.raises(ValueError, match="scale_out_memory"):
        SextantParams(scale_out_memory="all")


def test_batch_workloads_never_spread_and_get_as_close_as_possible() -> None:
    # R = 100 is out of reach (best 30 on A with 4 cores): the best predicted server, cores at c_sat = 4
    st = (World().server("a1", platform="A").server("b1", platform="B")
          .workload("new", target=ips(100), heterogeneity=HET, scale_up=UP).state())
    d = place(st, planner())
    assert chosen(d) == (("a1", 4, 1.0),)
    assert "as_close_as_possible" in d.events[0].trace.notes  # type: ignore[attr-defined]


def test_d1_is_relaxed_step_by_step_when_it_blocks_every_server() -> None:
    # the only server hosts a resident tolerating 30 on core; the newcomer causes 38 → −8:
    # relaxations 5 (−8 < −5) then 10 (−8 ≥ −10) → placed after 2 backtracking passes
    st = (World().server("a1")
          .workload("r", on=(("a1", 1, 1.0),), tolerated=vec(100, core=30))
          .workload("new", target=ips(9), heterogeneity=HET, scale_up=UP, caused=vec(0, core=38)).state())
    d = place(st, planner(d1_step=5.0, d1_max=20.0))
    t = d.events[0].trace  # type: ignore[attr-defined]
    assert chosen(d) == (("a1", 1, 1.0),) and t.backtracks == 2 and "d1_relaxed" in t.notes


def test_deferred_when_nothing_has_room() -> None:
    st = (World().server("a1", cores=2).workload("hog", on=(("a1", 2, 1.0),))
          .workload("new", target=ips(9), heterogeneity=HET, scale_up=UP).state())
    d = place(st, planner())
    e = d.events[0]
    assert isinstance(e, ev.PlacementDeferred) and e.reasons == ("quasar-fit/no_free_cores",)


def test_best_effort_takes_leftovers_without_hurting_anyone() -> None:
    # BE asks for 2 cores; a1 hosts a sensitive resident it would hurt (core: 20 < 30) → a2
    st = (World().server("a1").server("a2")
          .workload("r", on=(("a1", 1, 1.0),), tolerated=vec(100, core=20))
          .workload("be", target=ips(1000), heterogeneity=HET, scale_up=UP, cores=2, best_effort=True,
                    caused=vec(0, core=30)).state())
    d = place(st, planner(), wid="be")
    assert chosen(d) == (("a2", 2, 1.0),)
    assert "best_effort" in d.events[0].trace.notes  # type: ignore[attr-defined]
    st2 = (World().server("a1").workload("r", on=(("a1", 1, 1.0),), tolerated=vec(100, core=20))
           .workload("be", cores=2, best_effort=True, caused=vec(0, core=30)).state())
    assert isinstance(place(st2, planner(), wid="be").events[0], ev.PlacementDeferred)  # never relaxed


def test_relative_rows_read_the_target_as_95_percent_of_the_best() -> None:
    # rows are relative speeds (≤ 1) while the target says 9.5e8: R = 0.95 · best at the requested
    # cores. S(c) = U(c)/U(c_ref = 1): S(1) = 1, S(2) = 2. Requested 2: R = 0.95 · 1.0 · 2 = 1.9 →
    # A: S(2) · 1.0 = 2 ≥ 1.9 → 2 cores; B: 0.9 · 2 = 1.8 < 1.9 never
    st = (World().server("a1", platform="A").server("b1", platform="B")
          .workload("new", target=ips(9.5e8), heterogeneity={"A": 1.0, "B": 0.9}, scale_up={"c1": 0.5, "c2": 1.0},
                    cores=2)
          .state())
    d = place(st, planner())
    assert chosen(d) == (("a1", 2, 1.0),)
    assert "relative_units" in d.events[0].trace.notes  # type: ignore[attr-defined]
    # no request: the reference configuration (1 core): R = 0.95 · 1.0 · S(1) = 0.95 → A with 1 core
    # (not the top of the curve, S(2) = 2, which would ask for 1.9)
    st1 = (World().server("a1", platform="A").server("b1", platform="B")
           .workload("new", target=ips(9.5e8), heterogeneity={"A": 1.0, "B": 0.9}, scale_up={"c1": 0.5, "c2": 1.0})
           .state())
    assert chosen(place(st1, planner())) == (("a1", 1, 1.0),)


def test_a_retried_deferral_looks_only_at_what_changed() -> None:
    from sextant_core.state import evolve

    # the newcomer hurts the sensitive resident of a1 beyond any relaxation (core: 10 − 60 < −20) and
    # a2 is full: deferred. A change on a2 elsewhere (another resident leaves, no core freed for it)
    # keeps it deferred without a full evaluation; r1 leaving a1 makes room and it is placed.
    w = (World().server("a1").server("a2", cores=2)
         .workload("r1", on=(("a1", 1, 1.0),), tolerated=vec(100, core=10))
         .workload("r2", on=(("a2", 2, 1.0),))
         .workload("new", target=ips(9), heterogeneity=HET, scale_up=UP, caused=vec(0, core=60)))
    st = w.state()
    p = planner()
    first = place(st, p)
    assert isinstance(first.events[0], ev.PlacementDeferred)
    st = evolve(st, first.events[0])
    st2 = evolve(st, ev.ServerDrained(at=6.0, server_id="a2"))
    again = p.place(st2, st2.workloads["new"], ctx_at(7.0))
    assert again.allocation is None and again.trace.notes == ("still_deferred",)
    fresh = SextantPlanner(p.params).place(st2, st2.workloads["new"], ctx_at(7.0))  # same verdict in full
    assert fresh.allocation is None
    st3 = evolve(st2, ev.WorkloadCompleted(at=8.0, workload_id="r1"))
    placed = p.place(st3, st3.workloads["new"], ctx_at(9.0))
    assert placed.allocation is not None and placed.allocation.servers == ("a1",)


def test_the_deferral_memo_forgets_workloads_that_ended() -> None:
    from sextant_core.state import evolve

    # a1 has no room: every newcomer is deferred and remembered; once w1 is revoked and w2 has
    # completed, the memo no longer holds them after it prunes (here: past 2 deferrals)
    w = World().server("a1", cores=2).workload("hog", on=(("a1", 2, 1.0),))
    for wid in ("w1", "w2", "w3", "w4"):
        w.workload(wid, target=ips(9), heterogeneity=HET, scale_up=UP)
    st = w.state()
    p = SextantPlanner(SextantParams(sizing=SizingParams(margin=0.0, alpha=3.0)), prune_after=2)
    for wid in ("w1", "w2"):
        d = place(st, p, wid=wid)
        assert isinstance(d.events[0], ev.PlacementDeferred)
        st = evolve(st, d.events[0])
    assert p.deferrals == {"w1", "w2"}
    st = evolve(st, ev.WorkloadRevoked(at=6.0, workload_id="w1"))
    st = evolve(st, ev.WorkloadFailed(at=6.0, workload_id="w2", reason="gone"))
    assert isinstance(place(st, p, wid="w3").events[0], ev.PlacementDeferred)  # 3 > 2: pruned
    assert p.deferrals == {"w3"}
    assert isinstance(place(st, p, wid="w4").events[0], ev.PlacementDeferred)
    assert p.deferrals == {"w3", "w4"}  # live deferrals stay


def ctx_at(at: float) -> Any:
    from .conftest import ctx

    return ctx(at)


def test_best_effort_stays_off_a_guarded_workloads_servers() -> None:
    # r tolerates everything by its classification, so best effort may join it on a1 ...
    world = (World().server("a1").workload("r", on=(("a1", 1, 1.0),), tolerated=vec(100))
             .workload("be", cores=2, best_effort=True, caused=vec(0, core=5)))
    assert chosen(place(world.state(), planner(), wid="be")) == (("a1", 2, 1.0),)
    # ... until the reprovisioner evicted best effort for r (the ladder's `evict` rung): then r's
    # servers tolerate no added pressure, and a best-effort newcomer (D1 never relaxed) waits
    r = world.state().workloads["r"]
    assert r.allocation is not None and not r.guarded
    evicted = ev.AllocationAdjusted(at=2.0, workload_id="r", decision=record(9), action="evict",
                                    allocation=r.allocation, reason="interference suspected")
    st = fold([evicted], world.state())
    assert st.workloads["r"].guarded and st.servers["a1"].tolerated_min == (0.0,) * len(st.servers["a1"].tolerated_min)
    d = place(st, planner(), wid="be")
    assert isinstance(d.events[0], ev.PlacementDeferred)
