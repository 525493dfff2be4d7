"""The API's isolation, effects and Kafka front door (docs/api/README.md), against the running platform: the six
services, the relay and the cluster agent (the twin, `platform-demo`) as processes, over the
session's real PostgreSQL (a database of this module's own) and Kafka, with tenant tokens required.

- isolation: tenant B cannot read, patch or revoke A's workload (404, not 403), cannot list A's
  workloads, and cannot submit into A's virtual cluster (403);
- effects: an idempotent retry returns the first result and records one workload; a PATCHed
  target is re-planned (a new placement decision caused by the update); a revoke frees the
  workload's resources in the cluster state and the agent handles it (StopWorkload);
- Kafka: 50 valid and 10 malformed submissions on `sextant.submissions`: 50 workloads placed, 10
  dead-lettered with their reasons (and a rejection notice each on `sextant.decisions`), a resent
  message is the same workload, and the consumer still accepts submissions afterwards.

Waits poll the log or the API until a condition holds or a generous deadline passes: the
deadline only turns a hang into a failure, it is not what the tests measure.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer
from sextant_admission.testing import create_tenants, own_database
from sextant_cli.demo import submissions
from sextant_cli.platform import SERVICES, Platform
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_contracts.topics import DEAD_LETTERS, DECISIONS, SUBMISSIONS
from sextant_core.state import fold
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.testing import read_log, read_topic, until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROCESSES = (*SERVICES, "relay", "agent")
WL = "/v1/workloads"
DEADLINE_S = 300.0
SERVICE_A, SERVICE_B = 2, 44  # the two long-running services among the scenario's first workloads
KAFKA = [i for i in range(62) if i not in (0, 1, 2, 3, SERVICE_B)][:51]  # 50 + 1 sent after the malformed


@dataclass
class Stack:
    url: str
    api: str
    bootstrap: str
    tokens: dict[str, str]
    bodies: list[dict[str, Any]]
    platform: Platform
    run_tag: str

    def client(self, tenant: str) -> httpx.Client:
        return httpx.Client(base_url=self.api, timeout=30.0,
                            headers={"Authorization": f"Bearer {self.tokens[tenant]}"})

    def log(self) -> list[Envelope]:
        return asyncio.run(read_log(self.url))


@pytest.fixture(scope="module")
def stack(pg_node: Any, stack_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with own_database(pg_node, "api_platform") as url:
        tokens = create_tenants(url, alpha={}, beta={}, full={"max_active_workloads": 0})  # full: no room
        env = {**stack_env, "SEXTANT_DATABASE_URL": url, "SEXTANT_AGENT_SCENARIO": "platform-demo",
               "SEXTANT_AGENT_SEED": "7", "SEXTANT_AGENT_SPEED": "10", "SEXTANT_TICK_PERIOD_S": "2.0",
               "SEXTANT_API_AUTH": "tokens"}
        platform = Platform(Path(tmp_path_factory.mktemp("api-platform")), env)
        try:
            platform.start_all(PROCESSES)
            platform.wait_ready()
            bodies = [{k: v for k, v in b.items() if k != "tenant"} for _, b in submissions("platform-demo", 7, 62)]
            yield Stack(url, platform.url("admission"), stack_env["SEXTANT_KAFKA_BOOTSTRAP"], tokens, bodies,
                        platform, uuid.uuid4().hex[:8])
        finally:
            platform.stop()


wait_for = functools.partial(until, timeout_s=DEADLINE_S)  # every wait of this module


def of(log: list[Envelope], wid: str, *types: str) -> list[Envelope]:
    return [e for e in log if e.payload.get("workload_id") == wid and (not types or e.type in types)]


# --- isolation ---------------------------------------------------------------------------------


def test_a_tenant_cannot_touch_another_tenants_workloads(stack: Stack) -> None:
    with stack.client("alpha") as a, stack.client("beta") as b:
        r = a.post(WL, json=stack.bodies[0], headers={"Idempotency-Key": f"iso-{stack.run_tag}"})
        assert r.status_code == 202, r.text
        wid = r.json()["id"]
        assert a.get(f"{WL}/{wid}").status_code == 200
        for resp in (b.get(f"{WL}/{wid}"), b.delete(f"{WL}/{wid}"),
                     b.patch(f"{WL}/{wid}", json={"target": {"type": "completion_time", "seconds": 60}})):
            assert resp.status_code == 404, resp.text  # not 403: B cannot even learn that it exists
            assert resp.json()["type"].endswith("/workload-not-found")
        assert wid not in {v["id"] for v in b.get(WL, params={"limit": 1000}).json()["items"]}
        assert b.get(WL, params={"tenant": "alpha"}).status_code == 403
        into_a = b.post(WL, json={**stack.bodies[1], "tenant": "alpha"})
        assert into_a.status_code == 403 and into_a.json()["type"].endswith("/forbidden-tenant")
        mine = a.get(f"{WL}/{wid}").json()
        assert mine["tenant"] == "alpha" and mine["state"] != "revoked"  # B's attempts changed nothing


# --- effects -----------------------------------------------------------------------------------


def test_an_idempotent_retry_returns_the_first_result(stack: Stack) -> None:
    key = f"retry-{stack.run_tag}"
    with stack.client("alpha") as a:
        first = a.post(WL, json=stack.bodies[3], headers={"Idempotency-Key": key})
        retry = a.post(WL, json=stack.bodies[3], headers={"Idempotency-Key": key})
    assert first.status_code == retry.status_code == 202
    assert retry.json()["id"] == first.json()["id"] and first.json()["created"] and not retry.json()["created"]
    assert len(of(stack.log(), first.json()["id"], "WorkloadSubmitted")) == 1, "the retry created a second workload"


def running(a: httpx.Client, wid: str) -> dict[str, Any]:
    view: dict[str, Any] = wait_for("the workload runs",
                                    lambda: (v := a.get(f"{WL}/{wid}").json())["state"] == "running" and v)
    assert view["allocation"]["assignments"]
    return view


def test_a_new_target_is_re_planned(stack: Stack) -> None:
    with stack.client("alpha") as a:
        body = stack.bodies[SERVICE_B]
        wid = a.post(WL, json=body, headers={"Idempotency-Key": f"patch-{stack.run_tag}"}).json()["id"]
        running(a, wid)
        placements = len(of(stack.log(), wid, "PlacementDecided", "PlacementDeferred"))
        new_target = {**body["target"], "qps": body["target"]["qps"] / 2}
        r = a.patch(f"{WL}/{wid}", json={"target": new_target})
        assert r.status_code == 202, r.text

        def replanned() -> Any:
            log = stack.log()
            updates = of(log, wid, "TargetUpdated")
            decided = of(log, wid, "PlacementDecided", "PlacementDeferred")
            return updates and len(decided) > placements and decided[-1].position > updates[-1].position \
                and decided[-1].causation_id == updates[-1].id

        wait_for("the new target is re-planned", replanned)
        assert a.get(f"{WL}/{wid}").json()["target"] == new_target


def test_revoke_frees_the_resources_and_the_agent_stops_the_workload(stack: Stack) -> None:
    with stack.client("alpha") as a:
        wid = a.post(WL, json=stack.bodies[SERVICE_A], headers={"Idempotency-Key": f"revoke-{stack.run_tag}"}
                     ).json()["id"]
        view = running(a, wid)
        held = {x["server_id"] for x in view["allocation"]["assignments"]}
        before = fold(stack.log())
        assert all(wid in before.servers[s].residents for s in held)
        r = a.delete(f"{WL}/{wid}")
        assert r.status_code == 202 and r.json()["state"] == "revoked", r.text
        assert a.get(f"{WL}/{wid}").json()["state"] == "revoked"
        log = stack.log()
        (revoked,) = of(log, wid, "WorkloadRevoked")
        after = fold(log)
        assert not after.workloads[wid].holds_resources
        assert all(wid not in s.residents for s in after.servers.values()), "the revoke did not free its servers"
        wait_for("the agent handled the revoke (StopWorkload)", lambda: asyncio.run(_tracked(stack.url, revoked.id)))
        assert not [e for e in of(stack.log(), wid) if e.position > revoked.position and e.type == "WorkloadStarted"]
        assert a.delete(f"{WL}/{wid}").status_code == 409


async def _tracked(url: str, event_id: str) -> bool:
    store = PostgresEventStore.from_url(url)
    try:
        return await store.is_tracked("agent", event_id)
    finally:
        await store.close()


# --- Kafka -------------------------------------------------------------------------------------


def ce(ce_id: str, ce_type: str = "SubmitWorkload") -> list[tuple[str, bytes]]:
    return [("ce_specversion", b"1.0"), ("ce_id", ce_id.encode()), ("ce_source", b"test-integration"),
            ("ce_type", ce_type.encode()), ("ce_time", b"2026-11-22T08:00:00Z"),
            ("ce_subject", f"job-{ce_id}".encode())]


def malformed(stack: Stack, tag: str) -> list[tuple[str, bytes, list[tuple[str, bytes]], str]]:
    """(ce_id, value, headers, expected dlq_reason) of ten submissions that cannot be accepted."""
    auth = [("authorization", f"Bearer {stack.tokens['alpha']}".encode())]
    good = stack.bodies[SERVICE_B]

    def js(body: Any) -> bytes:
        return json.dumps(body).encode()

    bad_qps = {**good, "kind": "service", "target": {"type": "throughput_latency", "qps": -1, "p99_latency_ms": 5}}
    return [
        (f"{tag}-bad-json", b"{not json", ce(f"{tag}-bad-json") + auth, "undecodable"),
        (f"{tag}-no-headers", js(good), auth, "undecodable"),
        (f"{tag}-wrong-type", js(good), ce(f"{tag}-wrong-type", "RevokeWorkload") + auth, "unknown-type"),
        (f"{tag}-no-token", js(good), ce(f"{tag}-no-token"), "unauthenticated"),
        (f"{tag}-bad-token", js(good), ce(f"{tag}-bad-token") + [("authorization", b"Bearer sxt_nope")],
         "unauthenticated"),
        (f"{tag}-neg-qps", js(bad_qps), ce(f"{tag}-neg-qps") + auth, "invalid"),
        (f"{tag}-no-kind", js({k: v for k, v in good.items() if k != "kind"}), ce(f"{tag}-no-kind") + auth,
         "invalid"),
        (f"{tag}-unknown-field", js({**good, "cores": 3}), ce(f"{tag}-unknown-field") + auth, "invalid"),
        (f"{tag}-other-tenant", js({**good, "tenant": "beta"}), ce(f"{tag}-other-tenant") + auth,
         "forbidden-tenant"),
        (f"{tag}-no-room", js(good), ce(f"{tag}-no-room") + [("authorization", f"Bearer {stack.tokens['full']}".encode())],
         "quota-exceeded"),
    ]


async def produce(bootstrap: str, records: list[tuple[bytes, bytes, list[tuple[str, bytes]]]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    try:
        for key, value, headers in records:
            await producer.send_and_wait(SUBMISSIONS.name, value, key=key, headers=headers)
    finally:
        await producer.stop()


def headers_of(record: Any) -> dict[str, str]:
    return {k: v.decode(errors="replace") for k, v in record.headers}


def test_kafka_front_door_places_the_valid_and_dead_letters_the_malformed(stack: Stack) -> None:
    tag = f"kafka-{stack.run_tag}"
    auth = [("authorization", f"Bearer {stack.tokens['alpha']}".encode())]
    valid = [(f"{tag}-ok-{i}", json.dumps(stack.bodies[i]).encode()) for i in KAFKA[:50]]
    bad = malformed(stack, tag)
    records: list[tuple[bytes, bytes, list[tuple[str, bytes]]]] = []
    for i, (cid, value) in enumerate(valid):  # one bad message after every fifth valid one
        records.append((cid.encode(), value, ce(cid) + auth))
        if i % 5 == 0:
            bid, bvalue, bheaders, _ = bad[i // 5]
            records.append((bid.encode(), bvalue, bheaders))
    records.append((valid[1][0].encode(), valid[1][1], ce(valid[1][0]) + auth))  # resent: the same workload
    asyncio.run(produce(stack.bootstrap, records))

    wids = {derive_id("workload", "alpha", cid) for cid, _ in valid}

    def placed() -> set[str]:
        return {e.payload["workload_id"] for e in stack.log() if e.type == "PlacementDecided"} & wids

    wait_for("50 submissions placed", lambda: len(placed()) == 50)
    log = stack.log()
    submitted = [e for e in log if e.type == "WorkloadSubmitted" and e.payload["workload_id"] in wids]
    assert len(submitted) == 50 and {e.payload["tenant"] for e in submitted} == {"alpha"}
    assert {e.causation_id for e in submitted} == {cid for cid, _ in valid}

    expected = {cid: reason for cid, _, _, reason in bad}

    def dead() -> dict[str, str]:
        out = {}
        for rec in asyncio.run(read_topic(stack.bootstrap, DEAD_LETTERS.name)):
            h = headers_of(rec)
            key = rec.key.decode() if rec.key else ""
            if h.get("dlq_consumer") == "admission-submissions" and key.startswith(tag):
                out[key] = h["dlq_reason"]
        return out

    dlq = wait_for("10 dead letters", lambda: (d := dead()) and len(d) >= 10 and d)
    assert dlq == expected
    notices = [r for r in asyncio.run(read_topic(stack.bootstrap, DECISIONS.name))
               if headers_of(r).get("ce_type") == "SubmissionRejected"
               and headers_of(r).get("ce_causationid", "").startswith(tag)]
    reasons = collections.Counter(json.loads(r.value)["reason"] for r in notices)
    # the two undecodable ones never reach the handler: dead letters only
    assert reasons == collections.Counter(r for r in expected.values() if r != "undecodable")

    public = [r for r in asyncio.run(read_topic(stack.bootstrap, DECISIONS.name))
              if r.key and r.key.decode() in wids]
    assert {headers_of(r)["sextant_tenant"] for r in public} == {"alpha"}
    assert {headers_of(r)["ce_type"] for r in public} >= {"WorkloadSubmitted", "PlacementDecided"}

    late = f"{tag}-after"
    asyncio.run(produce(stack.bootstrap, [(late.encode(), json.dumps(stack.bodies[KAFKA[50]]).encode(),
                                                ce(late) + auth)]))
    late_wid = derive_id("workload", "alpha", late)
    wait_for("the consumer still accepts submissions", lambda: of(stack.log(), late_wid, "WorkloadSubmitted"))
    assert stack.platform.procs["admission"].popen.poll() is None


# --- pagination --------------------------------------------------------------------------------


def test_pagination_with_a_filter_sees_every_workload_exactly_once(stack: Stack) -> None:
    """GET /v1/workloads?kind=batch followed cursor by cursor, 3 a page: every one of beta's batch
    workloads is seen exactly once, in the order of one big page, and nothing of another kind."""
    with stack.client("beta") as b:
        mine = {}
        for body in [*stack.bodies[4:11], stack.bodies[13]]:  # seven batch workloads, one analytics
            r = b.post(WL, json=body)
            assert r.status_code == 202, r.text
            mine[r.json()["id"]] = body["kind"]
        batch = {wid for wid, kind in mine.items() if kind == "batch"}
        assert len(batch) == 7 and len(mine) == 8

        whole = b.get(WL, params={"kind": "batch", "limit": 1000}).json()
        assert whole["next_cursor"] is None
        expected = [v["id"] for v in whole["items"]]
        assert batch <= set(expected)

        seen: list[str] = []
        pages = 0
        params: dict[str, Any] = {"kind": "batch", "limit": 3}
        while True:
            page = b.get(WL, params=params)
            assert page.status_code == 200, page.text
            body = page.json()
            assert 1 <= len(body["items"]) <= 3 and all(v["kind"] == "batch" for v in body["items"])
            seen += [v["id"] for v in body["items"]]
            pages += 1
            assert pages <= len(expected), "the cursor does not advance"
            if body["next_cursor"] is None:
                break
            params = {"kind": "batch", "limit": 3, "cursor": body["next_cursor"]}
        assert len(seen) == len(set(seen)), f"a workload was listed twice: {seen}"
        assert seen == expected and pages == -(-len(expected) // 3)
        others = {v["id"] for v in b.get(WL, params={"kind": "analytics"}).json()["items"]}
        assert set(mine) - batch <= others and not others & set(seen)
