"""LISTEN/NOTIFY wake-ups for tailing readers and the relay.

`Notifications` keeps one dedicated asyncpg connection LISTENing on a channel and counts
notifications in `generation`. A waiter reads `generation` BEFORE it looks for new rows and then
calls `wait(generation, timeout)`: it returns at once if a notification arrived in between, so a
wake-up can never be lost. If the connection cannot be opened or drops, `wait` degrades to a
plain sleep of `timeout` (the slow fallback poll) and reconnects on the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import asyncpg

log = logging.getLogger(__name__)


class Notifications:
    """Wake-ups on a PostgreSQL NOTIFY channel (lazy connection, poll fallback)."""

    def __init__(self, dsn: str, channel: str) -> None:
        self._dsn = dsn
        self._channel = channel
        self._conn: asyncpg.Connection | None = None
        self._event = asyncio.Event()
        self._connecting = asyncio.Lock()
        self.generation = 0

    def _on_notify(self, *_: Any) -> None:
        self.generation += 1
        event, self._event = self._event, asyncio.Event()
        event.set()

    def _on_terminate(self, *_: Any) -> None:
        self._conn = None
        self._on_notify()  # wake waiters so they re-read and reconnect

    async def _ensure(self) -> bool:
        if self._conn is not None and not self._conn.is_closed():
            return True
        async with self._connecting:
            if self._conn is not None and not self._conn.is_closed():
                return True
            try:
                conn = await asyncpg.connect(self._dsn, timeout=5)
                await conn.add_listener(self._channel, self._on_notify)
                conn.add_termination_listener(self._on_terminate)
            except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
                log.warning("LISTEN %s unavailable (%s); polling", self._channel, exc)
                return False
            self._conn = conn
            self._on_notify()  # rows may have been committed while we were not listening
            return True

    async def start(self) -> None:
        """Open the LISTEN connection now (optional: `wait` opens it lazily)."""
        await self._ensure()

    async def wait(self, seen_generation: int, timeout: float) -> None:
        """Return when a notification newer than `seen_generation` arrived, or after `timeout` s."""
        listening = await self._ensure()
        if self.generation != seen_generation:
            return
        if not listening:
            await asyncio.sleep(timeout)
            return
        event = self._event
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                await conn.close(timeout=2)
