"""Envelope builders for tests of the kit's ports (contract suites, integration tests, workers).

`make_envelope` produces a valid envelope of type `Tick` with a small payload; ids are derived
from (stream, version, n) unless given, so two builds of "the same" envelope are equal.
"""

from __future__ import annotations

from typing import Any

from sextant_contracts.envelope import Envelope

BASE_TIME = 1_700_000_000.5


def make_envelope(stream: str, version: int, n: int = 0, *, id: str | None = None,
                  traceparent: str | None = None, causation_id: str | None = None,
                  **payload: Any) -> Envelope:
    """A test envelope: type `Tick`, payload `{"n": n, **payload}`, time BASE_TIME + n."""
    return Envelope(id=id or f"{stream}:{version}:{n}", type="Tick", source="kit-test",
                    stream=stream, stream_version=version, schema_version=1, time=BASE_TIME + n,
                    payload={"n": n, **payload}, traceparent=traceparent, causation_id=causation_id)


def make_envelopes(stream: str, count: int, *, start: int = 1) -> list[Envelope]:
    """`count` envelopes of `stream` numbered `start`, `start + 1`, ..."""
    return [make_envelope(stream, start + i, start + i) for i in range(count)]
