"""The routes of a service that only decides (sextant_kit/deciding.py), through a real FastAPI app:
the service's view and stats, for operators only once a tenant exists (sextant_kit/operators.py)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sextant_kit.deciding import decider_routers
from sextant_kit.operators import OperatorGate
from sextant_kit.tenancy import Tenant

OPERATOR = "sxt_000000000001_operator-secret-xxxxxxxxxxxxx"
TENANT = "sxt_000000000002_tenant-secret-xxxxxxxxxxxxxxx"


class Registry:
    """Two tokens, an operator's and a tenant's (the real registry is PostgreSQL's)."""

    def __init__(self, tenants_exist: bool = True) -> None:
        self.tenants_exist = tenants_exist

    async def authenticate(self, token: str) -> Tenant | None:
        known = {OPERATOR: Tenant("ops", 0.0, operator=True), TENANT: Tenant("alpha", 0.0)}
        return known.get(token)

    async def any_active(self) -> bool:
        return self.tenants_exist


@dataclass
class Stats:
    processed: int = 3


@dataclass
class FakeDecider:
    position: int = 42
    service: str = "planning"


def client(consumers: dict[str, Any], registry: Registry | None = None) -> TestClient:
    decider = FakeDecider()
    runtime: Any = SimpleNamespace(consumers=consumers)
    app = FastAPI()
    for r in decider_routers("planning", decider, runtime, lambda: {"servers": 2},  # type: ignore[arg-type]
                             gate=OperatorGate(registry or Registry(tenants_exist=False))):
        app.include_router(r)
    return TestClient(app)


def test_state_is_the_services_view_and_stats_its_consumer() -> None:
    c = client({"planning": SimpleNamespace(stats=Stats())})
    assert c.get("/v1/state").json() == {"servers": 2}
    assert c.get("/v1/stats").json() == {"position": 42, "consumer": {"processed": 3}}


def test_stats_before_the_consumer_started() -> None:
    assert client({}).get("/v1/stats").json() == {"position": 42, "consumer": None}


@pytest.mark.parametrize(("token", "status"), [(None, 401), ("sxt_000000000009_unknown-xxxxxxxxxxxxxxxxxxxx", 401),
                                               (TENANT, 403), (OPERATOR, 200)])
def test_once_a_tenant_exists_only_operators_are_answered(token: str | None, status: int) -> None:
    c = client({}, Registry(tenants_exist=True))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    for path in ("/v1/state", "/v1/stats"):
        r = c.get(path, headers=headers)
        assert r.status_code == status, r.text
        if status != 200:
            assert r.headers["content-type"].startswith("application/problem+json")
            assert "servers" not in r.text and "position" not in r.text


@pytest.mark.parametrize(("tenants_exist", "token", "status"),
                         [(False, None, 200), (True, None, 401), (True, TENANT, 403), (True, OPERATOR, 200)])
def test_metrics_answer_operators_only_once_a_tenant_exists(tenants_exist: bool, token: str | None,
                                                            status: int) -> None:
    """`/metrics` of every process, admission's public port included, has the operator rule of the
    services' own routes (`bootstrap.serve` passes the runtime's gate to `create_app`)."""
    from sextant_kit.app import create_app

    app = create_app("admission", metrics_gate=OperatorGate(Registry(tenants_exist=tenants_exist)))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = TestClient(app).get("/metrics", headers=headers)
    assert r.status_code == status, r.text
    if status == 200:
        assert "sextant_http_request_seconds" in r.text
    else:
        assert r.headers["content-type"].startswith("application/problem+json")
        assert "sextant_" not in r.text
    assert TestClient(app).get("/healthz").status_code == 200  # liveness stays open
