"""Start-up fails fast on a broken upcaster chain: `bootstrap()` checks the registry before it
opens the database engine, the tracer or the Kafka producer."""

from __future__ import annotations

import pytest
from sextant_contracts import events, upcasters
from sextant_kit import bootstrap as boot
from sextant_kit.settings import KitSettings


async def test_bootstrap_fails_on_a_broken_upcaster_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    # an event type at schema v2 with no v1 -> v2 upcaster (a plain stand-in: subclassing Event
    # would register it for good)
    broken = type("ProbeForBootstrapUpcasters", (), {"SCHEMA_VERSION": 2})
    monkeypatch.setitem(events.EVENT_TYPES, "ProbeForBootstrapUpcasters", broken)

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("bootstrap went on past a broken upcaster chain")

    monkeypatch.setattr(boot, "setup_tracing", must_not_run)
    monkeypatch.setattr(boot.PostgresEventStore, "from_url", must_not_run)
    settings = KitSettings(service_name="probe", database_url="postgresql+asyncpg://nobody@127.0.0.1:1/x",
                           kafka_bootstrap="127.0.0.1:1")
    with pytest.raises(upcasters.UpcasterError, match="ProbeForBootstrapUpcasters v1->v2"):
        await boot.bootstrap(settings)


async def test_bootstrap_checks_the_real_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Stop(Exception):
        pass

    def stop_after_check(*args: object, **kwargs: object) -> None:
        raise Stop

    monkeypatch.setattr(boot, "check_upcasters", lambda: calls.append("checked"))
    monkeypatch.setattr(boot, "setup_tracing", stop_after_check)
    settings = KitSettings(service_name="probe", database_url="postgresql+asyncpg://nobody@127.0.0.1:1/x",
                           kafka_bootstrap="127.0.0.1:1")
    with pytest.raises(Stop):
        await boot.bootstrap(settings)
    assert calls == ["checked"]
