"""The processes' log lines (docs/platform.md, Observability): one format, trace ids, and outages
logged once.

`setup_logging(service)` (called once by `bootstrap`) installs one handler on the root logger:

- **format**: `<date> <time>,<ms> <service> <LEVEL> <message>`, and — when the line is written
  inside a span — ` trace_id=<32 hex> span_id=<16 hex>` at its end (`TraceIds`), so a log line
  leads to its trace and a trace id to every line written while handling it;
- **outages** (`OutageLog`): while a dependency (Kafka, PostgreSQL) is down, every reconnection
  attempt of aiokafka and every retry of the kit used to write a line — a 31 s Kafka outage wrote
  ~21 000 ERROR lines. Now the first connection-error line of an outage is written, the following
  ones are counted, and one summary line is written when the outage ends: when the kit reports the
  dependency reachable again (`OutageLog.recovered`: the first success after a retry, records
  fetched, a relay round acknowledged), after `quiet_s` seconds without a connection error
  (`OutageLog.sweep`, run every second by `bootstrap.serve` and on every log record), or at exit
  (`OutageLog.close`). An outage that lasts is not silent: every `remind_s` seconds (60) one of
  its lines is written again, with how long it has lasted and how many lines were counted — a
  process retrying on a connection that will never work again shows in its log.

What is a connection-error line: a WARNING or above that the kit tagged with
`extra={"dependency": "kafka" | "postgres"}`, or one of aiokafka's loggers whose text names a
connection failure (`CONNECTION_TEXT`). During a Kafka outage every WARNING-or-above line of
aiokafka is counted with it (heartbeat, commit and metadata failures are the same outage). Any
other line is written as always.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from opentelemetry import trace

LEVEL_ENV = "SEXTANT_LOG_LEVEL"
CONNECTION_TEXT = re.compile(r"unable connect|connect call failed|connection (refused|reset|closed|error|lost)"
                             r"|kafkaconnectionerror|node ?not ?ready|unable to update metadata|not ?available"
                             r"|not ?leader|coordinator dead|timed ?out|errno 111", re.IGNORECASE)
KAFKA_LOGGERS = ("aiokafka",)


def _format_duration(seconds: float) -> str:
    return f"{seconds:.1f} s"


class TraceIds(logging.Filter):
    """Adds `record.trace_ids`: ` trace_id=… span_id=…` inside a valid span, else ``."""

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = trace.get_current_span().get_span_context()
        record.trace_ids = f" trace_id={ctx.trace_id:032x} span_id={ctx.span_id:016x}" if ctx.is_valid else ""
        return True


@dataclass
class _Outage:
    started: float
    last_error: float
    suppressed: int = 0
    reminded: float = 0.0  # when a line of it was last written


class OutageLog(logging.Filter):
    """Connection errors logged once per outage of a dependency, plus a summary line at its end
    (see the module docstring). Thread-safe; `clock` is injectable for tests."""

    def __init__(self, quiet_s: float = 10.0, clock: Callable[[], float] = time.time,
                 logger: logging.Logger | None = None, remind_s: float = 60.0) -> None:
        super().__init__()
        self.quiet_s = quiet_s
        self.remind_s = remind_s
        self.clock = clock
        self._log = logger or logging.getLogger("sextant_kit.outages")
        self._outages: dict[str, _Outage] = {}
        self._lock = threading.Lock()

    def dependency_of(self, record: logging.LogRecord) -> str | None:
        """The dependency a WARNING-or-above record reports as unreachable, or None."""
        if record.levelno < logging.WARNING or record.name == self._log.name:
            return None
        tagged = getattr(record, "dependency", None)
        if isinstance(tagged, str) and tagged:
            return tagged
        if record.name.startswith(KAFKA_LOGGERS) and ("kafka" in self._outages
                                                      or CONNECTION_TEXT.search(record.getMessage())):
            return "kafka"
        return None

    def filter(self, record: logging.LogRecord) -> bool:
        dependency = self.dependency_of(record)
        if dependency is None:
            self.sweep()
            return True
        now = self.clock()
        with self._lock:
            outage = self._outages.get(dependency)
            if outage is None:
                self._outages[dependency] = _Outage(started=now, last_error=now, reminded=now)
                first, remind = True, None
            else:
                outage.last_error = now
                remind = None
                if now - outage.reminded >= self.remind_s:
                    outage.reminded = now
                    remind = (now - outage.started, outage.suppressed)
                else:
                    outage.suppressed += 1
                first = False
        if first:
            record.msg = f"{record.msg} [{dependency} unreachable: further connection errors are counted, " \
                         f"not logged, until it is back]"
        elif remind is not None:
            record.msg = f"{record.msg} [{dependency} still unreachable after {_format_duration(remind[0])}; " \
                         f"{remind[1]} connection-error lines suppressed so far]"
        return first or remind is not None

    def recovered(self, dependency: str) -> None:
        """`dependency` answered again: end its outage (if any) with one summary line."""
        with self._lock:
            outage = self._outages.pop(dependency, None)
        if outage is not None:
            self._summary(dependency, outage, self.clock())

    def sweep(self) -> None:
        """End every outage without a connection error for `quiet_s` seconds."""
        if not self._outages:
            return
        now = self.clock()
        with self._lock:
            over = [(d, o) for d, o in self._outages.items() if now - o.last_error >= self.quiet_s]
            for d, _ in over:
                del self._outages[d]
        for d, o in over:
            self._summary(d, o, o.last_error)

    def close(self) -> None:
        """At exit: one summary line for each outage still going on."""
        with self._lock:
            left, self._outages = self._outages, {}
        for d, o in left.items():
            self._log.warning("%s still unreachable at exit, after an outage of %s; %d connection-error lines "
                              "suppressed", d, _format_duration(max(0.0, self.clock() - o.started)), o.suppressed)

    def active(self) -> dict[str, float]:
        """Dependency → when its ongoing outage started (Unix seconds)."""
        with self._lock:
            return {d: o.started for d, o in self._outages.items()}

    def _summary(self, dependency: str, outage: _Outage, end: float) -> None:
        self._log.warning("%s reachable again after an outage of %s; %d connection-error lines suppressed",
                          dependency, _format_duration(max(0.0, end - outage.started)), outage.suppressed)


OUTAGES = OutageLog()
"""The process's outage log (installed on the handler by `setup_logging`)."""


class _KitHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler `setup_logging` installs (a second call replaces it)."""


def setup_logging(service: str, level: str | int | None = None, *, stream: IO[str] | None = None,
                  outages: OutageLog | None = None) -> logging.Handler:
    """Install the kit's handler on the root logger (replacing any earlier one); returns it.
    `level`: a name or number (default: `SEXTANT_LOG_LEVEL` or INFO)."""
    outages = outages or OutageLog()
    global OUTAGES
    OUTAGES = outages
    handler = _KitHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter(f"%(asctime)s {service} %(levelname)s %(message)s%(trace_ids)s"))
    handler.addFilter(TraceIds())
    handler.addFilter(outages)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _KitHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level if level is not None else os.environ.get(LEVEL_ENV, "INFO").upper())
    return handler


def recovered(dependency: str) -> None:
    """Report `dependency` reachable again to the process's outage log."""
    OUTAGES.recovered(dependency)
