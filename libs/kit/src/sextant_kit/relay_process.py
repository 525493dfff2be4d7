"""`python -m sextant_kit.relay_process`: the outbox relay as its own process (PostgreSQL → Kafka).

One relay publishes at a time (a PostgreSQL advisory-lock leader), so per-stream order holds even
when a second relay is started for availability. Killed between publishing and marking sent, it
re-publishes on restart; consumers' tracking absorbs the duplicate.
"""

from __future__ import annotations

import asyncio

from .bootstrap import Runtime, serve, with_patience
from .eventstore.postgres import asyncpg_dsn
from .relay import PostgresLeaderLock, Relay
from .settings import KitSettings


class RelaySettings(KitSettings):
    service_name: str = "relay"


async def relay_task(rt: Runtime, stop: asyncio.Event) -> None:
    leader = PostgresLeaderLock(asyncpg_dsn(rt.store.engine))
    relay = Relay(rt.store, rt.publisher, leader=leader, tracer=rt.telemetry.tracer("relay"))
    rt.consumers["relay"] = relay
    await with_patience("relay: outbox", lambda: rt.store.pending_count(), 0.5, 5.0, stop)
    try:
        await relay.run(stop)
    finally:
        await leader.release()


relay_task.__name__ = "relay"


def main() -> None:
    asyncio.run(serve(RelaySettings(), [relay_task]))  # type: ignore[call-arg]


if __name__ == "__main__":
    main()
