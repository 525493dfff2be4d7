"""The platform end to end (issue 6): real PostgreSQL and Kafka, the six services, the relay and the
cluster agent as separate processes; 250 twin workloads submitted over REST.

One run (module fixture) carries the whole acceptance list of issue 6:

- **chaos** — every service process, the relay and the agent are SIGKILLed once at a seeded point
  of the submission sequence (between 10 % and 60 %) and restarted at once;
- **outage** — PostgreSQL, then Kafka, are stopped for 15 s each (at 70 % and 80 %); the processes
  must wait and retry, not crash-loop (they are all still alive afterwards);

and the tests then check the log it left: every workload profiled, classified, admitted, placed
and judged; exactly one placement decision per planning request; `replay` reports 0 differences
from scratch and from a snapshot; replay is not a tautology (mutations are caught); the lifecycle
of a workload is one connected trace across the services.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np
import pytest
from sextant_cli.demo import submissions
from sextant_cli.platform import SERVICES, Platform
from sextant_cli.replay import read_log
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_core.policies import PolicySet
from sextant_core.profiles import policy_set as _policy_set
from sextant_core.replay import replay
from sextant_core.state import fold

policy_set = functools.cache(_policy_set)  # planners keep their table index across blocks

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

WORKLOADS = 250
SPEED = 30.0
PROCESSES = (*SERVICES, "relay", "agent")
OUTAGE_S = 15.0


@dataclass
class Run:
    log: list[Envelope]
    ids: list[str]
    spans: list[dict[str, Any]]
    alive_after_outage: dict[str, bool]
    kills: list[tuple[int, str]]
    wall_s: float


def post(client: httpx.Client, body: dict[str, Any], key: str, deadline_s: float = 180.0) -> str:
    """Submit with an idempotency key, retrying through outages until the API answers."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            r = client.post("/v1/workloads", json=body, headers={"Idempotency-Key": key})
            if r.status_code < 500:
                r.raise_for_status()
                return str(r.json()["id"])
        except httpx.HTTPError:
            pass
        if time.monotonic() > end:
            raise TimeoutError(f"submission {key} not accepted in {deadline_s}s")
        time.sleep(0.5)


def all_views(client: httpx.Client) -> dict[str, dict[str, Any]]:
    try:
        page = client.get("/v1/workloads", params={"limit": 1000})
        return {v["id"]: v for v in page.json()["items"]} if page.status_code == 200 else {}
    except httpx.HTTPError:
        return {}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    from sextant_infra.stack import start_stack
    from sextant_kit.migrations import migrate_async
    from sextant_kit.telemetry import read_spans

    t0 = time.monotonic()
    run_dir = tmp_path_factory.mktemp("platform")
    stack = start_stack(run_dir, die_with_parent=True)
    platform = Platform(run_dir, {})
    try:
        asyncio.run(migrate_async(stack.env["SEXTANT_DATABASE_URL"]))
        platform.env = {**stack.env, "SEXTANT_AGENT_SCENARIO": "platform-demo", "SEXTANT_AGENT_SEED": "7",
                        "SEXTANT_AGENT_SPEED": str(SPEED), "SEXTANT_TICK_PERIOD_S": "2.0",
                        "SEXTANT_OTEL_EXPORTER": "jsonl"}
        spans_of = {n: run_dir / f"spans-{n}.jsonl" for n in PROCESSES}
        extra = {n: {"SEXTANT_OTEL_FILE": str(p)} for n, p in spans_of.items()}
        platform.start_all(PROCESSES, extra)
        platform.wait_ready()
        subs = submissions("platform-demo", 7, WORKLOADS)
        rng = np.random.default_rng(20261122)
        kill_at = {int(i): name for name, i in zip(
            PROCESSES, rng.choice(np.arange(int(0.1 * WORKLOADS), int(0.6 * WORKLOADS)), len(PROCESSES),
                                  replace=False), strict=True)}
        outages = {int(0.7 * WORKLOADS): "postgres", int(0.8 * WORKLOADS): "kafka"}
        ids: list[str] = []
        kills: list[tuple[int, str]] = []
        alive: dict[str, bool] = {}
        start = time.monotonic()
        with httpx.Client(base_url=platform.url("admission"), timeout=10.0) as client:
            for i, (at, body) in enumerate(subs):
                if i in kill_at:
                    name = kill_at[i]
                    platform.kill(name)
                    platform.start(name, extra[name])
                    kills.append((i, name))
                if i in outages:
                    node = stack.postgres if outages[i] == "postgres" else stack.kafka
                    node.stop()
                    time.sleep(OUTAGE_S)
                    node.start()
                    alive.update({n: p.popen.poll() is None for n, p in platform.procs.items()})
                delay = at / SPEED - (time.monotonic() - start)
                if delay > 0:
                    time.sleep(delay)
                ids.append(post(client, body, f"e2e-{i}"))
            deadline = time.monotonic() + 420
            while time.monotonic() < deadline:
                views = all_views(client)
                judged = [w for w in ids if w in views and (views[w]["qos"] or views[w]["state"] in
                                                            ("completed", "failed"))]
                if len(judged) == len(ids):
                    break
                time.sleep(2.0)
        platform.stop()
        log = asyncio.run(read_log(stack.env["SEXTANT_DATABASE_URL"]))
        spans = [s for p in spans_of.values() for s in read_spans(p)]
        yield Run(log=log, ids=ids, spans=spans, alive_after_outage=alive, kills=kills,
                  wall_s=time.monotonic() - t0)
    finally:
        platform.stop()
        stack.stop()


