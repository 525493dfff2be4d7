"""Unit tests of the telemetry helpers: exporters and traceparent hand-offs."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.trace import SpanKind
from sextant_kit.telemetry import (
    TelemetryConfig,
    consumer_span,
    context_from_traceparent,
    current_traceparent,
    read_spans,
    setup_tracing,
    trace_id_of,
)


def test_no_span_means_no_traceparent() -> None:
    assert current_traceparent() is None
    assert context_from_traceparent(None) is None
    assert context_from_traceparent("garbage") is None
    assert trace_id_of("00-" + "a" * 32 + "-" + "b" * 16 + "-01") == "a" * 32
    assert trace_id_of("nope") is None


def test_jsonl_exporter_writes_spans_a_consumer_span_continues(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    t = setup_tracing(TelemetryConfig("svc-a", exporter="jsonl", jsonl_path=str(path), set_global=False))
    tracer = t.tracer()
    with tracer.start_as_current_span("root"):
        tp = current_traceparent()
    assert tp is not None
    with consumer_span("consume topic-x", tp, {"k": 1}, tracer=tracer), tracer.start_as_current_span("db"):
        pass
    t.shutdown()
    spans = {s["name"]: s for s in read_spans(path)}
    assert set(spans) == {"root", "consume topic-x", "db"}
    root, consume, db = spans["root"], spans["consume topic-x"], spans["db"]
    assert root["trace_id"] == consume["trace_id"] == db["trace_id"] == trace_id_of(tp)
    assert consume["parent_span_id"] == root["span_id"] and db["parent_span_id"] == consume["span_id"]
    assert consume["kind"] == SpanKind.CONSUMER.name and consume["attributes"]["k"] == 1
    assert consume["service"] == "svc-a"


def test_memory_exporter_collects_spans() -> None:
    t = setup_tracing(TelemetryConfig("svc-b", exporter="memory", set_global=False))
    with t.tracer().start_as_current_span("x"):
        pass
    assert t.memory is not None and [s.name for s in t.memory.get_finished_spans()] == ["x"]


def test_missing_file_has_no_spans(tmp_path: Path) -> None:
    assert read_spans(tmp_path / "absent.jsonl") == []
