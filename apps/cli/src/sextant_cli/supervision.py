"""The platform's processes under supervisord (`sextant up`, `sextant ps`, `sextant down`).

`sextant up` writes `<run>/supervisord.conf` and starts supervisord (the `supervisor` package,
pinned in constraints.txt), which starts the six services, the relay and the agent — each a
`python -m` program logging to `<run>/logs/<name>.log` — and restarts any of them that dies:

- a process that exits (a crash, `kill -9`) is started again at once (`autorestart=true`);
- a process that dies within `startsecs` (5 s) of a start is retried with supervisord's backoff
  (1 s, 2 s, 3 s, ... between attempts), up to `startretries` (30) times, then left FATAL —
  `sextant up` starts FATAL or stopped programs again;
- stopping sends SIGTERM to the program's process group and SIGKILL after 15 s.

supervisord's XML-RPC interface listens on the unix socket `<run>/supervisor.sock` (mode 0700:
the run folder's owner only). Restarts are counted by an event listener (`listen`, a program of
the same supervisord): every `PROCESS_STATE_STARTING` that follows `EXITED` or `BACKOFF` is a
restart. It writes `<run>/restarts.json`: `{"restarts": {name: n}, "pids": {name: pid}}` (the pid
of each program's latest `PROCESS_STATE_RUNNING`); a new `sextant up` starts counting from 0.
Should supervisord itself die, its programs live on: `strays(run)` are the recorded pids that
still run their program's module, which `sextant up` and `sextant down` stop.

`processes(run)` reads each program's pid and state from supervisord and its restart count;
`sextant ps` adds the consumer lag (`lags`).
"""

from __future__ import annotations

import json
import os
import sys
import xmlrpc.client
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sextant_kit.metrics import RESTARTS_FILE

CONFIG = "supervisord.conf"
SOCKET = "supervisor.sock"
PIDFILE = "supervisord.pid"
RESTARTS = RESTARTS_FILE  # read by each process at start too (sextant_kit.metrics)
LISTENER = "restart-counter"
STARTSECS = 5
STARTRETRIES = 30
STOPWAITSECS = 15

# the Kafka consumer groups of each process (its lag is theirs, summed); the relay's is its outbox
GROUPS: dict[str, tuple[str, ...]] = {
    "admission": ("admission", "admission-submissions", "admission-decisions"),
    "profiling": ("profiling",), "classification": ("classification",), "planning": ("planning",),
    "reprovisioning": ("reprovisioning",), "telemetry": ("telemetry",), "agent": ("agent",),
}


@dataclass(frozen=True)
class Program:
    name: str
    module: str
    env: Mapping[str, str]  # on top of supervisord's own environment (which it passes on)
    log: Path


def _quote(value: str) -> str:
    """A value for supervisord's config: `%` doubled (its interpolation), quoted for `environment`."""
    return '"' + value.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"') + '"'


def _path(p: Path) -> str:
    return str(p).replace("%", "%%")


def write_config(run: Path, programs: list[Program]) -> Path:
    """`<run>/supervisord.conf` for `programs` and the restart counter."""
    logs = run / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    python = _path(Path(sys.executable))
    lines = [
        "[unix_http_server]", f"file={_path(run / SOCKET)}", "chmod=0700", "",
        "[supervisord]", f"logfile={_path(logs / 'supervisord.log')}", f"pidfile={_path(run / PIDFILE)}",
        f"childlogdir={_path(logs)}", f"directory={_path(run)}", "nodaemon=false", "loglevel=info", "",
        "[rpcinterface:supervisor]", "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
        "", "[supervisorctl]", f"serverurl=unix://{_path(run / SOCKET)}", "",
    ]
    for p in programs:
        env = ",".join(f"{k}={_quote(v)}" for k, v in p.env.items())
        lines += [f"[program:{p.name}]", f"command={python} -m {p.module}", f"environment={env}",
                  "autostart=true", "autorestart=true", f"startsecs={STARTSECS}", f"startretries={STARTRETRIES}",
                  "stopsignal=TERM", f"stopwaitsecs={STOPWAITSECS}", "stopasgroup=true", "killasgroup=true",
                  "redirect_stderr=true", f"stdout_logfile={_path(p.log)}", "stdout_logfile_maxbytes=100MB",
                  "stdout_logfile_backups=2", ""]
    lines += [f"[eventlistener:{LISTENER}]", f"command={python} -m sextant_cli.supervision {_path(run / RESTARTS)}",
              "events=PROCESS_STATE", "autorestart=true", f"stderr_logfile={_path(logs / (LISTENER + '.log'))}", ""]
    path = run / CONFIG
    path.write_text("\n".join(lines))
    return path


def rpc(run: Path) -> Any:
    """supervisord's XML-RPC proxy over `<run>/supervisor.sock` (`.supervisor.getAllProcessInfo()`...)."""
    from supervisor.xmlrpc import SupervisorTransport

    transport = SupervisorTransport(None, None, f"unix://{run / SOCKET}")
    return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport)


