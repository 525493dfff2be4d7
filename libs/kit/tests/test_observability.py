"""Unit tests of the platform's observability (docs/platform.md, "Observability"): one setting turns
on span export, log lines carry trace and span ids, polling spans are sampled out, a dependency's
outage is logged once plus a summary line, and every process serves Prometheus metrics."""

from __future__ import annotations

import dataclasses
import io
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind

SETTINGS = {"service_name": "svc", "database_url": "postgresql+asyncpg://x@127.0.0.1:1/x",
            "kafka_bootstrap": "127.0.0.1:1"}


@pytest.fixture
def logged() -> Iterator[tuple[io.StringIO, logging.Handler]]:
    """The kit's log set-up writing to a buffer; the root logger's handlers are restored after."""
    from sextant_kit.logs import setup_logging

    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    buf = io.StringIO()
    handler = setup_logging("svc", stream=buf)
    try:
        yield buf, handler
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


def test_one_setting_turns_on_span_export(tmp_path: Path) -> None:
    from sextant_kit.settings import KitSettings
    from sextant_kit.telemetry import read_spans, setup_tracing, tracing_config

    cfg = tracing_config(KitSettings(**SETTINGS, otel_exporter="jsonl", run_dir=str(tmp_path)))
    assert cfg.exporter == "jsonl" and cfg.jsonl_path == str(tmp_path / "traces" / "svc.jsonl")
    tel = setup_tracing(dataclasses.replace(cfg, set_global=False))
    with tel.tracer().start_as_current_span("work", kind=SpanKind.SERVER):
        pass
    tel.shutdown()
    assert [s["name"] for s in read_spans(tmp_path / "traces" / "svc.jsonl")] == ["work"]
    # OTLP: the collector's base address is enough (the traces path is added)
    otlp = tracing_config(KitSettings(**SETTINGS, otel_exporter="otlp", otel_endpoint="http://collector:4318"))
    assert otlp.otlp_endpoint == "http://collector:4318/v1/traces"
    assert tracing_config(KitSettings(**SETTINGS)).exporter == "none"


def test_log_lines_carry_trace_and_span_ids(logged: tuple[io.StringIO, logging.Handler]) -> None:
    from sextant_kit.telemetry import TelemetryConfig, setup_tracing

    buf, _ = logged
    tel = setup_tracing(TelemetryConfig("svc", exporter="memory", set_global=False))
    with tel.tracer().start_as_current_span("handle", kind=SpanKind.CONSUMER) as span:
        logging.getLogger("sextant_kit.test").info("decided %s", "w-1")
        ctx = span.get_span_context()
    logging.getLogger("sextant_kit.test").info("outside")
    inside, outside = buf.getvalue().splitlines()
    assert " svc INFO decided w-1 " in inside
    assert inside.endswith(f"trace_id={ctx.trace_id:032x} span_id={ctx.span_id:016x}")
    assert outside.endswith(" svc INFO outside")  # no span, no ids


def test_polling_spans_are_sampled_out() -> None:
    from sextant_kit.telemetry import TelemetryConfig, setup_tracing

    tel = setup_tracing(TelemetryConfig("svc", exporter="memory", set_global=False))
    tracer = tel.tracer()
    with tracer.start_as_current_span("SELECT sextant", kind=SpanKind.CLIENT):
        pass  # a poll: a statement outside any request or record
    with (tracer.start_as_current_span("GET /v1/workloads", kind=SpanKind.SERVER),
          tracer.start_as_current_span("SELECT sextant", kind=SpanKind.CLIENT)):
        pass  # the same statement serving a request belongs to the request's trace
    with tracer.start_as_current_span("consume t", kind=SpanKind.CONSUMER):
        pass
    assert tel.memory is not None
    assert [(s.name, s.kind) for s in tel.memory.get_finished_spans()] == [
        ("SELECT sextant", SpanKind.CLIENT), ("GET /v1/workloads", SpanKind.SERVER), ("consume t", SpanKind.CONSUMER)]
    keep = setup_tracing(TelemetryConfig("svc", exporter="memory", set_global=False, sample_polling=False))
    with keep.tracer().start_as_current_span("SELECT sextant", kind=SpanKind.CLIENT):
        pass
    assert keep.memory is not None and len(keep.memory.get_finished_spans()) == 1


