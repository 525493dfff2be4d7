"""`sextant stages ID FILE.json`: declare a service's Kwiken stages through the REST API
(`PUT /v1/workloads/{id}/stages`, docs/kwiken/platform.md). FILE (`-`: stdin) holds the body:
`{"stages": [{"name", "cost", "fanout", "partial"}...], "edges": [[from, to]...], "reissue_budget",
"loss_budget"}`. The API is found and the token sent as by the other API verbs (`sextant_cli.ops`).
A refusal prints the API's problem document (a cycle, an unknown stage or a budget outside (0, 1]:
422 naming the field; 404; 409) and exits 1; nothing is written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .ops import _api, _print_json, _reaching


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("stages", help="declare a service's stage DAG and Kwiken budgets (JSON file)")
    p.add_argument("workload_id")
    p.add_argument("file", help="the body as JSON (- for stdin)")
    p.add_argument("--api", help="API base URL (default: as `sextant list`)")
    p.add_argument("--token", default=os.environ.get("SEXTANT_TOKEN"), help="API token")
    p.set_defaults(func=_reaching(declare))


def declare(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        print(f"stages: {args.file} is not JSON: {exc}", file=sys.stderr)
        return 1
    with _api(args) as c:
        r = c.put(f"/v1/workloads/{args.workload_id}/stages", json=body)
    _print_json(r.json())
    return 0 if r.is_success else 1
