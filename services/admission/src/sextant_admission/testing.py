"""Test helpers: the admission API in-process over a real PostgreSQL database, a database of a
test module's own, tenants.

`api_under_test(url, **settings)` migrates the database, builds the same routers the process
serves (same `create_app`, same `ApiContext`) and yields an `InProcessApi` with an httpx client on
the ASGI app, the event store, the tenant registry and the decider. No Kafka is needed: the API
writes only to PostgreSQL (the relay publishes).

`own_database(pg_node, prefix)` creates a database on the session's server and drops it after;
`create_tenants(url, name={limits}, ...)` migrates it and returns each new tenant's token.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from sextant_core.workflow import Decider
from sextant_kit.app import create_app
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.migrations import migrate_async
from sextant_kit.ratelimit import RateLimiter
from sextant_kit.tenancy import TenantRegistry

from .api import ApiContext, routers
from .auth import Gatekeeper
from .frontdoor import catch_up
from .handlers import make_decider
from .settings import Settings


@dataclass
class InProcessApi:
    client: httpx.AsyncClient
    store: PostgresEventStore
    registry: TenantRegistry
    decider: Decider
    clock: list[float]  # the rate limiter's clock: tests move time by hand

    async def log_size(self) -> int:
        return await self.store.last_position()

    async def tenant(self, name: str, **limits: Any) -> dict[str, str]:
        """Create a tenant; returns the Authorization header of its token."""
        _, token = await self.registry.create(name, **limits)
        return {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def api_under_test(url: str, **overrides: Any) -> AsyncIterator[InProcessApi]:
    await migrate_async(url)
    settings = Settings(database_url=url, kafka_bootstrap="unused:9092", **overrides)
    store = PostgresEventStore.from_url(url)
    registry = TenantRegistry(store.engine)
    clock = [0.0]
    gate = Gatekeeper(registry, settings, RateLimiter(clock=lambda: clock[0]))
    decider = make_decider(settings)

    async def fresh() -> None:
        await catch_up(decider, store)

    ctx = ApiContext(decider=decider, store=store, gate=gate, catch_up=fresh, max_body_bytes=settings.max_body_bytes)
    app = create_app("admission", routers=tuple(routers(ctx)))
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://admission") as client:
            yield InProcessApi(client, store, registry, decider, clock)
    finally:
        await store.close()


@contextmanager
def own_database(pg_node: Any, prefix: str) -> Iterator[str]:
    """The URL of a new database on `pg_node` (a `sextant_infra.postgres.PostgresNode`), dropped after."""
    name = f"t_{prefix}_{uuid.uuid4().hex[:10]}"
    pg_node.create_database(name)
    try:
        yield pg_node.url_for(name)
    finally:
        pg_node.drop_database(name)


def create_tenants(url: str, **limits: dict[str, Any]) -> dict[str, str]:
    """Migrate `url` and create a tenant per keyword (its limits as the value); {name: token}."""

    async def go() -> dict[str, str]:
        await migrate_async(url)
        store = PostgresEventStore.from_url(url)
        try:
            reg = TenantRegistry(store.engine)
            return {name: (await reg.create(name, **lim))[1] for name, lim in limits.items()}
        finally:
            await store.close()

    return asyncio.run(go())
