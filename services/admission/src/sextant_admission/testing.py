"""Test helpers: the admission API in-process over a real PostgreSQL database, a database of a
test module's own, tenants.

`api_under_test(url, **settings)` migrates the database, builds the same routers the process
serves (same `create_app`, same `ApiContext`) and yields an `InProcessApi` with an httpx client on
the ASGI app, the event store, the tenant registry and the decider. No Kafka is needed: the API
writes only to PostgreSQL (the relay publishes).

`served_api(url, **settings)` serves that same app over HTTP (uvicorn on 127.0.0.1, a free port) in
a thread of its own with its own event loop, for a real browser; yields the base URL.

`own_database(pg_node, prefix)` creates a database on the session's server and drops it after;
`create_tenants(url, name={limits}, ...)` migrates it and returns each new tenant's token.
"""

from __future__ import annotations

import asyncio
import time
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
    app: Any = None  # the ASGI app the client talks to

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
            yield InProcessApi(client, store, registry, decider, clock, app)
    finally:
        await store.close()


@contextmanager
def served_api(url: str, *, start_timeout_s: float = 60.0, **overrides: Any) -> Iterator[str]:
    """`api_under_test`'s app served over HTTP in a background thread; yields `http://127.0.0.1:PORT`."""
    import socket
    import threading

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server: list[uvicorn.Server] = []
    failed: list[BaseException] = []

    async def serve() -> None:
        async with api_under_test(url, **overrides) as api:
            server.append(uvicorn.Server(uvicorn.Config(api.app, host="127.0.0.1", port=port, log_level="warning",
                                                        lifespan="off")))
            await server[0].serve()

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # reported to the caller  # pylint: disable=broad-exception-caught
            failed.append(exc)

    thread = threading.Thread(target=run, name=f"served-api-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not (server and server[0].started):
        assert not failed and thread.is_alive(), f"the API did not start: {failed}"
        assert time.monotonic() < deadline, f"the API did not start within {start_timeout_s:.0f} s"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server[0].should_exit = True
        thread.join(timeout=30)


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
