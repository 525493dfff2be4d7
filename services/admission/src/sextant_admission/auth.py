"""Who is calling, and may they (DESIGN §8): tenant tokens, per-tenant rates and limits.

`Gatekeeper.principal(authorization)` returns the caller's `Principal`:

- mode `tokens` (or `auto` once a tenant exists): `Authorization: Bearer sxt_...` is required; a
  missing, malformed, unknown or revoked token is `Unauthenticated` (401);
- mode `open` (or `auto` while no tenant exists): no token; the caller acts for any tenant (the
  body's `tenant`, "default" when left out). A token that is presented is still checked.

An operator's token (`Tenant.operator`) is a principal that sees every tenant (`Principal.scope`
None) and may act for a tenant its body names.

`Gatekeeper.throttle(principal)` takes one request from the tenant's token bucket or raises
`Throttled` with the seconds to wait (429 + Retry-After); open mode is not throttled.
"""

from __future__ import annotations

from dataclasses import dataclass

from sextant_kit.ratelimit import RateLimiter
from sextant_kit.tenancy import Tenant, TenantRegistry

from .settings import Settings

OPEN_TENANT = "default"


class Unauthenticated(Exception):
    pass


class Throttled(Exception):
    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"retry after {retry_after_s:.1f}s")
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Principal:
    """`tenant` None: open mode, the caller may act for any tenant. `operator`: an operator's token
    (it acts for its own name unless a body names a tenant, and sees every tenant's workloads)."""

    tenant: str | None
    max_active_workloads: int | None
    max_cores: int | None
    rate_per_s: float
    burst: int
    operator: bool = False

    @property
    def sees_all(self) -> bool:
        """May read the whole cluster and every tenant's workloads (an operator, or open mode)."""
        return self.operator or self.tenant is None

    @property
    def scope(self) -> str | None:
        """The one tenant whose workloads this caller may see and change; None: every tenant's."""
        return None if self.sees_all else self.tenant

    def acting_for(self, named: str | None) -> str:
        """The tenant a request acts for (`named`: the one its body names, if any)."""
        if self.operator and named:
            return named
        return self.tenant or named or OPEN_TENANT


class Gatekeeper:
    def __init__(self, registry: TenantRegistry, settings: Settings, limiter: RateLimiter | None = None) -> None:
        self.registry = registry
        self.settings = settings
        self.limiter = limiter or RateLimiter()

    async def principal(self, authorization: str | None) -> Principal:
        token = bearer(authorization)
        if token is None and authorization:
            raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
        if token is not None:
            tenant = await self.registry.authenticate(token)
            if tenant is None:
                raise Unauthenticated("the token is unknown or revoked")
            return self._of(tenant)
        if await self._needs_token():
            raise Unauthenticated("an API token is required (Authorization: Bearer <token>)")
        s = self.settings
        return Principal(None, s.max_active_workloads, s.max_cores, s.rate_per_s, s.rate_burst)

    async def token_tenant(self, token: str | None) -> Tenant:
        """The tenant of a token presented outside HTTP (the submissions topic): always required."""
        tenant = await self.registry.authenticate(token) if token else None
        if tenant is None:
            raise Unauthenticated("missing, unknown or revoked token")
        return tenant

    def limits_of(self, tenant: Tenant) -> Principal:
        return self._of(tenant)

    def throttle(self, principal: Principal) -> None:
        """Rates are per tenant: open mode (no tenant authenticated, a single-user machine — the
        demo, the benchmarks) is not throttled."""
        if principal.tenant is None:
            return
        wait = self.limiter.take(principal.tenant, principal.rate_per_s, principal.burst)
        if wait > 0:
            raise Throttled(wait)

    async def _needs_token(self) -> bool:
        mode = self.settings.api_auth
        return mode == "tokens" or (mode == "auto" and await self.registry.any_active())

    def _of(self, t: Tenant) -> Principal:
        s = self.settings
        return Principal(t.name, _or(t.max_active_workloads, s.max_active_workloads), _or(t.max_cores, s.max_cores),
                         t.rate_per_s if t.rate_per_s is not None else s.rate_per_s,
                         t.burst if t.burst is not None else s.rate_burst, operator=t.operator)


def _or(a: int | None, b: int | None) -> int | None:
    return a if a is not None else b


def bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
