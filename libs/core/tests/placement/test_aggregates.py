"""Per-server interference aggregates and the server journal maintained by `evolve`."""

from __future__ import annotations

import pickle

from sextant_contracts import events as ev
from sextant_core.state import fold
from sextant_core.state.model import JOURNAL_SPAN, ServerJournal
from sextant_core.testing.builders import server

from .conftest import Cluster, classified, vec


def journal_ids(j: ServerJournal | None, n: int) -> list[str]:
    out = []
    while j is not None and len(out) < n:
        out.append(j.server_id)
        j = j.prev
    return out


def test_sum_of_caused_and_min_of_tolerated(cluster: type[Cluster]) -> None:
    st = (cluster().server("s1")
          .resident("a", ("s1", 1, 1.0), tolerated=vec(80, core=30), caused=vec(10, llc_cap=40))
          .resident("b", ("s1", 1, 1.0), tolerated=vec(60, core=50), caused=vec(5, llc_cap=15))
          .state())
    s = st.servers["s1"]
    # caused: llc_cap 40 + 15 = 55; every other source 10 + 5 = 15
    assert s.caused_sum[2] == 55.0 and s.caused_sum[0] == 15.0
    # tolerated: core min(30, 50) = 30; others min(80, 60) = 60
    assert s.tolerated_min[7] == 30.0 and s.tolerated_min[0] == 60.0


def test_unclassified_source_is_neutral_and_release_restores(cluster: type[Cluster]) -> None:
    c = cluster().server("s1").resident("a", ("s1", 2, 4.0), tolerated={"core": 20.0}, caused={"tlb": 30.0})
    st = c.state()
    s = st.servers["s1"]
    assert s.tolerated_min[7] == 20.0 and s.tolerated_min[0] == 100.0  # missing source → 100
    assert s.caused_sum[6] == 30.0 and s.caused_sum[7] == 0.0  # missing source → 0
    st = fold([ev.WorkloadRevoked(at=5, workload_id="a")], st)
    s = st.servers["s1"]
    assert s.caused_sum == (0.0,) * 10 and s.tolerated_min == (100.0,) * 10


def test_reclassification_in_place_refreshes_the_servers(cluster: type[Cluster]) -> None:
    st = cluster().server("s1").server("s2").resident("a", (("s1", 1, 1.0), ("s2", 1, 1.0)),
                                                       caused=vec(10)).state()
    st = fold([ev.WorkloadStarted(at=3, workload_id="a", allocation=st.workloads["a"].allocation),  # type: ignore[arg-type]
               classified("a", caused=vec(25), at=4, n=9)], st)
    assert st.servers["s1"].caused_sum == (25.0,) * 10 and st.servers["s2"].caused_sum == (25.0,) * 10
    assert journal_ids(st.server_journal, 2) == ["s2", "s1"]


def test_best_effort_cores_are_counted(cluster: type[Cluster]) -> None:
    st = (cluster().server("s1").resident("be", ("s1", 3, 6.0), best_effort=True)
          .resident("pri", ("s1", 2, 2.0)).state())
    assert (st.servers["s1"].best_effort_cores, st.servers["s1"].best_effort_memory_gb) == (3, 6.0)


def test_journal_records_changes_and_marks_new_rows() -> None:
    st = fold([server("s1"), server("s2"), server("s1", platform="A"), server("s2", platform="B")])
    j = st.server_journal
    assert j is not None
    # newest first: s2 platform change (added), s1 re-registered same platform, s2 new, s1 new
    entries = []
    while j is not None:
        entries.append((j.server_id, j.added))
        j = j.prev
    assert entries == [("s2", True), ("s1", False), ("s2", True), ("s1", True)]


def test_journal_is_bounded_dropped_by_pickle_and_reset_by_with() -> None:
    st = fold([server("s1")] + [ev.ServerDrained(at=1, server_id="s1")] * (JOURNAL_SPAN + 5))
    assert st.server_journal is not None and st.server_journal.depth < JOURNAL_SPAN
    copy = pickle.loads(pickle.dumps(st))
    assert copy.server_journal is None and copy == st  # the journal takes no part in equality
    assert st.with_(servers=st.servers).server_journal is None
    assert st.with_(position=3).server_journal is st.server_journal
