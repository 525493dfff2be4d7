"""The candidate table: its columns, and that the incremental index always equals a full build."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_contracts import events as ev
from sextant_core.admission.quality import server_quality, table_quality
from sextant_core.placement import CandidateTable, TableIndex, build_table, without_workload
from sextant_core.placement.table import _ARRAY_FIELDS
from sextant_core.state import ClusterState, fold
from sextant_core.testing.builders import alloc, record, server, submitted

from .conftest import Cluster, classified, vec


def same(a: CandidateTable, b: CandidateTable) -> bool:
    return (a.server_ids == b.server_ids and a.platforms == b.platforms
            and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in _ARRAY_FIELDS))


def test_columns_follow_the_state(cluster: type[Cluster]) -> None:
    st_ = (cluster().server("b", platform="Y", cores=16, memory_gb=64).server("a", platform="X")
           .resident("w1", ("b", 4, 10.0), caused=vec(20), tolerated=vec(70)).state())
    st_ = fold([ev.ServerDrained(at=3, server_id="a")], st_)
    t = build_table(st_)
    assert t.server_ids == ("a", "b")  # sorted: the tie-break order
    assert t.platforms == ("X", "Y") and t.platform_code.tolist() == [0, 1]
    assert t.free_cores.tolist() == [8, 12] and t.free_memory_gb.tolist() == [32.0, 54.0]
    assert t.residents.tolist() == [0, 1] and t.schedulable.tolist() == [False, True]
    assert t.caused_sum[1].tolist() == [20.0] * 10 and t.tolerated_min[0].tolist() == [100.0] * 10
    assert t.row("b") == 1
    with pytest.raises(KeyError):
        t.row("c")
    with pytest.raises(ValueError):
        t.free_cores[0] = 1  # read-only


def test_extra_columns_are_checked_and_attached() -> None:
    t = build_table(fold([server("s1"), server("s2")]))
    t2 = t.with_extra({"truth": [1.0, 2.0]})
    assert t2.extra["truth"].tolist() == [1.0, 2.0] and "truth" not in t.extra
    with pytest.raises(ValueError, match="expected \\(2"):
        t.with_extra({"bad": [1.0]})


def random_history(seed: int, steps: int) -> list[list[ev.Event]]:
    """Batches of events on 6 servers: placements, completions, drains, failures, recoveries,
    reclassifications and late registrations, with a random batch size."""
    rng = np.random.default_rng(seed)
    batches: list[list[ev.Event]] = [[server(f"s{i}", platform="AB"[i % 2], cores=8, memory_gb=16) for i in range(6)]]
    live: dict[str, tuple[str, ...]] = {}
    used = dict.fromkeys((f"s{i}" for i in range(6)), 0)
    n_servers = 6
    for k in range(steps):
        batch: list[ev.Event] = []
        for _ in range(int(rng.integers(1, 4))):
            op = rng.integers(0, 7)
            wid = f"w{k}-{len(batch)}"
            if op <= 2:
                on = tuple(sorted({f"s{j}" for j in rng.integers(0, n_servers, size=int(rng.integers(1, 3)))}))
                if any(used.get(s, 0) >= 8 for s in on):
                    continue
                for s in on:
                    used[s] += 1
                live[wid] = on
                batch += [submitted(wid, cores=len(on), memory_gb=float(len(on)), fast_path=True),
                          classified(wid, caused=vec(float(rng.integers(0, 30))), tolerated=vec(float(rng.integers(40, 100)))),
                          ev.WorkloadAdmitted(at=2, workload_id=wid, decision=record(2), arq_class=0),
                          ev.PlacementDecided(at=2, workload_id=wid, decision=record(3),
                                              allocation=alloc(*((s, 1, 1.0) for s in on)))]
            elif op == 3 and live:
                victim = sorted(live)[int(rng.integers(0, len(live)))]
                for s in live.pop(victim):
                    used[s] -= 1
                batch.append(ev.WorkloadRevoked(at=3, workload_id=victim))
            elif op == 4:
                sid = f"s{int(rng.integers(0, n_servers))}"
                batch.append(rng.choice([ev.ServerDrained(at=3, server_id=sid), ev.ServerFailed(at=3, server_id=sid),
                                         ev.ServerRecovered(at=3, server_id=sid)]))
            elif op == 5 and live:
                victim = sorted(live)[int(rng.integers(0, len(live)))]
                batch.append(classified(victim, caused=vec(float(rng.integers(0, 50))), at=4, n=7))
            elif op == 6 and rng.random() < 0.3:
                sid = f"s{n_servers}"
                n_servers += 1
                used[sid] = 0
                batch.append(server(sid, platform="C"))
        batches.append(batch)
    return batches


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), min_walk=st.sampled_from([0, 256]))
def test_incremental_index_equals_full_build(seed: int, min_walk: int) -> None:
    index = TableIndex(min_walk=min_walk)
    state = ClusterState()
    for batch in random_history(seed, 30):
        state = fold(batch, state)
        t = index.table(state)
        assert same(t, build_table(state))
        # the kept ARQ quality column == server_quality over the whole table (its Fortran-order columns)
        assert t.headroom is not None
        np.testing.assert_array_equal(t.headroom, server_quality(t.tolerated_min, t.caused_sum))
    assert index.stats.rebuilds + index.stats.syncs + index.stats.hits == 31


def test_index_follows_a_lineage_with_few_rebuilds() -> None:
    index = TableIndex()
    state = ClusterState()
    for batch in random_history(7, 60):
        state = fold(batch, state)
        index.table(state)
    # one rebuild per row-set change (registrations); every other step is a sync or a hit
    assert index.stats.syncs > 40 and index.stats.rebuilds <= 10


def test_branches_and_snapshots_stay_correct() -> None:
    history = random_history(3, 20)
    base = ClusterState()
    for batch in history[:10]:
        base = fold(batch, base)
    left = right = base
    index = TableIndex(lineages=2)
    for k, a in enumerate(history[10:]):
        left = fold(a, left)
        flip = ev.ServerFailed if k % 2 == 0 else ev.ServerRecovered
        right = fold([flip(at=5, server_id=f"s{k % 6}")], right)
        assert same(index.table(left), build_table(left))
        assert same(index.table(right), build_table(right))
    assert index.stats.syncs >= 10  # both branches are followed incrementally, not rebuilt
    snapshot = pickle.loads(pickle.dumps(left))  # no journal: served by a rebuild
    assert snapshot.server_journal is None and same(index.table(snapshot), build_table(left))


def test_without_workload_frees_its_share_and_its_pressure(cluster: type[Cluster]) -> None:
    st_ = (cluster().server("s1").server("s2")
           .resident("a", ("s1", 2, 4.0), caused=vec(10), tolerated=vec(50))
           .resident("b", (("s1", 1, 1.0), ("s2", 3, 3.0)), caused=vec(5), tolerated=vec(30)).state())
    t = build_table(st_)
    u = without_workload(t, st_, st_.workloads["b"])
    # s1: free 8 − 2 − 1 = 5 → without b: 6; s2: 8 − 3 = 5 → 8
    assert t.free_cores.tolist() == [5, 5] and u.free_cores.tolist() == [6, 8]
    # s1 caused 10 + 5 = 15 → 10; tolerated min(50, 30) = 30 → 50; s2 back to empty
    assert t.caused_sum[0, 0] == 15.0 and u.caused_sum[0, 0] == 10.0 and u.tolerated_min[0, 0] == 50.0
    assert u.caused_sum[1].tolist() == [0.0] * 10 and u.residents.tolist() == [1, 0]
    assert t.free_cores.tolist() == [5, 5]  # the input table is unchanged
    # its aggregates changed, so it keeps no quality column: computed from them instead
    assert u.headroom is None
    np.testing.assert_array_equal(table_quality(u), server_quality(u.tolerated_min, u.caused_sum))
    # s1 without b: t = 50, c = 10 → min(50, 90) = 50 per source → Q = 50; s2 empty → 100
    assert table_quality(u).tolist() == [50.0, 100.0]
