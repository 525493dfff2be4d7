"""`GET /v1/workloads/{id}/kwiken/plan`: the plan in force as the log holds it — per stage the
reissue policy and a partial-answer stage's stopping rule, the budgets, the decision's id and its
event's id and position; 404 for an unknown or another tenant's workload, a workload without
declared stages and one without a plan yet."""

from __future__ import annotations

import pytest
from sextant_contracts import events as ev
from sextant_contracts import kwiken as kw
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import ThroughputLatencyTarget, TwinWorkloadRef, WorkloadKind
from sextant_core.profiles import policy_set
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.kwiken import declared, window
from sextant_core.testing.loop import InProcessPlatform, steady_agent

from .test_tenants_api import OP, api, as_


def _service(wid: str, at: float) -> ev.WorkloadSubmitted:
    return ev.WorkloadSubmitted(at=at, workload_id=wid, tenant="acme", kind=WorkloadKind.SERVICE,
                                target=ThroughputLatencyTarget(qps=100.0, p99_latency_ms=50.0),
                                spec=TwinWorkloadRef(ref=wid), requested_cores=1, fast_path=True)


@pytest.fixture(scope="module")
def seed() -> list[Envelope]:
    p = InProcessPlatform(policy_set("foundation"), steady_agent)
    p.submit([server("s1", cores=16, memory_gb=64.0), submitted("b1", tenant="acme", cores=1, fast_path=True),
              _service("svc", 2.0), _service("bare", 3.0)])
    p.submit([declared("svc", at=20.0), window(100.0, 1, workload_id="svc")])  # 250 samples: the first plan
    p.submit([declared("bare", at=30.0)])  # stages, no samples: no plan
    return p.log


async def test_the_plan_in_force_is_read_back_with_its_decision(seed: list[Envelope]) -> None:
    env = next(e for e in seed if e.type == "KwikenPlanDecided")
    plan = env.event()
    assert isinstance(plan, kw.KwikenPlanDecided)
    async with api(seed) as a:
        r = await a.client.get("/v1/workloads/svc/kwiken/plan", headers=as_("acme"))
        assert r.status_code == 200, r.text
        got = r.json()
    assert got["decision_id"] == plan.decision.decision_id and got["event_id"] == env.id
    assert got["position"] == env.position is not None and got["decided_at"] == plan.at and got["trigger"] == "first"
    assert (got["reissue_budget"], got["loss_budget"], got["reissue_spent"]) == (0.05, 0.001, plan.reissue_spent)
    by = {s["stage"]: s for s in got["stages"]}
    assert list(by) == ["front", "lookup", "agg"]
    lookup = next(s for s in plan.stages if s.stage == "lookup")
    assert by["lookup"]["partial"] == {"p": lookup.partial_p, "t_c_ms": lookup.partial_t_c_ms,
                                       "t_d_ms": lookup.partial_t_d_ms, "t_min_ms": 0.0}
    front = next(s for s in plan.stages if s.stage == "front")
    assert by["front"]["partial"] is None
    assert (by["front"]["policy"], by["front"]["fraction"], by["front"]["timeout_ms"]) == \
        (front.policy, front.fraction, front.timeout_ms)


@pytest.mark.parametrize(("wid", "headers", "slug"), [
    ("svc", as_("globex"), "workload-not-found"), ("nope", OP, "workload-not-found"),
    ("b1", OP, "no-kwiken-stages"), ("bare", as_("acme"), "no-kwiken-plan"),
], ids=["another-tenant", "unknown", "no-stages", "no-plan"])
async def test_no_plan_to_show_is_a_404_saying_why(seed: list[Envelope], wid: str, headers: dict[str, str],
                                                   slug: str) -> None:
    async with api(seed) as a:
        r = await a.client.get(f"/v1/workloads/{wid}/kwiken/plan", headers=headers)
    assert r.status_code == 404, r.text
    assert r.json()["type"].endswith("/" + slug)
