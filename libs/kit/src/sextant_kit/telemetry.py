"""OpenTelemetry set-up and the trace hand-offs the kit makes explicit (DESIGN §2, §4).

A trace follows one workload: HTTP request (FastAPI instrumentation) → append (SQLAlchemy spans;
the envelope's `traceparent` is the current context, stored in the event and its outbox row) →
relay (`publish <topic>` PRODUCER span, child of the outbox row's context; the Kafka record's
`traceparent` header is THAT span) → consumer (`consume <topic>` CONSUMER span, child of the
header) → the consumer's handler and its database write.

**One setting turns export on** (docs/platform.md, Observability): `SEXTANT_OTEL_EXPORTER`, read by
`tracing_config(settings)`:

| exporter | what |
|---|---|
| `none` (default) | spans are created (context still propagates) but not exported |
| `jsonl` | one JSON object per span appended to `SEXTANT_OTEL_FILE`, by default `<SEXTANT_RUN_DIR>/traces/<service>.jsonl` |
| `otlp` | OTLP over HTTP to `SEXTANT_OTEL_ENDPOINT` (a collector's base address such as `http://collector:4318`: the `/v1/traces` path is added), by default OpenTelemetry's own `OTEL_EXPORTER_OTLP_*` variables or `http://localhost:4318` |

**Sampling**: polling is not traced. A span that starts a trace (no parent) is exported unless it
is a database statement (kind CLIENT: the relay's outbox poll, a consumer's batch look-up, a
decider's catch-up outside any record) — `PollingSampler`; the spans of a request are kept whole
(parent-based). A record's handling is exported only when it decided something (or failed): the
consumer loop opens no span for a record its handler says it ignores (`reacts`), and a handling
that appended nothing is dropped with the spans under it (`NoOpHandlingDropped`, from the
`sextant.outputs` attribute the loop sets); a decider's catch-up reads of the log are not traced
statement by statement (`runtime.DeciderHandler.catch_up`). So a workload's trace holds the work
done for it: at most `SPANS_PER_WORKLOAD` (60) from its POST to its start — measured 34.7 on
average, 38 at most, over 20 platform-demo workloads (`bench/observability.py`; 2 119 and 5 035
before sampling). `SEXTANT_OTEL_SAMPLE_POLLING=false` exports everything but the catch-up reads.

`setup_tracing(TelemetryConfig(...))` builds a TracerProvider with one exporter:

| exporter | what |
|---|---|
| `none` | spans are created (context still propagates) but not exported |
| `memory` | `InMemorySpanExporter` (tests in one process; `Telemetry.memory` holds it) |
| `jsonl` | one JSON object per span appended to a file (`JsonLinesSpanExporter`), so a test can collect spans written by other processes; `read_spans(path)` reads them back |
| `otlp` | OTLP over HTTP to `otlp_endpoint` (the collector of docker-compose) |

Nothing happens at import time; the process's bootstrap calls `setup_tracing` once.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_ON,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

ExporterKind = Literal["none", "memory", "jsonl", "otlp"]
TRACER_NAME = "sextant_kit"
SPANS_PER_WORKLOAD = 60
"""The documented budget of spans in one workload's trace from its submission to its start."""
OTLP_TRACES_PATH = "/v1/traces"
_PROPAGATOR = TraceContextTextMapPropagator()


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """How a process exports its spans (see the module table)."""

    service_name: str
    exporter: ExporterKind = "none"
    otlp_endpoint: str | None = None  # e.g. http://otel-collector:4318/v1/traces
    jsonl_path: str | None = None
    set_global: bool = True  # install as the global TracerProvider (once per process)
    sample_polling: bool = True  # drop root database spans (`PollingSampler`)


