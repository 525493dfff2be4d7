"""Virtual clusters over the real PostgreSQL log (docs/fairness/platform.md): an operator's
`PUT /v1/tenants/{id}/capacity` appends `VcCapacitySet`; a tenant's token (403), a malformed
capacity (422 naming the field) and an unknown tenant (404) append nothing; the planning service's
decider (its handler and its head-conditional append, as in the process) allocates at each
capacity change and arrival under SEXTANT_VC_POLICY; `GET /v1/tenants/{id}/usage` shows it to the
tenant only; replay of the stored log re-derives every allocation with 0 differences."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_admission.testing import api_under_test, own_database
from sextant_contracts import events as ev
from sextant_contracts import vc
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.testing.builders import server
from sextant_kit.errors import HeadMovedError
from sextant_kit.runtime import DeciderHandler
from sextant_planning.handlers import make_decider
from sextant_planning.settings import Settings

pytestmark = pytest.mark.integration

JOB: dict[str, Any] = {"kind": "batch", "target": {"type": "completion_time", "seconds": 600},
                       "spec": {"type": "twin", "ref": "w-1"}}


async def planning_pass(url: str, store: Any, vc_policy: str) -> int:
    """The planning service's handler over every stored envelope in order, its outputs appended
    right after the state it decided on — when the head moved (the edge wrote on), it catches up
    and decides again, as the service's consumer loop does; returns how many events it appended."""
    settings = Settings(database_url=url, kafka_bootstrap="unused:9092", policy_profile="foundation",
                        vc_policy=vc_policy)
    handler = DeciderHandler("planning", make_decider(settings), store)
    appended, seen = 0, 0
    while True:
        batch = await store.read_all(seen, limit=1000)
        if not batch:
            return appended
        for env in batch:
            seen = env.position
            while True:
                out = await handler(env)
                wrapped = [Envelope.wrap(e, id=derive_id("planning", env.id, i), source="planning",
                                         stream_version=0, time=e.at, causation_id=env.id)
                           for i, e in enumerate(out.items)]
                if not wrapped:
                    break
                try:
                    await store.append_and_track("planning", env.id, env.position, wrapped,
                                                 expected_head=out.expected_head, durable=False)
                except HeadMovedError:
                    continue
                appended += len(wrapped)
                break


async def test_capacity_refusals_write_nothing_allocation_usage_and_replay(pg_node: Any) -> None:
    with own_database(pg_node, "api_tenants") as url:
        async with api_under_test(url, api_auth="tokens") as api:
            _, op_token = await api.registry.create("ops", operator=True)
            op = {"Authorization": f"Bearer {op_token}"}
            alpha, beta = await api.tenant("alpha"), await api.tenant("beta")
            servers = [server(f"s{i}", cores=8, memory_gb=32.0) for i in range(3)]
            for i, s in enumerate(servers):
                await api.store.append(s.stream, None, [Envelope.wrap(s, id=f"srv-{i}", source="edge",
                                                                      stream_version=1, time=0.0)])
            base = await api.log_size()
            refused = [
                (await api.client.put("/v1/tenants/alpha/capacity", headers=alpha, json={"servers": 3}), 403),
                (await api.client.put("/v1/tenants/alpha/capacity", headers=op, json={"servers": -2}), 422),
                (await api.client.put("/v1/tenants/alpha/capacity", headers=op, json={"server": 2}), 422),
                (await api.client.put("/v1/tenants/nobody/capacity", headers=op, json={"servers": 2}), 404),
            ]
            assert [r.status_code for r, _ in refused] == [s for _, s in refused], [r.text for r, _ in refused]
            assert refused[1][0].json()["errors"][0]["path"] == "$.servers"
            assert await api.log_size() == base  # nothing written on refusal

            for tenant, n in (("alpha", 1), ("beta", 1)):
                r = await api.client.put(f"/v1/tenants/{tenant}/capacity", headers=op, json={"servers": n})
                assert r.status_code == 202, r.text
            for _ in range(2):
                assert (await api.client.post("/v1/workloads", json=JOB, headers=alpha)).status_code == 202
            assert await planning_pass(url, api.store, "maxmin") == 4  # 2 capacities + 2 arrivals

            log = await api.store.read_all(0, limit=10_000)
            decided = [e.event() for e in log if e.type == "VcAllocationDecided"]
            assert [d.reason for d in decided] == ["capacity", "capacity", "arrival", "arrival"]  # type: ignore[attr-defined]
            last = decided[-1]
            assert isinstance(last, vc.VcAllocationDecided) and last.policy == "maxmin" and last.total == 3
            # alpha waits for 2 servers with 1 of its own, beta idle: the free pool (2) covers alpha's excess
            assert [(s.tenant, s.capacity, s.demand, s.allocation) for s in last.shares] == [
                ("alpha", 1, 2, 2), ("beta", 1, 0, 0)]

            mine = await api.client.get("/v1/tenants/alpha/usage", headers=alpha)
            assert mine.status_code == 200, mine.text
            assert (mine.json()["capacity"], mine.json()["allocation"], mine.json()["policy"]) == (1, 2, "maxmin")
            assert (await api.client.get("/v1/tenants/alpha/usage", headers=beta)).status_code == 404
            assert (await api.client.get("/v1/tenants/beta/usage", headers=op)).json()["capacity"] == 1

            report = replay(log, policy_set)
            assert report.ok, report.differences[:3]
            assert report.decisions == sum(1 for e in log if ev.decision_of(e.event()) is not None) >= 4
