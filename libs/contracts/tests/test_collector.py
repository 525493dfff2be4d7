"""`collector.held_frozen`: the heap alive at its start is out of the collector's reach inside the
block and back in it after (also after an exception); garbage made inside, cycles included, is
collected inside; a caller's own frozen objects stay frozen."""

from __future__ import annotations

import gc

import pytest
from sextant_contracts.collector import held_frozen


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> None:
    a, b = _Node(), _Node()
    a.other, b.other = b, a


def test_the_heap_is_frozen_inside_and_back_after() -> None:
    held = [_Node() for _ in range(100)]
    assert gc.get_freeze_count() == 0
    with held_frozen():
        assert gc.get_freeze_count() >= len(held)  # the held objects are out of every generation
        gc.collect()
        _cycle()
        assert gc.collect() >= 2  # the block's own cycle is found and freed inside it
    assert gc.get_freeze_count() == 0
    assert all(gc.is_tracked(x) for x in held)
    ids = {id(x) for x in held}
    assert ids <= {id(o) for o in gc.get_objects(generation=2)}  # in the oldest generation again


def test_an_exception_inside_unfreezes() -> None:
    with pytest.raises(RuntimeError), held_frozen():
        assert gc.get_freeze_count() > 0
        raise RuntimeError("inside")
    assert gc.get_freeze_count() == 0


def test_a_callers_frozen_objects_stay_frozen() -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        assert before > 0
        with held_frozen():
            assert gc.get_freeze_count() == before
        assert gc.get_freeze_count() == before  # not unfrozen by the block
    finally:
        gc.unfreeze()
