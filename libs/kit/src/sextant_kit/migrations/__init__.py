"""Alembic migrations of the kit's tables (event store, tracking, outbox, snapshots).

`migrate(url)` upgrades a database to the newest revision; it is safe to call from several
threads and processes at once (the migration runs under a PostgreSQL advisory lock) and is a no-op on an
up-to-date database. The kit keeps its own version table (`sextant_kit_alembic_version`) so a
service may keep its read-model migrations in another Alembic tree on the same database.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from alembic import command
from alembic.config import Config

VERSION_TABLE = "sextant_kit_alembic_version"
MIGRATION_LOCK_KEY = 0x5E7A_0001
"""Advisory-lock key held while migrating (a constant shared by every process)."""


def alembic_config(url: str) -> Config:
    """An Alembic Config for the kit's migrations against `url` (any SQLAlchemy URL of PostgreSQL;
    `postgresql+asyncpg://` is used as is)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.set_main_option("version_table", VERSION_TABLE)
    return cfg


_IN_PROCESS = threading.Lock()  # Alembic's `context`/`op` proxies are process-global


def migrate(url: str, revision: str = "head") -> None:
    """Upgrade the database at `url` to `revision` (blocking; call it before starting the loop, or
    use `migrate_async` from inside one). Serialised within a process (Alembic keeps global
    state) and across processes (advisory lock, see env.py)."""
    with _IN_PROCESS:
        command.upgrade(alembic_config(url), revision)


async def migrate_async(url: str, revision: str = "head") -> None:
    """`migrate` from inside a running event loop (runs Alembic in a worker thread)."""
    await asyncio.to_thread(migrate, url, revision)
