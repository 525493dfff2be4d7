"""Injected stragglers (ground truth v2) slow the job, are recorded by the world, and can be scored."""

from __future__ import annotations

import dataclasses
import heapq

import pytest
from sextant_contracts.model import Allocation, Assignment
from sextant_sim import stragglers
from sextant_sim.cluster import World
from sextant_sim.runner import run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare
from sextant_sim.workloads.base import InjectedStraggler


@pytest.fixture(scope="module")
def hadoop() -> Setup:
    return prepare(load_scenario("quasar-hadoop-stragglers"), 6)


def _finish(st: Setup, injected: InjectedStraggler | None) -> tuple[float, list[tuple[str, str, float, float]]]:
    """Run one job alone on the two J servers (24 cores) until it completes; (time, recorded)."""
    sub = st.subs[0]
    an = sub.truth.analytics
    assert an is not None
    truth = dataclasses.replace(sub.truth, analytics=dataclasses.replace(an, injected=injected))
    heap: list[tuple[float, str, str, int]] = []
    sids = [sid for sid, _ in st.servers]
    pidx = [st.cat.index(p.platform_id) for _, p in st.servers]
    w = World(st.cat, sids, pidx, st.model, st.scale, lambda at, kind, key, v: heapq.heappush(heap, (at, kind, key, v)))
    js = [sid for sid, p in st.servers if p.platform_id == "J"][:2]
    alloc = Allocation(assignments=tuple(Assignment(server_id=s, cores=8, memory_gb=truth.footprint_gb) for s in js))
    w.start(sub.workload_id, truth, alloc, 0.0)
    while heap:
        at, _kind, key, v = heapq.heappop(heap)
        if w.milestone(key, v, at)[0] == "completed":
            return at, w.stragglers
    raise AssertionError("never completed")


def test_an_injected_slow_node_lengthens_the_job_and_is_recorded(hadoop: Setup) -> None:
    clean, rec0 = _finish(hadoop, None)
    slow, rec = _finish(hadoop, InjectedStraggler(start=0.2, node=0.99, slowdown=3.0))
    assert rec0 == []
    assert len(rec) == 1
    wid, sid, at, f = rec[0]
    js = [s for s, p in hadoop.servers if p.platform_id == "J"][:2]
    assert (wid, sid, f) == (hadoop.subs[0].workload_id, js[1], 3.0)  # node 0.99 × 2 nodes → the second
    assert 0.0 < at < clean
    # two equal nodes, one at 1/3 speed from 20 % of the bulk: the bulk alone takes ≥ 1.2× longer
    assert slow > 1.2 * clean


def test_a_run_records_every_injected_straggler_it_reaches(hadoop: Setup) -> None:
    res = run_profile(hadoop, "least-loaded", 6)
    truth = stragglers.truth(res.engine)
    planned = set(truth.planned)
    assert len(planned) >= 10
    assert truth.injected and {i.workload_id for i in truth.injected} <= planned
    lo, hi = hadoop.gt.stragglers.slowdown if hadoop.gt.stragglers else (0, 0)
    assert all(lo <= i.slowdown <= hi for i in truth.injected)
    assert sum(truth.intrinsic_tasks.values()) > 0  # intrinsic (data-skew) stragglers too
    assert set(truth.as_json()) == {"injected", "planned", "intrinsic_tasks"}


def test_scoring_precision_recall_and_delay() -> None:
    t = stragglers.StragglerTruth(injected=(stragglers.Injected("a", "s1", 100.0, 2.0),
                                            stragglers.Injected("b", "s2", 200.0, 3.0)),
                                  intrinsic_tasks={}, planned=("a", "b"))
    # one hit (a/s1, first detection at 130 → delay 30), one false alarm (c/s9), b missed
    s = stragglers.score(t, [("a", "s1", 150.0), ("a", "s1", 130.0), ("c", "s9", 10.0)])
    assert (s.precision, s.recall, s.true_positives, s.detections, s.injected) == (0.5, 0.5, 1, 2, 2)
    assert s.mean_delay_s == 30.0
    nothing = stragglers.score(t, [])
    assert (nothing.precision, nothing.recall, nothing.mean_delay_s) == (1.0, 0.0, None)
