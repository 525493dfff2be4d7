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


# --- the twin classes (fifth round) ----------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Base:
    a: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class _Derived(_Base):  # a slotted base with slots of its own: no twin, the descriptor copier
    b: int = 0


@dataclasses.dataclass(frozen=True, slots=True, weakref_slot=True)
class _Weak:  # a __weakref__ slot: no twin either
    a: int = 0


def _records() -> list[object]:
    """One instance of every record class the folds copy, from a folded log."""
    from sextant_core.state.evolve import fold
    from sextant_core.testing.builders import alloc, server, submitted, through_placement

    st = fold([server("s1"), submitted("w1", cores=2), *through_placement("w1", alloc(("s1", 2, 2.0)))])
    kb = st.knowledge
    return [st, st.workloads["w1"], st.servers["s1"], kb, *kb.matrices.values(), *kb.pending.values(),
            st.recurring, st.vcs, SERVER]


@pytest.mark.parametrize("changes", [{}, {"x": 1}, {"x": 1, "y": 2}], ids=["none", "one", "two"])
def test_the_twin_copy_is_an_instance_of_the_record_class_equal_to_dataclasses_replace(changes: dict[str, int]) -> None:
    import pickle

    for obj in _records():
        names = [f.name for f in dataclasses.fields(obj)]  # type: ignore[arg-type]
        fields = {names[-i]: f"v{i}" for i in range(len(changes))}  # the first field, then the last
        got = copy_with(obj, **fields)
        want = dataclasses.replace(obj, **fields)  # type: ignore[type-var]
        assert type(got) is type(obj) and got == want and got is not obj
        assert all(getattr(got, k) is v for k, v in fields.items())
        assert all(getattr(got, n) is getattr(obj, n) for n in names if n not in fields)
        assert pickle.loads(pickle.dumps(got)) == want
        with pytest.raises(dataclasses.FrozenInstanceError):  # still frozen
            got.__setattr__(names[0], None)


def test_classes_without_a_twin_are_copied_through_their_descriptors() -> None:
    from sextant_core.records import _twin

    assert _twin(type(SERVER)) is not None
    assert _twin(_Derived) is None and _twin(_Weak) is None
    d = copy_with(_Derived(a=1, b=2), b=3)
    assert type(d) is _Derived and d == _Derived(a=1, b=3)
    w = copy_with(_Weak(a=1), a=4)
    assert type(w) is _Weak and w == _Weak(a=4)
    with pytest.raises(TypeError, match="no field"):
        copy_with(_Derived(), c=1)
