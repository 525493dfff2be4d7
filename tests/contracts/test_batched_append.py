"""Contract suite of `BatchRecorder.append_and_track_many` (one append for a fetched batch), run
against the in-memory store and the PostgreSQL store (see conftest.py): all or nothing, outputs in
input order right after the expected head, an input tracked before (or twice) writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_kit.errors import DuplicateEventError, HeadMovedError
from sextant_kit.ports import BatchRecorder, TrackedInput
from sextant_kit.testing.envelopes import make_envelope


def _inputs(*spec: tuple[str, int, list[Any]]) -> list[TrackedInput]:
    return [TrackedInput(i, p, tuple(out)) for i, p, out in spec]


async def test_implements_the_batch_port(store: Any) -> None:
    assert isinstance(store, BatchRecorder)


async def test_one_call_tracks_every_input_and_stores_outputs_in_input_order(store: Any) -> None:
    a, b, c = (make_envelope("workload-a", 0, 1), make_envelope("server-s", 0, 2), make_envelope("workload-a", 0, 3))
    stored = await store.append_and_track_many(
        "svc", _inputs(("in-1", 11, [a, b]), ("in-2", 12, []), ("in-3", 13, [c])), expected_head=0)
    assert [[(e.id, e.position, e.stream_version) for e in per] for per in stored] == [
        [(a.id, 1, 1), (b.id, 2, 1)], [], [(c.id, 3, 2)]]
    assert [e.id for e in await store.read_all()] == [a.id, b.id, c.id]
    for i in ("in-1", "in-2", "in-3"):
        assert await store.is_tracked("svc", i)
    assert await store.max_tracked_position("svc") == 13
    assert [i.position for i in await store.pending()] == [1, 2, 3]  # outbox rows with them


async def test_an_input_tracked_before_writes_nothing_for_the_whole_batch(store: Any) -> None:
    await store.append_and_track("svc", "in-2", 2, [])
    got = await store.append_and_track_many(
        "svc", _inputs(("in-1", 1, [make_envelope("workload-a", 0, 1)]), ("in-2", 2, [make_envelope("workload-a", 0, 2)])))
    assert got is None
    assert await store.last_position() == 0
    assert not await store.is_tracked("svc", "in-1")


async def test_a_duplicate_input_within_the_batch_writes_nothing(store: Any) -> None:
    got = await store.append_and_track_many(
        "svc", _inputs(("in-1", 1, [make_envelope("workload-a", 0, 1)]), ("in-1", 1, [make_envelope("workload-a", 0, 2)])))
    assert got is None
    assert await store.last_position() == 0
    assert not await store.is_tracked("svc", "in-1")


async def test_head_moved_fails_the_whole_batch(store: Any) -> None:
    await store.append("workload-x", 0, [make_envelope("workload-x", 1, 9)])
    with pytest.raises(HeadMovedError) as info:
        await store.append_and_track_many(
            "svc", _inputs(("in-1", 1, [make_envelope("workload-a", 0, 1)]), ("in-2", 2, [])), expected_head=0)
    assert (info.value.expected, info.value.actual) == (0, 1)
    assert await store.last_position() == 1
    assert not await store.is_tracked("svc", "in-1") and not await store.is_tracked("svc", "in-2")


async def test_a_duplicate_output_fails_the_whole_batch_then_per_input_isolates_it(store: Any) -> None:
    """A poison input (its output's id is already recorded) fails the batch with nothing written;
    handled one by one, the other inputs go through and only it fails."""
    await store.append("workload-x", 0, [make_envelope("workload-x", 1, 9, id="taken")])
    good1, bad, good2 = (make_envelope("workload-a", 0, 1), make_envelope("workload-b", 0, 2, id="taken"),
                         make_envelope("workload-a", 0, 3))
    inputs = _inputs(("in-1", 1, [good1]), ("in-2", 2, [bad]), ("in-3", 3, [good2]))
    with pytest.raises(DuplicateEventError):
        await store.append_and_track_many("svc", inputs)
    assert await store.last_position() == 1
    assert await store.tracked_ids("svc", ["in-1", "in-2", "in-3"]) == set()
    outcomes = []
    for i in inputs:
        try:
            outcomes.append(await store.append_and_track("svc", i.event_id, i.position, list(i.outputs)))
        except DuplicateEventError:
            outcomes.append("duplicate")
    assert outcomes[1] == "duplicate"
    assert [e.id for e in await store.read_all(1)] == [good1.id, good2.id]
    assert await store.tracked_ids("svc", ["in-1", "in-2", "in-3"]) == {"in-1", "in-3"}


async def test_a_batch_replayed_after_a_crash_before_commit_lands_once(store: Any) -> None:
    """A consumer that died before its batch committed replays the same batch: it lands once;
    replayed again after the commit, it is refused as a whole (the per-input path then skips it)."""
    inputs = _inputs(("in-1", 1, [make_envelope("workload-a", 0, 1)]), ("in-2", 2, [make_envelope("workload-b", 0, 2)]))
    first = await store.append_and_track_many("svc", inputs, expected_head=0, durable=False)
    await store.sync()
    assert first is not None and [e.position for per in first for e in per] == [1, 2]
    assert await store.append_and_track_many("svc", inputs, expected_head=2) is None
    for i in inputs:
        assert await store.append_and_track("svc", i.event_id, i.position, list(i.outputs)) is None
    assert [e.id for e in await store.read_all()] == [inputs[0].outputs[0].id, inputs[1].outputs[0].id]
    assert await store.tracked_count("svc") == 2
