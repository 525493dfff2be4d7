"""`python -m sextant_admission.main`: the admission service process — the REST API, the admission
decider, and the Kafka front door (submissions in, decisions out). The kit's migrations (event
store and the `tenancy` schema) are applied at start-up, waiting for PostgreSQL if need be. Its
`/readyz` is the platform's: 503 also while a decider or the agent is down or not consuming
(`Settings.ready_consumers`)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from sextant_core.workflow import Decider
from sextant_kit.bootstrap import Runtime, serve, with_patience
from sextant_kit.coalesce import Coalesced
from sextant_kit.kafka.lag import ConsumerWatch
from sextant_kit.migrations import migrate_async
from sextant_kit.runtime import decider_task
from sextant_kit.tenancy import TenantRegistry

from .api import ApiContext, routers
from .auth import Gatekeeper
from .frontdoor import catch_up, frontdoor_tasks
from .handlers import make_decider
from .settings import Settings


class Gates:
    """One `Gatekeeper` per process (its rate limiter is shared by the API and the front door)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._gate: Gatekeeper | None = None

    def __call__(self, rt: Runtime) -> Gatekeeper:
        if self._gate is None:
            self._gate = Gatekeeper(TenantRegistry(rt.store.engine), self.settings)
        return self._gate


def api(decider: Decider, settings: Settings, gates: Gates, rt: Runtime) -> list[APIRouter]:
    async def fresh() -> None:
        await catch_up(decider, rt.store)

    # overlapping requests share their catch-ups (each still sees what was committed before it)
    return routers(ApiContext(decider=decider, store=rt.store, gate=gates(rt), catch_up=Coalesced(fresh),
                              max_body_bytes=settings.max_body_bytes))


async def run(settings: Settings) -> None:
    await with_patience("admission: migrations", lambda: migrate_async(settings.database_url),
                        settings.retry_backoff_s, settings.retry_backoff_max_s)
    decider = make_decider(settings)
    gates = Gates(settings)
    tasks: list[Any] = [decider_task(decider)]
    if settings.front_door:
        tasks += frontdoor_tasks(decider, gates)
    watch = ConsumerWatch(settings.kafka_bootstrap,
                          [g.strip() for g in settings.ready_consumers.split(",") if g.strip()],
                          stall_s=settings.ready_stall_s)

    async def watching(rt: Runtime, stop: asyncio.Event) -> None:
        await watch.run(stop)

    await serve(settings, [*tasks, watching], routers=lambda rt: api(decider, settings, gates, rt),
                checks=lambda rt: {"consumers": watch.check})


def main() -> None:
    asyncio.run(run(Settings()))  # type: ignore[call-arg]


if __name__ == "__main__":
    main()
