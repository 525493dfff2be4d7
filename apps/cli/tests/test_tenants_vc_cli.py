"""`sextant tenants capacity|usage` against the real admission app (served over HTTP from a
thread, on the in-memory event store): an operator's capacity is recorded; a tenant's token and a
malformed capacity print the problem (403; 422 naming the field), exit 1 and write nothing; usage
prints the tenant's view."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from sextant_admission.api import ApiContext, routers
from sextant_admission.auth import Gatekeeper
from sextant_admission.frontdoor import catch_up
from sextant_admission.handlers import make_decider
from sextant_admission.settings import Settings
from sextant_cli.main import main
from sextant_contracts.envelope import Envelope
from sextant_core.testing.builders import server
from sextant_kit.app import create_app
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.tenancy import Tenant


class Registry:
    """`op`: an operator's token; `tok-acme`: tenant acme's."""

    async def any_active(self) -> bool:
        return True

    async def authenticate(self, token: str) -> Tenant | None:
        return {"op": Tenant("ops", 0.0, operator=True), "tok-acme": Tenant("acme", 0.0)}.get(token)

    async def get(self, name: str) -> Tenant | None:
        return Tenant(name, 0.0) if name in ("acme", "ops") else None


class Served:
    def __init__(self) -> None:
        self.url = ""
        self.store: MemoryEventStore | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def log_types(self) -> list[str]:
        assert self.store is not None and self.loop is not None
        rows = asyncio.run_coroutine_threadsafe(self.store.read_all(0, limit=10_000), self.loop).result(10)
        return [e.type for e in rows]


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    out = Served()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    holder: list[uvicorn.Server] = []

    async def serve() -> None:
        store = MemoryEventStore()
        s1 = server("s1")
        await store.append(s1.stream, None, [Envelope.wrap(s1, id="s1", source="edge", stream_version=1, time=0.0)])
        settings = Settings(database_url="postgresql+asyncpg://unused/x", kafka_bootstrap="unused:9092",
                            api_auth="tokens", policy_profile="foundation")
        decider = make_decider(settings)

        async def fresh() -> None:
            await catch_up(decider, store)

        ctx = ApiContext(decider=decider, store=store, gate=Gatekeeper(Registry(), settings),  # type: ignore[arg-type]
                         catch_up=fresh)
        out.store, out.loop = store, asyncio.get_running_loop()
        app = create_app("admission", routers=tuple(routers(ctx)))
        holder.append(uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                    lifespan="off")))
        await holder[0].serve()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (holder and holder[0].started):
        assert thread.is_alive() and time.monotonic() < deadline, "the API did not start"
        time.sleep(0.05)
    out.url = f"http://127.0.0.1:{port}"
    yield out
    holder[0].should_exit = True
    thread.join(timeout=10)


def cli(served: Served, capsys: pytest.CaptureFixture[str], token: str, *args: str) -> tuple[int, Any]:
    code = main(["tenants", *args, "--api", served.url, "--token", token])
    return code, json.loads(capsys.readouterr().out)


def test_an_operator_sets_a_capacity_and_the_tenant_reads_its_usage(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "op", "capacity", "acme", "3")
    assert code == 0 and out == {"tenant": "acme", "servers": 3, "previous": None}
    assert served.log_types()[-1] == "VcCapacitySet"
    code, out = cli(served, capsys, "tok-acme", "usage", "acme")
    assert code == 0 and (out["tenant"], out["capacity"], out["demand"]) == ("acme", 3, 0)


@pytest.mark.parametrize(("token", "servers", "status"), [("tok-acme", "2", 403), ("op", "-1", 422),
                                                          ("op", "two", 422)], ids=["tenant", "negative", "text"])
def test_a_refused_capacity_prints_the_problem_exits_1_and_writes_nothing(
        served: Served, capsys: pytest.CaptureFixture[str], token: str, servers: str, status: int) -> None:
    before = served.log_types()
    code, out = cli(served, capsys, token, "capacity", "acme", servers)
    assert code == 1 and out["status"] == status
    if status == 422:
        assert out["errors"][0]["path"] == "$.servers"
    assert served.log_types() == before


def test_another_tenants_usage_is_a_404(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "tok-acme", "usage", "ops")
    assert code == 1 and out["status"] == 404
