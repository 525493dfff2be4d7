"""`sextant kwiken plan WORKLOAD`: a service's Kwiken plan in force, through the REST API
(`GET /v1/workloads/{id}/kwiken/plan`, docs/kwiken/platform.md).

Prints when and why the plan was decided (trigger, drifted stages, the decision's id for `sextant
explain`), the budgets and the reissue work spent, then one row per stage: reissue policy, fraction
and timeout, or a partial-answer stage's stopping rule (p, T_c, T_d, T_min; `-`: none). `--json`
prints the API's document instead. A workload without declared stages or without a plan yet (or
unknown) is one line on stderr naming the reason, exit 1. The API is found and the token sent as
by the other API verbs (`sextant_cli.ops`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from rich.table import Table

from .ops import _api, _print_json, _reaching, console


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("kwiken", help="Kwiken (multi-stage services' tail latency): read a service's plan")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    v = verbs.add_parser("plan", help="show a service's Kwiken plan in force",
                         description=__doc__.split("\n\n")[0] if __doc__ else None)
    v.add_argument("workload_id")
    v.add_argument("--json", action="store_true", help="print the API's JSON document")
    v.add_argument("--api", help="API base URL (default: as `sextant list`)")
    v.add_argument("--token", default=os.environ.get("SEXTANT_TOKEN"), help="API token")
    v.set_defaults(func=_reaching(show_plan))


def show_plan(args: argparse.Namespace) -> int:
    with _api(args) as c:
        r = c.get(f"/v1/workloads/{args.workload_id}/kwiken/plan")
    body: dict[str, Any] = r.json()
    if not r.is_success:
        print(f"sextant kwiken plan: {body.get('detail') or body.get('title') or r.status_code}", file=sys.stderr)
        return 1
    if args.json:
        _print_json(body)
        return 0
    drift = f" (drifted: {', '.join(body['drift'])})" if body["drift"] else ""
    console.print(f"{body['workload_id']}: plan {body['trigger']}{drift} at {body['decided_at']:g}, "
                  f"decision {body['decision_id']}")
    console.print(f"reissue budget {body['reissue_budget']:g}, spent {body['reissue_spent']:g}; "
                  f"loss budget {body['loss_budget']:g}")
    t = Table(box=None)
    for col in ("stage", "policy", "fraction", "timeout ms", "p", "T_c ms", "T_d ms", "T_min ms", "samples"):
        t.add_column(col, no_wrap=True)
    for s in body["stages"]:
        part = s["partial"]
        rule = ("-",) * 4 if part is None else (f"{part['p']:g}", _ms(part["t_c_ms"]), _ms(part["t_d_ms"]),
                                                  _ms(part["t_min_ms"]))
        timeout = "-" if s["timeout_ms"] is None else f"{s['timeout_ms']:g}"
        t.add_row(s["stage"], s["policy"], f"{s['fraction']:g}", timeout, *rule, str(s["samples"]))
    console.print(t)
    return 0


def _ms(x: float | None) -> str:
    return "∞" if x is None else f"{x:g}"
