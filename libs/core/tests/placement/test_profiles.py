"""The baseline profiles: exact names, their plugins, and the behaviour each one stands for."""

from __future__ import annotations

import pytest
from sextant_contracts import events as ev
from sextant_core.decide import DecisionContext
from sextant_core.placement import BASELINES, get_profile, place_request, planner_for, profile_names
from sextant_core.state import fold
from sextant_core.testing.builders import record, server, submitted

from .conftest import request, row10, table_of


def test_baseline_names_are_exactly_these() -> None:
    assert BASELINES == ("least-loaded", "heterogeneity-oblivious", "interference-oblivious", "random",
                         "reservation-least-loaded")
    assert set(BASELINES) <= set(profile_names())


@pytest.mark.parametrize(("name", "filters", "scorers"), [
    ("least-loaded", ["schedulable", "fit"], [("least-allocated", 1.0)]),
    ("heterogeneity-oblivious", ["schedulable", "fit", "interference-d1", "interference-d2"], [("random", 1.0)]),
    ("interference-oblivious", ["schedulable", "fit"], [("platform", 10.0), ("least-allocated", 1.0)]),
    ("random", ["schedulable", "fit"], [("random", 1.0)]),
    ("reservation-least-loaded", ["schedulable", "fit"], [("least-allocated", 1.0)]),
], ids=lambda v: v if isinstance(v, str) else None)
def test_baseline_composition(name: str, filters: list[str], scorers: list[tuple[str, float]]) -> None:
    p = get_profile(name)
    assert [s.name for s in p.filters] == filters
    assert [(s.name, s.weight) for s in p.scorers] == scorers


def test_interference_oblivious_follows_the_platform_not_the_load() -> None:
    # s0 on A (perf 1), empty; s1 on B (perf 2), 6 of 8 cores used, and a noisy neighbour
    t = table_of(2, platforms=("A", "B"), platform_code=[0, 1], free_cores=[8, 2],
                 caused_sum=[row10(0), row10(90)])
    out = place_request(get_profile("interference-oblivious"), t,
                        request(1, 1.0, performance={"A": 1.0, "B": 2.0}, tolerated=row10(10)))
    # s0: platform 50, least-allocated (87.5 + 96.875)/2 = 92.1875 → (10·50 + 92.1875)/11 ≈ 53.84
    # s1: platform 100, least-allocated (12.5 + 96.875)/2 = 54.6875 → (1000 + 54.6875)/11 ≈ 95.88
    assert out.allocation is not None and out.allocation.servers == ("s1",)


def test_heterogeneity_oblivious_never_violates_and_ignores_the_platform() -> None:
    # even rows are on the fast platform but their residents cannot tolerate the newcomer
    n = 40
    t = table_of(n, platforms=("A", "B"), platform_code=[i % 2 for i in range(n)],
                 tolerated_min=[row10(100, core=10) if i % 2 == 0 else row10(100) for i in range(n)])
    req = dict(caused=row10(0, core=20), performance={"A": 5.0, "B": 1.0})
    picks = set()
    for seed in range(30):
        out = place_request(get_profile("heterogeneity-oblivious"), t, request(**req, seed=seed))  # type: ignore[arg-type]
        assert out.allocation is not None
        row = t.row(out.allocation.servers[0])
        assert row % 2 == 1  # D1 core = 10 − 20 < 0 on even rows
        picks.add(row)
    assert len(picks) > 5  # a random server among the 20 that pass


def test_reservation_profile_places_what_the_sizer_reserves() -> None:
    st = fold([server("s1", cores=16), server("s2", cores=16),
               submitted("w", cores=2, memory_gb=4.0, fast_path=True),
               ev.WorkloadClassified(at=2, workload_id="w", decision=record(1)),
               ev.WorkloadAdmitted(at=2, workload_id="w", decision=record(2), arq_class=0)])
    ctx = DecisionContext(at=3, seed=1, state_position=0, causation=(), profile="p", policy_version="1")
    w = st.workloads["w"]
    plain = planner_for("reservation-least-loaded").place(st, w, ctx)
    assert plain.allocation is not None and plain.allocation.total_cores == 2  # the request itself

    def overprovision(state, wl):  # type: ignore[no-untyped-def]
        return (wl.requested_cores * 3, wl.requested_memory_gb * 3)  # a user reserving 3×

    fat = planner_for("reservation-least-loaded", sizer=overprovision).place(st, w, ctx)
    assert fat.allocation is not None and fat.allocation.assignments[0].cores == 6
    assert fat.allocation.assignments[0].memory_gb == 12.0
