"""Test harness for admission's routers (tests only; imports httpx): the admission app over
the in-memory event store seeded with a log, with a token registry where `tok-<tenant>` is a
tenant's token and `op` an operator's, and planning's decision on the log's last event."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
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

    async def any_active(self) -> bool:
        return True

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


@asynccontextmanager
async def api(seed: Sequence[Envelope], *, policy: str, registry: Registry | None = None) -> AsyncIterator[Api]:
    """The admission app on a store holding `seed`, deciding under `policy`."""
    store = MemoryEventStore()
    for env in seed:
        await store.append(env.stream, None, [env])
    settings = Settings(database_url="postgresql+asyncpg://unused/x", kafka_bootstrap="unused:9092")
    decider = make_decider(settings.model_copy(update={"policy_profile": policy}))

    async def fresh() -> None:
        await catch_up(decider, store)

    ctx = ApiContext(decider=decider, store=store, gate=Gatekeeper(registry or Registry(), settings),  # type: ignore[arg-type]
                     catch_up=fresh)
    app = create_app("admission", routers=tuple(routers(ctx)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://admission") as client:
        yield Api(client, store, policy)
