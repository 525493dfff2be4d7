"""A private PostgreSQL cluster from Debian's packages, on a free 127.0.0.1 port.

Contracts:
- Binaries come from `/usr/lib/postgresql/<newest>/bin`, else from the folder of `pg_ctl` on PATH;
  when neither exists and we are root, `apt-get update && apt-get install -y postgresql` runs once.
- The cluster lives in `base_dir` (default: a fresh `mktemp -d /tmp/sextant-pg.XXXX`, short enough
  for the Unix socket path): `data/` (initdb), the socket, and `postgres.log` (server
  stdout+stderr, appended across restarts). PostgreSQL refuses to run as root, so when euid is 0
  every server binary runs as the `postgres` user (the process drops privileges itself, like
  `runuser -u postgres --`, so the supervisor holds the postmaster's real pid) and `base_dir` is
  chowned to it.
- `start()` returns when the server logged "ready to accept connections" and the port answers,
  and database `sextant` (owner `sextant`, trust auth on 127.0.0.1) exists. On failure it prints
  the log tail to stderr and raises `InfraError` carrying it. fsync stays on (crash tests rely on
  it); max_connections is 200.
- `stop()` is a fast shutdown (SIGINT), SIGKILL after `stop_grace` s; `start()` afterwards reuses
  the same port and data. `remove()` deletes `base_dir` (after stopping).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from .processes import (
    InfraError,
    fail_with_log,
    free_port,
    logged_since,
    port_open,
    spawn,
    stop_pid,
)

READY_LINE = "ready to accept connections"
RUN_AS_WHEN_ROOT = "postgres"


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(p) for p in path.parent.name.split(".") if p.isdigit())


def find_pg_bin() -> Path | None:
    """The folder holding initdb, postgres and pg_ctl, or None when PostgreSQL is not installed."""
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=_version_key)
    if candidates:
        return candidates[-1].parent
    found = shutil.which("pg_ctl")
    if found and (Path(found).resolve().parent / "initdb").exists():
        return Path(found).resolve().parent
    return None


def ensure_pg_bin() -> Path:
    """`find_pg_bin()`, installing Debian's `postgresql` package first when absent (root only)."""
    found = find_pg_bin()
    if found:
        return found
    if os.geteuid() != 0:
        raise InfraError("PostgreSQL is not installed and we are not root: "
                         "run `sudo apt-get install -y postgresql`")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "--no-install-recommends", "postgresql"]):
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if res.returncode != 0:
            out = "\n".join((res.stdout + res.stderr).splitlines()[-30:])
            raise InfraError(f"{' '.join(cmd)} failed (exit {res.returncode}):\n{out}")
    found = find_pg_bin()
    if not found:
        raise InfraError("apt-get installed postgresql but initdb is still not found")
    return found


