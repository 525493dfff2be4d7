"""A service's Kwiken stages over REST (`stages.py`): a declaration is recorded as
`ServiceStagesDeclared`; a cycle, an unknown stage or a budget outside (0, 1] is a 422 naming the
field, a batch job a 409, another tenant's service a 404 — and every refusal writes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import ThroughputLatencyTarget, TwinWorkloadRef, WorkloadKind
from sextant_core.profiles import policy_set
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.loop import InProcessPlatform, steady_agent

from .test_tenants_api import OP, api, as_

BODY: dict[str, Any] = {"stages": [{"name": "front"}, {"name": "leaf", "fanout": 100, "partial": True, "cost": 3},
                                   {"name": "agg"}],
                        "edges": [["front", "leaf"], ["leaf", "agg"]], "reissue_budget": 0.05, "loss_budget": 0.001}


@pytest.fixture(scope="module")
def seed() -> list[Envelope]:
    p = InProcessPlatform(policy_set("foundation"), steady_agent)
    p.submit([server("s1"), submitted("b1", tenant="acme", cores=1, fast_path=True)])
    p.submit([ev.WorkloadSubmitted(at=2.0, workload_id="svc", tenant="acme", kind=WorkloadKind.SERVICE,
                                   target=ThroughputLatencyTarget(qps=100.0, p99_latency_ms=50.0),
                                   spec=TwinWorkloadRef(ref="svc"), requested_cores=1, fast_path=True)])
    return p.log


async def test_a_service_declares_its_stages(seed: list[Envelope]) -> None:
    async with api(seed) as a:
        r = await a.client.put("/v1/workloads/svc/stages", headers=as_("acme"), json=BODY)
        assert r.status_code == 202, r.text
        assert r.json() == {"workload_id": "svc", "stages": 3, "edges": 2}
        e = (await a.log())[-1].event()
        assert isinstance(e, kw.ServiceStagesDeclared) and [s.name for s in e.stages] == ["front", "leaf", "agg"]
        assert e.stages[1].partial and e.reissue_budget == 0.05


@pytest.mark.parametrize(("change", "path"), [
    ({"edges": [["front", "leaf"], ["leaf", "agg"], ["agg", "front"]]}, "$.edges"),
    ({"edges": [["front", "ghost"]]}, "$.edges"),
    ({"reissue_budget": 0}, "$.reissue_budget"),
    ({"loss_budget": 1.01}, "$.loss_budget"),
], ids=["cycle", "unknown-stage", "reissue-budget-0", "loss-budget-above-1"])
async def test_bad_stages_are_a_422_naming_the_field_and_write_nothing(
        seed: list[Envelope], change: dict[str, Any], path: str) -> None:
    async with api(seed) as a:
        before = len(await a.log())
        r = await a.client.put("/v1/workloads/svc/stages", headers=OP, json={**BODY, **change})
        assert r.status_code == 422, r.text
        assert r.json()["errors"][0]["path"].startswith(path)
        assert len(await a.log()) == before


@pytest.mark.parametrize(("wid", "headers", "status"), [("b1", OP, 409), ("svc", as_("globex"), 404),
                                                        ("nope", OP, 404)])
async def test_a_batch_job_or_another_tenants_service_is_refused(
        seed: list[Envelope], wid: str, headers: dict[str, str], status: int) -> None:
    async with api(seed) as a:
        before = len(await a.log())
        r = await a.client.put(f"/v1/workloads/{wid}/stages", headers=headers, json=BODY)
        assert r.status_code == status, r.text
        assert len(await a.log()) == before
