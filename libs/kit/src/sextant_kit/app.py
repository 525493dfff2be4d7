"""The FastAPI app factory: every service serves `/healthz` (the process is alive) and `/readyz`
(ready only when each dependency check — PostgreSQL, Kafka — answers), plus its own router.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager

from fastapi import APIRouter, FastAPI
from fastapi.responses import JSONResponse

ReadinessCheck = Callable[[], Awaitable[bool]]
Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


async def _run_check(check: ReadinessCheck, timeout_s: float) -> bool:
    try:
        return bool(await asyncio.wait_for(check(), timeout=timeout_s))
    except Exception:  # a failing dependency is "not ready", never a 500
        return False


def create_app(name: str, *, checks: Mapping[str, ReadinessCheck] | None = None,
               routers: tuple[APIRouter, ...] = (), lifespan: Lifespan | None = None,
               check_timeout_s: float = 2.0, version: str = "0.1.0") -> FastAPI:
    app = FastAPI(title=f"sextant-{name}", version=version, lifespan=lifespan)
    checks = dict(checks or {})

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "service": name}

    @app.get("/readyz", tags=["ops"])
    async def readyz() -> JSONResponse:
        results = {k: await _run_check(c, check_timeout_s) for k, c in sorted(checks.items())}
        ready = all(results.values())
        return JSONResponse({"ready": ready, "service": name, "checks": results},
                            status_code=200 if ready else 503)

    for r in routers:
        app.include_router(r)
    return app


async def no_lifespan(app: FastAPI) -> AsyncIterator[None]:  # pragma: no cover - convenience
    yield
