"""Driver-level (asyncpg) statements on a pooled SQLAlchemy connection, without poisoning the pool.

SQLAlchemy invalidates a pooled connection when a statement *it* runs fails with a disconnect. A
statement run on the raw driver connection bypasses that: a connection killed under the pool (a
PostgreSQL restart, `pg_terminate_backend`) would be checked in again and fail every later checkout
with "connection is closed" — a decider whose catch-up reads the log this way retried forever after
an outage, silently (the outage log counts repeats). `raw_connection` invalidates the connection
whenever a statement on it fails otherwise than by a server-side error of the statement itself (a
`PostgresError` that is not a connection error: a constraint, the log head moved...), so the pool
opens a fresh one; a failure that left the connection closed is raised as transient, whatever the
driver called it (asyncpg raises `InternalClientError` "another operation is in progress" from a
connection killed mid-protocol).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from ..errors import KitError, TransientError, is_transient


@contextlib.asynccontextmanager
async def raw_connection(engine: AsyncEngine) -> AsyncIterator[Any]:
    """The asyncpg connection of a pooled connection, invalidated if a statement on it may have
    broken it (the error is re-raised: the caller's retry gets another connection)."""
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver = raw.driver_connection
        try:
            yield driver
        except Exception as exc:
            if isinstance(exc, asyncpg.PostgresError | KitError) and not is_transient(exc):
                raise  # the statement's own error (or the kit's translation of it): the connection is fine
            await conn.invalidate(exc)
            if not is_transient(exc) and driver is not None and driver.is_closed():
                raise TransientError(f"postgres connection lost: {exc!r}") from exc
            raise
