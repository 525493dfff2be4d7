"""`sextant demo`: the whole platform end to end on one machine (what `make demo` runs).

1. start real PostgreSQL and Kafka (`sextant_infra`), migrate the event store, create the topics;
2. start the six services, the relay and the cluster agent (the twin as executor) as processes and
   wait until each answers `/readyz`;
3. submit a twin scenario's workloads through `POST /v1/workloads` at their (scaled) arrival
   times, with a progress bar, and wait until every workload has ended or the deadline passes;
4. print the QoS table and its comparison with the twin's least-loaded baseline on the same
   workloads (`baseline.py`), write an HTML report with plots (`<out>/report.html`);
5. run `sextant replay` over the PostgreSQL log — its last line reads
   `replay: N decisions re-derived, 0 differences`;
6. stop everything (also on Ctrl-C or failure). With `--keep` the platform stays up after the
   report (the console's URL printed again) until Ctrl-C or SIGTERM; then the replay runs and
   everything stops.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sextant_kit.settings import KitSettings

from . import baseline
from .platform import Platform

console = Console()
DEFAULT_PROFILE = KitSettings.model_fields["policy_profile"].default
TERMINAL = {"completed", "failed", "revoked"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="run the platform end to end on a twin scenario")
    p.add_argument("--scenario", default="smoke", help="twin scenario (default: smoke)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--speed", type=float, default=60.0, help="virtual seconds per wall second")
    p.add_argument("--limit", type=int, default=0, help="submit at most this many workloads (0: all)")
    p.add_argument("--out", default="out/demo", help="report folder")
    p.add_argument("--deadline", type=float, default=600.0, help="wall seconds to wait for the workloads")
    p.add_argument("--record", metavar="FILE.jsonl.gz",
                   help="also write the platform's event log there (gzipped JSON lines of envelopes)")
    p.add_argument("--keep", action="store_true",
                   help="leave the platform up after the run (the console stays open) until Ctrl-C")
    p.add_argument("--profile", default=DEFAULT_PROFILE,
                   help=f"policy profile of the services (default: {DEFAULT_PROFILE}, the flagship)")
    p.set_defaults(func=run)


def submissions(scenario: str, seed: int, limit: int) -> list[tuple[float, dict[str, Any]]]:
    from sextant_sim.scenarios import load_scenario
    from sextant_sim.setup import prepare

    setup = prepare(load_scenario(scenario), seed)
    subs = list(setup.subs)[: limit or None]
    out = []
    for s in subs:
        e = s.event
        body = {"tenant": e.tenant, "name": e.name or s.workload_id, "kind": e.kind.value,
                "target": e.target.model_dump(mode="json"), "spec": {"type": "twin", "ref": s.workload_id},
                "priority": e.priority, "best_effort": e.best_effort,
                "requested_cores": e.requested_cores, "requested_memory_gb": e.requested_memory_gb}
        out.append((s.at, body))
    return out


def run(args: argparse.Namespace) -> int:
    from sextant_infra.stack import start_stack

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_dir = (out / "run").resolve()
    console.print(f"[bold]sextant demo[/] profile={args.profile} scenario={args.scenario} seed={args.seed} "
                  f"speed={args.speed}×")
    t0 = time.monotonic()
    stack = start_stack(run_dir, die_with_parent=True)
    platform: Platform | None = None
    try:
        console.print(f"  infrastructure up in {time.monotonic() - t0:.1f}s "
                      f"(PostgreSQL {stack.env['SEXTANT_DATABASE_URL'].rsplit('@', 1)[-1]}, "
                      f"Kafka {stack.env['SEXTANT_KAFKA_BOOTSTRAP']})")
        from sextant_kit.migrations import migrate_async

        asyncio.run(migrate_async(stack.env["SEXTANT_DATABASE_URL"]))
        env = {**stack.env, "SEXTANT_POLICY_PROFILE": args.profile, "SEXTANT_AGENT_SCENARIO": args.scenario,
               "SEXTANT_AGENT_SEED": str(args.seed), "SEXTANT_AGENT_SPEED": str(args.speed),
               "SEXTANT_TICK_PERIOD_S": "1.0"}
        platform = Platform(run_dir, env)
        platform.start_all()
        platform.wait_ready()
        console.print(f"  {len(platform.procs)} processes ready after {time.monotonic() - t0:.1f}s")
        console.print(f"  console: {platform.url('admission')}/console/ (while the demo runs; open mode: "
                      "sign in with an empty token)")
        views = drive(platform, submissions(args.scenario, args.seed, args.limit), args.speed, args.deadline)
        print_table(views)
        rows = compare_with_twin(views, args)
        from .report import write_report

        report = write_report(views, out, comparison=(args.profile, rows))
        console.print(f"  report: {report}")
        if args.keep:
            keep_up(platform)
        platform.stop()
        platform = None
        from .replay import read_log, replay_database

        if args.record:
            n = write_log(asyncio.run(read_log(stack.env["SEXTANT_DATABASE_URL"])), Path(args.record))
            console.print(f"  recorded {n} events in {args.record}")

        code = replay_database(stack.env["SEXTANT_DATABASE_URL"], profile_override=None, console=console)
        console.print(f"demo finished in {time.monotonic() - t0:.0f}s")
        return code
    finally:
        if platform is not None:
            platform.stop()
        stack.stop()


def keep_up(platform: Platform) -> None:
    """Block with the platform up until Ctrl-C or SIGTERM (`--keep`), saying how to stop it."""
    import os
    import signal

    console.print(f"  [bold]the platform stays up[/]: console {platform.url('admission')}/console/, "
                  f"API {platform.url('admission')}/v1/")
    console.print(f"  stop it with Ctrl-C (or `kill {os.getpid()}`); the replay then runs and everything stops")
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while all(p.popen.poll() is None for p in platform.procs.values()):
            time.sleep(1.0)
        console.print("[yellow]a process of the platform exited; stopping[/]")
    except KeyboardInterrupt:
        console.print("  stopping the platform")
    finally:
        signal.signal(signal.SIGTERM, previous)


def drive(platform: Platform, subs: list[tuple[float, dict[str, Any]]], speed: float,
          deadline_s: float) -> list[dict[str, Any]]:
    base = platform.url("admission")
    ids: list[str] = []
    start = time.monotonic()
    with httpx.Client(base_url=base, timeout=10.0) as client, Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=console) as bar:
        sub_task = bar.add_task("submitted", total=len(subs))
        done_task = bar.add_task("ended    ", total=len(subs))
        pending = list(subs)
        last_poll = 0.0
        while True:
            now = time.monotonic() - start
            while pending and pending[0][0] / speed <= now:
                _, body = pending.pop(0)
                r = client.post("/v1/workloads", json=body)
                r.raise_for_status()
                ids.append(r.json()["id"])
                bar.advance(sub_task)
            if now - last_poll > 1.0 and ids:
                last_poll = now
                items = list_all(client)
                ended = sum(1 for v in items if v["state"] in TERMINAL)
                bar.update(done_task, completed=ended)
                if not pending and ended >= len(subs):
                    break
            if now > deadline_s and not pending:
                console.print(f"[yellow]deadline of {deadline_s:.0f}s reached; reporting what ended[/]")
                break
            time.sleep(0.05)
        return [v for v in list_all(client) if v["id"] in set(ids)]


def write_log(log: list[Any], path: Path) -> int:
    """Write envelopes as gzipped JSON lines (`Envelope.model_dump`, keys sorted): a recorded
    platform log, read back with `read_recorded`."""
    import gzip
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for env in log:
            f.write(json.dumps(env.model_dump(mode="json"), sort_keys=True, separators=(",", ":")) + "\n")
    return len(log)


def read_recorded(path: Path) -> list[Any]:
    """The envelopes `write_log` wrote, in order."""
    import gzip
    import json

    from sextant_contracts.envelope import Envelope

    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [Envelope.model_validate(json.loads(line)) for line in f if line.strip()]


def compare_with_twin(views: list[dict[str, Any]], args: argparse.Namespace) -> list[tuple[str, ...]]:
    """Print (and return the rows of) the platform's QoS beside the twin's least-loaded baseline
    on the same workloads."""
    from rich.table import Table

    twin = baseline.twin_baseline(args.scenario, args.seed, args.limit)
    rows = baseline.comparison_rows(baseline.from_views(views), twin)
    t = Table(title=f"QoS met (last verdict): platform ({args.profile}) vs the twin's {baseline.BASELINE}, "
                    "same workloads")
    for col in ("kind", "workloads", f"platform {args.profile}", f"twin {baseline.BASELINE}",
                "platform mean ratio", "twin mean ratio"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(*r)
    console.print(t)
    return rows


def list_all(client: httpx.Client) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000}
        if after:
            params["after"] = after
        page = client.get("/v1/workloads", params=params).json()
        items.extend(page["items"])
        after = page.get("next")
        if not after:
            return items


def print_table(views: list[dict[str, Any]]) -> None:
    from rich.table import Table

    t = Table(title="QoS by workload kind")
    for col in ("kind", "workloads", "completed", "failed", "with verdicts", "QoS met (last verdict)",
                "mean ratio to target"):
        t.add_column(col, justify="right")
    kinds = sorted({v["kind"] for v in views})
    for k in [*kinds, "all"]:
        vs = [v for v in views if k == "all" or v["kind"] == k]
        judged = [v for v in vs if v.get("qos")]
        met = sum(1 for v in judged if v["qos"]["met"])
        ratios = [v["qos"]["ratio_to_target"] for v in judged if v["qos"]["ratio_to_target"] is not None]
        t.add_row(k, str(len(vs)), str(sum(v["state"] == "completed" for v in vs)),
                  str(sum(v["state"] == "failed" for v in vs)), str(len(judged)),
                  f"{met / len(judged):.0%}" if judged else "-",
                  f"{sum(ratios) / len(ratios):.2f}" if ratios else "-")
    console.print(t)
