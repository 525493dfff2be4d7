"""Prometheus metrics of a process (docs/platform.md, Observability), served at `GET /metrics` by
every process's HTTP app (`app.create_app`), in the text exposition format of `prometheus-client`.

| metric | type | labels | what |
|---|---|---|---|
| `sextant_decisions_total` | counter | consumer, type | events a consumer appended in reaction to a record (decisions of a decider, facts of the agent), by event type |
| `sextant_records_total` | counter | consumer, outcome | records handled: processed, skipped (already tracked), dead_lettered |
| `sextant_decision_latency_seconds` | histogram | consumer | from the input event's recorded time to the append of what was decided from it |
| `sextant_record_seconds` | histogram | consumer | handling one record (handler, append, retries) |
| `sextant_http_request_seconds` | histogram | method, route, status | HTTP requests served (route template, not the raw path) |
| `sextant_consumer_lag` | gauge | consumer, topic, partition | records on the partition not yet fetched (high watermark − next offset), as of the last fetch |
| `sextant_arq_queue_length` | gauge | service, arq_class | workloads waiting in the admission (ARQ) queue, by class, in the state a decider folded |
| `sextant_dependency_outage` | gauge | dependency | 1 while the process sees a dependency (kafka, postgres) as down (`logs.OutageLog`) |
| `sextant_restarts_total` | counter | process | restarts of this process: `SEXTANT_RESTARTS` (set by whatever restarts it) at start, plus `RESTARTS.labels(process=…).inc()` |

Plus `prometheus-client`'s process and Python collectors (CPU, memory, open files, GC).
Gauges are read when scraped from what `watch_source` and `watch_decider` registered: nothing is
polled in the background.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter as Tally
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

RESTARTS_ENV = "SEXTANT_RESTARTS"
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

DECISIONS = Counter("sextant_decisions", "Events appended in reaction to a record, by type",
                    ["consumer", "type"])
RECORDS = Counter("sextant_records", "Records handled by a consumer, by outcome", ["consumer", "outcome"])
DECISION_LATENCY = Histogram("sextant_decision_latency_seconds",
                             "Input event recorded -> outputs decided from it appended", ["consumer"],
                             buckets=_LATENCY_BUCKETS)
RECORD_SECONDS = Histogram("sextant_record_seconds", "Handling one record (handler, append, retries)",
                           ["consumer"], buckets=_LATENCY_BUCKETS)
HTTP_SECONDS = Histogram("sextant_http_request_seconds", "HTTP requests served",
                         ["method", "route", "status"], buckets=_LATENCY_BUCKETS)
RESTARTS = Counter("sextant_restarts", "Restarts of this process", ["process"])
HEAD_MOVED = Counter("sextant_head_moved", "Appends refused because another writer moved the log head "
                     "(the outputs are decided again), by consumer and path (batch, one)", ["consumer", "path"])


class LagSource(Protocol):
    """What `watch_source` reads: `lag()` = (topic, partition) → records not yet fetched."""

    def lag(self) -> dict[tuple[str, int], int]: ...


class _State(Protocol):
    queued: Sequence[str]
    workloads: Any


class QueueSource(Protocol):
    @property
    def state(self) -> _State: ...


def record_handled(consumer: str, outcome: str, seconds: float) -> None:
    RECORDS.labels(consumer=consumer, outcome=outcome).inc()
    RECORD_SECONDS.labels(consumer=consumer).observe(max(0.0, seconds))


BATCH_ENDS = Counter("sextant_batch_ends", "Batches of a consumer's batched appends, by why they ended "
                     "(consumer.BatchEnd: all, flush, alone, moved, failed)", ["consumer", "why"])


def record_batch_end(consumer: str, why: str) -> None:
    BATCH_ENDS.labels(consumer=consumer, why=why).inc()


def record_head_moved(consumer: str, path: str) -> None:
    HEAD_MOVED.labels(consumer=consumer, path=path).inc()


def record_outputs(consumer: str, input_time: float | None, types: Iterable[str], now: float) -> None:
    """`types`: the event types appended in reaction to an input recorded at `input_time`."""
    n = 0
    for t, count in Tally(types).items():
        DECISIONS.labels(consumer=consumer, type=t).inc(count)
        n += count
    if n and input_time is not None:
        DECISION_LATENCY.labels(consumer=consumer).observe(max(0.0, now - input_time))


RESTARTS_FILE = "restarts.json"  # in the run folder: `{"restarts": {process: n}, ...}` (the supervisor's record)


def recorded_restarts(process: str, run_dir: str | None) -> int:
    """The restarts of `process` that the supervisor's event listener recorded in `run_dir`
    (`sextant up`; it counts a start that follows an exit before the new process has imported
    this module), 0 without a record."""
    if not run_dir:
        return 0
    try:
        counts = json.loads((Path(run_dir) / RESTARTS_FILE).read_text()).get("restarts", {})
        return max(0, int(counts.get(process, 0)))
    except (OSError, ValueError, AttributeError, TypeError):
        return 0


def process_started(process: str) -> None:
    """Count the restarts reported by whatever restarts this process — `SEXTANT_RESTARTS`, or the
    supervisor's record in `$SEXTANT_RUN_DIR` — the larger; the series exists from 0."""
    env = max(0, int(os.environ.get(RESTARTS_ENV, "0") or 0))
    RESTARTS.labels(process=process).inc(max(env, recorded_restarts(process, os.environ.get("SEXTANT_RUN_DIR"))))


class _Gauges(Collector):
    """Scrape-time gauges: lag, ARQ queue lengths, outages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sources: dict[str, LagSource] = {}
        self.deciders: dict[str, QueueSource] = {}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from .logs import OUTAGES

        with self._lock:
            sources, deciders = dict(self.sources), dict(self.deciders)
        lag = GaugeMetricFamily("sextant_consumer_lag", "Records on a partition not yet fetched",
                                labels=["consumer", "topic", "partition"])
        for name, src in sorted(sources.items()):
            for (topic, partition), n in sorted(src.lag().items()):
                lag.add_metric([name, topic, str(partition)], n)
        yield lag
        queue = GaugeMetricFamily("sextant_arq_queue_length", "Workloads queued for admission, by ARQ class",
                                  labels=["service", "arq_class"])
        for name, decider in sorted(deciders.items()):
            state = decider.state
            by_class = Tally(getattr(state.workloads.get(w), "arq_class", None) for w in state.queued)
            for cls, n in sorted(by_class.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
                queue.add_metric([name, "none" if cls is None else str(cls)], n)
        yield queue
        outage = GaugeMetricFamily("sextant_dependency_outage", "1 while a dependency is seen down",
                                   labels=["dependency"])
        for dep in sorted(OUTAGES.active()):
            outage.add_metric([dep], 1)
        yield outage


_GAUGES = _Gauges()
REGISTRY.register(_GAUGES)


def watch_source(consumer: str, source: LagSource) -> None:
    """Report `source.lag()` as `sextant_consumer_lag{consumer=…}`."""
    with _GAUGES._lock:
        _GAUGES.sources[consumer] = source


def watch_decider(service: str, decider: QueueSource) -> None:
    """Report the ARQ queue of `decider.state` as `sextant_arq_queue_length{service=…}`."""
    with _GAUGES._lock:
        _GAUGES.deciders[service] = decider


def render() -> tuple[bytes, str]:
    """The exposition text of every metric of this process, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
