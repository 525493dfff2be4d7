"""bench/observability.py — what the platform's traces and logs cost (docs/platform.md, Observability).

Starts a private stack (PostgreSQL + Kafka) and the platform's eight processes with trace export
to JSON-lines files, submits the first `--workloads` submissions of `platform-demo` (seed 1) over
REST, waits until they ended, optionally stops Kafka for `--kafka-outage` seconds in the middle,
and reports:

- **spans per workload**: spans in the trace of each workload's `POST /v1/workloads` (mean, max),
  and the spans in no workload's trace (root spans of polling, health probes, ticks);
- **span file size** in bytes;
- **log lines** by level over all the processes' logs, and the ERROR and WARNING lines written
  between the outage's start and 10 s after its end.

    python bench/observability.py --workloads 20 --kafka-outage 30 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

PROCESSES = ("admission", "profiling", "classification", "planning", "reprovisioning", "telemetry",
             "relay", "agent")
TERMINAL = {"completed", "failed", "cancelled", "rejected"}
LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) (\S+) (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")


def log_lines(logs: Path) -> list[tuple[float, str, str, str]]:
    """(unix time, process, level, line) of every formatted log line of every process."""
    out = []
    for path in sorted(logs.glob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            m = LINE.match(line)
            if m:
                t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + int(m.group(2)) / 1000
                out.append((t, path.stem, m.group(4), line))
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sextant_cli.demo import submissions
    from sextant_cli.platform import Platform
    from sextant_infra.stack import start_stack
    from sextant_kit.migrations import migrate_async
    from sextant_kit.telemetry import read_spans

    run_dir = Path(tempfile.mkdtemp(prefix="sextant-obs-"))
    stack = start_stack(run_dir, die_with_parent=True)
    platform = Platform(run_dir, {})
    outage: tuple[float, float] | None = None
    try:
        asyncio.run(migrate_async(stack.env["SEXTANT_DATABASE_URL"]))
        platform.env = {**stack.env, "SEXTANT_AGENT_SCENARIO": "platform-demo", "SEXTANT_AGENT_SEED": "1",
                        "SEXTANT_AGENT_SPEED": str(args.speed), "SEXTANT_TICK_PERIOD_S": "1.0",
                        "SEXTANT_OTEL_EXPORTER": "jsonl", "SEXTANT_RUN_DIR": str(run_dir)}
        spans_of = {n: run_dir / "traces" / f"{n}.jsonl" for n in PROCESSES}
        extra = {n: {"SEXTANT_OTEL_FILE": str(p)} for n, p in spans_of.items()} if args.explicit_files else {}
        platform.start_all(PROCESSES, extra)
        platform.wait_ready(timeout_s=180)
        subs = submissions("platform-demo", 1, args.workloads)
        ids: list[str] = []
        t0 = time.monotonic()
        with httpx.Client(base_url=platform.url("admission"), timeout=10.0) as client:
            for i, (at, body) in enumerate(subs):
                if args.kafka_outage and i == len(subs) // 2:
                    stopped = time.time()
                    stack.kafka.stop()
                    time.sleep(args.kafka_outage)
                    stack.kafka.start()
                    outage = (stopped, time.time())
                delay = at / args.speed - (time.monotonic() - t0)
                if delay > 0:
                    time.sleep(delay)
                r = client.post("/v1/workloads", json=body)
                r.raise_for_status()
                ids.append(r.json()["id"])
            deadline = time.monotonic() + args.deadline
            ended = 0
            while time.monotonic() < deadline:
                items = client.get("/v1/workloads", params={"limit": 1000}).json()["items"]
                ended = sum(1 for v in items if v["id"] in set(ids) and v["state"] in TERMINAL)
                if ended == len(ids):
                    break
                time.sleep(2.0)
        wall = time.monotonic() - t0
        platform.stop()
        spans = [s for p in (run_dir / "traces").glob("*.jsonl") for s in read_spans(p)]
        size = sum(p.stat().st_size for p in (run_dir / "traces").glob("*.jsonl"))
        posts = {s["trace_id"] for s in spans if s["kind"] == "SERVER" and s["name"] == "POST /v1/workloads"}
        by_trace = collections.Counter(s["trace_id"] for s in spans)
        per_workload = [by_trace[t] for t in posts]
        outside = [s for s in spans if s["trace_id"] not in posts]
        outside_kinds = collections.Counter(f"{s['service']}:{s['kind']}:{s['name'][:40]}" for s in outside)
        in_kinds = collections.Counter(f"{s['service']}:{s['kind']}:{s['name'][:40]}"
                                       for s in spans if s["trace_id"] in posts)
        lines = log_lines(run_dir / "logs")
        levels = collections.Counter(level for _, _, level, _ in lines)
        result: dict[str, Any] = {
            "workloads": len(ids), "ended": ended, "wall_s": round(wall, 1),
            "spans": len(spans), "span_bytes": size,
            "spans_per_workload_mean": round(statistics.mean(per_workload), 1) if per_workload else None,
            "spans_per_workload_max": max(per_workload, default=None),
            "spans_outside_workload_traces": len(outside),
            "top_outside": outside_kinds.most_common(8),
            "top_inside_per_workload": [(k, round(v / max(1, len(posts)), 1)) for k, v in in_kinds.most_common(12)],
            "log_lines_by_level": dict(levels),
        }
        if outage is not None:
            lo, hi = outage
            window = [(p, lvl, ln) for t, p, lvl, ln in lines if lo <= t <= hi + 10]
            result["kafka_outage_s"] = round(hi - lo, 1)
            result["outage_error_lines"] = sum(1 for _, lvl, _ in window if lvl == "ERROR")
            result["outage_warning_lines"] = sum(1 for _, lvl, _ in window if lvl == "WARNING")
            result["outage_lines_by_process"] = dict(collections.Counter(p for p, _, _ in window))
            result["outage_sample_lines"] = [ln[:200] for _, lvl, ln in window if lvl in ("ERROR", "WARNING")][:6]
        result["run_dir"] = str(run_dir)
        return result
    finally:
        platform.stop()
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", type=int, default=20)
    ap.add_argument("--speed", type=float, default=60.0)
    ap.add_argument("--kafka-outage", type=float, default=0.0, help="seconds Kafka is stopped (0: none)")
    ap.add_argument("--deadline", type=float, default=300.0)
    ap.add_argument("--explicit-files", action="store_true",
                    help="pass SEXTANT_OTEL_FILE per process (needed before the exporter had a default file)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    result = run(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
