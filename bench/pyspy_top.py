"""bench/pyspy_top.py — summarise py-spy profiles (docs/platform/throughput.md).

    py-spy record -p PID -d 20 -r 50 -f raw -o PROFILE.txt --nonblocking
    python bench/pyspy_top.py PROFILE.txt [...] [--functions catch_up,read_all,...]

For each collapsed-stack profile: the share of samples in which each top-level package is on the
stack (inclusive), and the five leaf functions with the most samples; with `--functions`, the
share of samples with each named function on the stack (`Class.method` or its last part). py-spy samples threads that
are not idle by wall clock: on a loaded machine a process descheduled inside a system call (a
socket write) counts there, so compare shares between runs taken at similar loads.
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path


def package(frame: str) -> str:
    """`name (pkg/module.py:12)` → `pkg` (or the file name of a top-level module)."""
    m = re.search(r"\((.*?)(?::\d+)?\)$", frame)
    path = m.group(1) if m else frame
    top = re.match(r"([A-Za-z0-9_]+)/", path) or re.search(r"site-packages/([A-Za-z0-9_]+)", path)
    return top.group(1) if top else path.rsplit("/", 1)[-1]


def summary(path: Path, top: int = 5) -> tuple[int, list[tuple[str, float]], list[tuple[str, float]]]:
    """(samples, inclusive share by package, top leaf functions by share)."""
    total = 0
    inclusive: collections.Counter[str] = collections.Counter()
    leaf: collections.Counter[str] = collections.Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        total += n
        for p in {package(f) for f in frames[1:]}:
            inclusive[p] += n
        leaf[re.sub(r"\(.*/", "(", frames[-1])] += n
    share = max(total, 1)
    return (total, [(k, v / share) for k, v in inclusive.most_common(12)],
            [(k, v / share) for k, v in leaf.most_common(top)])


def functions(path: Path, names: list[str]) -> list[tuple[str, float]]:
    """Share of samples with each of `names` on the stack: a frame's function is `names[i]`, or
    ends with `.names[i]` (`read_all` matches `PostgresEventStore.read_all`)."""
    total = 0
    counts: collections.Counter[str] = collections.Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        funcs = {f.split(" (", 1)[0] for f in stack.split(";")}
        for name in names:
            if any(f == name or f.endswith("." + name) for f in funcs):
                counts[name] += n
    return [(name, counts[name] / max(total, 1)) for name in names]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profiles", nargs="+", type=Path)
    ap.add_argument("--functions", type=lambda v: v.split(","), default=[],
                    help="comma-separated function names: each one's inclusive share")
    args = ap.parse_args()
    for path in args.profiles:
        total, inclusive, leaves = summary(path)
        print(f"== {path}: {total} samples")
        print("  on the stack:", ", ".join(f"{k} {100 * v:.0f}%" for k, v in inclusive))
        print("  top-5 leaves:", "; ".join(f"{k} {100 * v:.0f}%" for k, v in leaves))
        if args.functions:
            print("  functions:", ", ".join(f"{k} {100 * v:.0f}%" for k, v in functions(path, args.functions)))


if __name__ == "__main__":
    main()
