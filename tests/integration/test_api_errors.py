"""Bad input (docs/api/README.md, "Errors"): a table of malformed requests against the admission API over a
real PostgreSQL; each gets its documented status and RFC 9457 problem document (type, title,
status, detail, instance; for 422 the JSON path of every bad field), and the event log is
unchanged. Plus: rate limits and quotas (429), a revoked token (401), an ended workload (409).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sextant_admission.testing import InProcessApi, api_under_test, own_database
from sextant_kit.problems import MEDIA_TYPE, TYPE_BASE

pytestmark = pytest.mark.integration

VALID: dict[str, Any] = {"kind": "batch", "target": {"type": "completion_time", "seconds": 600},
                         "spec": {"type": "twin", "ref": "w-1"}}
REPLAYED_KEY = "key-used-once"


def body(**changes: Any) -> dict[str, Any]:
    out = {**VALID, **changes}
    return {k: v for k, v in out.items() if v is not None}


def without(name: str) -> dict[str, Any]:
    return {k: v for k, v in VALID.items() if k != name}


@dataclass
class Case:
    method: str
    path: str
    status: int
    slug: str
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth: str = "alpha"  # alpha | none | wrong | basic
    paths: tuple[str, ...] = ()  # the `errors[].path` of a 422


WL = "/v1/workloads"
CASES = {
    "missing-kind": Case("POST", WL, 422, "validation-failed", json=without("kind"), paths=("$.kind",)),
    "missing-target-and-spec": Case("POST", WL, 422, "validation-failed", json={"kind": "batch"},
                                    paths=("$.target", "$.spec")),
    "wrong-type-priority": Case("POST", WL, 422, "validation-failed", json=body(priority="high"),
                                paths=("$.priority",)),
    "wrong-type-kind": Case("POST", WL, 422, "validation-failed", json=body(kind=7), paths=("$.kind",)),
    "negative-qps": Case("POST", WL, 422, "validation-failed", paths=("$.target.qps",), json=body(
        kind="service", target={"type": "throughput_latency", "qps": -5, "p99_latency_ms": 10})),
    "absurd-completion-time": Case("POST", WL, 422, "validation-failed", paths=("$.target.seconds",),
                                   json=body(target={"type": "completion_time", "seconds": 1e12})),
    "zero-latency-bound": Case("POST", WL, 422, "validation-failed", paths=("$.target.p99_latency_ms",), json=body(
        kind="service", target={"type": "throughput_latency", "qps": 100, "p99_latency_ms": 0})),
    "unknown-target-type": Case("POST", WL, 422, "validation-failed", json=body(target={"type": "vibes"}),
                                paths=("$.target",)),
    "absurd-cores": Case("POST", WL, 422, "validation-failed", json=body(requested_cores=10**9),
                         paths=("$.requested_cores",)),
    "unknown-field": Case("POST", WL, 422, "validation-failed", json=body(cores=4), paths=("$.cores",)),
    "not-an-object": Case("POST", WL, 422, "validation-failed", json=[1, 2], paths=("$",)),
    "malformed-json": Case("POST", WL, 422, "malformed-json", content=b'{"kind": "batch",',
                           headers={"Content-Type": "application/json"}),
    "not-utf8": Case("POST", WL, 422, "malformed-json", content=b'\xff\xfe{"kind": 1}',
                     headers={"Content-Type": "application/json"}),
    "patch-malformed-json": Case("PATCH", f"{WL}/no-such-id", 422, "malformed-json", content=b"{",
                                 headers={"Content-Type": "application/json"}),
    "oversized-body": Case("POST", WL, 413, "body-too-large", json=body(name="x" * 70_000)),
    "wrong-content-type": Case("POST", WL, 415, "unsupported-media-type", content=json.dumps(VALID).encode(),
                               headers={"Content-Type": "text/plain"}),
    "form-content-type": Case("POST", WL, 415, "unsupported-media-type", content=b"kind=batch",
                              headers={"Content-Type": "application/x-www-form-urlencoded"}),
    "no-token": Case("POST", WL, 401, "unauthenticated", json=VALID, auth="none"),
    "wrong-token": Case("POST", WL, 401, "unauthenticated", json=VALID, auth="wrong"),
    "not-a-bearer-token": Case("POST", WL, 401, "unauthenticated", json=VALID, auth="basic"),
    "unknown-tenant": Case("POST", WL, 403, "forbidden-tenant", json=body(tenant="nobody")),
    "another-tenant": Case("POST", WL, 403, "forbidden-tenant", json=body(tenant="beta")),
    "replayed-key-other-body": Case("POST", WL, 422, "idempotency-key-reused", json=body(priority=5),
                                    headers={"Idempotency-Key": REPLAYED_KEY}),
    "empty-idempotency-key": Case("POST", WL, 422, "validation-failed", json=VALID,
                                  headers={"Idempotency-Key": ""}, paths=("header.idempotency-key",)),
    "unknown-workload": Case("GET", f"{WL}/no-such-id", 404, "workload-not-found"),
    "revoke-unknown": Case("DELETE", f"{WL}/no-such-id", 404, "workload-not-found"),
    "patch-unknown": Case("PATCH", f"{WL}/no-such-id", 404, "workload-not-found",
                          json={"target": {"type": "completion_time", "seconds": 60}}),
    "patch-bad-target": Case("PATCH", f"{WL}/no-such-id", 422, "validation-failed",
                             json={"target": {"type": "completion_time", "seconds": -1}},
                             paths=("$.target.seconds",)),
    "list-limit-zero": Case("GET", f"{WL}?limit=0", 422, "validation-failed", paths=("query.limit",)),
    "list-bad-state": Case("GET", f"{WL}?state=sleeping", 422, "validation-failed", paths=("query.state",)),
    "list-bad-cursor": Case("GET", f"{WL}?cursor=%25%25", 422, "bad-cursor"),
    "list-another-tenant": Case("GET", f"{WL}?tenant=beta", 403, "forbidden-tenant"),
    "unknown-path": Case("GET", "/v1/nothing-here", 404, "not-found"),
    "read-without-token": Case("GET", WL, 401, "unauthenticated", auth="none"),
}


@dataclass
class World:
    api: InProcessApi
    alpha: dict[str, str]
    beta: dict[str, str]


@pytest.fixture(scope="module")
async def world(pg_node: Any) -> AsyncIterator[World]:
    with own_database(pg_node, "api_errors") as url:
        async with api_under_test(url, api_auth="tokens") as api:
            alpha = await api.tenant("alpha")
            beta = await api.tenant("beta")
            r = await api.client.post(WL, json=VALID, headers={**alpha, "Idempotency-Key": REPLAYED_KEY})
            assert r.status_code == 202, r.text
            yield World(api, alpha, beta)


def assert_problem(r: Any, status: int, slug: str, instance: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(MEDIA_TYPE)
    doc = r.json()
    assert doc["type"] == TYPE_BASE + slug
    assert doc["status"] == status
    assert doc["instance"] == instance
    assert isinstance(doc["title"], str) and doc["title"]
    assert isinstance(doc["detail"], str) and doc["detail"]
    return dict(doc)


@pytest.mark.parametrize("name", list(CASES), ids=list(CASES))
async def test_bad_request_gets_its_problem_and_changes_nothing(world: World, name: str) -> None:
    case = CASES[name]
    auth = {"alpha": world.alpha, "none": {}, "wrong": {"Authorization": "Bearer sxt_000000000000_" + "x" * 43},
            "basic": {"Authorization": "Basic YWxwaGE6c2VjcmV0"}}[case.auth]
    before = await world.api.log_size()
    r = await world.api.client.request(case.method, case.path, json=case.json, content=case.content,
                                       headers={**auth, **case.headers})
    doc = assert_problem(r, case.status, case.slug, case.path.split("?")[0])
    if case.status == 422 and case.paths:
        assert sorted(e["path"] for e in doc["errors"]) == sorted(case.paths), doc["errors"]
        assert all(e["detail"] and e["code"] and e["in"] for e in doc["errors"])
    if case.status == 401:
        assert r.headers["www-authenticate"] == "Bearer"
    assert await world.api.log_size() == before, "a refused request appended to the log"


async def test_revoked_token_is_refused(world: World) -> None:
    gamma = await world.api.tenant("gamma")
    assert (await world.api.client.get(WL, headers=gamma)).status_code == 200
    await world.api.registry.revoke("gamma")
    r = await world.api.client.get(WL, headers=gamma)
    assert_problem(r, 401, "unauthenticated", WL)


async def test_rate_limit_is_per_tenant_and_refills_with_time(world: World) -> None:
    api = world.api
    slow = await api.tenant("slow", rate_per_s=1.0, burst=2)
    # a bucket of 2 tokens refilled at 1/s, time frozen: two requests pass, the third waits 1 s
    assert [(await api.client.get(WL, headers=slow)).status_code for _ in range(2)] == [200, 200]
    r = await api.client.get(WL, headers=slow)
    doc = assert_problem(r, 429, "rate-limited", WL)
    assert r.headers["retry-after"] == "1" and doc["retry_after_s"] == 1.0
    assert (await api.client.get(WL, headers=world.alpha)).status_code == 200  # others are not slowed
    api.clock[0] += 1.0  # one second later: one token back
    assert (await api.client.get(WL, headers=slow)).status_code == 200


async def test_quota_of_active_workloads_and_cores(world: World) -> None:
    api = world.api
    small = await api.tenant("small", max_active_workloads=1, max_cores=8)
    r = await api.client.post(WL, json=body(requested_cores=16), headers=small)
    assert_problem(r, 429, "quota-exceeded", WL)  # 0 held + 16 asked > 8
    first = await api.client.post(WL, json=VALID, headers={**small, "Idempotency-Key": "one"})
    assert first.status_code == 202
    before = await api.log_size()
    r = await api.client.post(WL, json=VALID, headers={**small, "Idempotency-Key": "two"})
    assert_problem(r, 429, "quota-exceeded", WL)  # 1 active of 1
    again = await api.client.post(WL, json=VALID, headers={**small, "Idempotency-Key": "one"})
    assert again.status_code == 202 and again.json()["id"] == first.json()["id"]  # a replay is not a new one
    assert again.json()["created"] is False and again.headers["idempotent-replayed"] == "true"
    assert await api.log_size() == before
    wid = first.json()["id"]
    assert (await api.client.delete(f"{WL}/{wid}", headers=small)).status_code == 202
    assert (await api.client.post(WL, json=VALID, headers={**small, "Idempotency-Key": "two"})).status_code == 202


async def test_revoking_an_ended_workload_is_a_conflict(world: World) -> None:
    api = world.api
    wid = (await api.client.post(WL, json=VALID, headers={**world.alpha, "Idempotency-Key": "k"})).json()["id"]
    assert (await api.client.delete(f"{WL}/{wid}", headers=world.alpha)).status_code == 202
    before = await api.log_size()
    assert_problem(await api.client.delete(f"{WL}/{wid}", headers=world.alpha), 409, "workload-ended",
                   f"{WL}/{wid}")
    patch = {"target": {"type": "completion_time", "seconds": 60}}
    assert_problem(await api.client.patch(f"{WL}/{wid}", json=patch, headers=world.alpha), 409, "workload-ended",
                   f"{WL}/{wid}")
    assert await api.log_size() == before


async def test_an_unavailable_database_is_a_503_problem(world: World) -> None:
    from sextant_infra.processes import free_port
    from sqlalchemy.ext.asyncio import create_async_engine

    registry = world.api.registry
    real = registry.engine
    registry.engine = create_async_engine(f"postgresql+asyncpg://sextant@127.0.0.1:{free_port()}/gone")
    try:
        r = await world.api.client.get(WL, headers=world.alpha)
    finally:
        await registry.engine.dispose()
        registry.engine = real
    assert_problem(r, 503, "unavailable", WL)
    assert r.headers["retry-after"] == "1"
    assert (await world.api.client.get(WL, headers=world.alpha)).status_code == 200


async def test_auto_mode_is_open_until_the_first_tenant_then_needs_tokens(pg_node: Any) -> None:
    with own_database(pg_node, "api_auto") as url:
        async with api_under_test(url, rate_burst=1, rate_per_s=0.001) as api:  # api_auth=auto (default)
            # open: no token, the body names the tenant, and no throttling (a burst of 1 would refuse #2)
            codes = [(await api.client.post(WL, json=body(tenant="team-x"))).status_code for _ in range(3)]
            assert codes == [202, 202, 202]
            page = (await api.client.get(WL)).json()
            assert {v["tenant"] for v in page["items"]} == {"team-x"}
            own = await api.tenant("team-y")
            assert_problem(await api.client.get(WL), 401, "unauthenticated", WL)
            mine = await api.client.get(WL, headers=own)
            assert mine.status_code == 200 and mine.json()["items"] == []  # team-x's are not team-y's
