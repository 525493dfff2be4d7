"""`copy_with` (generated per record class) is `dataclasses.replace` without `__init__`, and
`interference_vectors` remembered per classification object returns what it computes."""

from __future__ import annotations

import dataclasses

import pytest
from sextant_contracts import events as ev
from sextant_contracts.model import INTERFERENCE_SOURCES, ServerCapacity
from sextant_core.records import copy_with
from sextant_core.state.evolve import EMPTY
from sextant_core.state.model import ServerState, _vector, interference_vectors
from sextant_core.testing.builders import record

SERVER = ServerState(server_id="s1", platform="A", capacity=ServerCapacity(cores=8, memory_gb=16.0))


@pytest.mark.parametrize("changes", [{}, {"used_cores": 3}, {"used_cores": 3, "residents": ("w1",), "up": False}],
                         ids=["none", "one", "several"])
def test_copy_with_equals_dataclasses_replace(changes: dict[str, object]) -> None:
    got = copy_with(SERVER, **changes)
    assert got == dataclasses.replace(SERVER, **changes) and got is not SERVER
    assert all(getattr(got, k) is v for k, v in changes.items())


def test_copy_with_refuses_an_unknown_field_and_copies_the_cluster_state() -> None:
    with pytest.raises(TypeError, match="no field"):
        copy_with(SERVER, used_core=3)
    assert copy_with(copy_with(EMPTY, position=7), position=EMPTY.position) == EMPTY


def test_interference_vectors_are_remembered_per_classification_object() -> None:
    c = ev.WorkloadClassified(at=1.0, workload_id="w1", decision=record(), tolerated={INTERFERENCE_SOURCES[0].value: 40.0},
                              caused={INTERFERENCE_SOURCES[1].value: 7.0})
    first = interference_vectors(c)
    # 40 tolerated on the first source, 100 (neutral) elsewhere; 7 caused on the second, 0 elsewhere
    assert first == (_vector(c.tolerated, 100.0), _vector(c.caused, 0.0))
    assert first[0][0] == 40.0 and first[1][1] == 7.0 and first[0][1] == 100.0 and first[1][0] == 0.0
    assert interference_vectors(c) is first  # the same object: remembered
    other = c.model_copy(update={"tolerated": {}})
    assert interference_vectors(other)[0][0] == 100.0  # another object: computed for itself
