"""`bench/eventstore.py --floor`: the transport floor per workload (docs/platform/floor.md).

For each configuration `HOPS@RATE` and repetition (`--seeds`), on a fresh database of the bench's
PostgreSQL and its Kafka: the production relay, `HOPS` echo decider processes and the driver
(`floor_chain.py`), each its own process as in the deployed platform, with the platform's 25
events per workload. After a warm-up (5 workloads through the whole chain), the driver submits
`RATE × seconds` workloads; the window runs from the first submission until the last workload's
last event is in the log. Reported per workload: client CPU (driver, relay, each hop; `proc_cpu`),
PostgreSQL's and Kafka's apart, committed appends by consumer, PostgreSQL transactions; the chain's
latency — submission → the last hop's decision, and → the placement (`PlacementDecided`, the
e2e bench's end point) — from the times the writers stamped on the envelopes; the 1-minute load
before the drive and at its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from e2e import appends_by_consumer, code_version, pct, pg_transactions, pyspy_start
from floor_chain import Hop, chain
from proc_cpu import cpu_seconds
from sextant_contracts.topics import ALL_TOPICS
from sextant_infra.processes import free_port, spawn
from sextant_kit.runtime import EVENT_TOPICS

HERE = Path(__file__).resolve().parent
INFRA = ("postgres", "kafka")
WARMUP = 5


def parse_configs(text: str) -> list[tuple[int, float]]:
    """`"5@50,1@50"` → [(5, 50.0), (1, 50.0)]: hops @ workloads per second."""
    out = []
    for part in text.split(","):
        hops, _, rate = part.partition("@")
        out.append((int(hops), float(rate)))
    return out


async def start_at_end(bootstrap: str, groups: list[str]) -> None:
    """Commit each new consumer group's offsets at the end of every event topic, so the hops of a
    configuration never see an earlier configuration's records (one broker for the whole run)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    for group in groups:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        await consumer.start()
        try:
            parts = [TopicPartition(t.name, p) for t in ALL_TOPICS if t.name in EVENT_TOPICS for p in range(t.partitions)]
            consumer.assign(parts)
            ends = await consumer.end_offsets(parts)
            await consumer.commit(ends)
        finally:
            await consumer.stop()


async def count_done(url: str, tag: str, last_type: str) -> int:
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        return int(await conn.fetchval("SELECT count(*) FROM events WHERE type = $1 AND stream LIKE $2",
                                       last_type, f"workload-{tag}-%"))
    finally:
        await conn.close()


async def wait_done(url: str, tag: str, last_type: str, n: int, cap_s: float) -> bool:
    start = time.monotonic()
    while time.monotonic() - start < cap_s:
        if await count_done(url, tag, last_type) >= n:
            return True
        await asyncio.sleep(0.25)
    return False


async def chain_latency(url: str, tag: str, hops: list[Hop]) -> dict[str, Any]:
    """p50/p99 ms of submission → the last event (the last hop's decision time) and →
    PlacementDecided; p50 ms of each hop (its decision time − the previous one's)."""
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        rows = await conn.fetch("SELECT stream, type, time FROM events WHERE stream LIKE $1", f"workload-{tag}-%")
    finally:
        await conn.close()
    marks = ["WorkloadSubmitted", *(h.outputs[0] for h in hops)]  # the first event each writer stamps
    at: dict[str, dict[str, float]] = {}
    for r in rows:
        at.setdefault(r["stream"], {}).setdefault(r["type"], r["time"])
    done = [t for t in at.values() if all(m in t for m in marks)]
    end = [1000 * (t[marks[-1]] - t[marks[0]]) for t in done]
    place = [1000 * (t["PlacementDecided"] - t[marks[0]]) for t in done]
    return {"events_per_workload": round(len(rows) / max(len(at), 1), 2),
            "chain_p50_ms": round(pct(end, 50), 1), "chain_p99_ms": round(pct(end, 99), 1),
            "placement_p50_ms": round(pct(place, 50), 1), "placement_p99_ms": round(pct(place, 99), 1),
            "hop_p50_ms": [round(pct([1000 * (t[b] - t[a]) for t in done], 50), 1)
                           for a, b in zip(marks, marks[1:], strict=False)]}


