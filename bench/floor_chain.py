"""The platform's event traffic without its decisions: the processes of `bench/eventstore.py --floor`.

A workload of the platform logs ≈ 25 events and crosses 5 decider hops (docs/platform/floor.md).
This module reproduces that shape with the production transport and nothing else:

- **driver** (`python bench/floor_chain.py driver`): appends `WorkloadSubmitted` at a fixed open-loop
  rate, one task per submission (concurrent, as the API's requests are), each through admission's
  own `handlers.submit` — `append_and_track` with its durability barrier, as `POST /v1/workloads`
  does after its checks;
- **hop k** (`python bench/floor_chain.py hop`): a decider process built exactly as a service's —
  `bootstrap.serve` with `runtime.decider_task` (the `ConsumerLoop` over every event topic, one
  `append_and_track_many` per fetched batch, the head-conditional append, tracking, the durability
  barrier, catch-ups through `read_all`, snapshots, logging, tracing, the HTTP app) — around an
  `EchoDecider`: it folds every envelope (decoding its event, as the core's `Decider.fold` does)
  and reacts to the same event types as the core (`process.reacts_to`), but its only "decision" is
  to answer its trigger type with a fixed list of the platform's events for that workload;
- the relay is the production one (`python -m sextant_kit.relay_process`), started by the caller.

The events are real (`tests/fixtures/platform-log.jsonl.gz`, a platform log of the flagship
profile: one of each type, median payload), renamed to the driven workload; `chain(hops, events)`
says which hop answers which type with which events.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import gzip
import json
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sextant_contracts.collector import collector_paused
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import Event, event_class

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "platform-log.jsonl.gz"

# The five decider hops of a workload, each with the events that follow from its decision before the
# next hop's trigger (the edges' facts included: the agent's profiling runs after the profiling
# plan, its start after the placement, telemetry's windows and the completion at the end). Per
# workload in the fixture: 5.6 samples, 1.4 PerformanceObserved + QosVerdict pairs; `chain` sets
# the telemetry windows so that a workload logs `events` events in all.
HOPS: tuple[tuple[str, str, tuple[tuple[str, int], ...]], ...] = (
    ("admission", "WorkloadSubmitted", (("WorkloadAdmitted", 1),)),
    ("profiling", "WorkloadAdmitted", (("ProfilingPlanned", 1), ("ProfileSampleRecorded", 6),
                                       ("ProfilingCompleted", 1))),
    ("classification", "ProfilingCompleted", (("WorkloadClassified", 1),)),
    ("planning", "WorkloadClassified", (("PlacementDecided", 1), ("WorkloadStarted", 1))),
    ("reprovisioning", "PlacementDecided", (("PerformanceObserved", 0), ("QosVerdict", 0),
                                            ("WorkloadCompleted", 1))),
)
WINDOW = ("PerformanceObserved", "QosVerdict")  # one telemetry window: the padding unit


@cache
def templates() -> dict[str, Event]:
    """One event of each type of the fixture: the one with the median payload size."""
    by_type: dict[str, list[tuple[int, dict[str, object]]]] = {}
    with gzip.open(FIXTURE, "rt") as f:
        for line in f:
            row = json.loads(line)
            by_type.setdefault(row["type"], []).append((len(json.dumps(row["payload"])), row))
    out = {}
    for name, rows in by_type.items():
        rows.sort(key=lambda r: r[0])
        out[name] = Envelope.model_validate(rows[len(rows) // 2][1]).event()
    return out


@dataclass(frozen=True)
class Hop:
    name: str
    trigger: str
    outputs: tuple[str, ...]  # event types, in order


def chain(hops: int, events: int) -> list[Hop]:
    """`hops` hops logging `events` events per workload (the submission included): the five
    platform hops (`HOPS`), consecutive ones merged into one when `hops` < 5 (a merged hop reacts
    to the first one's trigger and answers with all their events), the telemetry windows (and a
    last `PerformanceObserved` when odd) added to reach `events`."""
    if not 1 <= hops <= len(HOPS):
        raise ValueError(f"hops: 1..{len(HOPS)}")
    types = [[t for t, n in outs for _ in range(n)] for _, _, outs in HOPS]
    pad = events - 1 - sum(map(len, types))
    if pad < 0:
        raise ValueError(f"events: at least {1 + sum(map(len, types))}")
    types[-1] = [*(WINDOW * (pad // 2)), *WINDOW[:pad % 2], *types[-1]]
    sizes = [len(HOPS) // hops + (1 if k < len(HOPS) % hops else 0) for k in range(hops)]
    out, k = [], 0
    for size in sizes:
        merged = HOPS[k:k + size]
        out.append(Hop("+".join(h[0] for h in merged), merged[0][1],
                       tuple(t for group in types[k:k + size] for t in group)))
        k += size
    return out


def outputs_for(hop: Hop, workload_id: str) -> tuple[Event, ...]:
    known = templates()
    return tuple(known[t].model_copy(update={"workload_id": workload_id}) for t in hop.outputs)


@dataclass(frozen=True)
class Step:
    events: Sequence[Event]


class EchoDecider:
    """`runtime.DeciderPort` without decisions: the state is the position folded to (an int:
    immutable, as batches need); `handle` answers `hop.trigger` with `hop`'s events."""

    def __init__(self, hop: Hop) -> None:
        from sextant_core.process import reacts_to

        self.hop = hop
        self.state = 0
        self._reacts_to = reacts_to

    @property
    def position(self) -> int:
        return self.state

    def fold(self, envelopes: Iterable[Envelope]) -> None:
        state = self.state
        with collector_paused():
            for env in envelopes:
                if env.position is None or env.position <= state:
                    continue
                env.event()  # every decider decodes every event it folds (`Decider.fold`)
                state = env.position
        self.state = state

    def reacts(self, envelope: Envelope) -> bool:
        try:
            return bool(self._reacts_to(event_class(envelope.type)))
        except KeyError:
            return True

    def handle(self, envelope: Envelope) -> Step:
        event = envelope.event()
        if envelope.type != self.hop.trigger:
            return Step(())
        return Step(outputs_for(self.hop, event.workload_id))  # type: ignore[attr-defined]

    def snapshot(self) -> bytes:
        return str(self.state).encode()

    def restore(self, blob: bytes) -> None:
        self.state = int(blob)


