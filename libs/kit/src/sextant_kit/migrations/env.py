"""Alembic environment: runs the kit's migrations over an async (asyncpg) or sync engine."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import Connection, create_engine, pool, text
from sqlalchemy.ext.asyncio import create_async_engine

from sextant_kit.eventstore.schema import metadata
from sextant_kit.migrations import MIGRATION_LOCK_KEY, VERSION_TABLE

config = context.config


def _run(connection: Connection) -> None:
    connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
    try:
        context.configure(connection=connection, target_metadata=metadata,
                          version_table=VERSION_TABLE, transaction_per_migration=True)
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
    finally:
        connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
        connection.commit()


async def _run_async(url: str) -> None:
    engine = create_async_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            await conn.run_sync(_run)
    finally:
        await engine.dispose()


def run_online() -> None:
    existing = config.attributes.get("connection")
    if existing is not None:
        _run(existing)
        return
    url = config.get_main_option("sqlalchemy.url")
    assert url, "sqlalchemy.url is not set"
    if "+asyncpg" in url:
        asyncio.run(_run_async(url))
    else:
        engine = create_engine(url, poolclass=pool.NullPool)
        with engine.connect() as conn:
            _run(conn)
        engine.dispose()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=metadata,
                      version_table=VERSION_TABLE, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_online()
