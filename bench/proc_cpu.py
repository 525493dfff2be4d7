"""CPU seconds of process trees from Linux /proc, for the platform benchmarks (`e2e.py`,
`eventstore.py`): user + system time, the process's own, its reaped children's and its live
children's (PostgreSQL's work is done by its backends, not the postmaster). A cost per event is the
difference over a window divided by the events — a figure the machine's load distorts far less than
latencies do."""

from __future__ import annotations

import os
from pathlib import Path


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds each named process tree has used so far (module doc); a process gone is left out."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (f := _stat(int(entry.name))) is not None:
            children.setdefault(int(f[1]), []).append(int(entry.name))  # ppid (field 4)
    out: dict[str, float] = {}
    for name, pid in pids.items():
        root = _stat(pid)
        if root is None:
            continue
        total = sum(int(x) for x in root[11:15])  # utime, stime, cutime, cstime (fields 14-17)
        todo = list(children.get(pid, ()))
        while todo:
            child = todo.pop()
            if (f := _stat(child)) is not None:
                total += int(f[11]) + int(f[12])
            todo.extend(children.get(child, ()))
        out[name] = total / tick
    return out
