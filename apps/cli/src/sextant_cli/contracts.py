"""`sextant recurring contracts|show|accept|override|reject`: recurring jobs' contracts through the
REST API (`/v1/contracts`, docs/recurring/platform.md).

    sextant recurring contracts [--status inferred]      the caller's templates: status, period, a, d, peak,
                                                         the reservation's offset (plan step)
    sextant recurring show TEMPLATE_ID                   one template: contract, sign-off, reservation
    sextant recurring accept TEMPLATE_ID [--version N]
    sextant recurring override TEMPLATE_ID [--earliest-start-s S] [--deadline-s S] [--period-s S]
                                           [--skyline 2,4,4,2] [--version N]
    sextant recurring reject TEMPLATE_ID [--version N]

They find the API and send the token as the other API verbs do (`sextant_cli.ops`: `--api`,
`--token`). An error prints the API's problem document (a refused override names its field) and
exits 1; an unreachable API is one line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from rich.table import Table

from .ops import _api, _print_json, _reaching, console


def add_verbs(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    def api_verb(name: str, help: str) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, help=help)
        p.add_argument("--api", help="API base URL (default: as `sextant list`)")
        p.add_argument("--token", default=os.environ.get("SEXTANT_TOKEN"), help="tenant API token")
        p.set_defaults(command=f"recurring {name}")
        return p

    p = api_verb("contracts", "list recurring templates and their contracts")
    p.add_argument("--status", help="observed | detected | inferred | accepted | overridden | rejected")
    p.set_defaults(func=_reaching(listing))
    p = api_verb("show", "one template's contract, sign-off and reservation (JSON)")
    p.add_argument("template_id")
    p.set_defaults(func=_reaching(show))
    for verdict, help in (("accept", "accept the inferred contract"),
                          ("override", "sign off with fields replaced"),
                          ("reject", "reject the contract: no reservation, fair share")):
        p = api_verb(verdict, help)
        p.add_argument("template_id")
        p.add_argument("--version", type=int, help="the contract version signed (default: the current one)")
        if verdict == "override":
            p.add_argument("--earliest-start-s", type=float, help="earliest start, s after the period starts")
            p.add_argument("--deadline-s", type=float, help="deadline, s after the period starts")
            p.add_argument("--period-s", type=float, help="period, s")
            p.add_argument("--skyline", type=_skyline, help="containers per minute, e.g. 2,4,4,2")
        p.set_defaults(func=_reaching(sign_off), verdict=verdict)


def _skyline(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None


def listing(args: argparse.Namespace) -> int:
    params = {"status": args.status} if args.status else {}
    with _api(args) as c:
        r = c.get("/v1/contracts", params=params)
    if not r.is_success:
        _print_json(r.json())
        return 1
    t = Table(box=None)  # fits 80 columns with the whole id (the one `show` takes)
    t.add_column("template", no_wrap=True, min_width=32)
    for col in ("status", "period s", "a s", "d s", "peak", "reserved"):
        t.add_column(col, no_wrap=True)
    for v in r.json()["items"]:
        terms: dict[str, Any] = v.get("terms") or {}
        res = v.get("reservation") or {}
        t.add_row(v["template_id"], v["status"], _num(terms.get("period_s")), _num(terms.get("earliest_start_s")),
                  _num(terms.get("deadline_s")), str(max(terms["skyline"])) if terms.get("skyline") else "",
                  f"@{res['offset']}" if res else "-")
    console.print(t)
    return 0


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def show(args: argparse.Namespace) -> int:
    with _api(args) as c:
        r = c.get(f"/v1/contracts/{args.template_id}")
    _print_json(r.json())
    return 0 if r.is_success else 1


def sign_off(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {} if args.version is None else {"version": args.version}
    if args.verdict == "override":
        for name in ("earliest_start_s", "deadline_s", "period_s", "skyline"):
            if getattr(args, name) is not None:
                body[name] = getattr(args, name)
    with _api(args) as c:
        r = c.post(f"/v1/contracts/{args.template_id}/{args.verdict}", json=body)
    _print_json(r.json())
    return 0 if r.is_success else 1
