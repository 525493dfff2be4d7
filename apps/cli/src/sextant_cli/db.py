"""`sextant db migrate`: create or upgrade the event store schema (Alembic, in the kit)."""

from __future__ import annotations

import argparse
import asyncio


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("db", help="event store administration")
    dsub = p.add_subparsers(dest="db_command", metavar="ACTION")
    dsub.required = True
    m = dsub.add_parser("migrate", help="create/upgrade the schema at SEXTANT_DATABASE_URL")
    m.add_argument("--url", help="database URL (default: $SEXTANT_DATABASE_URL)")
    m.set_defaults(func=_migrate)


def _migrate(args: argparse.Namespace) -> int:
    import os

    from sextant_kit.migrations import migrate_async

    url = args.url or os.environ.get("SEXTANT_DATABASE_URL")
    if not url:
        raise SystemExit("sextant db migrate: set --url or SEXTANT_DATABASE_URL")
    asyncio.run(migrate_async(url))
    print(f"migrated {url.rsplit('@', 1)[-1]}")
    return 0
