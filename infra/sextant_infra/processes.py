"""Process supervision for the servers the project starts itself (Kafka, PostgreSQL).

Contracts:
- `free_port()` returns a TCP port on 127.0.0.1 that was free when asked (a race with other
  processes is possible but harmless in practice; callers keep the port for the node's life).
- `spawn(...)` starts a server process in its own session (a Ctrl-C in the terminal reaches the
  supervisor, not the server) with stdout and stderr appended to one log file. With
  `die_with_parent=True` the kernel sends SIGKILL to the server when the *thread* that spawned it
  exits (Linux PR_SET_PDEATHSIG): test fixtures use it so an interrupted test run leaks nothing;
  `make up` does not, so its servers outlive the command. Only spawn from a long-lived thread.
- `stop_pid(...)` sends a polite signal, waits up to `grace` seconds, then SIGKILL; it works for
  children and for processes started by another command (`sextant-infra down`).
- `log_tail(path)` returns the last lines of a log, for error messages.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

_PR_SET_PDEATHSIG = 1


class InfraError(RuntimeError):
    """A server the project manages could not be provisioned, started or stopped."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listened on a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def log_tail(path: Path, lines: int = 40, *, drop_stack_frames: bool = True) -> str:
    """The last `lines` lines of a text file ('' when it does not exist).

    With `drop_stack_frames`, Java stack frames (`\tat ...`, `\t... N more`) are left out first,
    so the exception messages of a JVM log stay within the tail.
    """
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            data = fh.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    kept = [ln for ln in data.splitlines()
            if not (drop_stack_frames and ln.startswith(("\tat ", "\t... ")))]
    return "\n".join(kept[-lines:])


def logged_since(path: Path, offset: int, needle: str) -> bool:
    """`needle` appears in the log at `path` past byte `offset` (False while the file is absent)."""
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return needle.encode() in fh.read()
    except FileNotFoundError:
        return False


def fail_with_log(what: str, log: Path) -> NoReturn:
    """Raise `InfraError` saying `what`, with the tail of `log` (also printed to stderr, so that a
    test run shows it even where the exception is summarised)."""
    tail = log_tail(log)
    print(f"--- {what}; last lines of {log}:\n{tail}\n---", file=sys.stderr)
    raise InfraError(f"{what}; last lines of {log}:\n{tail}")


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn(argv: Sequence[str], *, log_path: Path, env: Mapping[str, str] | None = None,
          cwd: Path | None = None, user: str | None = None,
          die_with_parent: bool = False) -> subprocess.Popen[bytes]:
    """Start a server process whose output is appended to `log_path` (see module contract)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    preexec: Callable[[], None] | None = _die_with_parent if die_with_parent else None
    with log_path.open("ab") as log:
        return subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
            user=user, group=user, extra_groups=[] if user else None, preexec_fn=preexec,
        )


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def pid_cmdline(pid: int) -> str:
    """The command line of `pid` joined by spaces ('' when it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def stop_pid(pid: int, *, sig: int = signal.SIGTERM, grace: float = 30.0,
             proc: subprocess.Popen[bytes] | None = None) -> bool:
    """Signal `pid`, wait up to `grace` s for it to exit, then SIGKILL it.

    Returns True when it stopped within the grace period, False when it had to be killed.
    Reaps `proc` when given (our own child), so no zombie is left.
    """
    if not _alive(pid, proc):
        return True
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return True
    if _wait_gone(pid, proc, grace):
        return True
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    _wait_gone(pid, proc, 10.0)
    return False


def _alive(pid: int, proc: subprocess.Popen[bytes] | None) -> bool:
    if proc is not None:
        return proc.poll() is None
    return pid_alive(pid)


def _wait_gone(pid: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> bool:
    if proc is not None:
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)
