"""The web console's render times: each page's server render time and browser load time, with
10 000 workloads (the console tests' world: `sextant_admission.console_testing`).

    .venv/bin/python bench/console.py [--quick] [--seeds 6-10] [--json PATH]

Per page and seed: `--samples` requests (quick: 5, else 20) of the page over HTTP (server: the
request's wall time until the whole body is read, on 127.0.0.1 — the API renders the page in that
time) and as many loads in headless Chromium (browser: `goto` until the `load` event, the page's
scripts and charts included), signed in as the operator. p50/p95 per page and seed in `per_seed`;
`worst` is the highest p50/p95 over seeds. The seeds change nothing here (the world is the same
recorded log and the same 10 000 workloads): they are accepted and recorded, and a seed is one
more repetition. Needs PostgreSQL (started here) and Debian's chromium.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "fixtures" / "platform-log.jsonl.gz"
BULK = 10_000
SOURCES = ("services/admission/src/sextant_admission/console", "services/admission/src/sextant_admission/views.py")


def code_version() -> str:
    h = hashlib.sha256()
    for base in SOURCES:
        paths = [ROOT / base] if (ROOT / base).is_file() else sorted((ROOT / base).rglob("*"))
        for p in paths:
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(ROOT)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]


def parse_seeds(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def pages(world: Any) -> dict[str, str]:
    return {"overview": "/console/", "workloads (10 000, 500 a page)": "/console/workloads?tenant=bulk&limit=500",
            "workload": f"/console/workloads/{world.placed_wid}",
            "decision": f"/console/workloads/{world.placed_wid}/decisions/{world.decision_id}",
            "log": "/console/log", "log as of a past position": f"/console/log?at={world.placed_position}",
            "servers": "/console/servers", "tenants": "/console/tenants", "tenant (10 000 workloads)":
            "/console/tenants/bulk"}


def measure(session: Any, world: Any, samples: int) -> dict[str, dict[str, float]]:
    request = session.context.request
    out = {}
    for name, path in pages(world).items():
        server, browser = [], []
        for _ in range(samples):
            t0 = time.perf_counter()
            r = request.get(world.base + path)
            r.body()
            server.append((time.perf_counter() - t0) * 1000)
            assert r.status == 200, (path, r.status)
            t0 = time.perf_counter()
            session.page.goto(path, wait_until="load")
            browser.append((time.perf_counter() - t0) * 1000)
        out[name] = {"server_p50_ms": round(statistics.median(server), 1), "server_p95_ms": round(quantile(server, .95), 1),
                     "browser_p50_ms": round(statistics.median(browser), 1),
                     "browser_p95_ms": round(quantile(browser, .95), 1)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="5 samples a page instead of 20")
    ap.add_argument("--seeds", default="6", help="accepted and recorded (no randomness here): one repetition each")
    ap.add_argument("--samples", type=int)
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()
    samples = args.samples or (5 if args.quick else 20)
    from sextant_admission.console_testing import Signed, chromium, console_world
    from sextant_cli.demo import read_recorded
    from sextant_infra.postgres import PostgresNode

    load_start = os.getloadavg()[0]
    node = PostgresNode(die_with_parent=True)
    node.start()
    per_seed: dict[str, dict[str, dict[str, float]]] = {}
    workloads = 0
    try:
        with console_world(node, read_recorded(LOG), bulk=BULK) as world, chromium() as browser:
            session = Signed(browser, world, "ops")
            workloads = BULK + 2 + sum(e.type == "WorkloadSubmitted" for e in world.log)
            measure(session, world, 1)  # warm-up: the first fold, template compilation
            for seed in parse_seeds(args.seeds):
                per_seed[str(seed)] = measure(session, world, samples)
            session.close()
    finally:
        node.remove()
    names = list(next(iter(per_seed.values())))
    worst = {n: {k: max(per_seed[s][n][k] for s in per_seed) for k in per_seed[next(iter(per_seed))][n]}
             for n in names}
    result = {"code_version": code_version(), "workloads": workloads, "samples_per_page": samples,
              "seeds": parse_seeds(args.seeds), "quick": args.quick,
              "load_avg": {"start_1m": round(load_start, 2), "end_1m": round(os.getloadavg()[0], 2)},
              "worst": worst, "per_seed": per_seed}
    print(f"{'page':34s} {'server p50/p95 ms':>20s} {'browser p50/p95 ms':>20s}")
    for n, w in worst.items():
        print(f"{n:34s} {w['server_p50_ms']:>9.1f} / {w['server_p95_ms']:<8.1f} "
              f"{w['browser_p50_ms']:>9.1f} / {w['browser_p95_ms']:<8.1f}")
    print(f"load average {result['load_avg']}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
