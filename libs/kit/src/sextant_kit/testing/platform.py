"""Driving the running platform from a test: the `sextant` CLI as a user runs it, bounded polls, the
supervised platform's process table and readiness, the event log as PostgreSQL holds it.

Contracts:
- `sextant(*args, env=, timeout=)` runs `python -m sextant_cli ARGS` with `os.environ` updated by
  `env`; it never raises on a non-zero exit (the caller asserts on `returncode`), only on timeout.
- `until(what, check, timeout_s)` calls `check()` until it returns something truthy and returns
  that; past `timeout_s` it fails with an AssertionError naming `what`. The deadline only turns a
  hang into a failure: it is not what a test measures.
- `platform_ps(env)` is `sextant ps --json`: `{NAME: {"pid", "alive", "restarts", "lag"}}`; exit
  0 (all alive) and 3 (some not, or none) are answers, anything else fails the test. With
  `polling=True` a command that printed nothing (it failed, e.g. while the process it was asking
  about restarted) is `{}`, so that a poll simply asks again.
- `readyz(api)` is the status code of `GET {api}/readyz`, 0 when nothing answered.
- `write_stack_env(run_dir, url, bootstrap)` writes `<run_dir>/stack.env` the way
  `sextant-infra up` does, so that `sextant up --run-dir` (or `SEXTANT_RUN_DIR`) finds the stack.
- `read_log(url)` is the whole event log of a PostgreSQL database, in position order.
- `submit(client, body, key, deadline_s)` posts a workload with an idempotency key, retrying while
  the API cannot answer (5xx or no answer: an outage, a restart) until `deadline_s`; returns its id.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx
from sextant_contracts.envelope import Envelope

T = TypeVar("T")


def sextant(*args: str, env: Mapping[str, str] | None = None,
            timeout: float = 240.0) -> subprocess.CompletedProcess[str]:
    """`python -m sextant_cli ARGS` in a subprocess, output captured as text (see module contract)."""
    return subprocess.run([sys.executable, "-m", "sextant_cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, check=False)


def until(what: str, check: Callable[[], T], timeout_s: float = 120.0, every_s: float = 0.5,
          explain: Callable[[], str] | None = None) -> T:
    """The first truthy value of `check()`, polled every `every_s`; AssertionError after `timeout_s`
    (with `explain()`'s account of the moment appended, when given)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s" + (f"\n{explain()}" if explain else ""))
        time.sleep(every_s)


def platform_ps(env: Mapping[str, str], *, polling: bool = False, timeout: float = 60.0) -> dict[str, Any]:
    """The supervised platform's processes as `sextant ps --json` shows them (see module contract)."""
    r = sextant("ps", "--json", env=env, timeout=timeout)
    if polling and not r.stdout.strip():
        return {}
    assert r.returncode in (0, 3), r.stdout + r.stderr
    return dict(json.loads(r.stdout)["processes"])


def readyz(api: str, timeout: float = 10.0) -> int:
    """`GET {api}/readyz`'s status code; 0 when the API did not answer."""
    try:
        return httpx.get(f"{api}/readyz", timeout=timeout).status_code
    except httpx.HTTPError:
        return 0


def write_stack_env(run_dir: Path, database_url: str, kafka_bootstrap: str) -> Path:
    """`<run_dir>/stack.env` naming the stack's PostgreSQL database and Kafka, as `sextant-infra up` writes it."""
    path = run_dir / "stack.env"
    path.write_text(f"SEXTANT_DATABASE_URL={database_url}\nSEXTANT_KAFKA_BOOTSTRAP={kafka_bootstrap}\n")
    return path


async def read_log(url: str, batch: int = 5000) -> list[Envelope]:
    """Every event of the PostgreSQL log at `url` (SQLAlchemy asyncpg URL), in position order."""
    from sextant_kit.eventstore.postgres import PostgresEventStore

    store = PostgresEventStore.from_url(url)
    try:
        out: list[Envelope] = []
        while chunk := await store.read_all(out[-1].position if out else 0, batch):  # type: ignore[arg-type]
            out.extend(chunk)
        return out
    finally:
        await store.close()


def submit(client: httpx.Client, body: Mapping[str, Any], key: str, deadline_s: float = 180.0) -> str:
    """`POST /v1/workloads` with `Idempotency-Key: key`, retried through outages (module doc)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            r = client.post("/v1/workloads", json=dict(body), headers={"Idempotency-Key": key})
            if r.status_code < 500:
                r.raise_for_status()
                return str(r.json()["id"])
        except httpx.HTTPError:
            pass
        if time.monotonic() > end:
            raise TimeoutError(f"submission {key} not accepted in {deadline_s}s")
        time.sleep(0.5)