OUTPUTS_ATTRIBUTE = "sextant.outputs"
"""Set by the consumer loop on a CONSUMER span when the record was handled: how many events it
appended in reaction (0: a look at the record that decided nothing)."""
EFFECTS_ATTRIBUTE = "sextant.effects"
"""Set by a handler on the current span when handling the record acted otherwise than by
appending (the agent starting a run whose facts come later and continue this span's trace): such
a handling is exported even with no outputs."""
SUPERSEDED_ATTRIBUTE = "sextant.superseded_until_ns"
"""Set by the consumer loop on a CONSUMER span when an attempt's append was refused because another
writer moved the head first (`HeadMovedError`): the time (ns) that attempt ended. The spans under the
handling that ended by then belong to attempts whose outputs were thrown away and re-decided; they
are dropped, so a busy log (each retry is one more append statement) does not inflate the trace."""


class NoOpHandlingDropped(SpanProcessor):
    """Drops the spans of a record's handling that decided nothing: a CONSUMER span that ends with
    `sextant.outputs = 0` (and no `sextant.effects`), with every span started under it in this process (they are held until
    it ends). A handling that appended something, failed, or was dead-lettered is exported without
    the spans of its superseded attempts (`SUPERSEDED_ATTRIBUTE`); spans outside a handling pass
    straight through. In-flight handlings are the only state."""

    def __init__(self, inner: SpanProcessor) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._root_of: dict[int, int] = {}  # span id -> span id of the handling it belongs to
        self._held: dict[int, list[ReadableSpan]] = {}  # handling span id -> ended spans under it

    def on_start(self, span: Any, parent_context: otel_context.Context | None = None) -> None:
        ctx = span.get_span_context()
        parent = span.parent
        with self._lock:
            root = self._root_of.get(parent.span_id) if parent is not None else None
            if root is not None:
                self._root_of[ctx.span_id] = root
            elif span.kind == trace.SpanKind.CONSUMER:
                self._root_of[ctx.span_id] = ctx.span_id
                self._held[ctx.span_id] = []
        self._inner.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.get_span_context()
        assert ctx is not None
        with self._lock:
            root = self._root_of.pop(ctx.span_id, None)
            if root is None or (root != ctx.span_id and root not in self._held):
                release: list[ReadableSpan] = [span]  # outside a handling, or outliving it
            elif root != ctx.span_id:
                self._held[root].append(span)
                release = []
            else:
                held = self._held.pop(root, [])
                attrs = span.attributes or {}
                decided_nothing = attrs.get(OUTPUTS_ATTRIBUTE) == 0 and not attrs.get(EFFECTS_ATTRIBUTE)
                superseded = attrs.get(SUPERSEDED_ATTRIBUTE)
                if isinstance(superseded, int):
                    held = [s for s in held if s.end_time is None or s.end_time > superseded]
                release = [] if decided_nothing else [*held, span]
        for s in release:
            self._inner.on_end(s)

    def in_flight(self) -> int:
        """Spans tracked under handlings that have not ended (0 when the process is idle)."""
        with self._lock:
            return len(self._root_of) + sum(len(v) for v in self._held.values())

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class PollingSampler(Sampler):
    """Root sampler: drops a span that would start a trace as a database statement (kind CLIENT,
    i.e. polling outside any request or record); keeps every other root span."""

    def should_sample(self, parent_context: otel_context.Context | None, trace_id: int, name: str,
                      kind: trace.SpanKind | None = None, attributes: Any = None, links: Any = None,
                      trace_state: Any = None) -> SamplingResult:
        if kind == trace.SpanKind.CLIENT:
            return SamplingResult(Decision.DROP)
        return ALWAYS_ON.should_sample(parent_context, trace_id, name, kind, attributes, links, trace_state)

    def get_description(self) -> str:
        return "PollingSampler"


def otlp_traces_endpoint(endpoint: str) -> str:
    """A collector's base address (`http://collector:4318`) → its OTLP/HTTP traces URL; a URL that
    already has a path is kept."""
    from urllib.parse import urlsplit

    return endpoint if urlsplit(endpoint).path not in ("", "/") else endpoint.rstrip("/") + OTLP_TRACES_PATH


