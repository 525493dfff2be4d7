"""The local stack: one PostgreSQL and one Kafka, for `make up`/`make down`, the demo and tools.

Python API:
- `start_stack(run_dir) -> Stack` starts PostgreSQL and Kafka, creates every topic of
  `sextant_contracts.topics.ALL_TOPICS` with its partition count, and writes
  `<run_dir>/stack.json` (ports, pids, folders, logs) and `<run_dir>/stack.env`
  (`SEXTANT_DATABASE_URL`, `SEXTANT_KAFKA_BOOTSTRAP`). `Stack.stop()` stops both, keeping data.
- When `previous` state (a parsed stack.json) is given, its ports and folders are reused, so a
  stack brought down and up again keeps its events and topics.

Command line (`sextant-infra [--run-dir DIR] COMMAND`, run dir default `$SEXTANT_RUN_DIR` or
`<repo>/.run`):
- `up`: start the stack; when stack.json lists live processes it only reports (exit 0).
- `down [--purge]`: stop what stack.json lists (checking each pid still runs our command line);
  `--purge` also deletes the data folders and the state files.
- `status`: report each server; exit 0 when both run, 3 otherwise.
- `env`: print `export VAR=value` lines for a running stack (exit 1 when it is not up).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .kafka import REPO_ROOT, KafkaNode
from .postgres import PostgresNode
from .processes import InfraError, pid_alive, pid_cmdline, stop_pid
from .topics import TopicLike, ensure_topics

T = TypeVar("T")
STATE_FILE = "stack.json"
ENV_FILE = "stack.env"


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even when the caller's loop is running."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def default_run_dir() -> Path:
    env = os.environ.get("SEXTANT_RUN_DIR")
    return Path(env).resolve() if env else REPO_ROOT / ".run"


def default_topics() -> tuple[TopicLike, ...]:
    from sextant_contracts.topics import ALL_TOPICS

    return ALL_TOPICS


@dataclass
class Stack:
    """A running PostgreSQL + Kafka pair and where its state is recorded."""

    run_dir: Path
    postgres: PostgresNode
    kafka: KafkaNode

    @property
    def env(self) -> dict[str, str]:
        """Variables a Sextant process needs to reach this stack."""
        return {"SEXTANT_DATABASE_URL": self.postgres.url, "SEXTANT_KAFKA_BOOTSTRAP": self.kafka.bootstrap}

    def state(self) -> dict[str, Any]:
        """What stack.json records."""
        pg, kafka = self.postgres, self.kafka
        return {
            "postgres": {"pid": pg.pid, "port": pg.port, "base_dir": str(pg.base_dir),
                         "data_dir": str(pg.data_dir), "log": str(pg.log_path), "url": pg.url,
                         "dsn": pg.dsn},
            "kafka": {"pid": kafka.pid, "port": kafka.port, "controller_port": kafka.controller_port,
                      "run_dir": str(kafka.run_dir), "config": str(kafka.config_path),
                      "log": str(kafka.log_path), "bootstrap": kafka.bootstrap},
            "env": self.env,
            "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }

    def write_state(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.run_dir / STATE_FILE, json.dumps(self.state(), indent=2) + "\n")
        _atomic_write(self.run_dir / ENV_FILE, "".join(f"{k}={v}\n" for k, v in self.env.items()))

    def stop(self) -> None:
        """Stop Kafka, then PostgreSQL; data and ports are kept (stack.json records no pids,
        stack.env is removed), so `sextant-infra up` brings the same stack back."""
        self.kafka.stop()
        self.postgres.stop()
        if (self.run_dir / STATE_FILE).exists():
            _atomic_write(self.run_dir / STATE_FILE, json.dumps(self.state(), indent=2) + "\n")
        (self.run_dir / ENV_FILE).unlink(missing_ok=True)


def start_stack(run_dir: Path, *, topics: Iterable[TopicLike] | None = None,
                previous: dict[str, Any] | None = None, die_with_parent: bool = False) -> Stack:
    """Start PostgreSQL and Kafka, create the topics, record the stack (see module contract)."""
    run_dir = Path(run_dir).resolve()
    prev_pg = (previous or {}).get("postgres", {})
    prev_kafka = (previous or {}).get("kafka", {})
    pg_base = Path(prev_pg["base_dir"]) if prev_pg.get("base_dir") and Path(prev_pg["base_dir"]).exists() else None
    postgres = PostgresNode(pg_base, port=prev_pg.get("port") if pg_base else None,
                            die_with_parent=die_with_parent)
    kafka = KafkaNode(run_dir / "kafka", port=prev_kafka.get("port"),
                      controller_port=prev_kafka.get("controller_port"), die_with_parent=die_with_parent)
    stack = Stack(run_dir, postgres, kafka)
    postgres.start()
    try:
        kafka.start()
        run_sync(ensure_topics(kafka.bootstrap, default_topics() if topics is None else topics))
    except BaseException:
        stack.stop()
        raise
    stack.write_state()
    return stack


# -- stack.json helpers ----------------------------------------------------------------------

def read_state(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / STATE_FILE
    return json.loads(path.read_text()) if path.exists() else None


def component_alive(state: dict[str, Any], name: str) -> bool:
    """True when the recorded pid of `name` still runs the command we started (not a reused pid)."""
    comp = state.get(name) or {}
    pid = comp.get("pid")
    if not pid or not pid_alive(pid):
        return False
    marker = comp.get("config") if name == "kafka" else comp.get("data_dir")
    return isinstance(marker, str) and bool(marker) and marker in pid_cmdline(pid)


def stop_recorded(state: dict[str, Any]) -> list[str]:
    """Stop every live component stack.json lists; return their names."""
    stopped = []
    for name, sig in (("kafka", signal.SIGTERM), ("postgres", signal.SIGINT)):
        if component_alive(state, name):
            stop_pid(state[name]["pid"], sig=sig, grace=30.0)
            stopped.append(name)
        if state.get(name):
            state[name]["pid"] = None
    return stopped


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# -- command line ----------------------------------------------------------------------------

def _report(state: dict[str, Any]) -> bool:
    up = True
    for name, addr in (("postgres", "url"), ("kafka", "bootstrap")):
        comp = state.get(name) or {}
        alive = component_alive(state, name)
        up &= alive
        print(f"{name:9s} {'running' if alive else 'stopped':8s} pid={comp.get('pid')} "
              f"{comp.get(addr, '')}  log={comp.get('log', '')}")
    return up


def cmd_up(run_dir: Path) -> int:
    state = read_state(run_dir)
    if state and all(component_alive(state, n) for n in ("postgres", "kafka")):
        print(f"stack already up ({run_dir / STATE_FILE}):")
        _report(state)
        return 0
    if state:
        stop_recorded(state)
    t0 = time.monotonic()
    stack = start_stack(run_dir, previous=state)
    print(f"stack up in {time.monotonic() - t0:.1f} s; state in {run_dir / STATE_FILE}, "
          f"env in {run_dir / ENV_FILE}")
    _report(stack.state())
    return 0


def cmd_down(run_dir: Path, purge: bool) -> int:
    state = read_state(run_dir)
    if not state:
        print(f"no stack recorded in {run_dir}")
        return 0
    stopped = stop_recorded(state)
    print(f"stopped: {', '.join(stopped) or 'nothing was running'}")
    (run_dir / ENV_FILE).unlink(missing_ok=True)
    if purge:
        for path in (state.get("postgres", {}).get("base_dir"), state.get("kafka", {}).get("run_dir")):
            if path:
                shutil.rmtree(path, ignore_errors=True)
        (run_dir / STATE_FILE).unlink(missing_ok=True)
        print("purged data folders")
    else:
        _atomic_write(run_dir / STATE_FILE, json.dumps(state, indent=2) + "\n")
    return 0


def cmd_status(run_dir: Path) -> int:
    state = read_state(run_dir)
    if not state:
        print(f"no stack recorded in {run_dir}")
        return 3
    return 0 if _report(state) else 3


def cmd_env(run_dir: Path) -> int:
    state = read_state(run_dir)
    if not state or not all(component_alive(state, n) for n in ("postgres", "kafka")):
        print("stack is not up: run `make up`", file=sys.stderr)
        return 1
    for key, value in state["env"].items():
        print(f"export {key}={value}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sextant-infra", description="Local PostgreSQL + Kafka stack.")
    parser.add_argument("--run-dir", type=Path, default=None, help="state folder (default .run/)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="start PostgreSQL and Kafka, create topics")
    down = sub.add_parser("down", help="stop what stack.json lists")
    down.add_argument("--purge", action="store_true", help="also delete data folders and state")
    sub.add_parser("status", help="report the stack")
    sub.add_parser("env", help="print export lines for a running stack")
    args = parser.parse_args(argv)
    run_dir = (args.run_dir or default_run_dir()).resolve()
    try:
        if args.command == "up":
            return cmd_up(run_dir)
        if args.command == "down":
            return cmd_down(run_dir, args.purge)
        if args.command == "status":
            return cmd_status(run_dir)
        return cmd_env(run_dir)
    except InfraError as exc:
        print(f"sextant-infra {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
