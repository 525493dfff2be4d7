"""bench/replay.py — replay and state rebuild speed on an in-process log of the platform-demo cell.

The log: `platform-demo` (the twin scenario `sextant demo` runs: 40 servers, 320 workloads) driven
through every decider in process (`sextant_core.testing.loop.InProcessPlatform`), the twin as the
cluster agent (`sextant_agent.twin.TwinExecutor`, speed 1) and the telemetry service's window
aggregation (`sextant_telemetry.handlers.Aggregator`, 120 s windows; a `Tick` every 60 s: the
demo's 2 s and 1 s at 60×). The scenario's submissions are repeated in rounds (workload ids
`r<round>-<id>`, each round after the previous one's last arrival) until the log holds `--events`
envelopes (100 000; `--quick`: 20 000). Deterministic per seed (the scenario's seed); cached under
`bench/results/.replay-cache/` (gzipped envelopes, `sextant_cli.demo.write_log`) keyed by seed,
size and a hash of `build_log` and the twin's sources. The decision core is not in the key: the
replay below re-derives every decision of a cached log and must find 0 differences, so a log the
current core would not write fails the bench instead of being measured. Before timing, the log is
turned into what the event store holds: one JSON line per envelope, its columns and checksum
(`sextant_kit.eventstore.rows.encode_line`).

Timed, in CPU seconds (`time.process_time`), on that stored text:
  (a) decode: JSON lines → envelopes → typed events (`sextant_kit.eventstore.rows.decode_lines`,
      the store's bulk read path: trusted when the line's checksum matches, validated otherwise;
      the collector paused for the batch, as `read_all` does);
  (b) fold: `sextant_core.state.evolve.fold` of the envelopes, their events kept by (a) (the
      collector paused since the fifth round, as in `Decider.fold`);
  (c) replay: `sextant_core.replay.replay` re-deriving every decision (warm policy caches, as
      `sextant replay`), which must report 0 differences and end on (b)'s state;
  (d) a restart from the newest snapshot, as a decider's runtime does (`DeciderHandler.start`:
      snapshots every `SNAPSHOT_EVERY` = 5 000 folded events): restore the pickled state of the
      last multiple of 5 000 positions, decode and fold the tail; the state must equal (b)'s.

    python bench/replay.py --json PATH [--quick] [--seeds 6-10] [--events N] [--profile-out FILE]

`events_per_s_rebuilt` = events / (decode + fold) CPU s, the whole log; `decisions_per_s_rederived`
= decisions / replay CPU s (the replay includes its own fold); `events_per_s_rebuilt_from_snapshot`
= events / (d)'s CPU s (the head state of the whole log, from its newest snapshot). `worst` is the
lowest of each over the seeds.
`load_avg` is the 1/5/15-minute load at the start, and `load_avg_end` at the end.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import hashlib
import io
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from quality import seeds_of  # the same seed syntax as the other benches

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / "results" / ".replay-cache"
PROFILE = "sextant-adaptive"
SCENARIO = "platform-demo"
TICK_S = 60.0
WINDOW_S = 120.0
# what writes the log: a change here changes the cached logs' key
LOG_SOURCES = ("libs/sim/src", "apps/agent/src/sextant_agent/twin.py",
               "services/telemetry/src/sextant_telemetry/handlers.py")


def code_version() -> str:
    """The commit measured (`+dirty` when the tree has uncommitted changes)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False, cwd=ROOT).stdout.strip()
    return git("rev-parse", "--short=12", "HEAD") + ("+dirty" if git("status", "--porcelain") else "")


