"""bench/recurring_platform.py — reservation submissions through the real platform: latency p99
(docs/recurring/platform-latency.md; Morpheus's "within 10 s").

**What is measured.** A reservation is submitted by its owner's sign-off of an inferred contract:
`POST /v1/contracts/{id}/accept` or `/override` (docs/recurring/platform.md). Its latency runs
from the moment the client sends that request (wall clock, taken just before the request) to the
recorded time of the planning decision it caused — `ReservationPlanned`, or `ReservationRefused`
when the terms cannot be reserved (a refusal is an answer, counted in `refused`). The decision is
the one whose `causation_id` is the `ContractSignedOff` envelope's id (the planning consumer's
output of that input). Both times are wall-clock Unix seconds on one machine. Reported apart:
`api_ms` (send → `ContractSignedOff` recorded: the API's catch-up and feasibility check) and
`pipeline_ms` (recorded → decided: relay, Kafka, planning). A sign-off the API refused (422: the
override cannot be reserved) writes nothing, so it is a refusal with no decision latency.

**How.** Per seed, the real platform on a fresh stack (`e2e.running_platform`: PostgreSQL, Kafka,
the services, relay, twin agent as processes). The bench stands in for the data catalogue the
platform does not have yet: it appends, per template, 6 daily `RecurringRunObserved` facts with
provenance (input written, output first read) to the event store — published through the outbox
like any fact — so profiling detects the template and infers contract v1. Templates are seeded:
tenant, phase in the day, skyline (5–15 one-minute steps of 1–4 containers), slack before the
read. Then the sign-offs, open loop at `--rate-per-h` (default 3 600 per hour: 12× the paper's
hundreds per hour, compressed so a seed takes minutes; the order is seeded), 80 % accept, 20 %
override with a deadline 10 minutes later. After a drain, the log is read and the latencies
extracted (`signoff_latencies`, pure).

    python bench/recurring_platform.py --json bench/results/recurring-platform.json [--quick] [--seeds 6-10]

JSON: `per_seed` ({seed: {count, refused, undecided, p50_ms, p95_ms, p99_ms, max_ms, api_ms,
pipeline_ms, load_avg_before, ...}}), `worst` (the highest p99 / max over seeds, most refused),
`code_version`, `load_avg` (at start), `machine`, the parameters.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform as pyplatform
import random
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is scripts, not a package
from e2e import code_version, drain, pct, running_platform  # noqa: E402  (one platform start-up, one percentile)
from quality import seeds_of  # noqa: E402  (the same seed syntax)

DAY_S = 86400.0
RUNS = 6  # detection needs 5 arrivals, the SLO 5 read instances
DECISIONS = ("ReservationPlanned", "ReservationRefused")
INFER_TYPES = ("RecurringTemplateDetected", "ContractInferred")
PLAN_TYPES = ("ContractSignedOff", *DECISIONS)
OVERRIDE_SHARE = 0.2


# --- the pure parts --------------------------------------------------------------------------------


def signoff_latencies(log: Sequence[Any], sent: Mapping[str, float]) -> list[dict[str, Any]]:
    """One row per sign-off of a template in `sent` (template id → the wall time its request was
    sent), in log order: `template_id`, `verdict`, `decision` (`ReservationPlanned`,
    `ReservationRefused`, or None when no planning decision was caused by it), `latency_ms`
    (decision time − sent), `api_ms` (sign-off recorded − sent), `pipeline_ms` (decision −
    recorded); the times are None without a decision. `log`: envelopes (`type`, `id`, `time`,
    `payload`, `causation_id`) in position order."""
    signoffs = [e for e in log if e.type == "ContractSignedOff" and e.payload["template_id"] in sent]
    caused: dict[str, Any] = {}
    for e in log:
        if e.type in DECISIONS and e.causation_id is not None:
            caused.setdefault(e.causation_id, e)
    rows = []
    for s in signoffs:
        tid = s.payload["template_id"]
        d = caused.get(s.id)
        t0 = sent[tid]
        rows.append({"template_id": tid, "verdict": s.payload["verdict"], "decision": d.type if d else None,
                     "latency_ms": round(1000 * (d.time - t0), 1) if d else None,
                     "api_ms": round(1000 * (s.time - t0), 1),
                     "pipeline_ms": round(1000 * (d.time - s.time), 1) if d else None})
    return rows


def summary(rows: Sequence[Mapping[str, Any]], sent: int, api_refused: int) -> dict[str, Any]:
    """The figures of one seed: `count` sign-offs decided, `refused` (planning's refusals plus the
    API's 422s), `undecided` (requests sent with no decision: not recorded or not planned),
    latency p50 / p95 / p99 / max (ms, nearest rank), and p50 / p99 of `api_ms` and `pipeline_ms`."""
    lat = [r["latency_ms"] for r in rows if r["latency_ms"] is not None]
    api = [r["api_ms"] for r in rows]
    pipe = [r["pipeline_ms"] for r in rows if r["pipeline_ms"] is not None]

    def r1(x: float) -> float | None:
        return None if x != x else round(x, 1)  # NaN (no values) → None
    return {"sent": sent, "count": len(lat),
            "refused": sum(1 for r in rows if r["decision"] == "ReservationRefused") + api_refused,
            "refused_by_api": api_refused, "undecided": sent - len(lat) - api_refused,
            "p50_ms": r1(pct(lat, 50)), "p95_ms": r1(pct(lat, 95)), "p99_ms": r1(pct(lat, 99)),
            "max_ms": max(lat) if lat else None,
            "api_ms": {"p50": r1(pct(api, 50)), "p99": r1(pct(api, 99))},
            "pipeline_ms": {"p50": r1(pct(pipe, 50)), "p99": r1(pct(pipe, 99))}}


def worst(per_seed: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Over seeds: the highest p50 / p95 / p99 / max, the most refused and undecided, the fewest decided."""
    def hi(k: str) -> Any:
        vals = [s[k] for s in per_seed.values() if s.get(k) is not None]
        return max(vals) if vals else None
    out = {k: hi(k) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms", "refused", "undecided")}
    out["count"] = min((s["count"] for s in per_seed.values()), default=0)
    return out


def letters(i: int) -> str:
    """A digit-free word per index (`gg`, `gh`, ...: letters g–z, so no name rule turns it into a
    placeholder and every template keeps its own name)."""
    alphabet = "ghijklmnopqrstuvwxyz"
    out = ""
    while True:
        out = alphabet[i % len(alphabet)] + out
        i //= len(alphabet)
        if i == 0:
            return "g" + out


def template_runs(seed: int, n: int, first_day: int) -> list[list[Any]]:
    """`n` seeded daily templates, each its `RUNS` finished runs (days `first_day` …) with provenance."""
    from sextant_contracts import recurring as rc
    from sextant_core.recurring.decisions import template_id

    rng = random.Random(seed)
    out = []
    for i in range(n):
        tenant = f"tenant-{letters(rng.randrange(5))}"
        base = f"etl-{letters(i)}"
        tid = template_id(tenant, f"{base}-0")
        steps = rng.randint(5, 15)
        skyline = tuple(float(rng.randint(1, 4)) for _ in range(steps))
        phase = 60.0 * rng.randrange(0, (int(DAY_S) - 4 * 3600) // 60)  # whole minutes; the read stays in the day
        slack = 60.0 * steps * rng.uniform(1.0, 3.0)
        runs = []
        for k in range(RUNS):
            t0 = (first_day + k) * DAY_S
            start = t0 + phase + 60.0
            end = start + 60.0 * steps
            runs.append(rc.RecurringRunObserved(
                at=end, template_id=tid, tenant=tenant, name=f"{base}-{first_day + k}", instance=f"{tid[:8]}-{k}",
                submit_s=start, start_s=start, end_s=end, input_available_s=t0 + phase + 30.0,
                first_read_s=end + slack, skyline=skyline, container_cores=1.0, container_memory_gb=4.0))
        out.append(runs)
    return out


# --- the platform --------------------------------------------------------------------------------


async def record_runs(url: str, templates: Sequence[Sequence[Any]]) -> None:
    """Append each template's runs to its stream (a new stream: expected version 0), as an edge would."""
    from sextant_contracts.envelope import Envelope
    from sextant_contracts.ids import derive_id
    from sextant_kit.eventstore.postgres import PostgresEventStore

    store = PostgresEventStore.from_url(url)
    try:
        for runs in templates:
            stream = runs[0].stream
            envs = [Envelope.wrap(r, id=derive_id("bench-run", r.template_id, r.instance), source="bench-catalogue",
                                  stream_version=v, time=time.time()) for v, r in enumerate(runs, 1)]
            await store.append(stream, 0, envs)
    finally:
        await store.close()


async def sign_offs(base: str, contracts: Sequence[tuple[str, float]], rate_per_s: float, seed: int
                    ) -> tuple[dict[str, float], int, int]:
    """Open loop: one sign-off per contract (template id, inferred deadline) at `rate_per_s`, seeded
    order and verdicts. Returns (template id → wall time sent, 202s, 422s)."""
    import httpx

    rng = random.Random(seed * 1000 + 1)
    todo = list(contracts)
    rng.shuffle(todo)
    sent: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=base, timeout=60.0, limits=httpx.Limits(max_connections=32)) as client:
        async def one(tid: str, deadline: float, override: bool) -> int:
            if override:
                body: dict[str, Any] = {"deadline_s": min(deadline + 600.0, DAY_S)}
                path = f"/v1/contracts/{tid}/override"
            else:
                body, path = {}, f"/v1/contracts/{tid}/accept"
            sent[tid] = time.time()
            try:
                return (await client.post(path, json=body)).status_code
            except httpx.HTTPError:
                return 0

        start = time.monotonic()
        tasks = []
        for i, (tid, deadline) in enumerate(todo):
            delay = start + i / rate_per_s - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(tid, deadline, rng.random() < OVERRIDE_SHARE)))
        codes = await asyncio.gather(*tasks)
    return sent, sum(1 for c in codes if c == 202), sum(1 for c in codes if c == 422)