def tracing_config(settings: Any) -> TelemetryConfig:
    """The `TelemetryConfig` of a process's `KitSettings` (see the module table for defaults)."""
    exporter = settings.otel_exporter
    jsonl = settings.otel_file or (str(Path(settings.run_dir) / "traces" / f"{settings.service_name}.jsonl")
                                   if exporter == "jsonl" else "")
    return TelemetryConfig(service_name=settings.service_name, exporter=exporter,
                           otlp_endpoint=otlp_traces_endpoint(settings.otel_endpoint) if settings.otel_endpoint
                           else None,
                           jsonl_path=jsonl or None, sample_polling=settings.otel_sample_polling)


@dataclass
class Telemetry:
    """What `setup_tracing` built; `shutdown()` flushes and stops the exporter."""

    provider: TracerProvider
    memory: InMemorySpanExporter | None = None

    def tracer(self, name: str = TRACER_NAME) -> trace.Tracer:
        return self.provider.get_tracer(name)

    def shutdown(self) -> None:
        self.provider.force_flush()
        self.provider.shutdown()


class JsonLinesSpanExporter(SpanExporter):
    """Appends one JSON line per finished span to `path` (created if missing).

    Each line is written with a single `write` on a file opened in append mode, so several
    processes can share one file. Fields: trace_id, span_id, parent_span_id (hex or null), name,
    kind, service, start_ns, end_ns, status, attributes, links (trace/span ids).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = "".join(json.dumps(span_record(s), sort_keys=True, default=str) + "\n" for s in spans)
        with self._lock:
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, lines.encode("utf-8"))
            finally:
                os.close(fd)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """A span as a plain dict (the JSON-lines format)."""
    ctx = span.get_span_context()
    assert ctx is not None
    parent = span.parent
    return {
        "trace_id": f"{ctx.trace_id:032x}", "span_id": f"{ctx.span_id:016x}",
        "parent_span_id": f"{parent.span_id:016x}" if parent is not None else None,
        "name": span.name, "kind": span.kind.name,
        "service": span.resource.attributes.get("service.name"),
        "start_ns": span.start_time, "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
        "links": [{"trace_id": f"{lk.context.trace_id:032x}", "span_id": f"{lk.context.span_id:016x}"}
                  for lk in span.links],
    }


def read_spans(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every span record in a JSON-lines file (an absent file has none)."""
    p = Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def setup_tracing(config: TelemetryConfig) -> Telemetry:
    """Build the TracerProvider for this process (see the module table)."""
    sampler = ParentBased(root=PollingSampler()) if config.sample_polling else ParentBased(root=ALWAYS_ON)
    provider = TracerProvider(resource=Resource.create({"service.name": config.service_name}), sampler=sampler)
    memory: InMemorySpanExporter | None = None
    processor: SpanProcessor | None = None
    if config.exporter == "memory":
        memory = InMemorySpanExporter()
        processor = SimpleSpanProcessor(memory)
    elif config.exporter == "jsonl":
        if not config.jsonl_path:
            raise ValueError("exporter 'jsonl' needs jsonl_path")
        # simple (synchronous) processor: a span is on disk when it ends, even if the process is
        # SIGKILLed right after — what cross-process trace tests need
        processor = SimpleSpanProcessor(JsonLinesSpanExporter(config.jsonl_path))
    elif config.exporter == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=config.otlp_endpoint) if config.otlp_endpoint else OTLPSpanExporter()
        processor = BatchSpanProcessor(exporter)
    elif config.exporter != "none":
        raise ValueError(f"unknown span exporter {config.exporter!r}")
    if processor is not None:
        provider.add_span_processor(NoOpHandlingDropped(processor) if config.sample_polling else processor)
    if config.set_global:
        trace.set_tracer_provider(provider)
    return Telemetry(provider=provider, memory=memory)


# --- instrumentation ---------------------------------------------------------------------------