def log_sources_hash() -> str:
    import inspect

    h = hashlib.sha256(inspect.getsource(build_log).encode())
    for base in LOG_SOURCES:
        p = ROOT / base
        for f in [p] if p.is_file() else sorted(p.rglob("*.py")):
            h.update(str(f.relative_to(ROOT)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def build_log(seed: int, target: int) -> list[Any]:
    """The platform-demo cell's log (module doc), at least `target` envelopes, in position order."""
    from sextant_agent.twin import TwinExecutor
    from sextant_contracts import commands as cmd
    from sextant_contracts import events as ev
    from sextant_contracts.model import TwinWorkloadRef
    from sextant_core.profiles import policy_set
    from sextant_core.testing.loop import InProcessPlatform
    from sextant_telemetry.handlers import Aggregator, phase_of

    ex = TwinExecutor(SCENARIO, seed, speed=1.0, wall0=0.0)
    seen = 0

    def observe() -> None:
        nonlocal seen
        for env in p.log[seen:]:
            ex.observe(env.event(), p.agent_view.state)
        seen = len(p.log)

    def agent(c: cmd.Command, at: float) -> list[ev.Event]:
        observe()
        return ex.execute(c, p.agent_view.state, at)

    p = InProcessPlatform(policy_set(PROFILE), agent)
    agg = Aggregator(WINDOW_S)
    p.submit(ex.knowledge(PROFILE), source="agent")
    p.submit(ex.servers(), source="agent")
    tick = {"seq": 0, "next": TICK_S}

    def advance(until: float) -> None:
        while ex.now < until:
            wall = min(until, tick["next"])
            observe()
            p.agent_view.fold(p.log[p.agent_view.position:])
            happenings, samples = ex.advance(p.agent_view.state, wall)
            for _key, facts in happenings:
                observe()
                p.submit(facts, source="agent")
            for s in samples:
                p.agent_view.fold(p.log[p.agent_view.position:])
                for _wid, out in agg.add(s, phase_of(p.agent_view, s.workload_id)):
                    p.submit(out, source="telemetry")
            if wall >= tick["next"]:
                p.submit([ev.Tick(at=wall, seq=tick["seq"], period_s=TICK_S)], source="telemetry")
                tick["seq"] += 1
                tick["next"] += TICK_S

    subs = list(ex.setup.subs)
    span = max(s.at for s in subs) + 600.0
    r = 0
    while len(p.log) < target:
        for s in subs:
            if len(p.log) >= target:
                break
            at = r * span + s.at
            advance(at)
            e = s.event
            assert isinstance(e, ev.WorkloadSubmitted)
            p.submit([e.model_copy(update={"at": at, "workload_id": f"r{r}-{s.workload_id}",
                                           "spec": TwinWorkloadRef(ref=s.workload_id)})], source="admission")
        r += 1
    return p.log


def _bulk_decoder() -> Any:
    """`decode_lines(lines, events=...)`: the store's bulk read (`rows.decode_lines`, the collector
    paused); on a tree from before it, `decode_line` per line and the events decoded after."""
    try:
        from sextant_kit.eventstore.rows import decode_lines
        return decode_lines
    except ImportError:
        _, decode_line = _codec()

        def decode_lines(lines: Any, *, events: bool = False) -> list[Any]:
            log = [decode_line(line) for line in lines]
            if events:
                for env in log:
                    env.event()
            return log
        return decode_lines


def _codec() -> tuple[Any, Any]:
    """(encode_line, decode_line) of the event store's rows; on a tree from before the checksum
    (the "before" figures), the same JSON lines read back validated."""
    try:
        from sextant_kit.eventstore.rows import decode_line, encode_line
    except ImportError:  # the same lines (`rows.encode_line`'s format, no checksum), validated
        from sextant_contracts import codec
        from sextant_kit.eventstore.rows import envelope_from_record

        def encode_line(env: Any) -> str:
            columns = {k: v for k, v in env.model_dump().items() if k != "payload"}
            return json.dumps(columns, separators=(",", ":")) + "\t" + codec.dumps(env.payload)

        def decode_line(line: str) -> Any:
            columns, _, payload = line.partition("\t")
            return envelope_from_record({**json.loads(columns), "payload": payload})
    return encode_line, decode_line


def stored_lines(log: list[Any]) -> list[str]:
    """The log as the event store holds it: one JSON line per envelope (with its checksum)."""
    encode_line, _ = _codec()
    return [encode_line(env) for env in log]


def cached_log(seed: int, target: int) -> tuple[list[str], float]:
    """(stored lines, build seconds — 0 when read from the cache)."""
    from sextant_cli.demo import read_recorded, write_log

    path = CACHE / f"{SCENARIO}-s{seed}-n{target}-{log_sources_hash()}.jsonl.gz"
    if path.exists():
        return stored_lines(read_recorded(path)), 0.0
    t0 = time.perf_counter()
    log = build_log(seed, target)
    built = time.perf_counter() - t0
    tmp = path.with_name(path.name + ".tmp")
    write_log(log, tmp)
    tmp.replace(path)
    return stored_lines(log), built


def measure(lines: list[str], profile: cProfile.Profile | None = None) -> dict[str, Any]:
    from sextant_core.profiles import policy_set
    from sextant_core.replay import replay
    from sextant_core.state.evolve import fold

    decode_lines = _bulk_decoder()
    gc.collect()  # the garbage of building the lines is not this measurement's
    if profile is not None:
        profile.enable()
    c0 = time.process_time()
    log = decode_lines(lines, events=True)  # the store's bulk read, every event decoded
    c1 = time.process_time()
    head = fold(log)  # the state fold (the events kept by their envelopes: no second decoding)
    c2 = time.process_time()
    report = replay(log, functools.cache(policy_set))
    c3 = time.process_time()
    if profile is not None:
        profile.disable()
    assert report.ok, report.differences[:3]
    assert report.state == head, "the replay's state is not the rebuilt one"
    restart_s = restart_from_snapshot(lines, head)
    decode_s, fold_s, replay_s = c1 - c0, c2 - c1, c3 - c2
    return {"events": len(log), "decisions": report.decisions, "decode_cpu_s": round(decode_s, 3),
            "fold_cpu_s": round(fold_s, 3), "replay_cpu_s": round(replay_s, 3),
            "events_per_s_decoded": round(len(log) / decode_s), "events_per_s_folded": round(len(log) / fold_s),
            "events_per_s_rebuilt": round(len(log) / (decode_s + fold_s)),
            "decisions_per_s_rederived": round(report.decisions / replay_s),
            "snapshot_restart_cpu_s": round(restart_s, 3),
            "events_per_s_rebuilt_from_snapshot": round(len(log) / restart_s)}


SNAPSHOT_EVERY = 5000  # `DeciderHandler`'s default `snapshot_every`


def restart_from_snapshot(lines: list[str], head: Any) -> float:
    """CPU seconds to restore the snapshot at the last multiple of `SNAPSHOT_EVERY` positions (made
    beforehand, untimed) and decode and fold the tail; the state must be `head`."""
    from sextant_core.profiles import policy_set
    from sextant_core.workflow import Decider

    _, decode_line = _codec()
    decode_lines = _bulk_decoder()
    at = (len(lines) - 1) // SNAPSHOT_EVERY * SNAPSHOT_EVERY
    before = Decider("planning", policy_set(PROFILE))
    before.fold(decode_line(line) for line in lines[:at])
    blob = before.snapshot()
    del before
    gc.collect()
    c0 = time.process_time()
    after = Decider("planning", policy_set(PROFILE))
    after.restore(blob)
    after.fold(decode_lines(lines[at:]))  # the tail as the store's bulk read returns it
    took = time.process_time() - c0
    assert after.state == head, "the snapshot and its tail do not fold to the head state"
    return took


def profile_summary(prof: cProfile.Profile, top: int = 15) -> str:
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--quick", action="store_true", help="20 000 events instead of 100 000")
    ap.add_argument("--seeds", default="6-10")
    ap.add_argument("--events", type=int, default=0, help="log size (default 100 000; --quick 20 000)")
    ap.add_argument("--profile-out", help="also profile the first seed in a second, untimed pass (cProfile, "
                                          "top by own time) and write the summary here")
    ap.add_argument("--build-only", action="store_true", help="build (and cache) the logs, measure nothing")
    args = ap.parse_args()
    load_start = os.getloadavg()
    version = code_version()
    target = args.events or (20_000 if args.quick else 100_000)
    print(f"load average at start: {load_start}; code {version}", flush=True)
    per_seed: dict[str, Any] = {}
    for i, seed in enumerate(seeds_of(args.seeds)):
        lines, built = cached_log(seed, target)
        if args.build_only:
            print(f"  seed {seed}: {len(lines)} envelopes, built in {built:.0f} s", flush=True)
            continue
        load = os.getloadavg()
        row = {**measure(lines), "build_s": round(built, 1), "load_avg_before": [round(x, 2) for x in load]}
        per_seed[str(seed)] = row
        print(f"  seed {seed}: {row}", flush=True)
        if args.profile_out and i == 0:  # a second, untimed pass under the profiler
            prof = cProfile.Profile()
            measure(lines, prof)
            Path(args.profile_out).write_text(profile_summary(prof))
    if args.build_only:
        return 0
    worst = {k: min(r[k] for r in per_seed.values())
             for k in ("events_per_s_decoded", "events_per_s_folded", "events_per_s_rebuilt",
                       "decisions_per_s_rederived", "events_per_s_rebuilt_from_snapshot")}
    from sextant_sim import groundtruth
    from sextant_sim.scenarios import load_scenario

    result = {"bench": "replay", "scenario": SCENARIO, "profile": PROFILE, "events": target,
              "code_version": version, "twin_version": groundtruth.world_version(load_scenario(SCENARIO).world), "load_avg": [round(x, 2) for x in load_start],
              "load_avg_end": [round(x, 2) for x in os.getloadavg()], "per_seed": per_seed, "worst": worst,
              "events_per_s_rebuilt": worst["events_per_s_rebuilt"],
              "decisions_per_s_rederived": worst["decisions_per_s_rederived"],
              "events_per_s_rebuilt_from_snapshot": worst["events_per_s_rebuilt_from_snapshot"]}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    print(f"worst of seeds {args.seeds}: {worst['events_per_s_rebuilt']} events/s rebuilt, "
          f"{worst['decisions_per_s_rederived']} decisions/s re-derived, "
          f"{worst['events_per_s_rebuilt_from_snapshot']} events/s rebuilt from a snapshot ({target} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
