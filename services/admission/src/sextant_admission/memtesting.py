"""Test harness for admission's routers (tests only; imports httpx): the admission app over
the in-memory event store seeded with a log, with a token registry where `tok-<tenant>` is a
tenant's token and `op` an operator's, and planning's decision on the log's last event — in
process (`api`, ASGI) or served over HTTP from a thread for the CLI's tests (`served`)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

import httpx
import uvicorn
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.workflow import Decider
from sextant_kit.app import create_app
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.tenancy import Tenant

from .api import ApiContext, routers
from .auth import Gatekeeper
from .frontdoor import catch_up
from .handlers import make_decider
from .settings import Settings


@dataclass(frozen=True)
class Registry:
    """Tokens `tok-<tenant>` (any tenant, or only `tenants` when given); `op` is an operator's."""

    tenants: Collection[str] | None = None
    active: bool = True  # False: no tenant is registered (the API runs open, tenant `default`)

    async def any_active(self) -> bool:
        return self.active

    async def authenticate(self, token: str) -> Tenant | None:
        if token == "op":
            return Tenant("ops", 0.0, operator=True)
        name = token[4:]
        known = self.tenants is None or name in self.tenants
        return Tenant(name, 0.0) if token.startswith("tok-") and known else None

    async def get(self, name: str) -> Tenant | None:
        known = self.tenants is None or name in (*self.tenants, "ops")
        return Tenant(name, 0.0) if known else None


def as_(tenant: str) -> dict[str, str]:
    """The headers of a request made with `tenant`'s token."""
    return {"Authorization": f"Bearer tok-{tenant}"}


@dataclass
class Api:
    client: httpx.AsyncClient
    store: MemoryEventStore
    policy: str

    async def log(self) -> list[Envelope]:
        return await self.store.read_all(0, limit=10_000)

    async def planned(self) -> list[ev.Event]:
        """What the planning decider decides about the log's last event."""
        planning = Decider("planning", policy_set(self.policy))
        log = await self.log()
        planning.fold(log)
        return list(planning.handle(log[-1]).events)


async def _app(seed: Sequence[Envelope], settings: Settings, registry: Registry) -> tuple[object, MemoryEventStore]:
    """The admission app over a fresh in-memory store holding `seed`."""
    store = MemoryEventStore()
    for env in seed:
        await store.append(env.stream, None, [env])
    decider = make_decider(settings)

    async def fresh() -> None:
        await catch_up(decider, store)

    ctx = ApiContext(decider=decider, store=store, gate=Gatekeeper(registry, settings),  # type: ignore[arg-type]
                     catch_up=fresh)
    return create_app("admission", routers=tuple(routers(ctx))), store


def _settings(policy: str, api_auth: str | None = None) -> Settings:
    extra = {} if api_auth is None else {"api_auth": api_auth}
    return Settings(database_url="postgresql+asyncpg://unused/x", kafka_bootstrap="unused:9092",  # type: ignore[arg-type]
                    policy_profile=policy, **extra)


@asynccontextmanager
async def api(seed: Sequence[Envelope], *, policy: str, registry: Registry | None = None) -> AsyncIterator[Api]:
    """The admission app on a store holding `seed`, deciding under `policy`."""
    app, store = await _app(seed, _settings(policy), registry or Registry())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://admission") as client:  # type: ignore[arg-type]
        yield Api(client, store, policy)


class Served:
    """The admission app served over HTTP at `url` by a thread of its own (its event loop `loop`)."""

    def __init__(self) -> None:
        self.url = ""
        self.store: MemoryEventStore | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def log_types(self) -> list[str]:
        """The types of the events in the store, in log order."""
        assert self.store is not None and self.loop is not None
        rows = asyncio.run_coroutine_threadsafe(self.store.read_all(0, limit=10_000), self.loop).result(10)
        return [e.type for e in rows]


@contextmanager
def served(seed: Sequence[Envelope], *, api_auth: str, registry: Registry,
           policy: str = "foundation") -> Iterator[Served]:
    """`api`'s app on a free local port (uvicorn in a daemon thread) until the block ends."""
    out = Served()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    holder: list[uvicorn.Server] = []

    async def serve() -> None:
        app, out.store = await _app(seed, _settings(policy, api_auth), registry)
        out.loop = asyncio.get_running_loop()
        holder.append(uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,  # type: ignore[arg-type]
                                                    log_level="warning", lifespan="off")))
        await holder[0].serve()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (holder and holder[0].started):
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the admission app did not start")
        time.sleep(0.05)
    out.url = f"http://127.0.0.1:{port}"
    try:
        yield out
    finally:
        holder[0].should_exit = True
        thread.join(timeout=10)