def test_an_outage_is_logged_once_and_summed_up_when_it_ends(logged: tuple[io.StringIO, logging.Handler]) -> None:
    from sextant_kit.logs import OutageLog

    buf, handler = logged
    outages = next(f for f in handler.filters if isinstance(f, OutageLog))
    now = [1000.0]
    outages.clock = lambda: now[0]
    kafka = logging.getLogger("aiokafka.conn")
    for i in range(500):  # what aiokafka writes on every reconnection attempt while the broker is down
        kafka.error("Unable connect to node with id 1: [Errno 111] Connect call failed ('127.0.0.1', 9092)")
        logging.getLogger("sextant_kit.consumer").warning("planning: fetch unavailable (%r); retry %d",
                                                          ConnectionError("refused"), i,
                                                          extra={"dependency": "kafka"})
        now[0] += 0.06
    logging.getLogger("sextant_kit.consumer").warning("postgres blip", extra={"dependency": "postgres"})
    logging.getLogger("sextant_kit.other").error("a real error")  # not a connection error: always logged
    lines = buf.getvalue().splitlines()
    assert len(lines) == 3, lines
    assert "Unable connect to node" in lines[0] and "postgres blip" in lines[1] and "a real error" in lines[2]
    outages.recovered("kafka")
    outages.recovered("kafka")  # once only
    summary = buf.getvalue().splitlines()[3:]
    assert len(summary) == 1 and "kafka" in summary[0] and "999 connection-error lines suppressed" in summary[0]
    assert "outage of 30.0 s" in summary[0]
    # a quiet period ends an outage nobody reported as over
    now[0] += outages.quiet_s + 1
    outages.sweep()
    assert "postgres" in buf.getvalue().splitlines()[-1] and "0 connection-error lines" in buf.getvalue()
    kafka.error("Unable connect to node with id 1: [Errno 111] Connect call failed")
    kafka.error("Unable connect to node with id 1: [Errno 111] Connect call failed")
    now[0] += 2.0
    outages.close()  # the process exits during an outage: its summary is not lost
    assert buf.getvalue().splitlines()[-1].endswith(
        "kafka still unreachable at exit, after an outage of 2.0 s; 1 connection-error lines suppressed")


async def test_every_process_serves_prometheus_metrics() -> None:
    import httpx
    from fastapi import APIRouter
    from sextant_contracts.envelope import Envelope
    from sextant_contracts.events import Event, WorkloadCompleted
    from sextant_kit import metrics
    from sextant_kit.app import create_app
    from sextant_kit.bus import MemoryBus
    from sextant_kit.consumer import ConsumerLoop, RetryPolicy
    from sextant_kit.eventstore.memory import MemoryEventStore
    from sextant_kit.testing.envelopes import make_envelope

    async def handler(env: Envelope) -> Sequence[Event]:
        return [WorkloadCompleted(workload_id="w-out", at=1.0)]

    bus = MemoryBus({"in": 1, "dlq": 1})
    loop = ConsumerLoop(name="metrics-test", source=bus.source("metrics-test", ["in"]),
                        store=MemoryEventStore(topic_of=lambda s: None), handler=handler, dead_letters=bus,
                        dead_letter_topic="dlq", retry=RetryPolicy(initial_backoff=0.0, max_backoff=0.0),
                        fetch_timeout=0.0)
    await bus.publish("in", *make_envelope("workload-1", 1, 1).with_position(1).to_kafka())
    while await loop.run_once():
        pass
    metrics.RESTARTS.labels(process="svc").inc()
    router = APIRouter()

    @router.get("/v1/things/{thing_id}")
    async def thing(thing_id: str) -> dict[str, str]:
        return {"id": thing_id}

    app = create_app("svc", routers=(router,))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        assert (await client.get("/v1/things/t-1")).status_code == 200
        r = await client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert 'sextant_decisions_total{consumer="metrics-test",type="WorkloadCompleted"} 1.0' in text
    assert 'sextant_records_total{consumer="metrics-test",outcome="processed"} 1.0' in text
    assert 'sextant_decision_latency_seconds_count{consumer="metrics-test"} 1.0' in text
    assert 'sextant_restarts_total{process="svc"}' in text
    assert 'sextant_http_request_seconds_count{method="GET",route="/v1/things/{thing_id}",status="200"}' in text
    for family in ("sextant_consumer_lag", "sextant_arq_queue_length", "sextant_dependency_outage"):
        assert f"# TYPE {family} " in text


