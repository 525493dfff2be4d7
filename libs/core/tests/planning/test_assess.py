"""The assessor keeps its last assessment (planning/assess.py): a placement right after its
admission on the same servers gets it again with its own seed; anything else computes anew."""

from __future__ import annotations

import numpy as np
from sextant_contracts import events as ev
from sextant_core.planning.assess import Assessment, Assessor
from sextant_core.state import ClusterState, evolve
from sextant_core.testing.builders import record

from .conftest import World, vec


def _world() -> World:
    w = World().server("s0").server("s1", platform="B").server("s2")
    w.workload("r", on=(("s0", 2, 2.0),), tolerated=vec(60), caused=vec(20))
    w.workload("new", cores=2, admit=False, heterogeneity={"A": 1.0, "B": 1.5}, caused=vec(10))
    return w


def _same(a: Assessment, b: Assessment) -> None:
    for k in a.table.extra:
        np.testing.assert_array_equal(a.table.extra[k], b.table.extra[k])
    np.testing.assert_array_equal(a.base, b.base)
    assert (a.required, a.memory_per_core, a.request.memory_gb) == (b.required, b.memory_per_core, b.request.memory_gb)


def test_placement_after_admission_reuses_the_assessment_with_its_own_seed() -> None:
    st = _world().state()
    a = Assessor()
    first = a.assess(st, st.workloads["new"], 5.0, seed=1)
    admitted = evolve(st, ev.WorkloadAdmitted(at=5.0, workload_id="new", decision=record(9), arq_class=0))
    assert admitted.servers is st.servers  # admission leaves the servers alone
    again = a.assess(admitted, admitted.workloads["new"], 5.0, seed=2)
    assert again.table is first.table and again.request.seed == 2 and first.request.seed == 1
    _same(again, Assessor().assess(admitted, admitted.workloads["new"], 5.0, seed=2))


def test_another_time_or_other_servers_or_indexes_moved_on_compute_anew() -> None:
    st = _world().state()
    a = Assessor()
    first = a.assess(st, st.workloads["new"], 5.0)
    assert a.assess(st, st.workloads["new"], 6.0) is not first  # another time (targets may depend on it)
    busy = fold_placed(st)
    assert a.assess(busy, busy.workloads["new"], 5.0).table is not first.table  # a server changed
    back = a.assess(st, st.workloads["new"], 5.0)  # same state as `first`, but the indexes served `busy`
    assert back is not first
    _same(back, Assessor().assess(st, st.workloads["new"], 5.0))


def fold_placed(st: ClusterState) -> ClusterState:
    """`st` with one more workload placed on s2."""
    w = World()
    w.n = 50
    w.workload("other", on=(("s2", 1, 1.0),), caused=vec(30))
    for e in w.events:
        st = evolve(st, e)
    return st
