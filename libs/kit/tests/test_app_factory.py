"""The app factory: /healthz always answers; /readyz is 200 only when every dependency check does."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sextant_kit.app import create_app


async def ok() -> bool:
    return True


async def down() -> bool:
    raise ConnectionRefusedError("no broker")


async def slow() -> bool:
    await asyncio.sleep(10)
    return True


async def get(app, path: str) -> httpx.Response:  # type: ignore[no-untyped-def]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        return await c.get(path)


async def test_healthz_answers_even_when_dependencies_are_down() -> None:
    r = await get(create_app("svc", checks={"kafka": down}), "/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok", "service": "svc"}


@pytest.mark.parametrize(("checks", "status", "ready"), [
    ({"postgres": ok, "kafka": ok}, 200, True),
    ({"postgres": ok, "kafka": down}, 503, False),  # a raising check is "not ready", never a 500
    ({"postgres": slow}, 503, False),  # a hanging check times out
], ids=["all-up", "kafka-down", "postgres-hangs"])
async def test_readyz_reflects_every_check(checks, status: int, ready: bool) -> None:  # type: ignore[no-untyped-def]
    app = create_app("svc", checks=checks, check_timeout_s=0.2)
    r = await get(app, "/readyz")
    assert r.status_code == status
    body = r.json()
    assert body["ready"] is ready and set(body["checks"]) == set(checks)
