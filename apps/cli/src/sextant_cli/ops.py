"""Operator verbs of `sextant`:

    submit FILE.json                             submit a workload through the REST API
    status ID / list / revoke ID                 read and change workloads through the REST API
    update ID --target JSON                      a new performance target (the workload is re-planned)
    up / down                                    start / stop the platform's processes, under supervisord
                                                 (`supervision`), over `make up`'s stack (the API on
                                                 $SEXTANT_API_HOST:$SEXTANT_API_PORT, default
                                                 127.0.0.1:8080); `make up` / `make down` run them
    ps [--json]                                  each process: pid, alive, restarts, consumer lag
    tail [--from POSITION]                        follow the event log (PostgreSQL, position order)
    state --at POSITION                          the cluster as of a log position (a fold)
    explain DECISION_ID                          re-run a decision from the log and show why

The API verbs find the API the way `make up` started it (`api_url`): `--api`, else the URL `sextant
up` recorded in the run folder (`$SEXTANT_RUN_DIR`, default the repository's `.run/`), else
`$SEXTANT_API_URL`, else `http://$SEXTANT_API_HOST:$SEXTANT_API_PORT` (127.0.0.1:8080 when unset).
They send `--token` (default `$SEXTANT_TOKEN`: a token from `sextant tenants create`). An error
prints the API's problem document and exits 1; an unreachable API is one line on stderr and exit 1.
The log verbs read PostgreSQL at `--url` (default `$SEXTANT_DATABASE_URL`, or the one `make up`
wrote in the run folder).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table
from sextant_core.explain import explain_decision  # also the web console's decision view

console = Console()
PLATFORM_FILE = "platform.json"


def run_dir() -> Path:
    """The run folder `make up` uses: `$SEXTANT_RUN_DIR`, else the repository's `.run/`."""
    from sextant_infra.stack import default_run_dir

    return default_run_dir()


def api_url(explicit: str | None = None) -> str:
    """Where the API is (see the module docstring for the order)."""
    if explicit:
        return explicit
    recorded = run_dir() / PLATFORM_FILE
    if recorded.exists():
        with contextlib.suppress(ValueError, TypeError, OSError):
            url = json.loads(recorded.read_text()).get("api")
            if isinstance(url, str) and url:
                return url
    if url := os.environ.get("SEXTANT_API_URL"):
        return url
    host = os.environ.get("SEXTANT_API_HOST", "127.0.0.1")
    return f"http://{host}:{os.environ.get('SEXTANT_API_PORT', '8080')}"


def _api(args: argparse.Namespace) -> httpx.Client:
    headers = {"Authorization": f"Bearer {args.token}"} if getattr(args, "token", None) else {}
    return httpx.Client(base_url=api_url(args.api), timeout=10.0, headers=headers)