async def test_a_connection_error_is_attributed_to_the_driver_it_came_from() -> None:
    import asyncpg
    from aiokafka.errors import KafkaConnectionError
    from sextant_kit.errors import dependency_of

    assert dependency_of(KafkaConnectionError("down")) == "kafka"
    with pytest.raises(OSError) as refused:  # asyncpg raises the OS error itself
        await asyncpg.connect("postgresql://x@127.0.0.1:1/x", timeout=5)
    assert dependency_of(refused.value) == "postgres"
    assert dependency_of(ConnectionRefusedError("nobody says")) is None


async def test_a_record_the_handler_ignores_is_handled_without_a_span() -> None:
    from sextant_contracts.envelope import Envelope
    from sextant_contracts.events import Event, WorkloadCompleted
    from sextant_kit.bus import MemoryBus
    from sextant_kit.consumer import ConsumerLoop, RetryPolicy
    from sextant_kit.eventstore.memory import MemoryEventStore
    from sextant_kit.telemetry import TelemetryConfig, setup_tracing
    from sextant_kit.testing.envelopes import make_envelope

    handled: list[int] = []

    async def handler(env: Envelope) -> Sequence[Event]:
        handled.append(env.payload["n"])
        return [WorkloadCompleted(workload_id=f"w-{env.payload['n']}", at=1.0)] if env.payload["n"] % 2 else []

    tel = setup_tracing(TelemetryConfig("svc", exporter="memory", set_global=False))
    bus = MemoryBus({"in": 1, "dlq": 1})
    loop = ConsumerLoop(name="quiet", source=bus.source("quiet", ["in"]), store=MemoryEventStore(topic_of=lambda s: None),
                        handler=handler, dead_letters=bus, dead_letter_topic="dlq", tracer=tel.tracer(),
                        retry=RetryPolicy(initial_backoff=0.0, max_backoff=0.0), fetch_timeout=0.0,
                        reacts=lambda env: bool(env.payload["n"] % 2))
    for n in range(4):
        await bus.publish("in", *make_envelope(f"workload-{n}", 1, n).with_position(n + 1).to_kafka())
    while await loop.run_once():
        pass
    assert handled == [0, 1, 2, 3] and loop.stats.processed == 4
    assert tel.memory is not None
    spans = tel.memory.get_finished_spans()
    assert [s.attributes["messaging.kafka.offset"] for s in spans if s.kind == SpanKind.CONSUMER] == [1, 3]


def test_queue_lengths_by_arq_class_and_lag_are_read_when_scraped() -> None:
    from types import SimpleNamespace

    from sextant_kit import metrics

    state = SimpleNamespace(queued=("w-1", "w-2", "w-3"),
                            workloads={"w-1": SimpleNamespace(arq_class=2), "w-2": SimpleNamespace(arq_class=2),
                                       "w-3": SimpleNamespace(arq_class=0)})
    metrics.watch_decider("queue-test", SimpleNamespace(state=state))  # type: ignore[arg-type]
    metrics.watch_source("lag-test", SimpleNamespace(lag=lambda: {("sextant.events.workloads", 3): 17}))
    text = metrics.render()[0].decode()
    assert 'sextant_arq_queue_length{arq_class="2",service="queue-test"} 2.0' in text
    assert 'sextant_arq_queue_length{arq_class="0",service="queue-test"} 1.0' in text
    assert 'sextant_consumer_lag{consumer="lag-test",partition="3",topic="sextant.events.workloads"} 17.0' in text
    state.queued = ("w-1",)  # a gauge is the state when scraped
    assert 'sextant_arq_queue_length{arq_class="0"' not in metrics.render()[0].decode()


