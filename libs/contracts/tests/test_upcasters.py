"""Upcasters bring old payloads to the current schema; a missing link fails start-up."""

from __future__ import annotations

from typing import ClassVar

import pytest
from sextant_contracts import events, upcasters


def test_registry_is_complete_at_startup() -> None:
    upcasters.check_upcasters()  # raises when a chain is broken


def test_upcast_chain_and_missing_link(monkeypatch: pytest.MonkeyPatch) -> None:
    class Probe(events.WorkloadEvent):
        TYPE: ClassVar[str] = "ProbeForUpcasterTest"
        SCHEMA_VERSION: ClassVar[int] = 3
        size: int

    try:
        with pytest.raises(upcasters.UpcasterError, match="ProbeForUpcasterTest v1->v2"):
            upcasters.check_upcasters()
        monkeypatch.setitem(upcasters._UPCASTERS, ("ProbeForUpcasterTest", 1),
                            lambda p: {k: v for k, v in p.items() if k != "length"} | {"size": p["length"]})
        monkeypatch.setitem(upcasters._UPCASTERS, ("ProbeForUpcasterTest", 2),
                            lambda p: {**p, "size": p["size"] * 2})
        upcasters.check_upcasters()
        out = upcasters.upcast("ProbeForUpcasterTest", 1, {"at": 0, "workload_id": "w", "length": 5})
        assert out == {"at": 0, "workload_id": "w", "size": 10}
        with pytest.raises(upcasters.UpcasterError, match="newer"):
            upcasters.upcast("ProbeForUpcasterTest", 4, {})
    finally:
        events.EVENT_TYPES.pop("ProbeForUpcasterTest", None)