def wait_ready(ports: dict[str, int], procs: dict[str, subprocess.Popen[bytes]], logs: Path,
               timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    pending = dict(ports)
    with httpx.Client(timeout=2.0) as client:
        while pending:
            for name, port in list(pending.items()):
                if procs[name].poll() is not None:
                    raise RuntimeError(f"{name} exited: {(logs / f'{name}.log').read_text()[-2000:]}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                        del pending[name]
            if time.monotonic() > deadline:
                raise RuntimeError(f"not ready: {sorted(pending)}")
            time.sleep(0.5)


def stop_all(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.terminate()
    for p in procs.values():
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def measure(url: str, bootstrap: str, infra: dict[str, int], hops: int, rate: float, seconds: float,
            events: int, pyspy: Path | None, variant: str = "") -> dict[str, Any]:
    """One configuration on the empty database `url` (module doc). `variant` "gc-freeze": the hops
    call `gc.freeze()` before serving (not the platform's behaviour: what it would save)."""
    tag = uuid.uuid4().hex[:6]
    run_dir = Path(tempfile.mkdtemp(prefix="sextant-bench-floor-"))
    logs = run_dir / "logs"
    names = [f"echo{k + 1}" for k in range(hops)]
    base_env = {**os.environ, "SEXTANT_DATABASE_URL": url, "SEXTANT_KAFKA_BOOTSTRAP": bootstrap,
                "SEXTANT_RUN_DIR": str(run_dir), "SEXTANT_HTTP_HOST": "127.0.0.1",
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    groups = [f"floor-{tag}-{n}" for n in names]
    asyncio.run(start_at_end(bootstrap, groups))
    procs: dict[str, subprocess.Popen[bytes]] = {}
    ports: dict[str, int] = {}
    try:
        ports["relay"] = free_port()
        procs["relay"] = spawn([sys.executable, "-m", "sextant_kit.relay_process"], log_path=logs / "relay.log",
                               env={**base_env, "SEXTANT_SERVICE_NAME": "relay",
                                    "SEXTANT_HTTP_PORT": str(ports["relay"])}, die_with_parent=True)
        for k, (name, group) in enumerate(zip(names, groups, strict=True)):
            ports[name] = free_port()
            procs[name] = spawn([sys.executable, str(HERE / "floor_chain.py"), "hop", "--index", str(k),
                                 "--hops", str(hops), "--events", str(events),
                                 *(["--gc-freeze"] if variant == "gc-freeze" else [])], log_path=logs / f"{name}.log",
                                env={**base_env, "SEXTANT_SERVICE_NAME": group, "SEXTANT_HTTP_PORT": str(ports[name])},
                                die_with_parent=True)
        wait_ready(ports, procs, logs)
        driver = subprocess.Popen([sys.executable, str(HERE / "floor_chain.py"), "driver", "--db", url],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=base_env)
        procs["driver"] = driver  # type: ignore[assignment]
        assert driver.stdin is not None and driver.stdout is not None
        if driver.stdout.readline().strip() != "ready":
            raise RuntimeError("driver did not start")
        last_type = chain(hops, events)[-1].outputs[-1]

        def go(n: int, r: float, t: str) -> dict[str, Any]:
            assert driver.stdin is not None and driver.stdout is not None
            driver.stdin.write(f"{n} {r} {t}\n")
            driver.stdin.flush()
            return dict(json.loads(driver.stdout.readline()))

        go(WARMUP, 5.0, f"warm{tag}")
        if not asyncio.run(wait_done(url, f"warm{tag}", last_type, WARMUP, 180.0)):
            raise RuntimeError(f"warm-up did not go through the chain; logs in {logs}")
        pids = {n: p.pid for n, p in procs.items()} | {n: p for n, p in infra.items() if p}
        n = int(rate * seconds)
        xacts0 = asyncio.run(pg_transactions(url))
        appends0 = asyncio.run(appends_by_consumer(url))
        load_before = os.getloadavg()
        cpu0, t0 = cpu_seconds(pids), time.monotonic()
        spies = pyspy_start({k: v for k, v in pids.items() if k not in INFRA}, pyspy, min(20.0, seconds)) if pyspy else []
        sent = go(n, rate, tag)
        load_during = os.getloadavg()
        drained = asyncio.run(wait_done(url, tag, last_type, n, 180.0))
        cpu1, window = cpu_seconds(pids), time.monotonic() - t0
        for spy in spies:
            spy.wait()
        appends1 = asyncio.run(appends_by_consumer(url))
        stop_all(procs)
        time.sleep(1.0)  # the backends flush their statistics when they exit
        xacts = asyncio.run(pg_transactions(url)) - xacts0
        lat = asyncio.run(chain_latency(url, tag, chain(hops, events)))
    finally:
        stop_all(procs)
    by = {k: round(1000 * (cpu1[k] - cpu0[k]) / n, 2) for k in cpu1 if k in cpu0}
    client = {k: v for k, v in by.items() if k not in INFRA}
    hops_ms = sum(v for k, v in client.items() if k.startswith("echo"))
    return {"hops": hops, "rate_per_s": rate, "variant": variant, "workloads": n, "seconds": seconds, "drive_s": sent["seconds"],
            "window_s": round(window, 1), "drained": drained,
            "cpu_ms_per_workload": round(sum(client.values()), 2),
            "cpu_ms_by_process": by,
            "cpu_ms_per_workload_hops": round(hops_ms, 2),
            "cpu_ms_per_hop": round(hops_ms / hops, 2),
            "pg_transactions_per_workload": round(xacts / n, 1),
            "appends_per_workload_by_consumer": {k.removeprefix(f"floor-{tag}-"): round((v - appends0.get(k, 0)) / n, 2)
                                                 for k, v in sorted(appends1.items()) if v - appends0.get(k, 0)},
            **lat, "driver_late_p99_ms": sent["late_p99_ms"],
            "load_avg_before": [round(x, 2) for x in load_before],
            "load_avg_during": [round(x, 2) for x in load_during]}


def key(row: dict[str, Any]) -> str:
    """A configuration's name: `HOPS@RATE`, `+VARIANT` when it is one."""
    return f"{row['hops']}@{row['rate_per_s']:g}" + (f"+{row['variant']}" if row.get("variant") else "")


def slope(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of (hops, ms per workload)."""
    if len({h for h, _ in points}) < 2:
        return None
    mh = sum(h for h, _ in points) / len(points)
    mv = sum(v for _, v in points) / len(points)
    return round(sum((h - mh) * (v - mv) for h, v in points) / sum((h - mh) ** 2 for h, _ in points), 2)


async def fresh_database(url: str) -> tuple[str, str]:
    from eventstore import scratch_database
    from sextant_kit.migrations import migrate_async

    db, admin = await scratch_database(url)
    await migrate_async(db)
    return db, admin


async def drop_database(admin: str, url: str) -> None:
    from eventstore import make_name

    conn = await asyncpg.connect(admin)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{make_name(url)}" WITH (FORCE)')
    finally:
        await conn.close()


def run_floor(db_url: str, bootstrap: str, infra: dict[str, int], *, configs: list[tuple[int, float]],
              seeds: list[int], seconds: float, events: int, pyspy: Path | None,
              previous: dict[str, Any] | None = None, variant: str = "") -> dict[str, Any]:
    """Every configuration once per repetition (`seeds`: repetition ids; nothing is random). With
    `previous` (an earlier document of this bench), its rows are kept but for the configurations
    and repetitions run again, and the summary covers them all."""
    load_start = os.getloadavg()
    version = code_version()
    per_seed: dict[str, list[dict[str, Any]]] = {k: list(v) for k, v in (previous or {}).get("per_seed", {}).items()}
    for seed in seeds:
        for k, (hops, rate) in enumerate(configs):
            url, admin = asyncio.run(fresh_database(db_url))
            try:
                spy = pyspy / f"{hops}at{rate:g}-seed{seed}" if pyspy is not None and k == 0 and seed == seeds[0] else None
                row = measure(url, bootstrap, infra, hops, rate, seconds, events, spy, variant)
            finally:
                asyncio.run(drop_database(admin, url))
            rows = [r for r in per_seed.get(str(seed), []) if key(r) != key(row)]
            per_seed[str(seed)] = [*rows, {**row, "code_version": version}]
            print(f"seed {seed} {key(row)}: {row['cpu_ms_per_workload']} ms/workload client "
                  f"({row['cpu_ms_by_process']}), chain p50/p99 {row['chain_p50_ms']}/{row['chain_p99_ms']} ms, "
                  f"load {row['load_avg_before'][0]}", flush=True)
    return {"code_version": version, "twin_version": "none (no twin: real PostgreSQL and Kafka)",
            "events_per_workload": events, **summary(per_seed, events),
            "load_avg": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]}}


def summary(per_seed: dict[str, list[dict[str, Any]]], events: int) -> dict[str, Any]:
    """The chains run, the worst repetition of each configuration (most client CPU per workload),
    the least-squares CPU per added hop at each rate, and `per_seed` itself."""
    runs = [r for rows in per_seed.values() for r in rows]
    configs = sorted({(r["hops"], r["rate_per_s"]) for r in runs if not r.get("variant")}, key=lambda c: (c[1], -c[0]))
    worst: dict[str, dict[str, Any]] = {}
    for name in sorted({key(r) for r in runs}, key=lambda k: next(
            (r["rate_per_s"], -r["hops"], r.get("variant", "")) for r in runs if key(r) == k)):
        mine = [r for r in runs if key(r) == name]
        w = max(mine, key=lambda r: r["cpu_ms_per_workload"])
        worst[name] = {key: w[key] for key in (
            "cpu_ms_per_workload", "cpu_ms_per_workload_hops", "cpu_ms_per_hop", "chain_p50_ms",
            "chain_p99_ms", "placement_p99_ms")} | {
            "chain_p99_ms_worst": max(r["chain_p99_ms"] for r in mine), "repetitions": len(mine),
            "cpu_ms_by_process": w["cpu_ms_by_process"], "load_avg_before": w["load_avg_before"]}
    by_rate: dict[str, Any] = {}
    for rate in sorted({r for _, r in configs if sum(1 for _, q in configs if q == r) > 1}):
        pts = [(h, worst[f"{h}@{r:g}"]["cpu_ms_per_workload"]) for h, r in configs if r == rate]
        hop_pts = [(h, worst[f"{h}@{r:g}"]["cpu_ms_per_workload_hops"]) for h, r in configs if r == rate]
        by_rate[f"{rate:g}"] = {"client_ms_per_hop": slope(pts), "hops_ms_per_hop": slope(hop_pts)}
    return {"chain": {str(h): [{"hop": hop.name, "reacts_to": hop.trigger, "answers": len(hop.outputs)}
                               for hop in chain(h, events)] for h in sorted({h for h, _ in configs})},
            "worst": worst, "slope_by_rate": by_rate, "per_seed": per_seed}
