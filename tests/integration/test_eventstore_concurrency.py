"""Acceptance "Concurrency control": appends racing at the same (stream, version) from separate
connections — exactly one wins, every other raises ConcurrencyError, nothing is silently dropped."""

from __future__ import annotations

import asyncio

import pytest
from sextant_kit.errors import ConcurrencyError
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.migrations import migrate_async
from sextant_kit.testing.envelopes import make_envelope

pytestmark = pytest.mark.integration


@pytest.fixture
async def stores(fresh_pg_url: str):  # type: ignore[no-untyped-def]
    await migrate_async(fresh_pg_url)
    made = [PostgresEventStore.from_url(fresh_pg_url, topic_of=lambda s: None, pool_size=2) for _ in range(8)]
    yield made
    for s in made:
        await s.close()


async def test_two_appends_at_the_same_version_exactly_one_succeeds(stores: list[PostgresEventStore]) -> None:
    a, b = stores[:2]
    for round_ in range(30):
        stream = f"workload-r{round_}"
        results = await asyncio.gather(
            a.append(stream, 0, [make_envelope(stream, 1, id=f"{stream}-a")]),
            b.append(stream, 0, [make_envelope(stream, 1, id=f"{stream}-b")]),
            return_exceptions=True)
        ok = [r for r in results if isinstance(r, list)]
        conflicts = [r for r in results if isinstance(r, ConcurrencyError)]
        assert len(ok) == 1 and len(conflicts) == 1, results
        assert conflicts[0].stream == stream and conflicts[0].expected == 0
        assert [e.id for e in await a.read_stream(stream)] == [ok[0][0].id]
    assert await a.last_position() == 30  # 30 winners, no gap left by the 30 losers


async def test_eight_contenders_one_winner_and_losers_can_retry(stores: list[PostgresEventStore]) -> None:
    stream = "workload-hot"
    await stores[0].append(stream, 0, [make_envelope(stream, 1, id="seed")])
    results = await asyncio.gather(*(s.append(stream, 1, [make_envelope(stream, 2, id=f"c{i}")])
                                     for i, s in enumerate(stores)), return_exceptions=True)
    winners = [r[0].id for r in results if isinstance(r, list)]
    losers = [i for i, r in enumerate(results) if isinstance(r, ConcurrencyError)]
    assert len(winners) == 1 and len(losers) == 7
    # every loser re-reads and appends after the winner: nothing is lost
    for i in losers:
        version = await stores[i].stream_version(stream)
        await stores[i].append(stream, version, [make_envelope(stream, version + 1, id=f"c{i}")])
    got = [e.id for e in await stores[0].read_stream(stream)]
    assert got[:2] == ["seed", winners[0]] and sorted(got[1:]) == sorted(f"c{i}" for i in range(8))
    assert [e.stream_version for e in await stores[0].read_stream(stream)] == list(range(1, 10))


async def test_the_same_input_tracked_concurrently_is_processed_once(stores: list[PostgresEventStore]) -> None:
    results = await asyncio.gather(*(s.append_and_track("svc", "input-1", 1,
                                                        [make_envelope("workload-o", 1, i, id=f"out-{i}")])
                                     for i, s in enumerate(stores[:4])), return_exceptions=True)
    assert sum(1 for r in results if isinstance(r, list)) == 1
    assert sum(1 for r in results if r is None) == 3
    assert await stores[0].last_position() == 1