def inferred(base: str) -> list[tuple[str, float]]:
    """(template id, inferred deadline) of every template whose contract awaits sign-off."""
    import httpx

    items = httpx.get(f"{base}/v1/contracts", params={"status": "inferred", "limit": 1000}, timeout=60.0).json()["items"]
    return [(c["template_id"], float(c["contract"]["deadline_s"])) for c in items]


def run_seed(seed: int, n: int, rate_per_h: float, profile: str) -> dict[str, Any]:
    from sextant_cli.replay import read_log

    first_day = int(time.time() // DAY_S) - RUNS - 1  # the last week: runs in the past
    templates = template_runs(seed, n, first_day)
    with running_platform(profile, prefix="sextant-bench-recurring-") as (stack, plat):
        url, api = stack.env["SEXTANT_DATABASE_URL"], plat.url("admission")
        t_prep = time.monotonic()
        asyncio.run(record_runs(url, templates))
        asyncio.run(drain(url, quiet_s=10.0, cap_s=600.0, types=INFER_TYPES))
        contracts = inferred(api)
        prep_s = time.monotonic() - t_prep
        print(f"  seed {seed}: {len(contracts)}/{n} contracts inferred in {prep_s:.0f} s", flush=True)
        load_before = os.getloadavg()
        t_drive = time.monotonic()
        sent, accepted, api_refused = asyncio.run(sign_offs(api, contracts, rate_per_h / 3600.0, seed))
        drive_s = time.monotonic() - t_drive
        load_during = os.getloadavg()
        asyncio.run(drain(url, quiet_s=10.0, cap_s=600.0, types=PLAN_TYPES))
        log = asyncio.run(read_log(url))
    rows = signoff_latencies(log, sent)
    out = summary(rows, len(sent), api_refused)
    out.update({"templates": n, "contracts_inferred": len(contracts), "accepted_202": accepted,
                "overrides": sum(1 for r in rows if r["verdict"] == "override"),
                "prepare_s": round(prep_s, 1), "drive_s": round(drive_s, 1),
                "rate_per_h": rate_per_h, "load_avg_before": [round(x, 2) for x in load_before],
                "load_avg_during": [round(x, 2) for x in load_during], "invalid": load_before[0] > 1.0})
    print(f"  seed {seed}: {out}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--quick", action="store_true", help="40 templates, seed 6 only unless --seeds")
    ap.add_argument("--seeds", help="e.g. 6-10 (default; --quick: 6)")
    ap.add_argument("--templates", type=int, help="templates per seed (default 300; --quick 40)")
    ap.add_argument("--rate-per-h", type=float, default=3600.0, help="sign-offs per hour of wall time")
    ap.add_argument("--profile", default="sextant-adaptive")
    args = ap.parse_args()
    load_start = os.getloadavg()
    version = code_version()  # at start: the processes run the code of this moment
    print(f"load average at start: {load_start}; code {version}", flush=True)
    seeds = seeds_of(args.seeds or ("6" if args.quick else "6-10"))
    n = args.templates or (40 if args.quick else 300)
    per_seed: dict[str, Any] = {}
    for s in seeds:  # the JSON is rewritten after each seed: a long run interrupted keeps its seeds
        per_seed[str(s)] = run_seed(s, n, args.rate_per_h, args.profile)
        result = {"machine": {"cpu": pyplatform.processor() or pyplatform.machine(), "cores": os.cpu_count(),
                              "python": sys.version.split()[0]},
                  "code_version": version, "load_avg": [round(x, 2) for x in load_start], "profile": args.profile,
                  "quick": args.quick, "templates_per_seed": n, "rate_per_h": args.rate_per_h,
                  "override_share": OVERRIDE_SHARE, "worst": worst(per_seed), "per_seed": per_seed}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(worst(per_seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
