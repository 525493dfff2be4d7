"""Contract-suite fixtures: every store port implementation, built the same way.

`store` is parametrised over the in-memory store and the PostgreSQL store (a brand-new migrated
database per test, through the real-infrastructure fixture `fresh_pg_url`); the PostgreSQL case
is marked `integration`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest


def topic_of(stream: str) -> str | None:
    """Contract-test topic resolver: `quiet-*` streams are not published."""
    return None if stream.startswith("quiet-") else f"topic.{stream.split('-')[0]}"


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    if request.param == "memory":
        from sextant_kit.eventstore.memory import MemoryEventStore

        yield MemoryEventStore(topic_of=topic_of)
        return
    from sextant_kit.eventstore.postgres import PostgresEventStore
    from sextant_kit.migrations import migrate_async

    url = request.getfixturevalue("fresh_pg_url")
    await migrate_async(url)
    pg = PostgresEventStore.from_url(url, topic_of=topic_of, poll_interval=0.2)
    try:
        yield pg
    finally:
        await pg.close()

