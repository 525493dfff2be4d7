"""The Kafka front door refuses a non-finite number (`Infinity`, `NaN`, an overflowing `1e400`) as
the documented dead-letter reason `invalid`, its errors naming the field — not as a handler
failure. No PostgreSQL is needed: the refusal comes before the log is read."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sextant_admission.auth import Principal
from sextant_admission.frontdoor import REASONS, Refused, SubmissionHandler
from sextant_admission.handlers import make_decider
from sextant_admission.settings import Settings
from sextant_contracts.envelope import Envelope
from sextant_kit.eventstore.memory import MemoryEventStore
from sextant_kit.tenancy import Tenant

BODY = '{"kind": "batch", "target": {"type": "deadline", "at": AT}, "spec": {"type": "twin", "ref": "w-1"}}'


class OneTenant:
    """The gate's token check, for one known tenant (the registry is PostgreSQL's)."""

    async def token_tenant(self, token: str | None) -> Tenant:
        assert token == "sxt_test"
        return Tenant("alpha", created_at=0.0)

    def limits_of(self, tenant: Tenant) -> Principal:
        return Principal(tenant.name, None, None, 1.0, 1)


class Tokens:
    def __init__(self) -> None:
        self.tokens: dict[str, str | None] = {}


class Published:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    async def publish(self, topic: str, key: bytes, value: bytes, headers: Any = ()) -> None:
        self.sent.append((topic, value))


@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "NaN", "1e400"])
def test_a_non_finite_number_is_dead_lettered_as_invalid_naming_the_field(literal: str) -> None:
    payload = json.loads(BODY.replace("AT", literal))
    env = Envelope(id="sub-1", type="SubmitWorkload", source="test", stream="job-1", stream_version=0,
                   schema_version=1, time=0.0,
                   payload=payload)
    tokens = Tokens()
    tokens.tokens[env.id] = "Bearer sxt_test"
    published = Published()
    settings = Settings(database_url="postgresql+asyncpg://unused/x", kafka_bootstrap="unused:9092")
    handler = SubmissionHandler(make_decider(settings), MemoryEventStore(), OneTenant(),  # type: ignore[arg-type]
                                published, tokens)  # type: ignore[arg-type]
    with pytest.raises(Refused) as caught:
        asyncio.run(handler(env))
    assert caught.value.reason == "invalid" and caught.value.reason in REASONS
    assert [(e["path"], e["code"]) for e in caught.value.errors] == [("$.target.at", "finite_number")]
    assert "$.target.at" in caught.value.detail
    assert len(published.sent) == 1 and json.loads(published.sent[0][1])["reason"] == "invalid"
