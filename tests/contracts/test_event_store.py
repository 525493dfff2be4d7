"""Contract suite of the store ports (EventStore, TrackingRecorder, OutboxReader, SnapshotStore),
run against the in-memory store and the PostgreSQL store (see conftest.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sextant_contracts import codec
from sextant_kit.errors import ConcurrencyError, DuplicateEventError
from sextant_kit.ports import EventStore, OutboxReader, Snapshot, SnapshotStore, TrackingRecorder
from sextant_kit.testing.envelopes import make_envelope, make_envelopes


async def test_implements_every_port(store: Any) -> None:
    for port in (EventStore, TrackingRecorder, OutboxReader, SnapshotStore):
        assert isinstance(store, port), port.__name__


# --- append and read ---------------------------------------------------------------------------


async def test_empty_store(store: Any) -> None:
    assert await store.last_position() == 0
    assert await store.read_all() == []
    assert await store.stream_version("workload-a") == 0
    assert await store.read_stream("workload-a") == []


async def test_append_assigns_contiguous_positions_and_versions(store: Any) -> None:
    a = await store.append("workload-a", 0, make_envelopes("workload-a", 3))
    b = await store.append("workload-b", 0, make_envelopes("workload-b", 2))
    c = await store.append("workload-a", 3, make_envelopes("workload-a", 1, start=4))
    assert [e.position for e in a + b + c] == [1, 2, 3, 4, 5, 6]
    assert [e.stream_version for e in a + c] == [1, 2, 3, 4]
    assert await store.last_position() == 6
    assert await store.stream_version("workload-a") == 4
    assert [e.id for e in await store.read_all()] == [e.id for e in a + b + c]


async def test_append_with_no_expected_version_numbers_at_the_end(store: Any) -> None:
    await store.append("workload-a", 0, make_envelopes("workload-a", 2))
    # versions in the envelopes are ignored when expected_version is None
    stored = await store.append("workload-a", None, [make_envelope("workload-a", 99, 7)])
    assert stored[0].stream_version == 3
    assert stored[0].position == 3


async def test_wrong_expected_version_raises_and_writes_nothing(store: Any) -> None:
    await store.append("workload-a", 0, make_envelopes("workload-a", 2))
    with pytest.raises(ConcurrencyError) as info:
        await store.append("workload-a", 1, [make_envelope("workload-a", 2, 9)])
    assert (info.value.expected, info.value.actual) == (1, 2)
    with pytest.raises(ConcurrencyError):
        await store.append("workload-new", 5, [make_envelope("workload-new", 6, 9)])
    assert await store.last_position() == 2
    assert len(await store.read_all()) == 2


@pytest.mark.parametrize("bad", [
    pytest.param([make_envelope("workload-a", 2)], id="first-version-not-expected-plus-one"),
    pytest.param([make_envelope("workload-a", 1), make_envelope("workload-a", 3)], id="gap"),
    pytest.param([make_envelope("workload-b", 1)], id="other-stream"),
    pytest.param([make_envelope("workload-a", 1, id="x"), make_envelope("workload-a", 2, id="x")],
                 id="same-id-twice"),
])
async def test_malformed_batches_are_refused(store: Any, bad: list[Any]) -> None:
    with pytest.raises(ValueError):
        await store.append("workload-a", 0, bad)
    assert await store.last_position() == 0


async def test_duplicate_event_id_raises_and_writes_nothing(store: Any) -> None:
    await store.append("workload-a", 0, [make_envelope("workload-a", 1, id="dup")])
    batch = [make_envelope("workload-b", 1, id="fresh"), make_envelope("workload-b", 2, id="dup")]
    with pytest.raises(DuplicateEventError) as info:
        await store.append("workload-b", 0, batch)
    assert info.value.event_id == "dup"
    assert await store.last_position() == 1
    assert await store.stream_version("workload-b") == 0
    # the failed append left no gap: the next one takes position 2
    nxt = await store.append("workload-b", 0, [make_envelope("workload-b", 1, id="next")])
    assert nxt[0].position == 2


async def test_empty_append_is_a_no_op(store: Any) -> None:
    assert await store.append("workload-a", 0, []) == []
    assert await store.last_position() == 0


async def test_read_stream_from_version_and_limit(store: Any) -> None:
    await store.append("workload-a", 0, make_envelopes("workload-a", 5))
    await store.append("workload-b", 0, make_envelopes("workload-b", 1))
    got = await store.read_stream("workload-a", from_version=2, limit=2)
    assert [e.stream_version for e in got] == [3, 4]
    assert [e.stream_version for e in await store.read_stream("workload-a", 3)] == [4, 5]


async def test_read_all_is_exclusive_of_from_position_and_limited(store: Any) -> None:
    await store.append("workload-a", 0, make_envelopes("workload-a", 10))
    got = await store.read_all(from_position=3, limit=4)
    assert [e.position for e in got] == [4, 5, 6, 7]
    assert await store.read_all(from_position=10) == []


async def test_envelopes_round_trip_byte_exact(store: Any) -> None:
    original = make_envelope("workload-a", 1, 0, traceparent="00-" + "a" * 32 + "-" + "b" * 16 + "-01",
                             causation_id="cause", x=0.1 + 0.2, big=2**53 + 1, text="é ☃ \u2028",
                             nested={"z": [1.5, -0.0, None, True], "a": {}})
    (stored,) = await store.append("workload-a", 0, [original])
    (read,) = await store.read_stream("workload-a")
    assert read == stored
    assert read.model_copy(update={"position": None}) == original.model_copy(update={"payload": read.payload})
    assert codec.dumps(read.payload) == codec.dumps(original.payload)
    assert read.payload["x"] == 0.30000000000000004
    assert (read.traceparent, read.causation_id, read.time) == (original.traceparent, "cause", original.time)


async def test_tail_yields_the_past_then_waits_for_new_events(store: Any) -> None:
    await store.append("workload-a", 0, make_envelopes("workload-a", 3))
    seen: list[int] = []

    async def follow() -> None:
        async for e in store.tail(1, batch=2):
            seen.append(e.position)
            if len(seen) == 5:
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(0)  # let the reader start before the next appends
    await store.append("workload-b", 0, make_envelopes("workload-b", 2))
    await store.append("workload-a", 3, [make_envelope("workload-a", 4, 4)])
    await asyncio.wait_for(task, 30)
    assert seen == [2, 3, 4, 5, 6]


# --- tracking ----------------------------------------------------------------------------------


async def test_append_and_track_writes_outputs_and_tracking_together(store: Any) -> None:
    out = [make_envelope("workload-o", 1, 1), make_envelope("server-s", 1, 2)]
    stored = await store.append_and_track("svc", "in-1", 41, out)
    assert stored is not None and [e.position for e in stored] == [1, 2]
    assert await store.is_tracked("svc", "in-1")
    assert not await store.is_tracked("other", "in-1")
    assert await store.max_tracked_position("svc") == 41


async def test_already_tracked_input_is_a_no_op(store: Any) -> None:
    await store.append_and_track("svc", "in-1", 1, [make_envelope("workload-o", 1, 1)])
    again = await store.append_and_track("svc", "in-1", 1, [make_envelope("workload-o", 2, 2, id="other")])
    assert again is None
    assert await store.last_position() == 1
    # another consumer processes the same input independently
    assert await store.append_and_track("svc2", "in-1", 1, [make_envelope("workload-o", 2, 2, id="o2")])


async def test_tracking_without_outputs(store: Any) -> None:
    assert await store.append_and_track("svc", "in-1", 7, []) == []
    assert await store.is_tracked("svc", "in-1")
    assert await store.append_and_track("svc", "in-1", 7, []) is None
    assert await store.max_tracked_position("svc") == 7


async def test_failed_append_and_track_leaves_input_untracked(store: Any) -> None:
    await store.append("workload-o", 0, make_envelopes("workload-o", 1))
    with pytest.raises(ConcurrencyError):
        await store.append_and_track("svc", "in-1", 3, [make_envelope("workload-o", 1, 5, id="n")],
                                     expected={"workload-o": 0})
    assert not await store.is_tracked("svc", "in-1")
    retried = await store.append_and_track("svc", "in-1", 3, [make_envelope("workload-o", 2, 5, id="n")],
                                           expected={"workload-o": 1})
    assert retried is not None and retried[0].stream_version == 2


async def test_concurrent_appends_at_the_same_version_one_wins(store: Any) -> None:
    await store.append("workload-a", 0, make_envelopes("workload-a", 1))
    results = await asyncio.gather(
        store.append("workload-a", 1, [make_envelope("workload-a", 2, id="left")]),
        store.append("workload-a", 1, [make_envelope("workload-a", 2, id="right")]),
        return_exceptions=True)
    winners = [r for r in results if isinstance(r, list)]
    losers = [r for r in results if isinstance(r, ConcurrencyError)]
    assert len(winners) == 1 and len(losers) == 1, results
    (stream,) = [e.id for e in await store.read_stream("workload-a", 1)]
    assert stream == winners[0][0].id


# --- outbox ------------------------------------------------------------------------------------


async def test_outbox_holds_published_streams_in_position_order(store: Any) -> None:
    tp = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"
    await store.append("workload-a", 0, [make_envelope("workload-a", 1, 1, traceparent=tp)])
    await store.append("quiet-x", 0, make_envelopes("quiet-x", 2))
    await store.append_and_track("svc", "in", 1, [make_envelope("server-s", 1, 3)])
    items = await store.pending()
    assert [(i.position, i.topic) for i in items] == [(1, "topic.workload"), (4, "topic.server")]
    assert items[0].traceparent == tp and items[0].envelope.traceparent == tp
    assert items[0].envelope.id == "workload-a:1:1"
    assert await store.pending_count() == 2
    await store.mark_sent([1])
    assert [i.position for i in await store.pending()] == [4]
    assert [i.position for i in await store.pending(limit=0)] == []


async def test_unknown_stream_fails_before_writing_with_the_default_resolver(store: Any) -> None:
    from sextant_kit.outbox import default_topic_of

    store._topic_of = default_topic_of  # the registry of the contracts: no topic for "nowhere-*"
    with pytest.raises(KeyError):
        await store.append("nowhere-1", 0, make_envelopes("nowhere-1", 1))
    assert await store.last_position() == 0


async def test_notification_wakes_a_waiter(store: Any) -> None:
    await store.wait_for_notification(store.notification_generation(), 0.01)  # warm-up (connects)
    seen = store.notification_generation()
    waiter = asyncio.create_task(store.wait_for_notification(seen, 60))
    await asyncio.sleep(0)
    await store.append("workload-a", 0, make_envelopes("workload-a", 1))
    await asyncio.wait_for(waiter, 60)
    assert store.notification_generation() != seen


# --- snapshots ---------------------------------------------------------------------------------


async def test_snapshots_newest_wins_per_code_and_schema_version(store: Any) -> None:
    assert await store.load_snapshot("cluster", "v1", 1) is None
    await store.save_snapshot(Snapshot("cluster", "v1", 1, 10, b"ten"))
    await store.save_snapshot(Snapshot("cluster", "v1", 1, 5, b"five"))  # older: ignored
    await store.save_snapshot(Snapshot("cluster", "v2", 1, 3, b"v2"))
    assert await store.load_snapshot("cluster", "v1", 1) == Snapshot("cluster", "v1", 1, 10, b"ten")
    assert (await store.load_snapshot("cluster", "v2", 1)).blob == b"v2"  # type: ignore[union-attr]
    assert await store.load_snapshot("cluster", "v1", 2) is None
    await store.save_snapshot(Snapshot("cluster", "v1", 1, 12, b"\x00\xff"))
    assert (await store.load_snapshot("cluster", "v1", 1)).blob == b"\x00\xff"  # type: ignore[union-attr]


async def test_expected_head_pins_outputs_right_after_the_decided_state(store: Any) -> None:
    from sextant_kit.errors import HeadMovedError

    await store.append("workload-a", 0, make_envelopes("workload-a", 2))
    stored = await store.append_and_track("svc", "in-1", 2, [make_envelope("workload-o", 1, 1)],
                                          expected_head=2)
    assert stored is not None and stored[0].position == 3
    with pytest.raises(HeadMovedError) as info:
        await store.append_and_track("svc", "in-2", 2, [make_envelope("workload-o", 2, 2)], expected_head=2)
    assert (info.value.expected, info.value.actual) == (2, 3)
    assert not await store.is_tracked("svc", "in-2")
    assert await store.last_position() == 3


async def test_interleaved_outputs_keep_the_callers_order(store: Any) -> None:
    """A decider's outputs land in the order it decided them, even when streams interleave; each
    stream's versions still count up (the stream comes back in a later run)."""
    a1, b1, a2 = (make_envelope("workload-a", 0, 1), make_envelope("workload-b", 0, 2),
                  make_envelope("workload-a", 0, 3))
    stored = await store.append_and_track("svc", "in-1", None, [a1, b1, a2], expected_head=0)
    assert [(e.id, e.position, e.stream_version) for e in stored] == [
        (a1.id, 1, 1), (b1.id, 2, 1), (a2.id, 3, 2)]
    assert [e.id for e in await store.read_all(0)] == [a1.id, b1.id, a2.id]
    assert [e.id for e in await store.read_stream("workload-a")] == [a1.id, a2.id]


