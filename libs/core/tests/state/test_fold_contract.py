"""What `evolve` does for every event of a kind: it counts decisions, and it refuses types it
does not know (old shapes of known types reach it through the upcasters)."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_contracts import events as ev
from sextant_contracts import upcasters
from sextant_contracts.envelope import Envelope
from sextant_contracts.upcasters import UpcasterError
from sextant_core.domain.lifecycle import IllegalTransition
from sextant_core.domain.lifecycle import WorkloadPhase as P
from sextant_core.state import fold
from sextant_core.state.evolve import UnknownEvent, _apply, evolve
from sextant_core.state.records import copy_with
from sextant_core.testing.builders import alloc, record, server, submitted, through_placement


def running() -> list[ev.Event]:
    a = alloc(("s1", 2, 2.0))
    return [server("s1"), submitted("w1", cores=2, fast_path=True), *through_placement("w1", a),
            ev.WorkloadStarted(at=3, workload_id="w1", allocation=a)]


def probe(n: int) -> ev.ProbeRequested:
    return ev.ProbeRequested(at=4 + n, workload_id="w1", decision=record(10 + n), probe_id=f"p{n}",
                             sources=("cpu",))


def test_every_decision_event_is_counted_once() -> None:
    # through_placement: WorkloadClassified, WorkloadAdmitted, PlacementDecided = 3 decisions;
    # WorkloadSubmitted, ServerRegistered and WorkloadStarted are facts, not decisions
    st = fold(running())
    assert st.workloads["w1"].decisions == 3
    more: list[ev.Event] = [
        probe(0),  # 4
        ev.ReclassificationRequested(at=5, workload_id="w1", decision=record(20), reason="r"),  # 5
        ev.AllocationAdjusted(at=6, workload_id="w1", decision=record(21), action="scale_up",
                              allocation=alloc(("s1", 3, 2.0)), reason="r"),  # 6
        ev.MigrationDecided(at=7, workload_id="w1", decision=record(22), allocation=alloc(("s1", 2, 2.0)),
                            cost_s=1.0, gain=0.1, reason="r"),  # 7
        probe(1),  # 8
        ev.InterferenceProbed(at=9, workload_id="w1", probe_id="p1"),  # a fact: still 8
    ]
    st = fold(more, st)
    assert st.workloads["w1"].decisions == 8
    assert sum(isinstance(e, ev.DecisionEvent) for e in [*running(), *more]) == 8


def test_a_probe_request_changes_only_the_count_and_the_clock() -> None:
    st = fold(running())
    after = evolve(st, probe(0), position=9)
    w0, w1 = st.workloads["w1"], after.workloads["w1"]
    assert w1.decisions == w0.decisions + 1 and w1.phase == P.RUNNING
    assert copy_with(w1, decisions=w0.decisions) == w0
    assert (after.now, after.position) == (4.0, 9)


def test_a_decision_about_an_unknown_workload_stops_the_fold() -> None:
    with pytest.raises(IllegalTransition):
        fold([server("s1"), probe(0)])


class Unregistered(ev.WorkloadEvent):
    """A workload event the fold has no handler for (no TYPE: not in the catalogue either)."""


def test_an_unknown_event_type_raises() -> None:
    st = fold(running())
    with pytest.raises(UnknownEvent, match="Unregistered"):
        evolve(st, Unregistered(at=5, workload_id="w1"))


@pytest.mark.parametrize("name", sorted(ev.EVENT_TYPES))
def test_the_fold_knows_every_type_of_the_catalogue(name: str) -> None:
    assert _apply.dispatch(ev.EVENT_TYPES[name]) is not _apply.dispatch(object), f"no fold handler for {name}"


def test_an_unknown_type_in_the_log_stops_the_fold() -> None:
    env = Envelope(id="e1", type="WorkloadTeleported", source="edge", stream="workload-w1", stream_version=0,
                   position=1, schema_version=1, time=1.0, payload={"at": 1.0, "workload_id": "w1"})
    with pytest.raises(KeyError, match="WorkloadTeleported"):
        fold([env])


def _v1_completed(position: int) -> Envelope:
    """A `WorkloadCompleted` as written by an older schema (v1), its time under another name."""
    return Envelope(id=f"e{position}", type="WorkloadCompleted", source="agent", stream="workload-w1",
                    stream_version=0, position=position, schema_version=1, time=8.0,
                    payload={"finished_at": 8.0, "workload_id": "w1"})


def test_an_old_shape_reaches_the_fold_through_its_upcaster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev.WorkloadCompleted, "SCHEMA_VERSION", 2)

    def v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
        payload["at"] = payload.pop("finished_at")
        return payload

    monkeypatch.setitem(upcasters._UPCASTERS, ("WorkloadCompleted", 1), v1_to_v2)
    st = fold([_v1_completed(len(running()) + 1)], fold(running()))
    assert st.workloads["w1"].phase == P.COMPLETED and st.workloads["w1"].ended_at == 8.0


def test_an_old_shape_without_an_upcaster_does_not_reach_the_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev.WorkloadCompleted, "SCHEMA_VERSION", 2)
    with pytest.raises(UpcasterError, match="no upcaster for WorkloadCompleted v1"):
        fold([_v1_completed(len(running()) + 1)], fold(running()))


def _v1_probe(position: int) -> Envelope:
    """A `ProbeRequested` as logged at schema 1, before the fold counted probes as decisions."""
    p = probe(0).model_dump(mode="json")
    p.pop("counted")
    return Envelope(id=f"e{position}", type="ProbeRequested", source="reprovisioning", stream="workload-w1",
                    stream_version=0, position=position, schema_version=1, time=4.0, payload=p)


def test_a_schema_1_probe_is_not_counted_so_an_old_log_keeps_its_seeds() -> None:
    st = fold(running())
    old = fold([_v1_probe(len(running()) + 1)], st)
    assert old.workloads["w1"].decisions == st.workloads["w1"].decisions  # as the code of its time folded it
    assert old.workloads["w1"].phase == P.RUNNING and old.now == 4.0
    new = fold([Envelope.wrap(probe(0), id="e9", source="reprovisioning", stream_version=0, time=4.0)], st)
    assert new.workloads["w1"].decisions == st.workloads["w1"].decisions + 1  # schema 2: counted


def test_the_fold_dispatch_table_calls_what_singledispatch_would() -> None:
    from pathlib import Path

    from sextant_cli.demo import read_recorded
    from sextant_core.classification import knowledge
    from sextant_core.dispatch import Dispatch
    from sextant_core.state import fold

    fold(read_recorded(Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "platform-log.jsonl.gz"))
    for table in (_apply, knowledge._apply):
        assert isinstance(table, Dispatch)
        assert len(table._table) >= 10  # the fold filled it
        for cls, impl in table._table.items():
            assert impl is table._sd.dispatch(cls)
    # a registration after the table has answered replaces the class's entry
    d: Dispatch[str] = Dispatch(lambda x: "default")
    assert d(1) == "default" and d("s") == "default"
    d.register(int, lambda x: "int")
    assert d(1) == "int" and d(True) == "int" and d("s") == "default"

    @d.register(str)
    def _(x: str) -> str:
        return "str"

    assert d("s") == "str"
    d.register(float | bytes, lambda x: "num")
    assert d(1.5) == "num" and d(b"") == "num" and d(1) == "int"
