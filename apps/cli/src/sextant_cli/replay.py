"""`sextant replay`: rebuild state from the PostgreSQL log and re-derive every recorded decision.

Prints a summary of differences and exits non-zero on any (DESIGN §4: a difference is a failure,
not a warning). `--from-snapshot` starts from a state folded up to the middle of the log (or the
given position) instead of from scratch, fetching decisions' causes from the log as needed.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import time
from typing import Any

from rich.console import Console
from sextant_contracts.envelope import Envelope


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("replay", help="re-derive every decision of the log; exit 1 on any difference")
    p.add_argument("--url", help="database URL (default: $SEXTANT_DATABASE_URL)")
    p.add_argument("--from-snapshot", type=int, nargs="?", const=-1, default=None, metavar="POSITION",
                   help="start from the state at POSITION (default: the middle of the log)")
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


def replay_database(url: str, *, profile_override: str | None = None, snapshot_at: int | None = None,
                    console: Console | None = None) -> int:
    from sextant_core.profiles import policy_set
    from sextant_core.replay import replay
    from sextant_core.state import fold

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
        cut = len(log) // 2 if snapshot_at < 0 else snapshot_at
        state = fold(log[:cut])
        by_id = {e.id: e for e in log[:cut]}
        report = replay(log[cut:], policies, state=state,
                        lookup=lambda i: by_id[i].event() if i in by_id else None)
        console.print(f"  from the state at position {cut}")
    dt = time.perf_counter() - t1
    for d in report.differences[:20]:
        console.print(f"  [red]difference[/] at position {d.position} ({d.decision_id[:12]}): {d.what}")
    console.print(f"  {report.events} events read in {read_s:.2f}s, rebuilt and re-derived in {dt:.2f}s "
                  f"({report.events / dt if dt else 0:.0f} events/s, {report.decisions / dt if dt else 0:.0f} decisions/s)")
    console.print(report.summary())
    return 0 if report.ok else 1
