"""Acceptance "Trace": an HTTP request to one process yields a trace that continues, through the
Kafka record's `traceparent` header, into the consuming handler of another process and its
database write — asserted on the spans both processes export (one JSON-lines file) and on the
record's headers."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from sextant_kit.kafka.consumer import KafkaSource
from sextant_kit.migrations import migrate_async
from sextant_kit.telemetry import read_spans, trace_id_of
from sextant_kit.testing.kafka_offsets import topic_end_offsets

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start(module: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(sys.executable, "-m", module, *args,
                                                stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT, env={**os.environ})


async def stop(proc: asyncio.subprocess.Process) -> str:
    if proc.returncode is None:
        proc.terminate()
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return out.decode()


def statement(span: dict[str, Any]) -> str:
    attrs = span["attributes"]
    return str(attrs.get("db.statement", attrs.get("db.query.text", "")))


def ancestors(span: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    chain = []
    while span.get("parent_span_id") in by_id:
        span = by_id[span["parent_span_id"]]
        chain.append(span)
    return chain


async def test_http_request_trace_reaches_the_consumer_and_its_database_write(
        fresh_pg_url: str, kafka_bootstrap: str, kafka_topics: Any, tmp_path: Path) -> None:
    topic, dlq = await kafka_topics(2)
    await migrate_async(fresh_pg_url)
    spans_file = tmp_path / "spans.jsonl"
    port = free_port()
    app = await start("sextant_kit.testing.trace_app", "--db", fresh_pg_url, "--bootstrap", kafka_bootstrap,
                      "--topic", topic, "--spans", str(spans_file), "--port", str(port))
    consumer = await start("sextant_kit.testing.trace_consumer", "--db", fresh_pg_url, "--bootstrap",
                           kafka_bootstrap, "--topic", topic, "--group", "trace-consumer", "--spans",
                           str(spans_file), "--dlq-topic", dlq)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            for _ in range(300):
                assert app.returncode is None, await stop(app)
                try:
                    if (await client.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
            response = await client.post("/workloads/w-trace/complete")
        assert response.status_code == 200, response.text
        body = response.json()
        await asyncio.wait_for(consumer.wait(), 120)
        assert consumer.returncode == 0, await stop(consumer)
    finally:
        app_log = await stop(app)
        if consumer.returncode is None:
            await stop(consumer)

    # the record on the broker carries the trace in its traceparent header
    assert sum((await topic_end_offsets(kafka_bootstrap, topic)).values()) == 1
    source = KafkaSource.create(kafka_bootstrap, "trace-reader", [topic])
    await source.start()
    try:
        records = []
        for _ in range(60):
            records += await source.fetch(0.5, 10)
            if records:
                break
    finally:
        await source.stop()
    (record,) = records
    header = record.header("traceparent")
    assert record.header("ce_id") == body["id"]
    trace_id = trace_id_of(body["traceparent"])
    assert trace_id is not None and trace_id_of(header) == trace_id

    spans = [s for s in read_spans(spans_file) if s["trace_id"] == trace_id]
    by_id = {s["span_id"]: s for s in spans}
    (server,) = [s for s in spans if s["kind"] == "SERVER" and s["service"] == "trace-app"]
    assert "/workloads/{workload_id}/complete" in server["name"], app_log
    (publish,) = [s for s in spans if s["name"] == f"publish {topic}"]
    assert publish["kind"] == "PRODUCER" and server in ancestors(publish, by_id)
    assert header is not None and header.split("-")[2] == publish["span_id"]  # the header IS the publish span
    app_inserts = [s for s in spans if s["service"] == "trace-app" and "sextant_append" in statement(s)]
    assert app_inserts and all(server in ancestors(s, by_id) for s in app_inserts)

    (consume,) = [s for s in spans if s["name"] == f"consume {topic}"]
    assert consume["service"] == "trace-consumer" and consume["kind"] == "CONSUMER"
    assert consume["parent_span_id"] == publish["span_id"]
    (handle,) = [s for s in spans if s["name"] == "handle WorkloadCompleted"]
    assert handle["parent_span_id"] == consume["span_id"]
    # the consumer's write: outputs + tracking row + outbox rows in one call of sextant_append
    db_writes = [s for s in spans if s["service"] == "trace-consumer" and "sextant_append" in statement(s)]
    assert db_writes and all(consume in ancestors(s, by_id) and server in ancestors(s, by_id) for s in db_writes)
