"""The residual index (planning/residual.py): values, incremental == rebuild, exclusion."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_contracts import events as ev
from sextant_core.placement import build_table
from sextant_core.planning.residual import ResidualIndex
from sextant_core.state import evolve

from .conftest import SOURCES, World, vec


def test_values_from_residents() -> None:
    # A: t_llc = 50, c_llc = 20; B: t_llc = 90, c_llc = 25 → m = min(70, 115) = 70, c_server = 45 → 25
    st_ = (World().server("s1").server("s2")
           .workload("A", on=(("s1", 1, 1.0),), tolerated=vec(100, llc_cap=50), caused=vec(0, llc_cap=20))
           .workload("B", on=(("s1", 1, 1.0),), tolerated=vec(100, llc_cap=90), caused=vec(0, llc_cap=25))
           .state())
    res = ResidualIndex().residual(st_, build_table(st_))
    k = SOURCES.index("llc_cap")
    assert res[0, k] == 25.0
    assert res[0, SOURCES.index("core")] == 100.0  # neutral elsewhere: min(100+0) − 0
    assert (res[1] == 100.0).all()                  # empty server


def test_per_core_sources_feel_the_heaviest_co_runner() -> None:
    # core is a per-core source: A t = 50, c = 20; B t = 90, c = 25 → residual = min(κ·t) = 50
    # (additive reading: min(70, 115) − 45 = 25); the pressure on a newcomer = max(20, 25) = 25,
    # while the shared llc_cap adds up: 10 + 5 = 15
    st_ = (World().server("s1")
           .workload("A", on=(("s1", 1, 1.0),), tolerated=vec(100, core=50), caused=vec(0, core=20, llc_cap=10))
           .workload("B", on=(("s1", 1, 1.0),), tolerated=vec(100, core=90), caused=vec(0, core=25, llc_cap=5))
           .state())
    table = build_table(st_)
    k, llc = SOURCES.index("core"), SOURCES.index("llc_cap")
    assert ResidualIndex().residual(st_, table)[0, k] == 50.0
    assert ResidualIndex(per_core=False).residual(st_, table)[0, k] == 25.0
    # κ = 0.5 keeps residents at half their tolerance: min(25, 45) = 25
    assert ResidualIndex(kappa=0.5).residual(st_, table)[0, k] == 25.0
    p = ResidualIndex().pressure(st_, table)
    assert p[0, k] == 25.0 and p[0, llc] == 15.0
    assert ResidualIndex(per_core=False).pressure(st_, table)[0, k] == 45.0
    # without B (being re-placed): residual core = 50, pressure core = 20
    from sextant_core.placement import without_workload

    t2 = without_workload(table, st_, st_.workloads["B"])
    assert ResidualIndex().pressure(st_, t2, exclude="B")[0, k] == 20.0


def test_excluding_a_resident_being_replaced() -> None:
    st_ = (World().server("s1")
           .workload("A", on=(("s1", 1, 1.0),), tolerated=vec(100, llc_cap=50), caused=vec(0, llc_cap=20))
           .workload("B", on=(("s1", 1, 1.0),), tolerated=vec(100, llc_cap=90), caused=vec(0, llc_cap=25))
           .state())
    from sextant_core.placement import without_workload

    table = without_workload(build_table(st_), st_, st_.workloads["A"])
    res = ResidualIndex().residual(st_, table, exclude="A")
    # without A: m = 90 + 25 = 115, c_server = 25 → 90
    assert res[0, SOURCES.index("llc_cap")] == 90.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 60), st.integers(20, 100), st.booleans()),
                min_size=1, max_size=12))
def test_incremental_equals_rebuild(steps: list[tuple[int, int, int, bool]]) -> None:
    """Following the journal through placements and completions gives the rebuilt values."""
    w = World()
    for i in range(4):
        w.server(f"s{i}")
    st_ = w.state()
    index = ResidualIndex()
    index.minimum(st_)
    for n, (srv, c, t, finish) in enumerate(steps):
        extra = World()
        extra.n = 100 + n
        extra.workload(f"w{n}", on=((f"s{srv}", 1, 1.0),), tolerated=vec(100, tlb=t), caused=vec(0, tlb=c))
        for e in extra.events:
            st_ = evolve(st_, e)
        if finish:
            st_ = evolve(st_, ev.WorkloadCompleted(at=3.0, workload_id=f"w{n}"))
        got = np.array(index.minimum(st_))
        fresh = ResidualIndex()
        want = fresh.minimum(st_)
        np.testing.assert_array_equal(got, want)
        table = build_table(st_)
        # the kept columns == the formulas over the whole table (an absent id excludes nothing)
        np.testing.assert_array_equal(index.residual(st_, table), fresh.residual(st_, table, exclude="nobody"))
        np.testing.assert_array_equal(index.pressure(st_, table), fresh.pressure(st_, table, exclude="nobody"))
    assert index.rebuilds == 1 and index.syncs >= 1