def supervisord_pid(run: Path) -> int | None:
    """The pid of the run folder's supervisord when it runs (checked against its command line)."""
    from sextant_infra.processes import pid_alive, pid_cmdline

    try:
        pid = int((run / PIDFILE).read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if pid_alive(pid) and "supervisord" in pid_cmdline(pid) else None


def _recorded(run: Path, key: str) -> dict[str, int]:
    try:
        return {str(k): int(v) for k, v in json.loads((run / RESTARTS).read_text()).get(key, {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def restarts(run: Path) -> dict[str, int]:
    return _recorded(run, "restarts")


def strays(run: Path, modules: Mapping[str, str]) -> dict[str, int]:
    """{name: pid} of programs that still run although supervisord does not (checked against
    their module in the command line: a reused pid is not taken for them)."""
    from sextant_infra.processes import pid_alive, pid_cmdline

    if supervisord_pid(run) is not None:
        return {}
    return {n: pid for n, pid in _recorded(run, "pids").items()
            if n in modules and pid_alive(pid) and modules[n] in pid_cmdline(pid)}


def processes(run: Path) -> dict[str, dict[str, Any]]:
    """{name: {"pid", "alive", "state", "restarts"}} of the supervised programs (the restart
    counter aside); empty when supervisord does not run."""
    if supervisord_pid(run) is None:
        return {}
    counts = restarts(run)
    out = {}
    for info in rpc(run).supervisor.getAllProcessInfo():
        if info["group"] == LISTENER:
            continue
        alive = info["statename"] == "RUNNING"
        out[info["name"]] = {"pid": info["pid"] if alive and info["pid"] else None, "alive": alive,
                             "state": info["statename"], "restarts": counts.get(info["name"], 0)}
    return out


async def lags(stack: Mapping[str, str], names: list[str]) -> dict[str, int | None]:
    """Each process's consumer lag: the records its Kafka groups have not committed yet (None
    before a first commit or when the broker does not answer); the relay's: the outbox rows not
    yet published (None when PostgreSQL does not answer)."""
    import contextlib

    import sqlalchemy as sa
    from sextant_kit.eventstore.schema import outbox
    from sextant_kit.kafka.lag import group_lag
    from sqlalchemy.ext.asyncio import create_async_engine

    out: dict[str, int | None] = dict.fromkeys(names)
    from .platform import service_of

    def groups_of(name: str) -> tuple[str, ...]:  # an instance (`planning-2`) shares its service's groups
        return GROUPS.get(service_of(name), ())

    groups = [g for n in names for g in groups_of(n)]
    with contextlib.suppress(Exception):
        found = await group_lag(stack["SEXTANT_KAFKA_BOOTSTRAP"], groups)
        for n in names:
            values = [found[g].lag for g in groups_of(n) if g in found and found[g].lag is not None]
            if values:
                out[n] = sum(v for v in values if v is not None)
    if "relay" in names:
        engine = create_async_engine(stack["SEXTANT_DATABASE_URL"])
        with contextlib.suppress(Exception):
            async with engine.connect() as conn:
                q = sa.select(sa.func.count()).select_from(outbox).where(outbox.c.sent_at.is_(None))
                out["relay"] = int((await conn.execute(q)).scalar_one())
        await engine.dispose()
    return out


# -- the restart counter (a supervisord event listener) ----------------------------------------

def listen(path: Path, stdin: Any = None, stdout: Any = None) -> None:
    """supervisord's event-listener protocol on stdin/stdout: count restarts into `path`."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    counts: dict[str, int] = {}
    pids: dict[str, int] = {}
    _write(path, counts, pids)
    while True:
        stdout.write("READY\n")
        stdout.flush()
        line = stdin.readline()
        if not line:
            return
        header = dict(token.split(":", 1) for token in line.split())
        payload = stdin.read(int(header["len"]))
        body = dict(token.split(":", 1) for token in payload.split("\n", 1)[0].split() if ":" in token)
        name = body.get("processname", "?")
        if header.get("eventname") == "PROCESS_STATE_STARTING" and body.get("from_state") in ("EXITED", "BACKOFF"):
            counts[name] = counts.get(name, 0) + 1
            _write(path, counts, pids)
        elif header.get("eventname") == "PROCESS_STATE_RUNNING" and body.get("pid", "").isdigit():
            pids[name] = int(body["pid"])
            _write(path, counts, pids)
        stdout.write("RESULT 2\nOK")
        stdout.flush()


def _write(path: Path, counts: dict[str, int], pids: dict[str, int]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"restarts": counts, "pids": pids}, sort_keys=True))
    os.replace(tmp, path)


if __name__ == "__main__":
    listen(Path(sys.argv[1]))
