"""Who may read a service's own HTTP port (`/v1/state`, `/v1/stats`): operators only.

The services bind to the loopback address (`SEXTANT_HTTP_HOST`, default 127.0.0.1); their views
show the whole cluster, so once any tenant exists they answer only `Authorization: Bearer <an
operator's token>` (`sextant tenants create NAME --operator`): no token or a malformed, unknown or
revoked one is 401, a tenant's token 403. While no tenant exists (a single-user machine, as the
API's `auto` mode) they are open. `/healthz` and `/readyz` stay open (they say nothing about
tenants).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol

from fastapi import Request

from .problems import Problem
from .tenancy import Tenant


class Registry(Protocol):
    def authenticate(self, token: str) -> Awaitable[Tenant | None]: ...

    def any_active(self) -> Awaitable[bool]: ...


class OperatorGate:
    """A FastAPI dependency (`Depends(gate)`) enforcing the module's rule."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def __call__(self, request: Request) -> None:
        scheme, _, token = (request.headers.get("authorization") or "").strip().partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        if not token:
            if not await self.registry.any_active():
                return
            raise Problem(401, "unauthenticated", "an operator's token is required (Authorization: Bearer <token>)",
                          headers={"WWW-Authenticate": "Bearer"})
        who = await self.registry.authenticate(token)
        if who is None:
            raise Problem(401, "unauthenticated", "the token is unknown or revoked",
                          headers={"WWW-Authenticate": "Bearer"})
        if not who.operator:
            raise Problem(403, "operators-only", "this port answers operators' tokens only")
