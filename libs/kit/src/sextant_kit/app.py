"""The FastAPI app factory: every service serves `/healthz` (the process is alive) and `/readyz`
(ready only when each dependency check — PostgreSQL, Kafka — answers), plus its own router.

Every app also serves `GET /metrics` (Prometheus text format, `metrics`) and times every request
(`sextant_http_request_seconds`, by route template). `metrics_gate` (a FastAPI dependency) guards
`/metrics`: the processes pass their operator gate (`bootstrap.serve`, `operators.OperatorGate`),
so once a tenant exists a scrape needs an operator's bearer token — admission's port is public,
and queue lengths, rates and consumer lag say how busy every tenant is. Prometheus sends one with
`authorization: {credentials: <token>}` in its scrape config.

`/readyz` answers 200 `{"ready": true, "service", "checks"}` or, when a check fails, 503 with a
problem document (RFC 9457) that carries the same `ready`, `service` and `checks` members; both
are in the OpenAPI document. Every other error of the app (an unknown path, an unserved
method: 405 with `Allow`) is a problem document too (`problems.install`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from . import metrics, problems

ReadinessCheck = Callable[[], Awaitable[bool]]
Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


async def _run_check(check: ReadinessCheck, timeout_s: float) -> bool:
    try:
        return bool(await asyncio.wait_for(check(), timeout=timeout_s))
    except Exception:  # a failing dependency is "not ready", never a 500
        return False


def create_app(name: str, *, checks: Mapping[str, ReadinessCheck] | None = None,
               routers: tuple[APIRouter, ...] = (), lifespan: Lifespan | None = None,
               check_timeout_s: float = 2.0, version: str = "0.1.0",
               metrics_gate: Callable[..., Awaitable[None]] | None = None) -> FastAPI:
    app = FastAPI(title=f"sextant-{name}", version=version, lifespan=lifespan)
    checks = dict(checks or {})
    guarded = [Depends(metrics_gate)] if metrics_gate is not None else []

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "service": name}

    ops = APIRouter(route_class=problems.problem_route(), tags=["ops"])  # a refused scrape: a problem document

    @ops.get("/metrics", response_class=PlainTextResponse, dependencies=guarded,
             responses=problems.problem_responses(401, 403) if guarded else None)
    async def prometheus_metrics() -> Response:
        body, content_type = metrics.render()
        return Response(body, media_type=content_type)

    app.include_router(ops)

    @app.middleware("http")
    async def timed(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            route = getattr(request.scope.get("route"), "path", "unmatched")
            metrics.HTTP_SECONDS.labels(method=request.method, route=route,
                                        status=str(status)).observe(time.perf_counter() - started)

    @app.get("/readyz", tags=["ops"], responses=problems.problem_responses(503))
    async def readyz() -> JSONResponse:
        results = {k: await _run_check(c, check_timeout_s) for k, c in sorted(checks.items())}
        if all(results.values()):
            return JSONResponse({"ready": True, "service": name, "checks": results})
        down = ", ".join(k for k, ok in results.items() if not ok)
        return problems.response(503, "not-ready", f"not ready: {down} did not answer", "/readyz",
                                 ready=False, service=name, checks=results)

    for r in routers:
        app.include_router(r)
    problems.install(app)
    return app


async def no_lifespan(app: FastAPI) -> AsyncIterator[None]:  # pragma: no cover - convenience
    yield