async def test_non_durable_appends_are_covered_by_one_sync(store: Any) -> None:
    for i in range(3):
        stored = await store.append_and_track("svc", f"in-{i}", i + 1, [make_envelope("workload-o", i + 1, i)],
                                              durable=False)
        assert stored is not None and stored[0].position == i + 1
    await store.sync()
    assert [e.position for e in await store.read_all()] == [1, 2, 3]
    durability = getattr(store, "_durability", None)
    if durability is not None:  # PostgreSQL: the barrier covered all three appends
        assert durability.durable_position >= 3


async def test_a_valid_event_is_stored_with_its_checksum_and_read_back_trusted(
        store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sextant_contracts.trusted`: the checksum is written for a valid canonical event only; a row
    with it is read back without validation, equal to the validated envelope; a row without it
    (an old row) or with a checksum that does not match is validated."""
    from sextant_contracts import events as ev
    from sextant_contracts import trusted
    from sextant_contracts.envelope import Envelope

    built: list[str] = []
    original = Envelope.trusted.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Envelope, "trusted",
                        classmethod(lambda cls, **kw: built.append(kw["id"]) or original(cls, **kw)))
    tick = Envelope.wrap(ev.Tick(at=1.0, seq=0, period_s=1.0), id="t0", source="telemetry", stream_version=1, time=1.0)
    await store.append("clock", 0, [tick, make_envelope("clock", 2, 1)])  # the second: no valid Tick
    built.clear()
    a, b = await store.read_all()
    assert a.event() == tick.event() and a.model_copy(update={"position": None}) == tick and b.payload == {"n": 1}
    if hasattr(store, "engine"):  # PostgreSQL: the column, and what reading does with it
        from sqlalchemy import text

        assert built == ["t0"]
        async with store.engine.begin() as conn:
            sums = (await conn.execute(text("SELECT checksum FROM events ORDER BY position"))).scalars().all()
            assert sums == [trusted.checksum("Tick", 1, codec.dumps(tick.payload)), None]
            await conn.execute(text("UPDATE events SET checksum = NULL WHERE position = 1"))
        built.clear()
        assert (await store.read_all())[0] == a and built == []  # no checksum: validated, equal
        async with store.engine.begin() as conn:
            await conn.execute(text("UPDATE events SET checksum = 'bad', payload = :p WHERE position = 1"),
                               {"p": codec.dumps({"at": 1.0, "seq": "x", "period_s": 1.0})})
        with pytest.raises(ValueError):  # a mismatch: validated, and the changed payload is no Tick
            (await store.read_all())[0].event()
        assert built == []
    else:
        assert (store.checksum(1), store.checksum(2)) == (trusted.checksum("Tick", 1, codec.dumps(tick.payload)), None)
