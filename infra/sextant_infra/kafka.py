"""A single-node Apache Kafka (KRaft, static quorum) run from its jars on Maven Central.

Follows /work/shared/KAFKA.md: Kafka 4.1.1 (`kafka_2.13` and its runtime dependencies plus the
log4j 2.24.3 backend, see `infra/kafka/pom.xml`) fetched once with Maven into a cache folder,
then `kafka.tools.StorageTool format` and `kafka.Kafka` with a rendered `server.properties`.

Contracts:
- `fetch_kafka_libs()` is idempotent and atomic: jars are copied into a temporary folder next to
  the cache and renamed into place, under a file lock, so a half-finished fetch is never used and
  two concurrent runs fetch once.
- `KafkaNode.start()` returns only when the broker logged "Kafka Server started" and its
  PLAINTEXT port accepts connections; on failure it prints the log tail to stderr and raises
  `InfraError` carrying that tail. `stop()` sends SIGTERM (controlled shutdown), waits
  `stop_grace` seconds, then SIGKILLs. `start()` after `stop()` reuses the same ports, cluster id
  and data (topics and records survive).
- Everything the node writes lives under `run_dir`: `server.properties`, `cluster.id`, `data/`
  and `logs/kafka.log` (broker stdout+stderr, appended across restarts).
"""

from __future__ import annotations

import base64
import fcntl
import os
import shutil
import string
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

KAFKA_VERSION = "4.1.1"
KAFKA_CONFIG_DIR = Path(__file__).resolve().parent.parent / "kafka"
REPO_ROOT = Path(__file__).resolve().parent.parent.parent
READY_LINE = "Kafka Server started"
_MARKER_JAR = f"kafka_2.13-{KAFKA_VERSION}.jar"


def cache_root() -> Path:
    """`$SEXTANT_CACHE_DIR`, else `<repo>/.cache`."""
    env = os.environ.get("SEXTANT_CACHE_DIR")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".cache"


def kafka_libs_dir(cache: Path | None = None) -> Path:
    """Where the broker's jars live: `<cache>/kafka-4.1.1/libs`."""
    return (cache or cache_root()) / f"kafka-{KAFKA_VERSION}" / "libs"


