"""The workload view's queue section (GET /v1/workloads/{id} while queued): the live position in
the workload's ARQ class queue, not the one recorded when it was queued; no queue section once
admitted. Pure: folded events, no I/O."""

from __future__ import annotations

from sextant_admission.views import view
from sextant_contracts import events as ev
from sextant_core.state import fold
from sextant_core.testing.builders import record, submitted


def queued(wid: str, arq_class: int, position: int, n: int) -> list[ev.Event]:
    return [submitted(wid, fast_path=True), ev.WorkloadClassified(at=1, workload_id=wid, decision=record(n)),
            ev.WorkloadQueued(at=2, workload_id=wid, decision=record(n + 1), arq_class=arq_class,
                              position=position, expected_wait_s=30.0, reason="class pool full")]


def test_queue_position_is_the_live_one() -> None:
    # class 3: a (recorded 0), b (recorded 1); class 1: c (recorded 0)
    st = fold([*queued("a", 3, 0, 10), *queued("b", 3, 1, 20), *queued("c", 1, 0, 30)])
    assert view(st, st.workloads["b"])["queue"] == {"arq_class": 3, "position": 1, "expected_wait_s": 30.0}
    # a is admitted: b is now first in class 3 (0), though its event said 1; c is unaffected
    st = fold([ev.WorkloadAdmitted(at=3, workload_id="a", decision=record(40), arq_class=3)], st)
    assert view(st, st.workloads["b"])["queue"]["position"] == 0
    assert view(st, st.workloads["c"])["queue"]["position"] == 0
    assert "queue" not in view(st, st.workloads["a"])
