"""Event backbone benchmark: PostgreSQL event store, outbox relay, Kafka, consumer loop.

Measures, against a real PostgreSQL and a real Kafka:

- **append throughput** (events/s) at batch size 1 and 100, with 1 and 8 concurrent writers (each
  writer its own engine; positions are serialised by the log lock, see `eventstore/writer.py`);
- **tail-read throughput** (events/s): `tail()` over the whole log, 1 000 rows per read;
- **end-to-end latency** PostgreSQL → relay → Kafka → consumer: single-event appends at a fixed
  rate while a `Relay` and a `ConsumerLoop` run; "delivered" is append commit → the consumer's
  handler sees the event, "processed" is append commit → the consumer's own `append_and_track`
  committed. Appender (this process), relay (`relay_worker --forever`) and consumer
  (`echo_worker`) are three processes, as in the deployed system; times are wall-clock.

With `--floor` (instead of the three above): the platform's event traffic without its decisions —
a driver of submissions, the relay and 5 (or `--configs`) echo decider processes chained like the
deciders, 25 events per workload — and its client CPU per workload (`floor_run.py`,
docs/platform/floor.md).

Infrastructure: `SEXTANT_DATABASE_URL` + `SEXTANT_KAFKA_BOOTSTRAP` when set (a scratch database
is created next to the given one and dropped afterwards), else a private stack started with
`sextant_infra.stack.start_stack` and stopped at the end.

    .venv/bin/python bench/eventstore.py [--quick] [--json PATH]
    .venv/bin/python bench/eventstore.py --floor [--configs 5@50,3@50,1@50] [--seconds 30] [--seeds 6]
        [--pyspy DIR] --json bench/results/eventstore-floor.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg
from proc_cpu import cpu_seconds
from sextant_contracts.topics import Topic
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.kafka.admin import ensure_topics
from sextant_kit.migrations import migrate_async
from sextant_kit.testing.envelopes import make_envelope


def quantile(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


async def append_throughput(url: str, batch: int, writers: int, total: int) -> float:
    stores = [PostgresEventStore.from_url(url, topic_of=lambda s: None, pool_size=2) for _ in range(writers)]
    per = total // writers
    tag = uuid.uuid4().hex[:6]

    async def write(w: int, store: PostgresEventStore) -> None:
        for k in range(0, per, batch):
            stream = f"workload-b{tag}-{w}-{k // batch % 50}"
            envs = [make_envelope(stream, 0, k + i, id=f"{tag}-{w}-{k + i}") for i in range(min(batch, per - k))]
            await store.append(stream, None, envs)

    for s in stores:  # open the pools before timing
        await s.last_position()
    t0 = time.perf_counter()
    await asyncio.gather(*(write(w, s) for w, s in enumerate(stores)))
    elapsed = time.perf_counter() - t0
    for s in stores:
        await s.close()
    return per * writers / elapsed


async def tail_throughput(url: str) -> tuple[float, int]:
    store = PostgresEventStore.from_url(url, topic_of=lambda s: None)
    last = await store.last_position()
    n = 0
    t0 = time.perf_counter()
    async for env in store.tail(0, batch=1000):
        n += 1
        if env.position == last:
            break
    elapsed = time.perf_counter() - t0
    await store.close()
    return n / elapsed, n


async def _spawn(module: str, *args: str, ready: str) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", module, *args,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert proc.stdout is not None
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode()
        if not line:
            raise RuntimeError(f"{module} exited before it was ready")
        if ready in line:
            return proc


def _read_echoes(path: Path) -> dict[str, dict[str, float]]:
    if not path.exists():
        return {}
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines()) if r.get("delivered")}


async def latency(url: str, bootstrap: str, topic: str, events: int, rate: float) -> dict[str, float]:
    """Appender (this process), relay and consumer (one process each), wall-clock timestamps."""
    out = Path(tempfile.mkdtemp(prefix="sextant-bench-")) / "echo.jsonl"
    store = PostgresEventStore.from_url(url, topic_of=lambda s: topic, poll_interval=1.0)
    relay = await _spawn("sextant_kit.testing.relay_worker", "--db", url, "--bootstrap", bootstrap,
                         "--topic", topic, "--forever", ready="running")
    consumer = await _spawn("sextant_kit.testing.echo_worker", "--db", url, "--bootstrap", bootstrap,
                            "--topic", topic, "--group", f"bench-{uuid.uuid4().hex[:6]}", "--out", str(out),
                            "--dlq-topic", topic, ready="ready")
    try:
        tag = uuid.uuid4().hex[:6]
        # warm up: the group join and first metadata fetches are not part of the steady state
        await store.append("workload-warm", None, [make_envelope("workload-warm", 0, 0, id=f"warm-{tag}")])
        for _ in range(1200):
            if f"warm-{tag}" in _read_echoes(out):
                break
            await asyncio.sleep(0.05)
        committed: dict[str, float] = {}
        hop = {"relay": relay.pid, "consumer": consumer.pid}
        cpu0 = cpu_seconds(hop)
        t_next = time.perf_counter()
        for i in range(events):
            t_next += 1.0 / rate
            eid = f"lat-{tag}-{i}"
            stream = f"workload-lat-{i % 20}"
            await store.append(stream, None, [make_envelope(stream, 0, i, id=eid)])
            committed[eid] = time.time()
            await asyncio.sleep(max(0.0, t_next - time.perf_counter()))
        for _ in range(1200):
            echoes = _read_echoes(out)
            if all(k in echoes for k in committed):
                break
            await asyncio.sleep(0.05)
        cpu1 = cpu_seconds(hop)
    finally:
        for proc in (relay, consumer):
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()
        await store.close()
    d = [(echoes[k]["delivered"] - t) * 1000 for k, t in committed.items() if k in echoes]
    p = [(echoes[k]["processed"] - t) * 1000 for k, t in committed.items() if k in echoes]
    return {"events": events, "rate_per_s": rate, "received": len(p),
            "delivered_p50_ms": quantile(d, 0.5), "delivered_p99_ms": quantile(d, 0.99),
            "processed_p50_ms": quantile(p, 0.5), "processed_p99_ms": quantile(p, 0.99),
            "processed_mean_ms": statistics.fmean(p),
            # the floor of one platform hop without a decision: the relay publishing one event and a
            # consumer tracking it and appending one output (its own durability barrier), client CPU
            "cpu_ms_per_event": {n: round(1000 * (cpu1[n] - cpu0[n]) / max(len(p), 1), 3) for n in hop if n in cpu1},
            "load_avg": [round(x, 2) for x in os.getloadavg()]}


async def scratch_database(url: str) -> tuple[str, str]:
    """Create an empty database on the server of `url`; returns (its URL, admin DSN)."""
    from sqlalchemy.engine import make_url

    base = make_url(url)
    name = f"bench_eventstore_{uuid.uuid4().hex[:8]}"
    admin = base.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    conn = await asyncpg.connect(admin)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    return base.set(database=name).render_as_string(hide_password=False), admin


async def run(args: argparse.Namespace, db_url: str, bootstrap: str) -> dict[str, Any]:
    url, admin = await scratch_database(db_url)
    try:
        await migrate_async(url)
        q = args.quick
        results: dict[str, Any] = {"append": []}
        for batch, writers, total in ((1, 1, 1000 if q else 4000), (1, 8, 2000 if q else 8000),
                                      (100, 1, 10_000 if q else 50_000), (100, 8, 20_000 if q else 100_000)):
            eps = await append_throughput(url, batch, writers, total)
            results["append"].append({"batch": batch, "writers": writers, "events": total, "events_per_s": eps})
        eps, n = await tail_throughput(url)
        results["tail"] = {"events": n, "events_per_s": eps}
        topic = Topic(f"bench.eventstore.{uuid.uuid4().hex[:6]}", 3, "benchmark")
        await ensure_topics(bootstrap, [topic])
        results["latency"] = [await latency(url, bootstrap, topic.name, int(rate * (5 if q else 20)), rate)
                              for rate in args.rates]
        return results
    finally:
        conn = await asyncpg.connect(admin)
        await conn.execute(f'DROP DATABASE IF EXISTS "{make_name(url)}" WITH (FORCE)')
        await conn.close()


def make_name(url: str) -> str:
    from sqlalchemy.engine import make_url

    return str(make_url(url).database)


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = int(next(x for x in Path("/proc/meminfo").read_text().splitlines()
                          if x.startswith("MemTotal")).split()[1])
    except (OSError, StopIteration, ValueError):
        mem_kb = 0
    return {"cpu": model, "cores": os.cpu_count(), "ram_gib": round(mem_kb / 2**20, 1),
            "python": platform.python_version()}


def print_table(r: dict[str, Any]) -> None:
    print(f"{'measure':44s} {'value':>14s}")
    for a in r["append"]:
        print(f"{'append batch ' + str(a['batch']) + ', ' + str(a['writers']) + ' writer(s)':44s} "
              f"{a['events_per_s']:>10,.0f} ev/s")
    print(f"{'tail read (' + str(r['tail']['events']) + ' events)':44s} {r['tail']['events_per_s']:>10,.0f} ev/s")
    for lat in r["latency"]:
        head = f"PG→relay→Kafka→consumer @{lat['rate_per_s']:.0f}/s"
        print(f"{head + ' delivered p50/p99':44s} {lat['delivered_p50_ms']:>7.1f} / {lat['delivered_p99_ms']:.1f} ms")
        print(f"{head + ' processed p50/p99':44s} {lat['processed_p50_ms']:>7.1f} / {lat['processed_p99_ms']:.1f} ms")
        cpu = lat.get("cpu_ms_per_event") or {}
        print(f"{head + ' CPU/event relay + consumer':44s} {cpu.get('relay', 0):>7.2f} + {cpu.get('consumer', 0):.2f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller runs (CI smoke)")
    ap.add_argument("--rates", type=lambda v: [float(x) for x in v.split(",")], default=[10.0, 50.0, 100.0],
                    help="events/s of the latency runs (comma-separated)")
    ap.add_argument("--json", dest="json_path")
    ap.add_argument("--floor", action="store_true", help="the transport floor per workload (module doc)")
    ap.add_argument("--configs", default="5@50,3@50,1@50", help="--floor: HOPS@WORKLOADS_PER_S, comma-separated")
    ap.add_argument("--seconds", type=float, default=30.0, help="--floor: drive per configuration")
    ap.add_argument("--seeds", default="6", help="--floor: repetition ids (nothing is random), e.g. 6-10")
    ap.add_argument("--events", type=int, default=25, help="--floor: logged events per workload")
    ap.add_argument("--pyspy", type=Path, help="--floor: py-spy of the first configuration into DIR")
    ap.add_argument("--variant", default="", choices=("", "gc-freeze"),
                    help="--floor: gc-freeze = the hops call gc.freeze() before serving (not the platform's code)")
    ap.add_argument("--update", action="store_true",
                    help="--floor: keep the --json file's other configurations and repetitions")
    args = ap.parse_args()
    if args.floor:
        return floor(args)
    db_url, bootstrap = os.environ.get("SEXTANT_DATABASE_URL"), os.environ.get("SEXTANT_KAFKA_BOOTSTRAP")
    stack = None
    if not (db_url and bootstrap):
        from sextant_infra.stack import start_stack

        stack = start_stack(Path(tempfile.mkdtemp(prefix="sextant-bench-")), topics=[], die_with_parent=True)
        db_url, bootstrap = stack.env["SEXTANT_DATABASE_URL"], stack.env["SEXTANT_KAFKA_BOOTSTRAP"]
    load_start = os.getloadavg()
    try:
        results = asyncio.run(run(args, db_url, bootstrap))
    finally:
        if stack is not None:
            stack.stop()
    results["machine"] = {**machine(), "loadavg_1m_start": round(load_start[0], 2),
                          "loadavg_1m_end": round(os.getloadavg()[0], 2)}
    results["quick"] = args.quick
    print_table(results)
    m = results["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB; 1-min load "
          f"{m['loadavg_1m_start']} → {m['loadavg_1m_end']} (other processes share the cores)")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(results, f, indent=2, sort_keys=True)
    return 0


def floor(args: argparse.Namespace) -> int:
    """`--floor`: `floor_run.run_floor` on a private stack with the platform's topics."""
    import floor_run
    from quality import seeds_of

    previous = json.loads(Path(args.json_path).read_text()) if args.update and args.json_path else None
    db_url, bootstrap = os.environ.get("SEXTANT_DATABASE_URL"), os.environ.get("SEXTANT_KAFKA_BOOTSTRAP")
    stack, infra = None, {}
    if not (db_url and bootstrap):
        from sextant_infra.stack import start_stack

        stack = start_stack(Path(tempfile.mkdtemp(prefix="sextant-bench-")), die_with_parent=True)
        db_url, bootstrap = stack.env["SEXTANT_DATABASE_URL"], stack.env["SEXTANT_KAFKA_BOOTSTRAP"]
        infra = {"postgres": stack.postgres.pid, "kafka": stack.kafka.pid}
    try:
        results = floor_run.run_floor(db_url, bootstrap, infra, configs=floor_run.parse_configs(args.configs),
                                      seeds=seeds_of(args.seeds), seconds=5.0 if args.quick else args.seconds,
                                      events=args.events, pyspy=args.pyspy, previous=previous,
                                      variant=args.variant)
    finally:
        if stack is not None:
            stack.stop()
    results = {"machine": machine(), "quick": args.quick, **results}
    print(json.dumps(results["worst"], indent=1))
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