class PostgresNode:
    """One private PostgreSQL server (see module contract)."""

    def __init__(self, base_dir: Path | None = None, *, port: int | None = None,
                 database: str = "sextant", user: str = "sextant",
                 settings: Mapping[str, str] | None = None, die_with_parent: bool = False,
                 start_timeout: float = 60.0, stop_grace: float = 30.0) -> None:
        self.base_dir = Path(base_dir).resolve() if base_dir else None
        self.port = port
        self.database = database
        self.user = user
        self.settings = {"max_connections": "200", "fsync": "on", **(settings or {})}
        self.die_with_parent = die_with_parent
        self.start_timeout = start_timeout
        self.stop_grace = stop_grace
        self._proc: subprocess.Popen[bytes] | None = None
        self._bin: Path | None = None

    # -- addresses ---------------------------------------------------------------------------
    def url_for(self, database: str) -> str:
        """SQLAlchemy asyncpg URL of `database` on this server."""
        return f"postgresql+asyncpg://{self.user}@127.0.0.1:{self._port()}/{database}"

    def dsn_for(self, database: str) -> str:
        """Plain libpq/asyncpg DSN of `database` on this server."""
        return f"postgresql://{self.user}@127.0.0.1:{self._port()}/{database}"

    @property
    def url(self) -> str:
        return self.url_for(self.database)

    @property
    def dsn(self) -> str:
        return self.dsn_for(self.database)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    @property
    def data_dir(self) -> Path:
        return self._base() / "data"

    @property
    def log_path(self) -> Path:
        return self._base() / "postgres.log"

    def running(self) -> bool:
        return self.pid is not None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """initdb (first time), start, wait until ready, create the database (first time)."""
        if self.running():
            return
        self._bin = ensure_pg_bin()
        if self.base_dir is None:
            self.base_dir = Path(tempfile.mkdtemp(prefix="sextant-pg.", dir="/tmp"))
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self._chown(self.base_dir)
        self.port = self.port or free_port()
        fresh = not (self.data_dir / "PG_VERSION").exists()
        if fresh:
            self._initdb()
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        argv = [str(self._bin / "postgres"), "-D", str(self.data_dir), "-p", str(self.port),
                "-k", str(self.base_dir), "-c", "listen_addresses=127.0.0.1",
                *(arg for k, v in self.settings.items() for arg in ("-c", f"{k}={v}"))]
        self._proc = spawn(argv, log_path=self.log_path, cwd=self.base_dir, user=self._run_as(),
                           die_with_parent=self.die_with_parent)
        self._wait_ready(offset)
        if fresh:
            self.create_database(self.database)

    def stop(self) -> None:
        """Fast shutdown (SIGINT); SIGKILL after `stop_grace` s. Keeps port and data."""
        if self._proc is not None:
            stop_pid(self._proc.pid, sig=signal.SIGINT, grace=self.stop_grace, proc=self._proc)
            self._proc = None

    def remove(self) -> None:
        """Stop and delete the whole cluster folder."""
        self.stop()
        if self.base_dir is not None:
            shutil.rmtree(self.base_dir, ignore_errors=True)

    # -- databases ---------------------------------------------------------------------------
    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run one SQL statement with psql over TCP; return its unaligned output."""
        res = subprocess.run([str(self._bin_dir() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
                              "-tA", "-h", "127.0.0.1", "-p", str(self._port()), "-U", self.user,
                              "-d", database, "-c", sql],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise InfraError(f"psql failed: {sql!r}: {res.stderr.strip()}")
        return res.stdout.strip()

    def create_database(self, name: str) -> None:
        """CREATE DATABASE `name` owned by the server's user."""
        self.psql(f'CREATE DATABASE "{name}" OWNER "{self.user}"')

    def drop_database(self, name: str) -> None:
        """DROP DATABASE `name`, disconnecting any remaining sessions."""
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    # -- internals ---------------------------------------------------------------------------
    def _port(self) -> int:
        if self.port is None:
            raise InfraError("PostgreSQL node has no port yet: start() it first")
        return self.port

    def _base(self) -> Path:
        if self.base_dir is None:
            raise InfraError("PostgreSQL node has no folder yet: start() it first")
        return self.base_dir

    def _bin_dir(self) -> Path:
        if self._bin is None:
            self._bin = ensure_pg_bin()
        return self._bin

    def _run_as(self) -> str | None:
        return RUN_AS_WHEN_ROOT if os.geteuid() == 0 else None

    def _chown(self, path: Path) -> None:
        user = self._run_as()
        if user is None:
            return
        try:
            pw = pwd.getpwnam(user)
        except KeyError as exc:
            raise InfraError(f"running as root but there is no {user!r} user to run PostgreSQL") from exc
        for root, dirs, files in os.walk(path):
            for name in (root, *(os.path.join(root, d) for d in dirs), *(os.path.join(root, f) for f in files)):
                os.chown(name, pw.pw_uid, pw.pw_gid)

    def _initdb(self) -> None:
        argv = [str(self._bin_dir() / "initdb"), "-D", str(self.data_dir), "-U", self.user,
                "--auth=trust", "-E", "UTF8", "--locale=C"]
        init_log = self._base() / "initdb.log"
        user = self._run_as()
        res = subprocess.run(argv, capture_output=True, text=True, cwd=self._base(), check=False,
                             user=user, group=user, extra_groups=[] if user else None)
        init_log.write_text(res.stdout + res.stderr)
        if res.returncode != 0:
            fail_with_log(f"initdb failed (exit {res.returncode})", init_log)

    def _wait_ready(self, offset: int) -> None:
        proc = self._proc
        assert proc is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                code = proc.returncode
                self._proc = None
                fail_with_log(f"PostgreSQL exited during start-up (exit {code})", self.log_path)
            if logged_since(self.log_path, offset, READY_LINE) and port_open(self._port()):
                return
            time.sleep(0.05)
        self.stop()
        fail_with_log(f"PostgreSQL not ready after {self.start_timeout:.0f} s", self.log_path)
