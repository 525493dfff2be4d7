"""The routes of a service that only decides (sextant_kit/deciding.py), through a real FastAPI app."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sextant_kit.deciding import decider_routers


@dataclass
class Stats:
    processed: int = 3


@dataclass
class FakeDecider:
    position: int = 42
    service: str = "planning"


def client(consumers: dict[str, Any]) -> TestClient:
    decider = FakeDecider()
    runtime: Any = SimpleNamespace(consumers=consumers)
    app = FastAPI()
    for r in decider_routers("planning", decider, runtime, lambda: {"servers": 2}):  # type: ignore[arg-type]
        app.include_router(r)
    return TestClient(app)


def test_state_is_the_services_view_and_stats_its_consumer() -> None:
    c = client({"planning": SimpleNamespace(stats=Stats())})
    assert c.get("/v1/state").json() == {"servers": 2}
    assert c.get("/v1/stats").json() == {"position": 42, "consumer": {"processed": 3}}


def test_stats_before_the_consumer_started() -> None:
    assert client({}).get("/v1/stats").json() == {"position": 42, "consumer": None}
