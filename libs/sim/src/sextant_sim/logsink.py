"""The run's event log as JSON lines, one canonical line per event (`sextant_contracts.codec`).

Each line is `{"position", "id", "type", "schema_version", "stream", "causation", "event"}` with keys
sorted and floats in shortest round-trip form, so the same scenario, profile and seed give the same
bytes (the determinism golden test compares them).
"""

from __future__ import annotations

import hashlib
from typing import IO

from sextant_contracts import codec
from sextant_contracts import events as ev


class LogSink:
    """Writes to a text stream if given, and always keeps a running SHA-256 of the bytes."""

    def __init__(self, out: IO[str] | None = None, keep: bool = False) -> None:
        self._out = out
        self._hash = hashlib.sha256()
        self.lines: list[str] | None = [] if keep else None
        self.count = 0

    def write(self, position: int, event_id: str, e: ev.Event, cause: str | None) -> None:
        line = codec.dumps({"position": position, "id": event_id, "type": e.TYPE,
                            "schema_version": e.SCHEMA_VERSION, "stream": e.stream,
                            "causation": cause, "event": e}) + "\n"
        self._hash.update(line.encode("utf-8"))
        self.count += 1
        if self._out is not None:
            self._out.write(line)
        if self.lines is not None:
            self.lines.append(line)

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()