def java_executable() -> str:
    """`$JAVA_HOME/bin/java` when set, else `java` from PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise InfraError("java not found: Kafka needs a JRE 17 (apt-get install -y openjdk-17-jre-headless)")
    return found


def fetch_kafka_libs(cache: Path | None = None) -> Path:
    """Fetch the broker's jars into the cache unless already there; return the libs folder."""
    libs = kafka_libs_dir(cache)
    if (libs / _MARKER_JAR).exists():
        return libs
    libs.parent.mkdir(parents=True, exist_ok=True)
    with (libs.parent / ".fetch.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (libs / _MARKER_JAR).exists():
            return libs
        _maven_copy_dependencies(libs)
    return libs


def _maven_copy_dependencies(libs: Path) -> None:
    mvn = shutil.which("mvn")
    if not mvn:
        raise InfraError("mvn not found: fetching Kafka needs Maven 3 (apt-get install -y maven)")
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=libs.parent))
    try:
        shutil.copy(KAFKA_CONFIG_DIR / "pom.xml", work / "pom.xml")
        cmd = [mvn, "-B", "-q", "dependency:copy-dependencies", f"-DoutputDirectory={work / 'libs'}",
               "-DincludeScope=runtime"]
        res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
        if res.returncode != 0 or not (work / "libs" / _MARKER_JAR).exists():
            out = "\n".join((res.stdout + res.stderr).splitlines()[-40:])
            raise InfraError(f"fetching Kafka {KAFKA_VERSION} jars with Maven failed "
                             f"(exit {res.returncode}):\n{out}")
        os.rename(work / "libs", libs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def new_cluster_id() -> str:
    """16 random bytes, base64url without padding, not starting with '-' (KAFKA.md)."""
    while True:
        cid = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


class KafkaNode:
    """One KRaft broker+controller on 127.0.0.1 (see module contract)."""

    def __init__(self, run_dir: Path, *, port: int | None = None, controller_port: int | None = None,
                 libs_dir: Path | None = None, extra_config: Mapping[str, str] | None = None,
                 die_with_parent: bool = False, start_timeout: float = 180.0,
                 stop_grace: float = 30.0, heap: str = "512m") -> None:
        self.run_dir = Path(run_dir).resolve()
        self.port = port
        self.controller_port = controller_port
        self.libs_dir = libs_dir
        self.extra_config = dict(extra_config or {})
        self.die_with_parent = die_with_parent
        self.start_timeout = start_timeout
        self.stop_grace = stop_grace
        self.heap = heap
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        """"127.0.0.1:PORT" (valid once started)."""
        if self.port is None:
            raise InfraError("Kafka node has no port yet: start() it first")
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    @property
    def data_dir(self) -> Path:
        return self.run_dir / "data"

    @property
    def log_path(self) -> Path:
        return self.run_dir / "logs" / "kafka.log"

    @property
    def config_path(self) -> Path:
        return self.run_dir / "server.properties"

    def running(self) -> bool:
        return self.pid is not None

    def start(self) -> None:
        """Provision (first time), format (first time) and start the broker; wait until ready."""
        if self.running():
            return
        libs = self.libs_dir or fetch_kafka_libs()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        self.controller_port = self.controller_port or free_port()
        self._write_config()
        if not (self.data_dir / "meta.properties").exists():
            self._format(libs)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        argv = [java_executable(), "-Xms256m", f"-Xmx{self.heap}", "-XX:+UseG1GC",
                "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true", *self._log_props(),
                "-cp", f"{libs}/*", "kafka.Kafka", str(self.config_path)]
        self._proc = spawn(argv, log_path=self.log_path, cwd=self.run_dir,
                           die_with_parent=self.die_with_parent)
        self._wait_ready(offset)

    def stop(self) -> None:
        """Controlled shutdown (SIGTERM), SIGKILL after `stop_grace` s. Keeps ports and data."""
        if self._proc is not None:
            stop_pid(self._proc.pid, grace=self.stop_grace, proc=self._proc)
            self._proc = None

    def _log_props(self) -> list[str]:
        return [f"-Dlog4j2.configurationFile={KAFKA_CONFIG_DIR / 'log4j2.properties'}",
                f"-Dkafka.logs.dir={self.run_dir / 'logs'}"]

    def _write_config(self) -> None:
        template = string.Template((KAFKA_CONFIG_DIR / "server.properties.template").read_text())
        text = template.substitute(port=self.port, controller_port=self.controller_port,
                                   data_dir=self.data_dir)
        extra = "".join(f"{k}={v}\n" for k, v in self.extra_config.items())
        self.config_path.write_text(text + ("\n# extra_config\n" + extra if extra else ""))

    def _cluster_id(self) -> str:
        path = self.run_dir / "cluster.id"
        if not path.exists():
            path.write_text(new_cluster_id())
        return path.read_text().strip()

    def _format(self, libs: Path) -> None:
        argv = [java_executable(), "-Xmx256m", *self._log_props(), "-cp", f"{libs}/*",
                "kafka.tools.StorageTool", "format", "-t", self._cluster_id(), "-c", str(self.config_path)]
        res = subprocess.run(argv, capture_output=True, text=True, check=False)
        fmt_log = self.run_dir / "logs" / "format.log"
        fmt_log.parent.mkdir(parents=True, exist_ok=True)
        fmt_log.write_text(res.stdout + res.stderr)
        if res.returncode != 0:
            fail_with_log(f"formatting Kafka storage failed (exit {res.returncode})", fmt_log)

    def _wait_ready(self, offset: int) -> None:
        proc = self._proc
        assert proc is not None and self.port is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                code = proc.returncode
                self._proc = None
                fail_with_log(f"Kafka broker exited during start-up (exit {code})", self.log_path)
            if logged_since(self.log_path, offset, READY_LINE) and port_open(self.port):
                return
            time.sleep(0.1)
        self.stop()
        fail_with_log(f"Kafka broker not ready after {self.start_timeout:.0f} s", self.log_path)