async def test_a_producer_fenced_by_a_broker_restart_is_replaced_and_the_send_retried() -> None:
    from types import SimpleNamespace

    from aiokafka.errors import OutOfOrderSequenceNumber
    from sextant_kit.errors import TransientError, dependency_of, is_transient
    from sextant_kit.kafka.producer import KafkaPublisher

    class Producer:
        def __init__(self, fenced: bool) -> None:
            self.fenced, self.started, self.stopped = fenced, False, False

        async def start(self) -> None:
            self.started = True

        async def stop(self) -> None:
            self.stopped = True

        async def send_and_wait(self, topic: str, value: Any, **kw: Any) -> Any:
            if self.fenced:
                raise OutOfOrderSequenceNumber()
            return SimpleNamespace(topic=topic, partition=0, offset=7)

    first = Producer(fenced=True)
    made: list[Producer] = []

    def replacement() -> Any:
        made.append(Producer(fenced=False))
        return made[-1]

    publisher = KafkaPublisher(first, factory=replacement)  # type: ignore[arg-type]
    with pytest.raises(TransientError) as err:
        await publisher.publish("t", b"k", b"v")
    assert is_transient(err.value) and dependency_of(err.value) == "kafka"
    assert first.stopped and made[0].started and publisher.replaced == 1
    assert (await publisher.publish("t", b"k", b"v")).offset == 7
    assert publisher.producer is made[0]


async def test_a_handling_that_decided_nothing_is_dropped_with_its_child_spans() -> None:
    from sextant_contracts.envelope import Envelope
    from sextant_contracts.events import Event, WorkloadCompleted
    from sextant_kit.bus import MemoryBus
    from sextant_kit.consumer import ConsumerLoop, RetryPolicy
    from sextant_kit.eventstore.memory import MemoryEventStore
    from sextant_kit.telemetry import TelemetryConfig, setup_tracing
    from sextant_kit.testing.envelopes import make_envelope

    def loop_with(sample_polling: bool) -> tuple[ConsumerLoop, MemoryBus, Any]:
        tel = setup_tracing(TelemetryConfig("svc", exporter="memory", set_global=False, sample_polling=sample_polling))

        async def handler(env: Envelope) -> Sequence[Event]:
            with tel.tracer().start_as_current_span(f"look {env.payload['n']}"):
                odd = env.payload["n"] % 2
            return [WorkloadCompleted(workload_id=f"w-{env.payload['n']}", at=1.0)] if odd else []

        bus = MemoryBus({"in": 1, "dlq": 1})
        return ConsumerLoop(name="c", source=bus.source("c", ["in"]), store=MemoryEventStore(topic_of=lambda s: None),
                            handler=handler, dead_letters=bus, dead_letter_topic="dlq", tracer=tel.tracer(),
                            retry=RetryPolicy(initial_backoff=0.0, max_backoff=0.0), fetch_timeout=0.0), bus, tel

    for sample_polling, expected in ((True, ["look 1", "consume in", "look 3", "consume in"]),
                                     (False, ["look 0", "consume in", "look 1", "consume in", "look 2",
                                              "consume in", "look 3", "consume in"])):
        loop, bus, tel = loop_with(sample_polling)
        for n in range(4):
            await bus.publish("in", *make_envelope(f"workload-{n}", 1, n).with_position(n + 1).to_kafka())
        while await loop.run_once():
            pass
        assert loop.stats.processed == 4
        assert [s.name for s in tel.memory.get_finished_spans()] == expected


def test_a_span_that_outlives_its_handling_is_exported_and_nothing_is_kept() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from sextant_kit.telemetry import OUTPUTS_ATTRIBUTE, NoOpHandlingDropped

    memory = InMemorySpanExporter()
    filt = NoOpHandlingDropped(SimpleSpanProcessor(memory))
    provider = TracerProvider()
    provider.add_span_processor(filt)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("consume t", kind=SpanKind.CONSUMER) as consume:
        late = tracer.start_span("background work")  # started in the handling, ends after it
        consume.set_attribute(OUTPUTS_ATTRIBUTE, 0)
        assert filt.in_flight() == 2
    late.end()
    assert [s.name for s in memory.get_finished_spans()] == ["background work"]
    assert filt.in_flight() == 0


def test_a_restarted_process_counts_the_restarts_its_supervisor_recorded(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from sextant_kit import metrics

    # the supervisor's event listener (sextant_cli.supervision) wrote 2 restarts of planning
    (tmp_path / metrics.RESTARTS_FILE).write_text('{"restarts": {"planning": 2, "agent": 1}, "pids": {}}')
    assert metrics.recorded_restarts("planning", str(tmp_path)) == 2
    assert metrics.recorded_restarts("telemetry", str(tmp_path)) == 0  # never restarted
    assert metrics.recorded_restarts("planning", None) == 0  # no run folder: nothing recorded
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / metrics.RESTARTS_FILE).write_text("{not json")
    assert metrics.recorded_restarts("planning", str(tmp_path / "broken")) == 0
    before = metrics.RESTARTS.labels(process="restart-probe")._value.get()
    monkeypatch.setenv("SEXTANT_RUN_DIR", str(tmp_path))
    monkeypatch.setenv(metrics.RESTARTS_ENV, "1")
    (tmp_path / metrics.RESTARTS_FILE).write_text('{"restarts": {"restart-probe": 3}}')
    metrics.process_started("restart-probe")  # the larger of the environment's 1 and the record's 3
    assert metrics.RESTARTS.labels(process="restart-probe")._value.get() == before + 3


