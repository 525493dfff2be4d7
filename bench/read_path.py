"""bench/read_path.py — `PostgresEventStore.read_all` on raw asyncpg vs SQLAlchemy Core.

Every decider's catch-up reads every event through `read_all`; it moved from SQLAlchemy Core to a
prepared asyncpg statement (docs/platform/throughput.md). This measures the client's CPU per 1 000
envelopes read (2 000-row pages over the whole log) both ways, on a private PostgreSQL: the
SQLAlchemy path is the former implementation, inlined here. The rows decode into envelopes the
same way (pydantic validation and the payload's JSON) in both: that part is not what changed.

    python bench/read_path.py --json PATH [--quick] [--seeds 1-3]

A "seed" is a repetition (the log is the same, the bench draws nothing at random); `worst` is the
highest CPU per 1 000 of each path over the repetitions. `load_avg` is the 1-minute load before
and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PAGE = 2000


def code_version() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False,
                              cwd=Path(__file__).parent).stdout.strip()
    return git("rev-parse", "--short=12", "HEAD") + ("+dirty" if git("status", "--porcelain") else "")


async def measure(url: str, events: int, seeds: list[int]) -> dict[str, Any]:
    from sextant_kit.eventstore.postgres import PostgresEventStore
    from sextant_kit.eventstore.rows import envelope_from_row
    from sextant_kit.eventstore.schema import events as table
    from sextant_kit.migrations import migrate_async
    from sextant_kit.testing.envelopes import make_envelope
    from sqlalchemy import select

    await migrate_async(url)
    store = PostgresEventStore.from_url(url, topic_of=lambda s: None)
    try:
        for b in range(events // 500):
            await store.append(f"clock-{b}", 0, [make_envelope(f"clock-{b}", i + 1, b * 500 + i, note="x" * 200)
                                                 for i in range(500)])

        async def sqlalchemy_core(pos: int, limit: int) -> list[Any]:
            stmt = select(table).where(table.c.position > pos).order_by(table.c.position).limit(limit)
            async with store.engine.connect() as conn:
                return [envelope_from_row(r) for r in await conn.execute(stmt)]

        async def once(read: Any) -> float:
            c0, pos, n = time.process_time(), 0, 0
            while got := await read(pos, PAGE):
                pos, n = got[-1].position, n + len(got)
            assert n == events
            return round(1000 * (time.process_time() - c0) / events * 1000, 1)

        per_seed = {}
        for seed in seeds:
            per_seed[str(seed)] = {"sqlalchemy_core_cpu_ms_per_1000": await once(sqlalchemy_core),
                                   "raw_asyncpg_cpu_ms_per_1000": await once(store.read_all)}
        return per_seed
    finally:
        await store.close()


def seeds_of(spec: str) -> list[int]:
    lo, _, hi = spec.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--quick", action="store_true", help="5 000 events instead of 50 000")
    ap.add_argument("--seeds", default="1-3", help="repetitions, e.g. 1-3")
    args = ap.parse_args()
    from sextant_infra.postgres import PostgresNode

    version, load0 = code_version(), os.getloadavg()[0]
    events = 5_000 if args.quick else 50_000
    node = PostgresNode(None)
    node.start()
    try:
        per_seed = asyncio.run(measure(node.url, events, seeds_of(args.seeds)))
    finally:
        node.stop()
    keys = ("sqlalchemy_core_cpu_ms_per_1000", "raw_asyncpg_cpu_ms_per_1000")
    result = {"events": events, "page": PAGE, "per_seed": per_seed,
              "worst": {k: max(s[k] for s in per_seed.values()) for k in keys},
              "code_version": version, "load_avg": [round(load0, 2), round(os.getloadavg()[0], 2)]}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
