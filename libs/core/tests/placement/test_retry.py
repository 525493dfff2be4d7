"""Incremental retries of deferred placements (placement/retry.py, `Planner.could_use`).

The property that makes the shortcut safe: for the capacity-filtered planners, whenever
`could_use` says a freed server cannot help, the full search finds nothing either — so skipping
it changes no decision.
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from sextant_contracts import events as ev
from sextant_core.decide import DecisionContext
from sextant_core.placement import BASELINES, planner_for
from sextant_core.placement.retry import fits_any, spread_could_fit
from sextant_core.planning.paragon import ParagonPlanner
from sextant_core.state import fold

from .conftest import Cluster, table_of


def test_fits_any_counts_only_freed_schedulable_servers(cluster: type[Cluster]) -> None:
    st_ = cluster().server("a", cores=4).server("b", cores=8).resident("r", ("b", 6, 8.0)).state()
    assert fits_any(st_, ("a",), 4, 32.0)  # a: 4 free cores, 32 GiB free
    assert not fits_any(st_, ("b",), 4, 1.0)  # b: 8 − 6 = 2 free cores < 4
    assert fits_any(st_, ("b",), 2, 24.0)  # 2 ≥ 2 cores, 32 − 8 = 24 ≥ 24 GiB
    assert not fits_any(st_, ("b",), 2, 24.5)
    assert fits_any(st_, ("a",), 16, 1.0)  # a request above a server's size counts as its size (4)
    assert not fits_any(st_, ("b",), 1, 1.0, exclude="r")  # r already on b: b is not a candidate for r
    down = fold([ev.ServerFailed(at=3.0, server_id="a")], st_)
    assert not fits_any(down, ("a",), 1, 1.0)  # not schedulable
    assert not fits_any(st_, ("zz",), 1, 1.0)  # unknown server


def test_spread_could_fit_arithmetic() -> None:
    # free cores 3, 2, 0; free memory 4, 1, 32; unit memory = 6 GiB / 6 cores = 1 GiB
    t = table_of(3, free_cores=[3, 2, 0], free_memory_gb=[4.0, 1.0, 32.0])
    # units per row = min(cores, floor(mem / 1)) = min(3, 4) + min(2, 1) + (row 2 has no core) = 3 + 1 = 4
    assert spread_could_fit(t, 4, 4.0)
    assert not spread_could_fit(t, 5, 5.0)
    # a down server does not count: 1 unit left
    t2 = table_of(3, free_cores=[3, 2, 0], free_memory_gb=[4.0, 1.0, 32.0], up=[False, True, True])
    assert spread_could_fit(t2, 1, 1.0) and not spread_could_fit(t2, 2, 2.0)


def _ctx(at: float) -> DecisionContext:
    return DecisionContext(at=at, seed=7, state_position=0, causation=(), profile="t", policy_version="1")


@settings(max_examples=200, deadline=None)
@given(data=st.data(), profile=st.sampled_from((*BASELINES, "paragon")))
def test_could_use_false_means_the_retry_would_fail_too(data: st.DataObject, profile: str) -> None:
    """Deferred at S (the search failed), a resident ends (S'): if `could_use(S', freed)` is
    False, the full search at S' fails as well."""
    c = Cluster()
    n = data.draw(st.integers(2, 4), label="servers")
    for i in range(n):
        c.server(f"s{i}", platform="AB"[i % 2], cores=data.draw(st.sampled_from([2, 4, 8])),
                 memory_gb=data.draw(st.sampled_from([4.0, 8.0, 16.0])))
    residents = []
    for j in range(data.draw(st.integers(1, 6), label="residents")):
        sid = f"s{data.draw(st.integers(0, n - 1))}"
        cores = data.draw(st.integers(1, 4))
        before = fold(c.events)
        s = before.servers[sid]
        if s.free_cores < cores or s.free_memory_gb < 2.0:
            continue
        c.resident(f"r{j}", (sid, cores, 2.0), caused={"llc": data.draw(st.floats(0, 60))})
        residents.append(f"r{j}")
    assume(residents)
    c.newcomer("new", cores=data.draw(st.integers(1, 24)), memory_gb=data.draw(st.sampled_from([1.0, 4.0, 12.0])),
               tolerated={"llc": data.draw(st.floats(20, 100))})
    state = c.state()
    planner: Any = ParagonPlanner() if profile == "paragon" else planner_for(profile)
    assume(planner.place(state, state.workloads["new"], _ctx(5.0)).allocation is None)  # deferred at S
    gone = data.draw(st.sampled_from(residents))
    freed = tuple(sorted(state.workloads[gone].allocation.servers))  # type: ignore[union-attr]
    after = fold([ev.WorkloadStarted(at=6.0, workload_id=gone, allocation=state.workloads[gone].allocation),
                  ev.WorkloadCompleted(at=7.0, workload_id=gone)], state)
    w = after.workloads["new"]
    usable = planner.could_use(after, w, freed)
    event(f"could_use={usable}")
    if not usable:
        assert planner.place(after, w, _ctx(8.0)).allocation is None