async def test_the_spans_of_an_attempt_refused_for_a_moved_head_are_dropped() -> None:
    """A decider's append refused because another writer moved the head first is re-decided; the
    spans of the refused attempts are not exported (CI once saw 31 refused appends in one trace)."""
    from sextant_contracts.envelope import Envelope
    from sextant_contracts.events import Event, WorkloadCompleted
    from sextant_kit.bus import MemoryBus
    from sextant_kit.consumer import ConsumerLoop, RetryPolicy
    from sextant_kit.errors import HeadMovedError
    from sextant_kit.eventstore.memory import MemoryEventStore
    from sextant_kit.telemetry import SUPERSEDED_ATTRIBUTE, TelemetryConfig, setup_tracing
    from sextant_kit.testing.envelopes import make_envelope

    tel = setup_tracing(TelemetryConfig("svc", exporter="memory", set_global=False))
    attempts: list[int] = []

    class Busy(MemoryEventStore):
        async def append_and_track(self, *args: Any, **kw: Any) -> Any:
            with tel.tracer().start_as_current_span(f"append {len(attempts)}"):
                if len(attempts) < 4:
                    raise HeadMovedError(len(attempts), len(attempts) + 1)
                return await super().append_and_track(*args, **kw)

    async def handler(env: Envelope) -> Sequence[Event]:
        attempts.append(len(attempts) + 1)
        with tel.tracer().start_as_current_span(f"decide {len(attempts)}"):
            return [WorkloadCompleted(workload_id="w-1", at=1.0)]

    bus = MemoryBus({"in": 1, "dlq": 1})
    loop = ConsumerLoop(name="c", source=bus.source("c", ["in"]), store=Busy(topic_of=lambda s: None),
                        handler=handler, dead_letters=bus, dead_letter_topic="dlq", tracer=tel.tracer(),
                        retry=RetryPolicy(initial_backoff=0.0, max_backoff=0.0), fetch_timeout=0.0)
    await bus.publish("in", *make_envelope("workload-1", 1, 1).with_position(1).to_kafka())
    while await loop.run_once():
        pass
    assert attempts == [1, 2, 3, 4] and loop.stats.head_retries == 3 and loop.stats.processed == 1
    assert tel.memory is not None
    spans = tel.memory.get_finished_spans()
    assert [s.name for s in spans] == ["decide 4", "append 4", "consume in"]
    (consume,) = [s for s in spans if s.kind == SpanKind.CONSUMER]
    assert consume.attributes is not None and consume.attributes[SUPERSEDED_ATTRIBUTE] > 0


def test_a_long_outage_writes_one_reminder_a_minute(logged: tuple[io.StringIO, logging.Handler]) -> None:
    """A process retrying for minutes (a dependency down, or a connection that will never work again)
    is not silent: one line a minute says how long and how many lines were counted."""
    from sextant_kit.logs import OutageLog

    buf, handler = logged
    outages = next(f for f in handler.filters if isinstance(f, OutageLog))
    now = [5000.0]
    outages.clock = lambda: now[0]
    retry = logging.getLogger("sextant_kit.consumer")
    for i in range(150):  # one retry a second for 150 s
        retry.warning("planning: append unavailable; retry %d", i, extra={"dependency": "postgres"})
        now[0] += 1.0
    lines = buf.getvalue().splitlines()
    assert len(lines) == 3, lines
    assert "retry 0 " in lines[0] + " " and "further connection errors are counted" in lines[0]
    assert "retry 60 [postgres still unreachable after 60.0 s; 59 connection-error lines suppressed so far]" in lines[1]
    assert "retry 120 [postgres still unreachable after 120.0 s; 118 connection-error lines suppressed so far]" \
        in lines[2]
    outages.recovered("postgres")
    assert "147 connection-error lines suppressed" in buf.getvalue().splitlines()[-1]
