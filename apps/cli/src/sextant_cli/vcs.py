"""`sextant tenants capacity|usage`: a tenant's virtual cluster through the REST API
(`/v1/tenants/{id}/...`, docs/fairness/platform.md).

    sextant tenants capacity NAME SERVERS     an operator sets NAME's VC capacity (whole servers)
    sextant tenants usage NAME                NAME's capacity, demand, allocation, load, stretch,
                                              lent / received / credit server-hours (JSON)

They find the API and send the token as the other API verbs do (`sextant_cli.ops`: `--api`,
`--token`, default `$SEXTANT_TOKEN`). A refusal prints the API's problem document (a tenant's
token: 403; a malformed capacity: 422 naming the field) and exits 1; an unreachable API is one
line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import os

from .ops import _api, _print_json, _reaching


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    def api_verb(name: str, help: str) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, help=help)
        p.add_argument("name")
        p.add_argument("--api", help="API base URL (default: as `sextant list`)")
        p.add_argument("--token", default=os.environ.get("SEXTANT_TOKEN"), help="API token (an operator's to set)")
        p.set_defaults(command=f"tenants {name}")
        return p

    p = api_verb("capacity", "an operator sets a tenant's virtual-cluster capacity (servers)")
    p.add_argument("servers", help="whole servers, >= 0 (0: it owns none and only borrows)")
    p.set_defaults(func=_reaching(capacity))
    p = api_verb("usage", "a tenant's virtual cluster: capacity, load, stretch, credit, lent, received (JSON)")
    p.set_defaults(func=_reaching(usage))


def capacity(args: argparse.Namespace) -> int:
    try:  # a non-integer is sent as is: the API's 422 names the field
        servers: int | str = int(args.servers)
    except ValueError:
        servers = args.servers
    with _api(args) as c:
        r = c.put(f"/v1/tenants/{args.name}/capacity", json={"servers": servers})
    _print_json(r.json())
    return 0 if r.is_success else 1


def usage(args: argparse.Namespace) -> int:
    with _api(args) as c:
        r = c.get(f"/v1/tenants/{args.name}/usage")
    _print_json(r.json())
    return 0 if r.is_success else 1
