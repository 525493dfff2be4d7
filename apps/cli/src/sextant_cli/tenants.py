"""`sextant tenants`: tenants (virtual clusters) and their API tokens, in PostgreSQL.

    sextant tenants create NAME [--operator] [--max-workloads N] [--max-cores N] [--rate R] [--burst B]
                                      a new tenant (an operator with --operator: it sees the whole
                                      cluster and every tenant) and its first token (the last line)
    sextant tenants token NAME        another token for NAME (the token alone, on the last line)
    sextant tenants rotate NAME [--token ID]
                                      a new token for NAME; the old one (ID), or every older one,
                                      is revoked in the same transaction (the new token, last line)
    sextant tenants revoke NAME [--token ID]
                                      revoke one token (ID: the part between `sxt_` and the next
                                      `_`), or the tenant and every token it has
    sextant tenants list              tenants, their limits and active tokens
    sextant tenants capacity NAME SERVERS / usage NAME
                                      a tenant's virtual cluster over the REST API (`vcs.py`)

These are operator verbs: they talk to the database (`--url`, default `$SEXTANT_DATABASE_URL` or the
one `make up` wrote in .run/), migrating it first — but `capacity` and `usage`, which go through the
API (`--api`, `--token`). Tokens are shown once and stored hashed (`sextant_kit.tenancy`).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from rich.console import Console
from rich.table import Table

from . import vcs
from .ops import _db_url

console = Console()
T = TypeVar("T")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("tenants", help="tenants (virtual clusters) and their API tokens")
    p.add_argument("--url", help="database URL (default $SEXTANT_DATABASE_URL)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    c = verbs.add_parser("create", help="create a tenant; prints its first token on the last line")
    c.add_argument("name")
    c.add_argument("--max-workloads", type=int, help="active workloads at most (default: the service's)")
    c.add_argument("--max-cores", type=int, help="cores held by placed/running workloads at most")
    c.add_argument("--rate", type=float, help="requests per second (token bucket rate)")
    c.add_argument("--burst", type=int, help="requests in a burst (token bucket size)")
    c.add_argument("--operator", action="store_true",
                   help="an operator: reads the whole cluster, every tenant's workloads, the services' ports")
    c.set_defaults(func=create)
    ro = verbs.add_parser("rotate", help="a new token, the old one(s) revoked; prints it on the last line")
    ro.add_argument("name")
    ro.add_argument("--token", dest="token_id", help="the id of the token to replace (default: every active one)")
    ro.set_defaults(func=rotate)
    t = verbs.add_parser("token", help="issue another token; prints it on the last line")
    t.add_argument("name")
    t.set_defaults(func=token)
    r = verbs.add_parser("revoke", help="revoke a token, or the tenant and all its tokens")
    r.add_argument("name")
    r.add_argument("--token", dest="token_id", help="the id of the token to revoke (sxt_<ID>_...)")
    r.set_defaults(func=revoke)
    ls = verbs.add_parser("list", help="list tenants")
    ls.set_defaults(func=listing)
    vcs.add_verbs(verbs)


def _run(args: argparse.Namespace, work: Callable[[Any], Awaitable[T]]) -> T:
    from sextant_kit.eventstore.postgres import PostgresEventStore
    from sextant_kit.migrations import migrate_async
    from sextant_kit.tenancy import TenantRegistry

    async def go() -> T:
        url = _db_url(args)
        await migrate_async(url)
        store = PostgresEventStore.from_url(url)
        try:
            return await work(TenantRegistry(store.engine))
        finally:
            await store.close()

    return asyncio.run(go())


def _checked(args: argparse.Namespace, work: Callable[[Any], Awaitable[T]]) -> T | None:
    """`_run`, printing a registry refusal (unknown tenant, name taken, ...) instead of raising."""
    from sextant_kit.tenancy import TenancyError

    try:
        return _run(args, work)
    except TenancyError as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False)
        return None


def create(args: argparse.Namespace) -> int:
    made = _checked(args, lambda reg: reg.create(args.name, max_active_workloads=args.max_workloads,
                                                 max_cores=args.max_cores, rate_per_s=args.rate, burst=args.burst,
                                                 operator=args.operator))
    if made is None:
        return 1
    kind = "operator" if made[0].operator else "tenant"
    console.print(f"{kind} {made[0].name} created; its API token (shown once):", highlight=False)
    print(made[1])
    return 0


def token(args: argparse.Namespace) -> int:
    tok = _checked(args, lambda reg: reg.issue(args.name))
    if tok is None:
        return 1
    console.print(f"new token for tenant {args.name} (shown once):", highlight=False)
    print(tok)
    return 0


def rotate(args: argparse.Namespace) -> int:
    tok = _checked(args, lambda reg: reg.rotate(args.name, token_id=args.token_id))
    if tok is None:
        return 1
    old = f"token {args.token_id}" if args.token_id else "every older token"
    console.print(f"new token for {args.name}; {old} revoked (shown once):", highlight=False)
    print(tok)
    return 0


def revoke(args: argparse.Namespace) -> int:
    n = _checked(args, lambda reg: reg.revoke(args.name, token_id=args.token_id))
    if n is None:
        return 1
    what = f"token {args.token_id}" if args.token_id else f"tenant {args.name} and {n} token(s)"
    console.print(f"revoked {what}", highlight=False)
    return 0


def listing(args: argparse.Namespace) -> int:
    tenants = _run(args, lambda reg: reg.list())
    t = Table()
    for col in ("tenant", "role", "status", "active tokens", "max workloads", "max cores", "rate/s", "burst"):
        t.add_column(col)
    for x in tenants:
        t.add_row(x.name, "operator" if x.operator else "tenant", "active" if x.active else "revoked", str(x.tokens), _dash(x.max_active_workloads),
                  _dash(x.max_cores), _dash(x.rate_per_s), _dash(x.burst))
    console.print(t)
    return 0


def _dash(v: object) -> str:
    return "-" if v is None else str(v)
