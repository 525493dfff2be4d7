"""Tenants (virtual clusters) and their API tokens, in PostgreSQL (schema `tenancy`, kit migration
0004).

Why tables and not events: a token is a credential. The event log is immutable and published to
Kafka; a credential store must be revocable and must not travel. The log still says which tenant
submitted what (`WorkloadSubmitted.tenant`).

Tokens: `sxt_<id>_<secret>`, `id` 12 hex digits (the public lookup key, shown by `tenants list`),
`secret` 32 random bytes (`secrets.token_urlsafe`). Only SHA-256(secret) is stored; a
presented token is looked up by its id and its secret's hash compared with `hmac.compare_digest`
(constant time; an unknown id is compared against a dummy hash so both paths do the same work).
A revoked token, or any token of a revoked tenant, is refused.

Operators: a tenant row with `operator` set (migration 0005; `sextant tenants create NAME
--operator`). An operator's token reads the whole cluster (capacities, every tenant's workloads)
and the services' own HTTP ports; a tenant's token sees its own workloads only. Tokens of both
kinds are issued (`issue`), rotated (`rotate`: a new token, the old ones revoked in the same
transaction) and revoked (`revoke`) the same way.

Per-tenant limits (None = the service's default): `max_active_workloads` (live workloads),
`max_cores` (cores held by its placed and running workloads), `rate_per_s` / `burst` (the token
bucket of `ratelimit`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

SCHEMA = "tenancy"
NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
_TOKEN = re.compile(r"^sxt_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})$")
_DUMMY = hashlib.sha256(b"no such token").hexdigest()

meta = sa.MetaData(schema=SCHEMA)
tenants = sa.Table(
    "tenants", meta,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float, nullable=True),
    sa.Column("max_active_workloads", sa.Integer, nullable=True),
    sa.Column("max_cores", sa.Integer, nullable=True),
    sa.Column("rate_per_s", sa.Float, nullable=True),
    sa.Column("burst", sa.Integer, nullable=True),
    sa.Column("operator", sa.Boolean, nullable=False, server_default=sa.false()),
)
tokens = sa.Table(
    "tokens", meta,
    sa.Column("token_id", sa.Text, primary_key=True),
    sa.Column("tenant", sa.Text, sa.ForeignKey(f"{SCHEMA}.tenants.name"), nullable=False),
    sa.Column("secret_sha256", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float, nullable=True),
)


class TenancyError(ValueError):
    pass


@dataclass(frozen=True)
class Tenant:
    name: str
    created_at: float
    revoked_at: float | None = None
    max_active_workloads: int | None = None
    max_cores: int | None = None
    rate_per_s: float | None = None
    burst: int | None = None
    tokens: int = 0  # active tokens (listings only)
    operator: bool = False

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def new_token() -> tuple[str, str, str]:
    """(token, token id, SHA-256 of the secret). The token is shown once and never stored."""
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return f"sxt_{token_id}_{secret}", token_id, _digest(secret)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_name(name: str) -> str:
    if not re.match(NAME_PATTERN, name):
        raise TenancyError(f"tenant name {name!r} must match {NAME_PATTERN}")
    return name


def _tenant(row: sa.Row[tuple[object, ...]], n_tokens: int = 0) -> Tenant:
    m = row._mapping
    return Tenant(name=m["name"], created_at=m["created_at"], revoked_at=m["revoked_at"],
                  max_active_workloads=m["max_active_workloads"], max_cores=m["max_cores"],
                  rate_per_s=m["rate_per_s"], burst=m["burst"], tokens=n_tokens, operator=bool(m["operator"]))


class TenantRegistry:
    """Tenants and tokens over an async SQLAlchemy engine (the event store's)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create(self, name: str, *, max_active_workloads: int | None = None, max_cores: int | None = None,
                     rate_per_s: float | None = None, burst: int | None = None, operator: bool = False,
                     now: float | None = None) -> tuple[Tenant, str]:
        """Create a tenant (an operator when `operator`) and its first token; returns (tenant,
        token). A revoked tenant's name is taken again (reactivated with the new limits and role);
        an active one is an error."""
        check_name(name)
        at = time.time() if now is None else now
        limits = {"max_active_workloads": max_active_workloads, "max_cores": max_cores,
                  "rate_per_s": rate_per_s, "burst": burst, "operator": operator}
        async with self.engine.begin() as conn:
            row = (await conn.execute(sa.select(tenants).where(tenants.c.name == name).with_for_update())).first()
            if row is not None and row._mapping["revoked_at"] is None:
                raise TenancyError(f"tenant {name!r} exists")
            if row is None:
                await conn.execute(tenants.insert().values(name=name, created_at=at, **limits))
            else:
                await conn.execute(tenants.update().where(tenants.c.name == name)
                                   .values(revoked_at=None, created_at=at, **limits))
            token = await self._issue(conn, name, at)
            tenant = _tenant((await conn.execute(sa.select(tenants).where(tenants.c.name == name))).one(), 1)
        return tenant, token

    async def issue(self, name: str, *, now: float | None = None) -> str:
        """Another token for an active tenant."""
        at = time.time() if now is None else now
        async with self.engine.begin() as conn:
            row = (await conn.execute(sa.select(tenants.c.revoked_at).where(tenants.c.name == name))).first()
            if row is None or row[0] is not None:
                raise TenancyError(f"no active tenant {name!r}")
            return await self._issue(conn, name, at)

    async def rotate(self, name: str, *, token_id: str | None = None, now: float | None = None) -> str:
        """A new token for an active tenant or operator, and — in the same transaction — the old
        one (`token_id`) or every older active token revoked; returns the new token."""
        at = time.time() if now is None else now
        async with self.engine.begin() as conn:
            row = (await conn.execute(sa.select(tenants.c.revoked_at).where(tenants.c.name == name)
                                      .with_for_update())).first()
            if row is None or row[0] is not None:
                raise TenancyError(f"no active tenant {name!r}")
            q = tokens.update().where(tokens.c.tenant == name, tokens.c.revoked_at.is_(None))
            if token_id is not None:
                q = q.where(tokens.c.token_id == token_id)
            if (await conn.execute(q.values(revoked_at=at))).rowcount == 0 and token_id is not None:
                raise TenancyError(f"tenant {name!r} has no active token {token_id!r}")
            return await self._issue(conn, name, at)

    async def _issue(self, conn: AsyncConnection, name: str, at: float) -> str:
        token, token_id, digest = new_token()
        await conn.execute(tokens.insert().values(token_id=token_id, tenant=name, secret_sha256=digest,
                                                  created_at=at))
        return token

    async def revoke(self, name: str, *, token_id: str | None = None, now: float | None = None) -> int:
        """Revoke one token of `name`, or (no `token_id`) the tenant and all its tokens; returns how
        many tokens were revoked. Its workloads are left alone (revoke them through the API)."""
        at = time.time() if now is None else now
        async with self.engine.begin() as conn:
            row = (await conn.execute(sa.select(tenants.c.revoked_at).where(tenants.c.name == name))).first()
            if row is None:
                raise TenancyError(f"no tenant {name!r}")
            q = tokens.update().where(tokens.c.tenant == name, tokens.c.revoked_at.is_(None))
            if token_id is not None:
                q = q.where(tokens.c.token_id == token_id)
            n = (await conn.execute(q.values(revoked_at=at))).rowcount
            if token_id is None:
                await conn.execute(tenants.update().where(tenants.c.name == name, tenants.c.revoked_at.is_(None))
                                   .values(revoked_at=at))
            elif n == 0:
                raise TenancyError(f"tenant {name!r} has no active token {token_id!r}")
            return int(n)

    async def list(self) -> list[Tenant]:
        active = sa.func.count(tokens.c.token_id).filter(tokens.c.revoked_at.is_(None))
        q = (sa.select(tenants, active.label("n")).select_from(tenants.outerjoin(tokens))
             .group_by(tenants.c.name).order_by(tenants.c.name))
        async with self.engine.connect() as conn:
            return [_tenant(r, int(r._mapping["n"])) for r in (await conn.execute(q)).all()]

    async def get(self, name: str) -> Tenant | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(tenants).where(tenants.c.name == name))).first()
        return None if row is None else _tenant(row)

    async def any_active(self) -> bool:
        async with self.engine.connect() as conn:
            q = sa.select(sa.exists().where(tenants.c.revoked_at.is_(None)))
            return bool((await conn.execute(q)).scalar_one())

    async def authenticate(self, token: str) -> Tenant | None:
        """The active tenant a token belongs to, or None (malformed, unknown, revoked)."""
        m = _TOKEN.match(token.strip())
        token_id, secret = (m.group(1), m.group(2)) if m else ("", "")
        q = (sa.select(tenants, tokens.c.secret_sha256).select_from(tokens.join(tenants))
             .where(tokens.c.token_id == token_id, tokens.c.revoked_at.is_(None), tenants.c.revoked_at.is_(None)))
        row = None
        if m:
            async with self.engine.connect() as conn:
                row = (await conn.execute(q)).first()
        stored = row._mapping["secret_sha256"] if row is not None else _DUMMY
        ok = hmac.compare_digest(_digest(secret), stored)
        return _tenant(row) if (row is not None and m and ok) else None
