"""`make bench`: run every benchmark in quick mode, JSON results under bench/results/.

Each benchmark is its own script (`bench/<name>.py --json PATH [--quick]`) that prints a table;
this runner only sequences them and reports which failed. Long quality runs are resumable and
cached by the benchmarks themselves; pass `--full` to run them without `--quick`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ("eventstore", "placement", "decision_speed", "classification", "sim", "e2e", "quality", "adaptation", "console")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="run without --quick")
    ap.add_argument("only", nargs="*", help="benchmark names (default: all present)")
    args = ap.parse_args()
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    names = args.only or [n for n in ORDER if (HERE / f"{n}.py").exists()]
    failed = []
    for name in names:
        cmd = [sys.executable, str(HERE / f"{name}.py"), "--json", str(out / f"{name}.json")]
        if not args.full:
            cmd.append("--quick")
        print(f"\n=== bench/{name}.py {' '.join(cmd[2:])}", flush=True)
        t0 = time.monotonic()
        rc = subprocess.call(cmd)
        print(f"=== {name}: exit {rc} in {time.monotonic() - t0:.0f}s", flush=True)
        if rc:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
