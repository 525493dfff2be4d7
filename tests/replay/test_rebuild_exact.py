"""The fifth round's rebuild path (docs/platform/replay.md, "Fifth round") rebuilds exactly the
state the previous path did, on every committed fixture log (`tests/fixtures/*.jsonl.gz`):

- new path: the log as the event store holds it (`rows.encode_line`), decoded in bulk
  (`rows.decode_lines`: trusted rows, the checksum from its kept prefix state, `Envelope.trusted`
  through the slot descriptors, the event validated directly at its current schema version) and
  folded by `state.fold` (the collector paused, `copy_with` through the twin classes, the decision
  count in the event's one state copy);
- reference path, kept here as it was before: every envelope validated (`Envelope(...)`), its
  event by `model_validate` of the upcast payload, folded by the previous `evolve` (the decision
  counted in a copy of its own) with every record copied by `dataclasses.replace`, the collector on.

Equal states (a snapshot of the new one restores equal too) and equal events at every position.
(Pickles are not compared byte for byte: they memoise shared objects, and the JSON parsers
share strings differently.)
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import pickle
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sextant_cli.demo import read_recorded
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import event_class
from sextant_contracts.upcasters import upcast
from sextant_core.classification import knowledge
from sextant_core.classification.knowledge import evolve as evolve_knowledge
from sextant_core.fairness.load import moved
from sextant_core.profiles import policy_set
from sextant_core.state import model
from sextant_core.state.evolve import EMPTY, fold
from sextant_core.state.model import ClusterState
from sextant_core.workflow import Decider
from sextant_kit.eventstore import rows

E = importlib.import_module("sextant_core.state.evolve")  # the module (the package exports its function)
recurring_state = importlib.import_module("sextant_core.recurring.state")
FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("*.jsonl.gz"))


def reference_evolve(state: ClusterState, event: ev.Event, position: int | None = None) -> ClusterState:
    """`evolve` before the fifth round (with `replace` patched to `dataclasses.replace`)."""
    new = E._apply(event, state)
    if isinstance(event, ev.DecisionEvent) and not (isinstance(event, ev.ProbeRequested) and not event.counted):
        w = E._workload(new, event)
        new = dataclasses.replace(new, workloads=new.workloads.set(w.workload_id,
                                                                   dataclasses.replace(w, decisions=w.decisions + 1)))
    changes: dict[str, Any] = {}
    if new.workloads is not state.workloads:
        wid = getattr(event, "workload_id", "")
        load = moved(new.load, state.workloads.get(wid), new.workloads.get(wid))
        if load is not new.load:
            changes["load"] = load
    kb = evolve_knowledge(new.knowledge, event)
    if kb is not new.knowledge:
        changes["knowledge"] = kb
    if event.at > new.now:
        changes["now"] = event.at
    if position is not None:
        changes["position"] = position
    return dataclasses.replace(new, **changes) if changes else new


def reference_events(stored: list[Envelope]) -> list[ev.Event]:
    """Every envelope validated, its event decoded by `model_validate` of the upcast payload."""
    out = []
    for env in stored:
        validated = Envelope(**{k: getattr(env, k) for k in Envelope.model_fields})
        out.append(event_class(validated.type).model_validate(
            upcast(validated.type, validated.schema_version, validated.payload)))
    return out


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_the_rebuild_equals_the_previous_path(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = read_recorded(path)
    lines = [rows.encode_line(env) for env in stored]
    assert gc.isenabled()
    decoded = rows.decode_lines(lines, events=True)
    rebuilt = fold(decoded)
    assert gc.isenabled()  # restored by both

    events = reference_events(stored)
    for mod in (E, knowledge, recurring_state):
        monkeypatch.setattr(mod, "replace", dataclasses.replace)
    monkeypatch.setattr(model, "copy_with", dataclasses.replace)
    head = EMPTY
    for env, event in zip(stored, events, strict=True):
        head = reference_evolve(head, event, env.position)

    assert [d.event() for d in decoded] == events
    assert [d.position for d in decoded] == [e.position for e in stored]
    assert rebuilt == head and rebuilt.position == stored[-1].position
    assert pickle.loads(pickle.dumps(rebuilt, protocol=5)) == head  # a snapshot of it restores it
    assert len(rebuilt.workloads) > 0 and any(w.decisions for w in rebuilt.workloads.values())


class _Foreign(ev.Event):
    """A type the fold has no handler for (no TYPE: not registered in the catalogue)."""


def test_the_fold_restores_the_collector_also_after_a_failure_and_when_it_was_off() -> None:
    tick = ev.Tick(at=1.0, seq=0, period_s=60.0)
    with pytest.raises(E.UnknownEvent):
        fold([tick, _Foreign(at=2.0)])
    assert gc.isenabled()
    decider = Decider("planning", policy_set("sextant-adaptive"))
    with pytest.raises(ValidationError):  # the second envelope's payload is no Tick
        decider.fold([Envelope.wrap(tick, id="e1", source="t", stream_version=0, time=1.0).with_position(1),
                      Envelope(id="e2", type="Tick", source="t", stream="tick", stream_version=1, position=2,
                               schema_version=1, time=2.0, payload={})])
    assert gc.isenabled() and decider.state.position == -1  # the holder unchanged
    gc.disable()
    try:
        assert fold([tick]).tick == 0
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
