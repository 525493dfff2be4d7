"""Start and stop the platform's processes on one machine: the six services, the relay and the
cluster agent, each a separate `python -m` process on its own 127.0.0.1 port, against a running
stack (real PostgreSQL and Kafka from `sextant_infra`). Used by `sextant demo` and the e2e tests.

Each process's output goes to `<run_dir>/logs/<name>.log` (and its spans, with
`SEXTANT_OTEL_EXPORTER=jsonl`, to `<run_dir>/traces/<name>.jsonl`); a process that dies during start-up
fails `wait_ready` with the tail of its log.

**Instances** (`sextant up --instances SERVICE=N`, docs/platform/instances.md): a service can run as
N processes. The first keeps the service's name; the others are `SERVICE-2` … `SERVICE-N`, each
with its own port (API and `/metrics`) and log, but all with `SEXTANT_SERVICE_NAME=SERVICE`: the
same Kafka consumer groups (the topics' partitions are split between them), the same tracking id
and the same derived output ids (so whichever instance handles a record, it is handled once).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sextant_infra.processes import free_port, log_tail, spawn

SERVICES = ("admission", "profiling", "classification", "planning", "reprovisioning", "telemetry")
MODULES = {**{s: f"sextant_{s}.main" for s in SERVICES}, "relay": "sextant_kit.relay_process",
           "agent": "sextant_agent.main"}


class PlatformError(RuntimeError):
    pass


def service_of(name: str) -> str:
    """The service a process name runs: `planning-2` → `planning`; any other name is its own."""
    base, _, n = name.rpartition("-")
    return base if base in SERVICES and n.isdigit() and int(n) >= 2 else name


def instance_names(instances: Mapping[str, int] | None = None,
                   names: tuple[str, ...] = (*SERVICES, "relay", "agent")) -> tuple[str, ...]:
    """The process names of `names` with `instances[service]` processes each (default 1):
    `("planning", "planning-2", ...)`. Only the six services may have more than one."""
    instances = instances or {}
    bad = [s for s, n in instances.items() if s not in SERVICES or n < 1]
    if bad:
        raise ValueError(f"--instances: not a service, or fewer than 1 instance: {', '.join(bad)} "
                         f"(services: {', '.join(SERVICES)})")
    return tuple(f"{n}-{i}" if i > 1 else n for n in names for i in range(1, instances.get(n, 1) + 1))


def parse_instances(specs: list[str] | None) -> dict[str, int]:
    """`["planning=2", "admission=3"]` → `{"planning": 2, "admission": 3}` (ValueError if malformed)."""
    out: dict[str, int] = {}
    for spec in specs or ():
        service, sep, n = spec.partition("=")
        if not sep or not n.strip().isdigit():
            raise ValueError(f"--instances {spec!r}: expected SERVICE=N")
        out[service.strip()] = int(n)
    instance_names(out)  # validates
    return out


def tail(path: Path, lines: int = 30) -> str:
    return log_tail(path, lines, drop_stack_frames=False) or "(no log)"


PORT_TAKEN = "address already in use"
PORT_RETRIES = 3


@dataclass
class Proc:
    name: str
    port: int
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Platform:
    run_dir: Path
    env: dict[str, str]
    procs: dict[str, Proc] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Mapping[str, str]] = field(default_factory=dict)

    def start(self, name: str, extra_env: Mapping[str, str] | None = None) -> Proc:
        """Start (or restart, on the same port) one process (`name`: a service, `relay`, `agent`,
        or an instance `SERVICE-N`)."""
        logs = self.run_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.extra[name] = extra_env or {}
        port = self.ports.setdefault(name, free_port())
        env = {**os.environ, "SEXTANT_RUN_DIR": str(self.run_dir),  # traces/ next to logs/ (jsonl export)
               **self.env, "SEXTANT_SERVICE_NAME": service_of(name), "SEXTANT_HTTP_PORT": str(port),
               "SEXTANT_HTTP_HOST": "127.0.0.1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               **(extra_env or {})}
        log = logs / f"{name}.log"
        # killed with us (PR_SET_PDEATHSIG): an interrupted demo or test leaks no process
        popen = spawn([sys.executable, "-m", MODULES[service_of(name)]], log_path=log, env=env, die_with_parent=True)
        self.procs[name] = Proc(name, port, popen, log)
        return self.procs[name]

    def start_all(self, names: tuple[str, ...] = (*SERVICES, "relay", "agent"),
                  extra_env: Mapping[str, Mapping[str, str]] | None = None) -> None:
        for n in names:
            self.start(n, (extra_env or {}).get(n))

    def wait_ready(self, names: tuple[str, ...] | None = None, timeout_s: float = 180.0) -> None:
        """Wait until each process answers `/readyz` 200 (the API only once the deciders and the
        agent consume, `sextant_kit.kafka.lag`), or fail with the tail of its log."""
        deadline = time.monotonic() + timeout_s
        pending = list(names or self.procs)
        rebinds = 0
        with httpx.Client(timeout=2.0) as client:
            while pending:
                for other in pending:  # any of them dead: restart on a new port or fail now, not at the deadline
                    q = self.procs[other]
                    if q.popen.poll() is None:
                        continue
                    if rebinds < PORT_RETRIES and PORT_TAKEN in q.log.read_text(errors="replace"):
                        # free_port() hands out a port that another process can take before ours binds it
                        # (seen once in `make test`: planning lost its port, the API waited 180 s for it)
                        rebinds += 1
                        del self.ports[other]
                        self.start(other, self.extra.get(other))
                        continue
                    raise PlatformError(f"{other} exited with {q.popen.returncode}:\n{tail(q.log)}")
                name = pending[0]
                p = self.procs[name]
                try:
                    if client.get(f"{p.url}/readyz").status_code == 200:
                        pending.pop(0)
                        continue
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise PlatformError(f"{name} not ready after {timeout_s:.0f}s:\n{tail(p.log)}")
                time.sleep(0.2)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        p = self.procs[name]
        if p.popen.poll() is None:
            os.killpg(p.popen.pid, sig)
            p.popen.wait(timeout=30)

    def stop(self, timeout_s: float = 15.0) -> None:
        for p in self.procs.values():
            if p.popen.poll() is None:
                os.killpg(p.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for p in self.procs.values():
            try:
                p.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.popen.pid, signal.SIGKILL)
                p.popen.wait()

    def url(self, name: str) -> str:
        return self.procs[name].url