def instrument_sqlalchemy(engine: Any, provider: TracerProvider | None = None) -> None:
    """Trace every statement of one engine (sync `Engine` or `AsyncEngine`)."""
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
    from opentelemetry.metrics import NoOpMeter

    sync_engine = getattr(engine, "sync_engine", engine)
    tracer = trace.get_tracer("opentelemetry.instrumentation.sqlalchemy", tracer_provider=provider)
    EngineTracer(tracer, sync_engine, NoOpMeter("sextant").create_up_down_counter("db.client.connections.usage"))


def instrument_asyncpg(provider: TracerProvider | None = None) -> None:
    """Trace asyncpg calls process-wide (use for raw asyncpg connections; SQLAlchemy engines are
    better traced with `instrument_sqlalchemy`, which sees the statements)."""
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor

    instrumentor = AsyncPGInstrumentor()
    if not instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.instrument(tracer_provider=provider)


def instrument_fastapi(app: Any, provider: TracerProvider | None = None,
                       excluded_urls: str = "healthz,readyz,metrics") -> None:
    """Server spans for every request of a FastAPI app (health probes excluded)."""
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    # no spans for the ASGI receive/send events inside a request (three or four per request)
    FastAPIInstrumentor.instrument_app(app, tracer_provider=provider, excluded_urls=excluded_urls,
                                       exclude_spans=["receive", "send"])


# --- context hand-offs -------------------------------------------------------------------------


def current_traceparent() -> str | None:
    """The W3C `traceparent` of the current span (None when there is no valid span)."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent")


def context_from_traceparent(traceparent: str | None) -> otel_context.Context | None:
    """An OpenTelemetry Context whose parent is `traceparent` (None for None or a malformed one)."""
    if not traceparent:
        return None
    ctx = _PROPAGATOR.extract({"traceparent": traceparent})
    span_ctx = trace.get_current_span(ctx).get_span_context()
    return ctx if span_ctx.is_valid else None


def trace_id_of(traceparent: str | None) -> str | None:
    """The 32-hex trace id of a traceparent string, or None."""
    parts = (traceparent or "").split("-")
    return parts[1] if len(parts) == 4 and len(parts[1]) == 32 else None


@contextlib.contextmanager
def span_from(tracer: trace.Tracer, name: str, traceparent: str | None, *,
              kind: trace.SpanKind = trace.SpanKind.INTERNAL,
              attributes: Mapping[str, Any] | None = None) -> Iterator[trace.Span]:
    """A span that continues the trace of `traceparent` (a new root when it is missing)."""
    with tracer.start_as_current_span(name, context=context_from_traceparent(traceparent), kind=kind,
                                      attributes=dict(attributes or {})) as span:
        yield span


def consumer_span(name: str, traceparent: str | None, attributes: Mapping[str, Any] | None = None,
                  *, tracer: trace.Tracer | None = None) -> contextlib.AbstractContextManager[trace.Span]:
    """A CONSUMER span called `name` (e.g. `consume <topic>`), child of a record's `traceparent`
    header (a new root when there is none). Uses the global tracer unless `tracer` is given."""
    return span_from(tracer or default_tracer(), name, traceparent, kind=trace.SpanKind.CONSUMER,
                     attributes=_consumer_attributes(attributes))


def open_consumer_span(name: str, traceparent: str | None, attributes: Mapping[str, Any] | None = None,
                       *, tracer: trace.Tracer | None = None) -> trace.Span:
    """`consumer_span`, started but neither current nor ended: the caller makes it current
    (`trace.use_span`) and ends it when the handling's outcome is known."""
    return (tracer or default_tracer()).start_span(name, context=context_from_traceparent(traceparent),
                                                   kind=trace.SpanKind.CONSUMER,
                                                   attributes=_consumer_attributes(attributes))


def _consumer_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"messaging.system": "kafka", "messaging.operation.type": "process", **(attributes or {})}


def default_tracer() -> trace.Tracer:
    """The kit's tracer from the global provider (a no-op until `setup_tracing` installs one)."""
    return trace.get_tracer(TRACER_NAME)
