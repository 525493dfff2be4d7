"""`sextant replay`: rebuild state from the PostgreSQL log and re-derive every recorded decision.

Prints a summary of differences and exits non-zero on any (DESIGN §4: a difference is a failure,
not a warning). `--from-snapshot [POSITION]` starts from a snapshot the services stored in the
`snapshots` table — the newest one of the current code (at or before POSITION when given) — and
re-derives the decisions of the log's tail after it, fetching their causes from the log as
needed; with no valid stored snapshot it says so and exits 2.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import pickle
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from sextant_contracts.envelope import Envelope


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("replay", help="re-derive every decision of the log; exit 1 on any difference")
    p.add_argument("--url", help="database URL (default: $SEXTANT_DATABASE_URL)")
    p.add_argument("--from-snapshot", type=int, nargs="?", const=-1, default=None, metavar="POSITION",
                   help="start from the newest snapshot stored by a service (at or before POSITION)")
    p.add_argument("--profile", help="re-derive with this policy profile instead of the recorded one")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    url = args.url or os.environ.get("SEXTANT_DATABASE_URL")
    if not url:
        raise SystemExit("sextant replay: set --url or SEXTANT_DATABASE_URL")
    return replay_database(url, profile_override=args.profile, snapshot_at=args.from_snapshot)


async def read_log(url: str) -> list[Envelope]:
    from sextant_kit.eventstore.postgres import PostgresEventStore

    store = PostgresEventStore.from_url(url)
    try:
        out: list[Envelope] = []
        while True:
            batch = await store.read_all(out[-1].position if out else 0, limit=10_000)  # type: ignore[arg-type]
            if not batch:
                return out
            out.extend(batch)
    finally:
        await store.close()


@dataclass(frozen=True)
class StoredSnapshot:
    key: str  # the service that saved it
    position: int
    blob: bytes


async def newest_snapshot(url: str, at_most: int | None = None) -> StoredSnapshot | None:
    """The stored snapshot of the current code (the hash the services tag theirs with) with the
    highest position (at most `at_most`), whichever service saved it: every decider folds the
    same `ClusterState`, so any service's snapshot is a state of the whole log up to its position."""
    from sextant_kit.eventstore.postgres import PostgresEventStore
    from sextant_kit.eventstore.schema import snapshots
    from sextant_kit.runtime import SNAPSHOT_SCHEMA, code_version
    from sqlalchemy import select

    stmt = (select(snapshots.c.key, snapshots.c.position, snapshots.c.blob)
            .where(snapshots.c.code_version == code_version("sextant_core", "sextant_contracts"),
                   snapshots.c.schema_version == SNAPSHOT_SCHEMA)
            .order_by(snapshots.c.position.desc(), snapshots.c.key))
    if at_most is not None:
        stmt = stmt.where(snapshots.c.position <= at_most)
    store = PostgresEventStore.from_url(url)
    try:
        async with store.engine.connect() as conn:
            row = (await conn.execute(stmt.limit(1))).first()
    finally:
        await store.close()
    return None if row is None else StoredSnapshot(row.key, int(row.position), bytes(row.blob))


def replay_database(url: str, *, profile_override: str | None = None, snapshot_at: int | None = None,
                    console: Console | None = None) -> int:
    from sextant_core.profiles import policy_set
    from sextant_core.replay import replay
    from sextant_core.state.model import ClusterState

    console = console or Console()
    t0 = time.perf_counter()
    log = asyncio.run(read_log(url))
    read_s = time.perf_counter() - t0

    @functools.cache
    def policies(name: str) -> Any:  # one policy set per profile: planners keep their table index
        return policy_set(profile_override or name)

    t1 = time.perf_counter()
    if snapshot_at is None:
        report = replay(log, policies)
    else:
        snap = asyncio.run(newest_snapshot(url, None if snapshot_at < 0 else snapshot_at))
        if snap is None:
            where = "" if snapshot_at < 0 else f" at or before position {snapshot_at}"
            console.print(f"[red]no stored snapshot of this code{where}[/]")
            return 2
        state = pickle.loads(snap.blob)  # what the services' `Decider.restore` does
        if not isinstance(state, ClusterState) or state.position != snap.position:
            console.print(f"[red]the snapshot stored by {snap.key} at position {snap.position} is not "
                          f"a state of that position[/]")
            return 2
        before = {e.id: e for e in log if e.position is not None and e.position <= snap.position}
        report = replay([e for e in log if e.position is not None and e.position > snap.position], policies,
                        state=state, lookup=lambda i: before[i].event() if i in before else None)
        console.print(f"  from the snapshot stored by {snap.key} at position {snap.position}")
    dt = time.perf_counter() - t1
    for d in report.differences[:20]:
        console.print(f"  [red]difference[/] at position {d.position} ({d.decision_id[:12]}): {d.what}")
    console.print(f"  {report.events} events read in {read_s:.2f}s, rebuilt and re-derived in {dt:.2f}s "
                  f"({report.events / dt if dt else 0:.0f} events/s, {report.decisions / dt if dt else 0:.0f} decisions/s)")
    console.print(report.summary())
    return 0 if report.ok else 1
