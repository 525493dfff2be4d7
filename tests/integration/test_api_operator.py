"""Tenants and operators (docs/api/README.md, "Tenants and tokens"): a tenant's token sees its own
workloads only — `GET /v1/state` names no other tenant's workload and shows no cluster-wide
capacity; an operator's token (`sextant tenants create NAME --operator`) sees the whole cluster and
every tenant's workloads. Tokens of both kinds rotate (the old token stops working, the new one
works) and are revoked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from sextant_admission.testing import InProcessApi, api_under_test, own_database
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import DecisionRecord

pytestmark = pytest.mark.integration

WL = "/v1/workloads"
VALID: dict[str, Any] = {"kind": "batch", "target": {"type": "completion_time", "seconds": 600},
                         "spec": {"type": "twin", "ref": "w-1"}}


@dataclass
class World:
    api: InProcessApi
    alpha: dict[str, str]
    beta: dict[str, str]
    queued: str  # alpha's workload, queued by admission
    beta_wid: str


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
async def world(pg_node: Any) -> AsyncIterator[World]:
    with own_database(pg_node, "api_operator") as url:
        async with api_under_test(url, api_auth="tokens") as api:
            alpha, beta = await api.tenant("alpha"), await api.tenant("beta")
            wid = (await api.client.post(WL, json=VALID, headers=alpha)).json()["id"]
            beta_wid = (await api.client.post(WL, json=VALID, headers=beta)).json()["id"]
            record = DecisionRecord(decision_id="d-test", causation=(), state_position=1, profile="test",
                                    policy_version="1", seed=0)
            stream = [ev.WorkloadClassified(workload_id=wid, at=1.0, decision=record),
                      ev.WorkloadQueued(workload_id=wid, at=1.0, arq_class=2, position=0, expected_wait_s=3.0,
                                        reason="test", decision=record)]
            await api.store.append(stream[0].stream, 1, [
                Envelope.wrap(e, id=f"test-{i}", source="admission", stream_version=i + 2, time=1.0)
                for i, e in enumerate(stream)])
            yield World(api, alpha, beta, wid, beta_wid)


async def test_a_tenant_sees_neither_other_tenants_ids_nor_the_cluster(world: World) -> None:
    r = await world.api.client.get("/v1/state", headers=world.beta)
    assert r.status_code == 200, r.text
    view = r.json()
    assert world.queued not in r.text
    assert view["queued"] == [] and view["deferred"] == []
    assert view["tenant"] == "beta" and sum(view["workloads"].values()) == 1
    assert not {"cores", "cores_used", "servers", "servers_up"} & set(view)
    mine = (await world.api.client.get("/v1/state", headers=world.alpha)).json()
    assert mine["queued"] == [world.queued]


async def test_an_operator_sees_the_cluster_and_every_tenant(world: World) -> None:
    operator = _auth((await world.api.registry.create("ops", operator=True))[1])
    r = await world.api.client.get("/v1/state", headers=operator)
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["queued"] == [world.queued] and sum(view["workloads"].values()) == 2
    assert {"cores", "cores_used", "servers", "servers_up"} <= set(view)
    listed = (await world.api.client.get(WL, headers=operator)).json()["items"]
    assert {v["id"] for v in listed} == {world.queued, world.beta_wid}
    assert (await world.api.client.get(f"{WL}/{world.beta_wid}", headers=operator)).status_code == 200
    assert (await world.api.client.get(f"{WL}/{world.beta_wid}", headers=world.alpha)).status_code == 404


@pytest.mark.parametrize("operator", [False, True], ids=["tenant", "operator"])
async def test_tokens_of_both_kinds_rotate_and_are_revoked(world: World, operator: bool) -> None:
    reg = world.api.registry
    name = "rot-op" if operator else "rot-tenant"
    _, old = await reg.create(name, operator=operator)
    new = await reg.rotate(name)
    assert (await world.api.client.get(WL, headers=_auth(old))).status_code == 401
    assert (await world.api.client.get(WL, headers=_auth(new))).status_code == 200
    await reg.revoke(name)
    assert (await world.api.client.get(WL, headers=_auth(new))).status_code == 401