def _reaching(verb: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`verb`, with an unreachable API reported on one line (exit 1) instead of a traceback."""

    @functools.wraps(verb)
    def run(args: argparse.Namespace) -> int:
        try:
            return verb(args)
        except httpx.TransportError as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            print(f"sextant {args.command}: cannot reach the API at {api_url(args.api)} ({reason}); "
                  "is the platform up (`make up`)?", file=sys.stderr)
            return 1

    return run


def _db_url(args: argparse.Namespace) -> str:
    url = args.url or os.environ.get("SEXTANT_DATABASE_URL")
    if not url:
        env = run_dir() / "stack.env"
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
        p.add_argument("--api", help="API base URL (default: the one `make up` recorded, $SEXTANT_API_URL, "
                                     "or http://$SEXTANT_API_HOST:$SEXTANT_API_PORT)")
        p.add_argument("--token", default=os.environ.get("SEXTANT_TOKEN"), help="tenant API token")
        return p

    def log_parser(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        p.add_argument("--url", help="database URL (default $SEXTANT_DATABASE_URL)")
        return p

    p = api_parser("submit", "submit a workload (JSON body from FILE or '-')")
    p.add_argument("file", help="JSON request body, '-' for stdin")
    p.add_argument("--idempotency-key")
    p.set_defaults(func=_reaching(submit))
    p = api_parser("status", "show one workload")
    p.add_argument("id")
    p.set_defaults(func=_reaching(status))
    p = api_parser("list", "list workloads (every page)")
    p.add_argument("--state")
    p.add_argument("--kind")
    p.add_argument("--limit", type=int, default=500, help="page size")
    p.set_defaults(func=_reaching(listing))
    p = api_parser("revoke", "revoke a workload (frees its resources; the agent stops it)")
    p.add_argument("id")
    p.set_defaults(func=_reaching(revoke))
    p = api_parser("update", "give a workload a new performance target (it is re-planned)")
    p.add_argument("id")
    p.add_argument("--target", required=True, help='JSON, e.g. \'{"type": "completion_time", "seconds": 600}\'')
    p.set_defaults(func=_reaching(update))
    p = sub.add_parser("up", help="start the platform's processes over the stack of `sextant-infra up`")
    p.add_argument("--run-dir", default=None, help="the stack's folder (default $SEXTANT_RUN_DIR or .run/)")
    p.add_argument("--instances", action="append", metavar="SERVICE=N",
                   help="run N processes of SERVICE (repeatable; docs/platform/instances.md): SERVICE, "
                        "SERVICE-2 … SERVICE-N, one consumer group, each its own port")
    p.set_defaults(func=platform_up)
    p = sub.add_parser("down", help="stop the processes `sextant up` started")
    p.add_argument("--run-dir", default=None, help="the stack's folder (default $SEXTANT_RUN_DIR or .run/)")
    p.set_defaults(func=platform_down)
    p = sub.add_parser("ps", help="the platform's processes: pid, alive, restarts, consumer lag")
    p.add_argument("--run-dir", default=None, help="the stack's folder (default $SEXTANT_RUN_DIR or .run/)")
    p.add_argument("--json", action="store_true",
                   help='{"processes": {NAME: {"pid", "alive", "restarts", "lag"}}}')
    p.set_defaults(func=platform_ps)
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
    for name in ("state", "kind"):
        if getattr(args, name):
            params[name] = getattr(args, name)
    items: list[dict[str, Any]] = []
    with _api(args) as c:
        while True:
            r = c.get("/v1/workloads", params=params)
            if not r.is_success:
                _print_json(r.json())
                return 1
            page = r.json()
            items.extend(page["items"])
            if not page.get("next_cursor"):
                break
            params["cursor"] = page["next_cursor"]
    t = Table()
    for col in ("id", "name", "kind", "state", "QoS", "servers / queue"):
        t.add_column(col)
    for v in items:
        qos = "" if not v.get("qos") else ("met" if v["qos"]["met"] else "missed")
        where = "" if not v.get("allocation") else ",".join(a["server_id"] for a in v["allocation"]["assignments"])
        if v.get("queue"):
            q = v["queue"]
            where = f"class {q['arq_class']} #{q['position']} ~{q['expected_wait_s'] or 0:.0f}s"
        t.add_row(v["id"][:12], printable(v["name"]), v["kind"], v["state"], qos, where)
    console.print(t)
    return 0


_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str) -> str:
    """`text` safe for a terminal: control and bidirectional-formatting characters (which the API
    refuses in new names, but an old log may hold) shown as `\\uXXXX`; rich markup escaped."""
    from rich.markup import escape

    return escape("".join(f"\\u{ord(c):04x}" if (not c.isprintable() and c != " ") or c in _BIDI else c
                          for c in text))


def revoke(args: argparse.Namespace) -> int:
    with _api(args) as c:
        r = c.delete(f"/v1/workloads/{args.id}")
    _print_json(r.json() if r.content else {"status": r.status_code})
    return 0 if r.is_success else 1


def update(args: argparse.Namespace) -> int:
    with _api(args) as c:
        r = c.patch(f"/v1/workloads/{args.id}", json={"target": json.loads(args.target)})
    _print_json(r.json())
    return 0 if r.is_success else 1


def platform_up(args: argparse.Namespace) -> int:
    """Start the platform's processes under supervisord (`supervision`), detached (they outlive this
    command), the admission service on $SEXTANT_API_HOST:$SEXTANT_API_PORT (default
    127.0.0.1:8080), and wait until the API is ready; `<run-dir>/platform.json` records the API's
    URL and each process's module, port and log. When supervisord already runs, programs that are
    not running (stopped, given up after repeated start failures) are started again (`--instances`
    then changes nothing: `sextant down` first)."""
    import subprocess
    import time

    from sextant_infra.processes import free_port, log_tail, stop_pid
    from sextant_kit.migrations import migrate

    from . import supervision as sup
    from .platform import MODULES, instance_names, parse_instances, service_of

    try:
        names = instance_names(parse_instances(getattr(args, "instances", None)))
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc
    run = Path(args.run_dir or run_dir()).resolve()
    env_file = run / "stack.env"
    if not env_file.exists():
        raise SystemExit(f"no {env_file}: run `sextant-infra up` (or `make up`) first")
    if sup.supervisord_pid(run) is not None:
        procs = sup.processes(run)
        dead = [n for n, p in procs.items() if p["state"] in ("STOPPED", "EXITED", "FATAL")]
        for name in dead:
            sup.rpc(run).supervisor.startProcess(name, False)
        if getattr(args, "instances", None):
            console.print("--instances changes nothing on a running platform: `sextant down` first", highlight=False)
        if dead:
            console.print(f"the platform is up; started again: {', '.join(dead)}", highlight=False)
        else:
            console.print(f"the platform is already up ({run / PLATFORM_FILE}); `sextant ps` shows it", highlight=False)
        return 0
    for name, pid in sup.strays(run, _recorded_modules(run, MODULES)).items():  # supervisord died, its programs did not
        console.print(f"stopping {name} (pid {pid}), left running by a supervisord that died", highlight=False)
        stop_pid(pid, grace=sup.STOPWAITSECS)
    stack = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    migrate(stack["SEXTANT_DATABASE_URL"])
    host = os.environ.get("SEXTANT_API_HOST", "127.0.0.1")
    port = int(os.environ.get("SEXTANT_API_PORT", "8080"))
    url = f"http://{host}:{port}"
    programs, procs = [], {}
    taken = {port}  # free_port() may hand out a port chosen but not bound yet (the API's, another's)
    for name in names:
        other = free_port()
        while other in taken:
            other = free_port()
        taken.add(other)
        bind = (host, port) if name == "admission" else ("127.0.0.1", other)
        log = run / "logs" / f"{name}.log"
        module = MODULES[service_of(name)]
        programs.append(sup.Program(name, module, {"SEXTANT_SERVICE_NAME": service_of(name),
                                                   "SEXTANT_HTTP_HOST": bind[0], "SEXTANT_HTTP_PORT": str(bind[1])},
                                    log))
        procs[name] = {"module": module, "port": bind[1], "log": str(log)}
    config = sup.write_config(run, programs)
    (run / sup.RESTARTS).unlink(missing_ok=True)
    (run / PLATFORM_FILE).write_text(json.dumps({"api": url, "supervisor": {"config": str(config),
                                                                            "socket": str(run / sup.SOCKET)},
                                                 "processes": procs}, indent=2) + "\n")
    env = {**os.environ, "SEXTANT_RUN_DIR": str(run), **stack, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    supervisord = Path(sys.executable).parent / "supervisord"
    started = subprocess.run([str(supervisord), "-c", str(config)], env=env, capture_output=True, text=True,
                             check=False)
    if started.returncode != 0:
        console.print(f"[red]supervisord did not start:[/] {started.stderr.strip()}", highlight=False)
        return 1
    deadline = time.monotonic() + 180
    with httpx.Client(timeout=2.0) as c:
        while True:
            states = sup.processes(run) if sup.supervisord_pid(run) is not None else {}
            fatal = [n for n, p in states.items() if p["state"] == "FATAL"]
            if fatal:
                console.print(f"[red]{fatal[0]} does not start:[/]\n{log_tail(Path(procs[fatal[0]]['log']), 20)}")
                return 1
            with contextlib.suppress(httpx.HTTPError):
                if c.get(f"{url}/readyz").status_code == 200:
                    break
            if time.monotonic() > deadline:
                console.print(f"[red]the API is not ready at {url} after 180 s[/] (logs in {run / 'logs'})")
                return 1
            time.sleep(0.5)
    console.print(f"platform up under supervisord: the API at {url} (openapi: {url}/docs); logs in "
                  f"{run / 'logs'}; `sextant ps` shows the processes", highlight=False)
    return 0


def platform_down(args: argparse.Namespace) -> int:
    """Stop supervisord and, with it, every process it supervises (SIGTERM, SIGKILL after the
    grace period)."""
    from sextant_infra.processes import stop_pid

    from . import supervision as sup
    from .platform import MODULES

    run = Path(args.run_dir or run_dir()).resolve()
    path = run / PLATFORM_FILE
    pid = sup.supervisord_pid(run)
    modules = _recorded_modules(run, MODULES)  # before platform.json goes: it names the instances
    if pid is None and not path.exists() and not sup.strays(run, modules):
        console.print("no platform recorded")
        return 0
    stopped = []
    if pid is not None:
        stopped = sorted(sup.processes(run))
        stop_pid(pid, grace=2 * sup.STOPWAITSECS + 10)
    for name, stray in sup.strays(run, modules).items():  # supervisord died, its programs did not
        stop_pid(stray, grace=sup.STOPWAITSECS)
        stopped.append(name)
    path.unlink(missing_ok=True)
    (run / sup.RESTARTS).unlink(missing_ok=True)
    console.print(f"stopped: {', '.join(stopped) or 'nothing was running'}")
    return 0


def _recorded_modules(run: Path, modules: dict[str, str]) -> dict[str, str]:
    """`modules` plus the processes the last `sextant up` recorded in platform.json (instances)."""
    try:
        recorded = json.loads((run / PLATFORM_FILE).read_text())["processes"]
        return {**modules, **{n: str(p["module"]) for n, p in recorded.items()}}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return dict(modules)


def platform_ps(args: argparse.Namespace) -> int:
    """Each process: pid, alive, restarts (since `sextant up`), consumer lag. Exit 0 when every
    process runs, 3 otherwise (like `sextant-infra status`)."""
    from . import supervision as sup

    run = Path(args.run_dir or run_dir()).resolve()
    procs = sup.processes(run)
    stack_file = run / "stack.env"
    if procs and stack_file.exists():
        stack = dict(line.split("=", 1) for line in stack_file.read_text().splitlines() if "=" in line)
        for name, lag in asyncio.run(sup.lags(stack, list(procs))).items():
            procs[name]["lag"] = lag
    out = {n: {"pid": p["pid"], "alive": p["alive"], "restarts": p["restarts"], "lag": p.get("lag")}
           for n, p in procs.items()}
    if args.json:
        print(json.dumps({"processes": out}, sort_keys=True))
    elif not out:
        console.print(f"no platform runs ({run}): `make up` starts it")
    else:
        t = Table()
        for col in ("process", "pid", "alive", "restarts", "lag"):
            t.add_column(col)
        for name, p in out.items():
            t.add_row(name, str(p["pid"] or "-"), "yes" if p["alive"] else "[red]no[/]", str(p["restarts"]),
                      "-" if p["lag"] is None else str(p["lag"]))
        console.print(t)
    return 0 if out and all(p["alive"] for p in out.values()) else 3


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
