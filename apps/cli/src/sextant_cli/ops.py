"""Operator verbs of `sextant`:

    submit FILE.json | --kind ... --target ...   submit a workload through the REST API
    status ID / list / revoke ID                 read and change workloads through the REST API
    tail [--from POSITION]                        follow the event log (PostgreSQL, position order)
    state --at POSITION                          the cluster as of a log position (a fold)
    explain DECISION_ID                          re-run a decision from the log and show why

The API verbs use `--api` (default `$SEXTANT_API_URL` or http://127.0.0.1:8080); the log verbs read
PostgreSQL at `--url` (default `$SEXTANT_DATABASE_URL`, or the one `make up` wrote in .run/).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

console = Console()


def _api(args: argparse.Namespace) -> httpx.Client:
    base = args.api or os.environ.get("SEXTANT_API_URL", "http://127.0.0.1:8080")
    headers = {"Authorization": f"Bearer {args.token}"} if getattr(args, "token", None) else {}
    return httpx.Client(base_url=base, timeout=10.0, headers=headers)


def _db_url(args: argparse.Namespace) -> str:
    url = args.url or os.environ.get("SEXTANT_DATABASE_URL")
    if not url:
        env = Path(".run/stack.env")
        if env.exists():
            for line in env.read_text().splitlines():
                if line.startswith("SEXTANT_DATABASE_URL="):
                    url = line.split("=", 1)[1]
    if not url:
        raise SystemExit("set --url or SEXTANT_DATABASE_URL (or run `make up`)")
    return url


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    def api_parser(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        p.add_argument("--api", help="API base URL (default $SEXTANT_API_URL or http://127.0.0.1:8080)")
        p.add_argument("--token", default=os.environ.get("SEXTANT_TOKEN"), help="tenant API token")
        return p

    def log_parser(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        p.add_argument("--url", help="database URL (default $SEXTANT_DATABASE_URL)")
        return p

    p = api_parser("submit", "submit a workload (JSON body from FILE or '-')")
    p.add_argument("file", help="JSON request body, '-' for stdin")
    p.add_argument("--idempotency-key")
    p.set_defaults(func=submit)
    p = api_parser("status", "show one workload")
    p.add_argument("id")
    p.set_defaults(func=status)
    p = api_parser("list", "list workloads")
    p.add_argument("--state")
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(func=listing)
    p = api_parser("revoke", "revoke a workload (frees its resources; the agent stops it)")
    p.add_argument("id")
    p.set_defaults(func=revoke)
    p = log_parser("tail", "follow the event log")
    p.add_argument("--from", dest="start", type=int, default=0, help="start after this position")
    p.add_argument("--once", action="store_true", help="print what is there and stop")
    p.set_defaults(func=tail)
    p = log_parser("state", "the cluster as of a log position")
    p.add_argument("--at", type=int, required=True, help="log position (inclusive)")
    p.set_defaults(func=state_at)
    p = log_parser("explain", "re-run a recorded decision from the log and show every verdict")
    p.add_argument("decision_id")
    p.set_defaults(func=explain)


def _print_json(data: Any) -> None:
    console.print_json(json.dumps(data, default=str))


def submit(args: argparse.Namespace) -> int:
    body = json.loads(sys.stdin.read() if args.file == "-" else Path(args.file).read_text())
    headers = {"Idempotency-Key": args.idempotency_key} if args.idempotency_key else {}
    with _api(args) as c:
        r = c.post("/v1/workloads", json=body, headers=headers)
    _print_json(r.json())
    return 0 if r.is_success else 1


def status(args: argparse.Namespace) -> int:
    with _api(args) as c:
        r = c.get(f"/v1/workloads/{args.id}")
    _print_json(r.json())
    return 0 if r.is_success else 1


def listing(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    if args.state:
        params["state"] = args.state
    with _api(args) as c:
        r = c.get("/v1/workloads", params=params)
    if not r.is_success:
        _print_json(r.json())
        return 1
    t = Table()
    for col in ("id", "name", "kind", "state", "QoS", "servers"):
        t.add_column(col)
    for v in r.json()["items"]:
        qos = "" if not v.get("qos") else ("met" if v["qos"]["met"] else "missed")
        servers = "" if not v.get("allocation") else ",".join(a["server_id"] for a in v["allocation"]["assignments"])
        t.add_row(v["id"][:12], v["name"], v["kind"], v["state"], qos, servers)
    console.print(t)
    return 0


def revoke(args: argparse.Namespace) -> int:
    with _api(args) as c:
        r = c.delete(f"/v1/workloads/{args.id}")
    _print_json(r.json() if r.content else {"status": r.status_code})
    return 0 if r.is_success else 1


def tail(args: argparse.Namespace) -> int:
    from sextant_kit.eventstore.postgres import PostgresEventStore

    async def go() -> None:
        store = PostgresEventStore.from_url(_db_url(args))
        try:
            if args.once:
                pos = args.start
                while batch := await store.read_all(pos, 1000):
                    for env in batch:
                        _line(env)
                    pos = batch[-1].position or pos
                return
            async for env in store.tail(args.start):
                _line(env)
        finally:
            await store.close()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(go())
    return 0


def _line(env: Any) -> None:
    extra = ""
    if "decision" in env.payload:
        extra = f" decision={env.payload['decision']['decision_id'][:12]}"
    console.print(f"{env.position:>8} {env.type:<26} {env.stream:<44} {env.source}{extra}", highlight=False)


def _log(args: argparse.Namespace) -> list[Any]:
    from .replay import read_log

    return asyncio.run(read_log(_db_url(args)))


def state_at(args: argparse.Namespace) -> int:
    _print_json(state_view_at(_log(args), args.at))
    return 0


def state_view_at(log: list[Any], position: int) -> dict[str, Any]:
    """The cluster as of `position`: the fold of the log up to it (inclusive)."""
    from sextant_core.state import fold
    from sextant_core.views import cluster_view

    state = fold([e for e in log if e.position <= position])
    view = cluster_view(state)
    view["servers"] = {s.server_id: {"platform": s.platform, "up": s.up, "cores_used": s.used_cores,
                                     "cores": s.capacity.cores, "residents": list(s.residents)}
                       for s in state.sorted_servers()}
    return view


def explain(args: argparse.Namespace) -> int:
    lines = explain_decision(_log(args), args.decision_id)
    for line in lines:
        console.print(line, highlight=False)
    return 0 if lines and not lines[0].startswith("no decision") else 1


def explain_decision(log: list[Any], decision_id: str) -> list[str]:
    """Find the decision, fold the log up to the position it recorded, re-run the same command with
    full verdicts switched on; returns the lines `sextant explain` prints."""
    from sextant_contracts import events as ev
    from sextant_core.decide import decide, seed_for
    from sextant_core.process import react
    from sextant_core.profiles import policy_set
    from sextant_core.state import fold

    found = next((e for e in log if e.payload.get("decision", {}).get("decision_id", "").startswith(decision_id)),
                 None)
    if found is None:
        return [f"no decision {decision_id} in the log"]
    event = found.event()
    assert isinstance(event, ev.DecisionEvent)
    rec = event.decision
    state = fold([e for e in log if e.position <= rec.state_position])
    cause = next((e for e in log if e.id in rec.causation), None)
    params = policy_set(rec.profile)
    if hasattr(params.planner, "explain"):  # a placement framework planner: per-plugin verdicts on
        params = replace(params, planner=_with_explain(params.planner))
    out = [f"{event.TYPE} for workload {event.workload_id} at position {found.position}",
           f"  decided on the state at position {rec.state_position}, profile {rec.profile} "
           f"v{rec.policy_version}, model {rec.model_version or '-'}, seed {rec.seed}"]
    if cause is not None:
        out.append(f"  caused by {cause.type} (position {cause.position}, source {cause.source})")
    w = state.workloads.get(event.workload_id)
    if w is not None:
        out.append(f"  workload: {w.kind.value}, phase {w.phase.value} before the decision, "
                   f"requested {w.requested_cores} cores / {w.requested_memory_gb} GiB")
    if isinstance(event, ev.WorkloadQueued):
        out.append(f"  waits in ARQ class {event.arq_class} at position {event.position}, "
                   f"expected wait {event.expected_wait_s:.1f}s: {event.reason}")
    rerun = None
    if cause is not None:
        for c in react(state, cause.event()):
            if getattr(c, "workload_id", None) == event.workload_id and found.source == c.HANDLER:
                rerun = decide(state, c, params=params, seed=seed_for(c, state), at=cause.event().at,
                               causation=rec.causation)
                break
    if rerun is not None:
        same = any(_same_outcome(e, event) for e in rerun.events)
        out.append(f"  re-derived: {'identical' if same else 'DIFFERENT'}")
        trace = rerun.trace or getattr(event, "trace", None)
        if trace is not None:
            for plugin, reasons in trace.filtered.items():
                out.append(f"  filter {plugin}: " + ", ".join(f"{n} {r}" for r, n in reasons.items()))
            out.extend(f"  candidate {sid}: score {score:.2f}" for sid, score in trace.top)
            out.append(f"  examined {trace.examined}, backtracks {trace.backtracks}, "
                       f"budget exhausted: {trace.budget_exhausted}")
        if rerun.detail:
            out.append("  verdicts: " + json.dumps(rerun.detail, default=str)[:4000])
    if isinstance(event, ev.PlacementDecided):
        out.append("  allocation: " + ", ".join(f"{a.server_id}×{a.cores}c/{a.memory_gb:g}G"
                                                for a in event.allocation.assignments))
    return out


def _same_outcome(a: Any, b: Any) -> bool:
    """Equal but for the trace, which explain mode makes richer."""
    strip = {"trace"}
    return type(a) is type(b) and a.model_dump(exclude=strip) == b.model_dump(exclude=strip)


def _with_explain(planner: Any) -> Any:
    clone = type(planner).__new__(type(planner))
    clone.__dict__.update(planner.__dict__)
    clone.explain = True
    return clone
