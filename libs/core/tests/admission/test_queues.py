"""Class queues in the state, heads, the bypass bound (admission/queues.py)."""

from __future__ import annotations

from sextant_core.admission.queues import class_queues, heads, reserved_from

from .conftest import World


def state():  # type: ignore[no-untyped-def]
    return (World().server("s1")
            .queued("a", 3).queued("b", 1).queued("c", 3, position=1).queued("d", 7).state())


def test_class_queues_keep_admission_order() -> None:
    q = class_queues(state())
    assert q[3] == ("a", "c") and q[1] == ("b",) and q[7] == ("d",) and q[0] == ()


def test_heads_most_demanding_class_first() -> None:
    assert heads(state()) == ("d", "a", "b")


def test_reserved_from() -> None:
    q = class_queues(state())
    assert reserved_from(q, 1) == 3   # queue 2 empty, queue 3 waiting → pools ≥ 3 kept
    assert reserved_from(q, 3) == 7
    assert reserved_from(q, 7) == 10  # nothing waits above 7


def test_memo_follows_the_queue() -> None:
    st = state()
    assert class_queues(st) is class_queues(st)  # same queue tuple: memoised
    st2 = World().server("s1").queued("x", 2).state()
    assert class_queues(st2)[2] == ("x",) and class_queues(st2)[3] == ()