def run_hop(args: argparse.Namespace) -> None:
    """One decider process (settings from `SEXTANT_*`, as a service's)."""
    from sextant_kit.bootstrap import serve
    from sextant_kit.runtime import decider_task
    from sextant_kit.settings import KitSettings

    hop = chain(args.hops, args.events)[args.index]
    task = decider_task(EchoDecider(hop), code_packages=("sextant_contracts",))
    if args.gc_freeze:  # a variant, not the platform's behaviour: what is imported is never collected again
        gc.freeze()
    asyncio.run(serve(KitSettings(), [task]))  # type: ignore[call-arg]


async def run_driver(args: argparse.Namespace) -> None:
    """Prints `ready`; then, per stdin line `N RATE TAG`, submits N workloads `TAG-i` at RATE/s
    (open loop) and prints one JSON line: submitted, seconds, late_p99_ms (start behind schedule)."""
    from sextant_admission.handlers import submit
    from sextant_contracts.commands import SubmitWorkload
    from sextant_kit.eventstore.postgres import PostgresEventStore

    store = PostgresEventStore.from_url(args.db)
    first = templates()["WorkloadSubmitted"]
    body = first.model_dump(include=set(SubmitWorkload.model_fields))
    await store.last_position()  # the pool is open before the first timed submission
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while line := (await loop.run_in_executor(None, sys.stdin.readline)).split():
        n, rate, tag = int(line[0]), float(line[1]), line[2]
        late: list[float] = []
        start = time.monotonic()
        tasks = []
        for i in range(n):
            due = start + i / rate
            if (delay := due - time.monotonic()) > 0:
                await asyncio.sleep(delay)
            late.append(max(0.0, time.monotonic() - due))
            command = SubmitWorkload.model_validate({**body, "workload_id": f"{tag}-{i}", "name": f"{tag}-{i}"})
            tasks.append(asyncio.create_task(submit(store, command, idempotency_key=f"{tag}-{i}")))
        await asyncio.gather(*tasks)
        print(json.dumps({"submitted": n, "seconds": round(time.monotonic() - start, 2),
                          "late_p99_ms": round(1000 * statistics.quantiles(late, n=100)[-1], 1) if n > 1 else 0.0}),
              flush=True)
    await store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="role", required=True)
    hop = sub.add_parser("hop", help="one echo decider process (SEXTANT_* settings)")
    hop.add_argument("--index", type=int, required=True)
    hop.add_argument("--gc-freeze", action="store_true",
                     help="gc.freeze() before serving (a variant: full collections skip the imported modules)")
    driver = sub.add_parser("driver", help="the submissions' appender")
    driver.add_argument("--db", required=True)
    hop.add_argument("--hops", type=int, default=len(HOPS))
    hop.add_argument("--events", type=int, default=25, help="logged events per workload")
    args = ap.parse_args()
    if args.role == "hop":
        run_hop(args)
    else:
        asyncio.run(run_driver(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