def by_workload(log: list[Envelope]) -> dict[str, list[ev.Event]]:
    out: dict[str, list[ev.Event]] = collections.defaultdict(list)
    for env in log:
        e = env.event()
        if isinstance(e, ev.WorkloadEvent):
            out[e.workload_id].append(e)
    return out


def test_every_workload_went_through_every_service(run: Run) -> None:
    assert len(set(run.ids)) == WORKLOADS, "an idempotent retry created a second workload"
    events = by_workload(run.log)
    missing: dict[str, list[str]] = {}
    for wid in run.ids:
        types = {e.TYPE for e in events[wid]}
        need = ["WorkloadSubmitted", "ProfilingPlanned", "ProfileSampleRecorded", "WorkloadClassified",
                "WorkloadAdmitted", "PlacementDecided", "WorkloadStarted"]
        lacking = [t for t in need if t not in types]
        if not ({"QosVerdict", "WorkloadCompleted", "WorkloadFailed"} & types):
            lacking.append("verdict-or-end")
        if lacking:
            missing[wid] = lacking
    assert not missing, f"{len(missing)} workloads incomplete, e.g. {list(missing.items())[:3]}"
    verdicts = sum(1 for env in run.log if env.type == "QosVerdict")
    assert verdicts > WORKLOADS // 2, "telemetry judged too few workloads"


def test_chaos_and_outages_happened_and_nothing_crash_looped(run: Run) -> None:
    assert sorted(n for _, n in run.kills) == sorted(PROCESSES)
    assert run.alive_after_outage and all(run.alive_after_outage.values()), run.alive_after_outage


def test_exactly_one_placement_decision_per_planning_request(run: Run) -> None:
    """A planning request is a `WorkloadAdmitted`: it must have caused exactly one placement
    decision (decided or deferred) — none lost to a crash, none duplicated by a redelivery."""
    caused: dict[str, int] = collections.Counter(
        env.causation_id for env in run.log if env.type in ("PlacementDecided", "PlacementDeferred"))
    admitted = [env.id for env in run.log if env.type == "WorkloadAdmitted"]
    assert len(admitted) >= WORKLOADS
    wrong = {a: caused.get(a, 0) for a in admitted if caused.get(a, 0) != 1}
    assert not wrong, f"{len(wrong)} admissions with != 1 placement decision: {list(wrong.items())[:5]}"
    ids = [env.payload["decision"]["decision_id"] for env in run.log if "decision" in env.payload]
    assert len(ids) == len(set(ids)), "a decision was recorded twice"


def test_replay_from_scratch_and_from_a_snapshot_finds_no_difference(run: Run) -> None:
    report = replay(run.log, policy_set)
    decisions = sum(1 for env in run.log if isinstance(env.event(), ev.DecisionEvent))
    assert report.ok, report.differences[:5]
    assert report.decisions == decisions and report.blocks > WORKLOADS
    cut = len(run.log) // 2
    by_id = {e.id: e.event() for e in run.log[:cut]}
    snap = replay(run.log[cut:], policy_set, state=fold(run.log[:cut]), lookup=by_id.get)
    assert snap.ok, snap.differences[:5]
    assert snap.state == report.state


def test_replay_catches_a_changed_sample(run: Run) -> None:
    log = list(run.log)
    i = next(i for i, e in enumerate(log) if e.type == "ProfileSampleRecorded")
    log[i] = log[i].model_copy(update={"payload": {**log[i].payload, "value": log[i].payload["value"] * 3 + 1}})
    assert not replay(log, policy_set).ok


def test_replay_catches_a_changed_policy_parameter(run: Run) -> None:
    base = policy_set("foundation")
    from sextant_core.profiling.plan import DefaultProfilingPlan

    changed = PolicySet(**{**{f: getattr(base, f) for f in base.__dataclass_fields__},
                           "profiling": DefaultProfilingPlan(duration_s=31.0)})
    assert not replay(run.log, lambda name: changed).ok


def test_a_workload_lifecycle_is_one_connected_trace(run: Run) -> None:
    """The HTTP request's trace continues through every service that acted on the workload."""
    services_by_trace: dict[str, set[str]] = collections.defaultdict(set)
    for s in run.spans:
        services_by_trace[s["trace_id"]].add(s["service"] or "?")
    posts = [s for s in run.spans if s["kind"] == "SERVER" and "/v1/workloads" in s["name"]
             and "POST" in s["name"]]
    assert posts, "no HTTP spans exported"
    full = [s for s in posts if {"admission", "profiling", "classification", "planning", "agent", "relay"}
            <= services_by_trace[s["trace_id"]]]
    assert len(full) >= len(posts) // 2, json.dumps(sorted(services_by_trace[posts[0]["trace_id"]]))


def test_explain_re_runs_a_placement_and_shows_its_verdicts(run: Run) -> None:
    from sextant_cli.ops import explain_decision

    placed = next(env for env in run.log if env.type == "PlacementDecided")
    lines = explain_decision(run.log, placed.payload["decision"]["decision_id"][:12])
    text = "\n".join(lines)
    assert "re-derived: identical" in text, text
    assert "allocation: " in text and "caused by WorkloadAdmitted" in text
    assert any(line.startswith("  candidate ") for line in lines), text
    assert explain_decision(run.log, "no-such-decision") == ["no decision no-such-decision in the log"]


def test_state_at_a_position_is_the_fold_up_to_it(run: Run) -> None:
    from sextant_cli.ops import state_view_at

    placed = next(env for env in run.log if env.type == "PlacementDecided")
    before = state_view_at(run.log, placed.position - 1)
    after = state_view_at(run.log, placed.position)
    assert after["cores_used"] - before["cores_used"] == sum(
        a["cores"] for a in placed.payload["allocation"]["assignments"])
    assert after["position"] == placed.position
